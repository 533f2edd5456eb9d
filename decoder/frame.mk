# decoder/frame.mk: the serial framing (decoder/ptd_frame.c, picked up by
# decoder.mk's wildcard for the host library, the app and the freestanding
# check), the app's serial dump (efi/capture/serial_dump.c, efi/cmd/serial_dump.c),
# `ptboot serial` (host/cmd_serial.c) and their tests. docs/serial.md.
UNIT_TESTS += test_ptd_frame test_ptd_num

# The target's encoder on the host: frame lines for the tests, and the
# benchmark of `make bench`.
$(B)/test/serial_enc: test/serial/serial_enc.c $(B)/host/libptboot.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -MMD -MP $< -o $@ $(B)/host/libptboot.a
-include $(B)/test/serial_enc.d
TEST_STEPS += $(B)/test/serial_enc

# QEMU: serial-dump of a trace and a raw file, recovered byte for byte.
TEST_SCRIPTS += test/boot/serial_dump.sh

# Host: clean, noisy and damaged logs of real and generated traces.
TEST_SCRIPTS += test/serial/recover.sh

# `make bench`: framing overhead, encoder throughput, fraction of line rate.
.PHONY: bench-serial
bench-serial: $(B)/test/serial_enc $(B)/bench/gen_trace $(B)/ptboot
	@bash test/serial/bench.sh
BENCH_STEPS += bench-serial
# Random damage, 25 rounds: exactly the damaged lines are reported.
TEST_SCRIPTS += test/serial/random_damage.sh
# the damage a lab log gets: duplicates, lost begin/end, holes, wraps, stdin, --force
TEST_SCRIPTS += test/serial/damage.sh
