#!/usr/bin/env bash
# The first-run path of scripts/setup.sh, on a machine that already has every
# package: stand-ins for dpkg-query, apt-get, id and sudo come first on a
# PATH that holds nothing else, so the script sees a machine where packages
# are missing, and what it asks apt-get for is recorded and checked.
#
# The stand-in dpkg-query behaves like the real one: it prints a status line
# for each package it knows, "no packages found matching P" on stderr for the
# others, and exits 1 when any was not found (the exit status that killed the
# old script under `set -e -o pipefail` before it installed anything).
set -u
cd "$(dirname "$0")/../.."
setup=$PWD/scripts/setup.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fails=0
check() { # check NAME CONDITION-RESULT(0/1) DETAIL
  if [ "$2" -eq 0 ]; then echo "ok   $1"; else echo "FAIL $1: $3"; fails=$((fails + 1)); fi
}

# The real tools the script may use, and nothing else (no sudo, no apt-get).
sys=$tmp/sys
mkdir -p "$sys"
for t in bash awk grep sed tail mktemp rm cat env tr; do
  p=$(command -v "$t") || { echo "first_run: $t not found"; exit 1; }
  ln -s "$p" "$sys/$t"
done

fake=$tmp/fake
mkdir -p "$fake"
cat > "$fake/dpkg-query" <<'EOF'
#!/bin/bash
# dpkg-query -W -f=FORMAT PKG...: $FAKE_STATE lists the installed packages.
shift 2
rc=0
for p in "$@"; do
  if grep -qx -- "$p" "$FAKE_STATE"; then
    echo "$p install ok installed"
  else
    echo "dpkg-query: no packages found matching $p" >&2
    rc=1
  fi
done
exit $rc
EOF
cat > "$fake/apt-get" <<'EOF'
#!/bin/bash
# Records its arguments (one call a line); `install` marks the packages
# installed, unless FAKE_APT_FAIL names the verb that must fail.
echo "apt-get $*" >> "$FAKE_LOG"
verb=
for a in "$@"; do case $a in update|install) verb=$a ;; esac; done
if [ "${FAKE_APT_FAIL:-}" = "$verb" ]; then
  echo "E: Unable to locate package (stand-in failure)" >&2
  exit 100
fi
if [ "$verb" = install ]; then
  for a in "$@"; do
    case $a in -*|install) ;; *) [ -n "${FAKE_APT_SKIP:-}" ] && [ "$a" = "$FAKE_APT_SKIP" ] || echo "$a" >> "$FAKE_STATE" ;; esac
  done
