# The test table: every test script of `make test`, by group, and what each
# group needs built first. `make test T=GROUP` runs one group (T="a b"
# several); test/run.sh runs them, counts a script's exit 0 as passed, 77 as
# skipped (its input is missing, e.g. the real traces) and anything else as
# failed, and ends with the groups' times. Unit tests (every
# test/unit/test_*.c, test/unit/unit.mk) and fuzzers (test/fuzz/fuzz.mk) are
# listed where they are defined; their groups are here.
TEST_GROUPS += unit layers cli diff flow ild tracer rtit capture summary serial fuzz vpt \
               boot resident hang names setup

# cmocka unit tests of every layer
TESTS_unit       = $(UNIT_TEST_BINS)
TEST_NEEDS_unit  = $(UNIT_TEST_BINS)

# the layering and the freestanding layers
TESTS_layers     := test/scripts/check_layers.sh test/scripts/freestanding.sh test/scripts/format_check.sh \
                    test/arch_x86_freestanding.sh
TEST_NEEDS_layers := $(B)/decoder-fs/libptd.o $(B)/format-fs/format.o $(B)/host/libptboot.a

# the host CLI: errors and messages, CPU reports and plans; the benchmarks' process timer
TESTS_cli        := test/cli/errors.sh test/cli/garbage.sh test/cli/input_paths.sh test/host_info.sh test/host_plan.sh \
                    test/cli/proc_time.sh
TEST_NEEDS_cli   := $(B)/ptboot $(B)/ptboot-bench $(B)/test/serial_enc $(B)/test/flowgen \
                    $(B)/test/capture/mkcapture $(B)/bench/gen_pages $(B)/bench/proc_time

# packets and time against libipt
TESTS_diff       := test/diff/diff_pkt.sh test/diff/dump_cmp.sh test/diff/dump_cli.sh \
                    test/time/diff_time.sh
TEST_NEEDS_diff  := $(B)/ptboot $(B)/ptboot-bench $(B)/test/diff_pkt $(B)/test/ref_ptdump $(B)/test/diff_time \
                    $(B)/bench/gen_trace

# the instruction flow against libipt and ground truth
TESTS_flow       := test/flow/ref_real.sh test/flow/real_flow.sh test/flow/real_current.sh \
                    test/flow/blocks_real.sh test/flow/flowgen.sh test/flow/flow_current.sh \
                    test/flow/flow_cli.sh test/flow/events_205.sh \
                    test/flow/tailgen.sh test/flow/tail_real.sh test/flow/tail_vpt.sh \
                    test/flow/paths.sh
TEST_NEEDS_flow  := $(B)/ptboot $(B)/ptboot-bench $(B)/test/libipt_flow $(B)/test/flowgen \
                    $(B)/test/tailgen $(B)/test/test_ptd_events

# the instruction-length decoder against Zydis, under the sanitizers, and
# its committed step table (the benchmark is built to prove it still builds)
TESTS_ild        := test/ild/ild_vs_zydis.sh test/ild/ild_bounds.sh test/ild/step_table.sh
TEST_NEEDS_ild   := $(B)/test/ild_vs_zydis $(B)/test/ild_bounds $(B)/test/gen_step_table \
                    $(B)/bench/ild_bench

# the software trace unit against flowgen's ground truth
TESTS_tracer     := test/tracer/soft_unit.sh
TEST_NEEDS_tracer := $(B)/test/soft_flowgen

# capture plans for every fixture CPU through the RTIT model
TESTS_rtit       := test/capture_plan.sh
TEST_NEEDS_rtit  := $(B)/ptboot

# capture directories and code dumps read by the host
TESTS_capture    := test/capture/capture_dir.sh test/capture/code_dump.sh
TEST_NEEDS_capture := $(B)/ptboot $(B)/test/capture/mkcapture $(B)/test/flowgen \
                      $(B)/test/libipt_flow $(B)/test/ref_ptdump

