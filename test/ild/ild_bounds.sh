#!/usr/bin/env bash
# The ILD never reads past the bytes it is given (ild_bounds.c, under ASan).
set -u
exec build/test/ild_bounds 2000000 "${ILD_SEED:-88172645463325252}"