fi
exit 0
EOF
cat > "$fake/id" <<'EOF'
#!/bin/bash
[ "$1" = -u ] && { echo "${FAKE_UID:-0}"; exit 0; }
exit 1
EOF
chmod +x "$fake"/*
sudobin=$tmp/sudo
mkdir -p "$sudobin"
cat > "$sudobin/sudo" <<'EOF'
#!/bin/bash
echo "sudo $1" >> "$FAKE_LOG"
exec "$@"
EOF
chmod +x "$sudobin/sudo"

# Every package the script wants, read from its own list.
mapfile -t all < <(sed -n '/^packages=(/,/^)/p' "$setup" | grep -v '^ *#' |
  sed 's/packages=(//; s/)//' | tr ' ' '\n' | grep -v '^$')
[ ${#all[@]} -ge 10 ] || { echo "first_run: could not read the package list (${#all[@]})"; exit 1; }

# run CASE-NAME MISSING-PACKAGES... : state = all but the missing ones.
run() {
  local name=$1; shift
  export FAKE_STATE=$tmp/$name.state FAKE_LOG=$tmp/$name.apt
  : > "$FAKE_LOG"
  printf '%s\n' "${all[@]}" | grep -vxF -f <(printf '%s\n' "$@" "") > "$FAKE_STATE"
  PATH=$fake:$EXTRA_PATH$sys TMPDIR=$tmp bash "$setup" > "$tmp/$name.out" 2>&1
  echo $? > "$tmp/$name.rc"
}

EXTRA_PATH=
# 1. Root, two packages missing: installed, exit 0, exactly those two asked for.
run missing2 ovmf libzydis-dev
rc=$(cat "$tmp/missing2.rc")
check "missing packages: exit 0" $([ "$rc" = 0 ]; echo $?) "exit $rc: $(cat "$tmp/missing2.out")"
inst=$(grep ' install ' "$tmp/missing2.apt" | sed 's/.* --no-install-recommends //')
check "missing packages: apt-get install asks for exactly them" \
  $([ "$inst" = "ovmf libzydis-dev" ]; echo $?) "asked for '$inst'"
check "missing packages: apt-get update first" \
  $(head -n 1 "$tmp/missing2.apt" | grep -q ' update'; echo $?) "$(cat "$tmp/missing2.apt")"
check "missing packages: says what it installs" \
  $(grep -q 'installing 2 .*ovmf libzydis-dev' "$tmp/missing2.out"; echo $?) "$(cat "$tmp/missing2.out")"

# 2. Nothing missing: silent, exit 0, no apt-get.
run none
check "all installed: exit 0, silent, no apt-get" \
  $([ "$(cat "$tmp/none.rc")" = 0 ] && [ ! -s "$tmp/none.out" ] && [ ! -s "$tmp/none.apt" ]; echo $?) \
  "exit $(cat "$tmp/none.rc"), output '$(cat "$tmp/none.out")', apt '$(cat "$tmp/none.apt")'"

# 3. Not root, no sudo: non-zero, says why and the manual line; no apt-get.
FAKE_UID=1000 run nosudo cpuid
check "not root, no sudo: fails with the manual apt-get line" \
  $([ "$(cat "$tmp/nosudo.rc")" != 0 ] && grep -q 'no sudo' "$tmp/nosudo.out" &&
    grep -q 'apt-get install -y --no-install-recommends cpuid' "$tmp/nosudo.out" &&
    [ ! -s "$tmp/nosudo.apt" ]; echo $?) "exit $(cat "$tmp/nosudo.rc"): $(cat "$tmp/nosudo.out")"

# 4. Not root, with sudo: installs through sudo.
EXTRA_PATH=$sudobin: FAKE_UID=1000 run withsudo cpuid
check "not root, with sudo: installs through sudo" \
  $([ "$(cat "$tmp/withsudo.rc")" = 0 ] && grep -q '^sudo apt-get' "$tmp/withsudo.apt" &&
    grep -q 'install .* cpuid$' "$tmp/withsudo.apt"; echo $?) \
  "exit $(cat "$tmp/withsudo.rc"): $(cat "$tmp/withsudo.out") / $(cat "$tmp/withsudo.apt")"
EXTRA_PATH=

# 5. apt-get install fails: non-zero, names the failure and the manual line.
FAKE_APT_FAIL=install run aptfail lld
check "apt-get failure: non-zero with a clear message" \
  $([ "$(cat "$tmp/aptfail.rc")" != 0 ] && grep -q "apt-get install .*failed" "$tmp/aptfail.out" &&
    grep -q 'Unable to locate package' "$tmp/aptfail.out" &&
    grep -q 'to install by hand.*apt-get install -y --no-install-recommends lld' "$tmp/aptfail.out"; echo $?) \
  "exit $(cat "$tmp/aptfail.rc"): $(cat "$tmp/aptfail.out")"

# 6. apt-get update fails (no network): the same clear failure.
FAKE_APT_FAIL=update run updatefail lld
check "apt-get update failure: non-zero with a clear message" \
  $([ "$(cat "$tmp/updatefail.rc")" != 0 ] && grep -q "apt-get update .*failed" "$tmp/updatefail.out"; echo $?) \
  "exit $(cat "$tmp/updatefail.rc"): $(cat "$tmp/updatefail.out")"

# 7. apt-get says yes but a package is still not there: named.
FAKE_APT_SKIP=mtools run skipped mtools ovmf
check "package still missing after apt-get: named, non-zero" \
  $([ "$(cat "$tmp/skipped.rc")" != 0 ] && grep -q 'still not installed after apt-get: mtools$' "$tmp/skipped.out"; echo $?) \
  "exit $(cat "$tmp/skipped.rc"): $(cat "$tmp/skipped.out")"

echo "first_run: $fails failed"
[ $fails -eq 0 ]
