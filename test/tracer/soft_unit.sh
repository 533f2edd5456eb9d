#!/bin/bash
# The software trace unit (arch/x86/soft_unit) single-stepped through
# flowgen's random programs: its output buffer, linearised, decodes with
# ptboot's flow layer and with libipt to the executed instructions (whole,
# or the tail of a wrapped ring, or the head of a stopped trace), and both
# decoders agree item by item. Then random walks over random code of every
# branch class: both decoders give exactly what the unit says it traced.
# See test/tracer/soft_flowgen.c.
set -u
build/test/soft_flowgen --seeds 400 --insns 5000 || exit 1
build/test/soft_flowgen --walk 300 --insns 5000
