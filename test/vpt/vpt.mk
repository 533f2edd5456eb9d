# test/vpt: the virtual Intel PT trace unit, a QEMU TCG plugin.
# build/vpt/vpt.so is the QEMU plugin (records the executed instructions);
# build/vpt/vpt_encode turns a recording into .pt, .truth and code pages.
# docs/vpt.md describes both, the scenarios and the fixtures.
VPT_PIC_SRCS := decoder/ptd_ild.c decoder/ptd_ild_tables.c
VPT_PIC_OBJS := $(VPT_PIC_SRCS:%.c=$(B)/vpt/%.o)
VPT_CFLAGS   := $(HOST_CFLAGS) -fPIC -fvisibility=hidden

$(B)/vpt/%.o: %.c | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(VPT_CFLAGS) -MMD -MP -c $< -o $@

$(B)/vpt/vpt.so: $(B)/vpt/test/vpt/vpt_plugin.o $(VPT_PIC_OBJS)
	$(HOST_CC) -shared -o $@ $^

$(B)/vpt/vpt_encode: test/vpt/vpt_encode.c $(B)/host/libptboot.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -MMD -MP $< -o $@ $(B)/host/libptboot.a

-include $(VPT_PIC_OBJS:.o=.d) $(B)/vpt/test/vpt/vpt_plugin.d $(B)/vpt/vpt_encode.d

.PHONY: vpt vpt-check
vpt: $(B)/vpt/vpt.so $(B)/vpt/vpt_encode

# `make vpt-check`: boots each scenario under the plugin (about 10 s each)
# and decodes the committed fixtures; `make vpt-fixtures` regenerates them.
vpt-check: vpt $(B)/test/libipt_flow $(B)/ptboot $(B)/ptboot.efi
	@bash test/vpt/vpt-check.sh
.PHONY: vpt-fixtures
vpt-fixtures: vpt $(B)/test/libipt_flow $(B)/ptboot.efi
	bash test/vpt/mkfixtures.sh

# make test: the fixtures (no QEMU) and one live boot per scenario (~30 s).
TEST_STEPS += $(B)/vpt/vpt.so $(B)/vpt/vpt_encode
TEST_SCRIPTS += test/vpt/ci.sh
