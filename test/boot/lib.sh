# Helpers for the QEMU boot tests (sourced). Each test builds its own stick,
# boots it with scripts/qemu-run.sh and checks the serial log.
set -u
BOOT_DIR=build/test/boot
mkdir -p "$BOOT_DIR"
boot_failures=0

# boot_image NAME CONFIG-TEXT [FILE...]: makes the stick $BOOT_DIR/NAME.img
# with that ptboot.cfg and the files at its root.
boot_image() {
  local name=$1 cfg=$2
  shift 2
  scripts/mkimage.sh "$BOOT_DIR/$name.img" build/ptboot.efi "$cfg" "$@" || exit 1
}

# boot_run NAME [qemu args...]: boots $BOOT_DIR/NAME.img; the cleaned log (no
# ANSI escapes, no CR) is $BOOT_DIR/NAME.txt, the runner's status $boot_rc.
boot_run() {
  local name=$1
  shift
  QUIET=1 scripts/qemu-run.sh "$BOOT_DIR/$name.img" "$BOOT_DIR/$name.log" "${BOOT_TIMEOUT:-90}" "$@"
  boot_rc=$?
  boot_clean "$name"
}

# boot NAME CONFIG-TEXT [qemu args...]: both of the above.
boot() {
  local name=$1 cfg=$2
  shift 2
  boot_image "$name" "$cfg"
  boot_run "$name" "$@"
}

boot_clean() {
  tr -d '\r' < "$BOOT_DIR/$1.log" | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g' > "$BOOT_DIR/$1.txt"
}

ok() { echo "ok: $*"; }
not_ok() { echo "FAIL: $*"; boot_failures=$((boot_failures + 1)); }

# expect NAME REGEX WHAT: the log of NAME has a line matching REGEX (ERE).
expect() {
  if grep -Eaq -- "$2" "$BOOT_DIR/$1.txt"; then ok "$1: $3"; else
    not_ok "$1: $3 (no line matches /$2/; log: $BOOT_DIR/$1.txt)"
    grep -a 'ptboot' "$BOOT_DIR/$1.txt" | sed 's/^/    | /'
  fi
}
expect_not() {
  if grep -Eaq -- "$2" "$BOOT_DIR/$1.txt"; then not_ok "$1: $3 (a line matches /$2/)"; else ok "$1: $3"; fi
}
expect_rc() {
  if [ "$boot_rc" -eq "$2" ]; then ok "$1: runner status $2 ($3)"; else not_ok "$1: runner status $boot_rc, expected $2 ($3)"; fi
}
# The log of each of a run's N commands alone, in $BOOT_DIR/NAME.1.txt to
# NAME.N.txt: command I's lines run from "ptboot: command I-1/N " (for the
# first, "ptboot: start ") to "ptboot: command I/N ", both left out.
split_commands() {
  local name=$1 n=$2 i a
  for ((i = 1; i <= n; i++)); do
    a="ptboot: command $((i - 1))/$n "
    [ "$i" = 1 ] && a="ptboot: start "
    awk -v a="$a" -v b="ptboot: command $i/$n " \
      'index($0, b) == 1 { exit } on { print } index($0, a) == 1 { on = 1 }' \
      "$BOOT_DIR/$name.txt" > "$BOOT_DIR/$name.$i.txt"
  done
}

# expect_same_as_host NAME WHAT "HOST COMMAND": the serial lines between
# "ptboot: WHAT begin" and "ptboot: WHAT end" equal $BOOT_DIR/NAME.expected
# (the host CLI's output for the same input), which has over 100 lines.
expect_same_as_host() {
  local name=$1 what=$2 host=$3 lines
  sed -n "/^ptboot: $what begin /,/^ptboot: $what end /p" "$BOOT_DIR/$name.txt" | sed '1d;$d' \
    > "$BOOT_DIR/$name.got"
  lines=$(wc -l < "$BOOT_DIR/$name.expected")
  if [ "$lines" -gt 100 ] && cmp -s "$BOOT_DIR/$name.expected" "$BOOT_DIR/$name.got"; then
    ok "$name: $lines lines identical to the host's '$host'"
  else
    not_ok "$name: serial differs from the host's '$host' ($lines lines expected)"
    diff "$BOOT_DIR/$name.expected" "$BOOT_DIR/$name.got" | head -10 | sed 's/^/    | /'
  fi
}

# boot_skip WHAT: a part of the test had no input; when the rest passes,
# boot_done returns 77 (skipped, test/run.sh) instead of 0.
boot_skip() {
  boot_skipped="${boot_skipped:+$boot_skipped; }$1"
}

boot_done() {
  echo "boot tests: $boot_failures failure(s)"
  [ "$boot_failures" -eq 0 ] || return 1
  if [ -n "${boot_skipped:-}" ]; then
    echo "boot tests: skipped: $boot_skipped"
    return 77
  fi
}
