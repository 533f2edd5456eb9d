# test/vpt: the virtual Intel PT trace unit, a QEMU TCG plugin.
# build/vpt/vpt.so is the QEMU plugin (records the executed instructions);
# build/vpt/vpt_encode turns a recording into .pt, .truth and code pages.
# docs/vpt.md describes both, the scenarios and the fixtures.
# the plugin links the ILD alone (ILD_SRCS, the Makefile), position independent
VPT_PIC_SRCS := $(ILD_SRCS)
VPT_PIC_OBJS := $(VPT_PIC_SRCS:%.c=$(B)/vpt/%.o)
VPT_CFLAGS   := $(HOST_CFLAGS) -fPIC -fvisibility=hidden

$(B)/vpt/%.o: %.c | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CC,$<)$(HOST_CC) $(VPT_CFLAGS) -MMD -MP -c $< -o $@

$(B)/vpt/vpt.so: $(B)/vpt/test/vpt/vpt_plugin.o $(VPT_PIC_OBJS)
	$(call say,LD,$@)$(HOST_CC) -shared -o $@ $^

$(B)/vpt/vpt_encode: test/vpt/vpt_encode.c $(B)/host/libptboot.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CCLD,$@)$(HOST_CC) $(HOST_CFLAGS) -MMD -MP $< -o $@ $(B)/host/libptboot.a

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

# make test (group `vpt`, test/tests.mk): the fixtures (no QEMU) and one live
# boot per scenario (test/vpt/ci.sh, ~60 s), then the app and reset16
# fixtures decoded by ptboot.efi flow in QEMU, serial equal to the host's
# decode and to the truth (test/vpt/on_target.sh, ~20 s).

# A large trace for throughput measurements (make bench builds it once):
# the whole boot from the reset vector (16-bit, 32-bit SEC/PEI with its LZMA
# decompression, 64-bit DXE and BDS), no filter, cut where code first changes
# under an address (--until-conflict): about 8 x 10^8 instructions, a 27 MB
# trace and 1.8 MB of code pages in build/vpt/big/whole-boot.{pt,dump,addr}.
# No truth file (it would be ~14 GB). About 2 minutes and 3.5 GB of
# temporary recording. VPT_BIG_WINDOW=trigger=mode64 gives DXE and BDS only
# (about 9 x 10^7 instructions, 40 s).
VPT_BIG_WINDOW ?= all
$(B)/vpt/big/whole-boot.pt: | $(B)/vpt/vpt.so $(B)/vpt/vpt_encode $(B)/ptboot.efi
	@mkdir -p $(@D)
	$(call say,VPT,$@)bash test/vpt/record.sh $(B)/vpt/big/rec '$(VPT_BIG_WINDOW)' "--shutdown info" 900 >/dev/null
	$(Q)$(B)/vpt/vpt_encode --no-filter --no-truth --until-conflict $(B)/vpt/big/rec $(B)/vpt/big/whole-boot
	$(Q)rm -f $(B)/vpt/big/rec.stream $(B)/vpt/big/rec.log $(B)/vpt/big/rec.img
.PHONY: vpt-big
vpt-big: $(B)/vpt/big/whole-boot.pt
