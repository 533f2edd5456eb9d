# Sourced (from the repository root) by the scripts that go over every real
# trace of ../shared/traces/real: REAL_TRACES and REAL_DIR as
# test/flow/real_traces.env gives them, and
#   real_traces_begin WHO  ends the script with "WHO SKIP, DIR not present"
#                          (exit 77: skipped, test/run.sh) when the
#                          traces are absent; otherwise
#                          makes $tmp, removed when the script exits;
#   real_trace_read ENTRY  splits one REAL_TRACES entry into name, filter and
#                          want (libipt's instruction count) and sets args to
#                          ptboot's options for that trace (--pt, --pages,
#                          --filter).
. test/flow/real_traces.env

real_traces_begin() {
    if [ ! -d "$REAL_DIR" ]; then
        echo "$1 SKIP, $REAL_DIR not present"
        exit 77
    fi
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
}

real_trace_read() {
    IFS=: read -r name filter want <<< "$1"
    args=(--pt "$REAL_DIR/$name/trace.pt" --pages "$REAL_DIR/$name/pages" --filter "$filter")
}
