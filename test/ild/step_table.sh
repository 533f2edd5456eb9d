#!/bin/bash
# decoder/ptd_ild_step_table.c is what test/ild/gen_step_table.c derives
# from the current ptd_ild_decode() (regenerate: make ild-step-table).
set -u
t=$(mktemp); trap 'rm -f "$t"' EXIT
build/test/gen_step_table > "$t" || { echo "step_table: FAIL generator"; exit 1; }
if ! cmp -s "$t" decoder/ptd_ild_step_table.c; then
    echo "step_table: FAIL decoder/ptd_ild_step_table.c is not current (make ild-step-table):"
    diff "$t" decoder/ptd_ild_step_table.c | head -6
    exit 1
fi
echo "step_table: ok, decoder/ptd_ild_step_table.c is current"