# decode summaries: real traces against libipt, capture directories
TESTS_summary    := test/summary/real_summary.sh test/summary/capture_summary.sh
TEST_NEEDS_summary := $(B)/ptboot $(B)/test/capture/mkcapture $(B)/test/flowgen

# names for trace addresses (--symbols, --elf/--pe) and the exports, on
# make run's capture (one QEMU boot) and the CLI's options
TESTS_names      := test/names/capture.sh test/names/cli.sh
TEST_NEEDS_names := $(B)/ptboot $(B)/ptboot.efi $(B)/ptbtest.efi $(B)/bench/gen_trace

# serial logs: clean, noisy, damaged (and the damage a lab's log gets:
# duplicates, lost begin/end lines, holes, wraps, pipes, --force)
TESTS_serial     := test/serial/recover.sh test/serial/random_damage.sh test/serial/damage.sh
TEST_NEEDS_serial := $(B)/ptboot $(B)/test/serial_enc $(B)/bench/gen_trace \
                     $(B)/test/capture/mkcapture $(B)/test/flowgen

# short libFuzzer runs over every parser of untrusted input
TESTS_fuzz       = $(FUZZERS:%=test/fuzz/fuzz_%.sh)
TEST_NEEDS_fuzz  = $(FUZZ_BINS) $(foreach f,$(FUZZERS),$(FUZZ_NEEDS_$(f)))

# the virtual Intel PT unit: fixtures, live boots, the app's own decode
TESTS_vpt        := test/vpt/ci.sh test/vpt/on_target.sh
TEST_NEEDS_vpt   := $(B)/vpt/vpt.so $(B)/vpt/vpt_encode $(B)/test/libipt_flow $(B)/ptboot \
                    $(B)/ptboot.efi

# the app booted in QEMU + OVMF (and the runner's own verdicts)
TESTS_boot       := test/scripts/qemu_run.sh test/boot/info.sh test/boot/errors.sh \
                    test/boot/selftest.sh test/boot/shell.sh test/boot/dump.sh test/boot/flow.sh \
                    test/boot/mp.sh test/boot/images.sh test/boot/serial_dump.sh \
                    test/boot/trace.sh test/boot/trace_ebs.sh test/boot/trace_bootnext.sh \
                    test/boot/trace_mp.sh test/boot/trace_buffer.sh test/boot/trace_irq.sh \
                    test/boot/full_volume.sh test/boot/readme_configs.sh
TEST_NEEDS_boot  := $(B)/ptboot $(B)/ptboot.efi $(B)/ptbootdrv.efi $(B)/ptbtest.efi $(B)/ptbspin.efi \
                    $(B)/osloader.efi $(B)/test/efivars $(B)/test/flowgen $(B)/bench/gen_trace \
                    $(B)/ptbtimer.efi $(B)/vpt/vpt.so $(B)/vpt/vpt_encode $(B)/test/libipt_flow

# the resident boot tracer over two boots
TESTS_resident   := test/resident/resident.sh
TEST_NEEDS_resident := $(B)/ptboot $(B)/ptboot.efi $(B)/ptbootdrv.efi $(B)/ptbtest.efi \
                       $(B)/osloader.efi $(B)/test/efivars

# the boot-hang flight recorder: hang reports, the recorder across
# system_reset through QEMU's monitor, recover, the watchdog, the survey of
# which memory survives a reset (docs/hang.md)
TESTS_hang       := test/hang/hang.sh test/hang/watchdog.sh test/hang/survey.sh
TEST_NEEDS_hang  := $(B)/ptboot $(B)/ptboot.efi $(B)/ptbootdrv.efi $(B)/ptbhang.efi $(B)/ptbpoke.efi \
                    $(B)/ptbwdog.efi $(B)/ptbspin.efi

# scripts/setup.sh on a machine without the packages (stand-ins)
TESTS_setup      := test/setup/first_run.sh
TEST_NEEDS_setup :=
