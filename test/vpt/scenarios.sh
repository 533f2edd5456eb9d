# The virtual-PT scenarios, sourced by test/vpt/vpt-check.sh and
# test/vpt/mkfixtures.sh. Per scenario NAME:
#   VPT_WINDOW[NAME]  the plugin's window (see test/vpt/record.sh)
#   VPT_CONFIG[NAME]  the app's ptboot.cfg words

#   VPT_ENCODE[NAME]  vpt_encode options (filters, PSB period, RET compression)
# The filter a decoder is given is the one vpt_encode chose: it is written to
# NAME.filter (LO-HI, hex, HI inclusive, as libipt's ADDR0_B), empty when the
# trace unit had several ranges or none.
declare -A VPT_WINDOW VPT_CONFIG VPT_ENCODE
VPT_SCENARIOS="app xhci app-services switch64 reset16"

# (a) the app calling boot services: window = the app's image from its entry
# point on, filter = the image (TIP.PGD/TIP.PGE around every boot-service
# call); selftest takes a real #GP inside it. PSB+ every 2 KiB (PSBFreq 0).
VPT_WINDOW[app]="app"
VPT_CONFIG[app]="--shutdown selftest"
VPT_ENCODE[app]="--psb-period 2048"

# (b) a DXE driver connecting a device: OVMF's XhciDxe while BDS connects
# the xHCI controller and the USB stick (port reset, enumeration, mass-storage
# commands: 58 doorbell writes, 14 SCSI commands by QEMU's trace events).
# Window: from the first execution of the instruction on XhciDxe's doorbell
# path (0xe64bd4a), 300,000 instructions; filter: XhciDxe's image
# [0xe647000, 0xe653000), so every call out (PciIo, boot services, UsbBus
# calling in) is a TIP.PGD/TIP.PGE pair, and timer interrupts inside it are
# FUP + TIP.PGD. The addresses are those of Debian's OVMF_CODE_4M.fd
# (edk2 2022.11) with -m 256; docs/vpt.md says how they were found. RET
# compression off (DisRETC), PSB+ every 2 KiB, TSC packets.
VPT_WINDOW[xhci]="enter=e64bd4a-e64bd4b,count=300000"
VPT_CONFIG[xhci]="--shutdown info"
VPT_ENCODE[xhci]="--filter e647000-e653000 --no-retc --psb-period 2048 --tsc"

# (b') the firmware services the app calls: the first 200,000 instructions
# from the app's entry, filtered to everything but the app (console output
# through the terminal and serial drivers, memory and protocol services,
# ptboot.cfg read through the file system, served from its cache), with the
# timer interrupts they take. PSB+ every 2 KiB.
VPT_WINDOW[app-services]="app,count=200000"
VPT_CONFIG[app-services]="--shutdown info"
VPT_ENCODE[app-services]="--outside-image --psb-period 2048"

# (c) the 32-to-64-bit switch of OVMF's DXE IPL: 3,000 instructions of 32-bit
# PEI before the first 64-bit block, then 57,000 more in 64-bit DXE core.
VPT_WINDOW[switch64]="trigger=mode64,pre=3000,count=60000"
VPT_CONFIG[switch64]="--shutdown info"
VPT_ENCODE[switch64]="--no-filter --psb-period 2048"

# (c') from the reset vector: 16-bit real mode (IPs are linear: CS base
# 0xffff0000 + IP), the far jump into 32-bit flat protected mode (MODE.Exec +
# TIP), the start of SEC; 20,000 instructions (rep iterations count once).
VPT_WINDOW[reset16]="all,count=20000"
VPT_CONFIG[reset16]="--shutdown info"
VPT_ENCODE[reset16]="--no-filter --psb-period 2048"

# More encodings of a live recording (no extra boot): VPT_VARIANTS[NAME] is
# a list of "SUFFIX:OPTIONS" checked as NAME-SUFFIX. A PSB+ every 64 bytes is
# denser than any PSBFreq allows; it exercises PSB+ at every kind of
# instruction boundary.
declare -A VPT_VARIANTS
VPT_VARIANTS[app]="retc-off:--no-retc psb64:--psb-period_64_--tsc"
VPT_VARIANTS[xhci]="retc-on:--filter_e647000-e653000_--psb-period_2048"
