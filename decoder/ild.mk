# decoder/ptd_ild*: x86 instruction-length decoder (sources are picked up by
# decoder.mk's wildcard); its tests and oracle comparisons live here.
