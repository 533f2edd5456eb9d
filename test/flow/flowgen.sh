#!/bin/bash
# Random programs with ground truth: ptboot's flow and libipt's equal what
# the programs executed (RET compression on/off, PSB periods, interrupts,
# far jumps between 64- and 32-bit code, calls out of the traced range,
# call depth past 64); corrupted traces end with errors and resyncs, no
# crash (ASan/UBSan build). `make flow-fuzz` runs it long.
exec build/test/flowgen --seeds 300 --insns 5000 --corrupt
