# Sourced (from the repository root) by the test scripts that count their
# own checks: set -u, a scratch directory $tmp removed when the script
# exits, and ok/not_ok, which print a check's line ("ok: ..." or
# "FAIL: ..."); not_ok also sets fail=1, which the script exits with.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok: $*"; }
not_ok() { echo "FAIL: $*"; fail=1; }
