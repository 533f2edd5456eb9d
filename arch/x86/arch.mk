# arch/x86: the CPU (cpuid, capabilities, RTIT configuration); no UEFI in it.
ARCH_SRCS := $(wildcard arch/x86/*.c)
LIB_SRCS += $(ARCH_SRCS)
EFI_SRCS += $(ARCH_SRCS)
UNIT_TESTS += test_rtit_caps test_rtit_config test_rtit_topa test_rtit_seq test_rtit_props test_rtit_model
UNIT_TESTS += test_x86_nx_watch
TEST_SCRIPTS += test/host_info.sh test/host_plan.sh test/arch_x86_freestanding.sh
include test/rtit_tests.mk
