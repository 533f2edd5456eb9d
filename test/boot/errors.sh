#!/usr/bin/env bash
# Bad words give a clear message, a non-zero status and still a clean
# shutdown: an unattended lab run must never hang on a typo.
cd "$(dirname "$0")/../.." && . test/boot/lib.sh

boot bad-command-option "--shutdown info --bogus"
expect_rc bad-command-option 0 "clean shutdown"
expect bad-command-option "^ptboot: error: info: unknown argument '--bogus' \\(usage: info \\[--cpuid FILE \\| --cpus\\]\\)$" "names the bad argument and the usage"
expect bad-command-option '^ptboot: exit status=2 ' "usage status"

boot bad-app-option "--shutdown --frobnicate info"
expect_rc bad-app-option 0 "clean shutdown"
expect bad-app-option "^ptboot: error: \\\\ptboot.cfg: unknown option '--frobnicate' \(see 'ptboot help'\)$" "names the option and the file"
expect bad-app-option '^ptboot: exit status=2 ' "usage status"
expect_not bad-app-option '^ptboot: info ' "no command ran"

boot bad-command "--shutdown tracee"
expect_rc bad-command 0 "clean shutdown"
expect bad-command "^ptboot: error: unknown command 'tracee' \(see 'ptboot help'\)$" "names the command"

boot help "--shutdown help"
expect_rc help 0 "clean shutdown"
expect help '^  info +CPU and Intel PT capabilities' "help lists info"
expect help '^  selftest +' "help lists selftest"
expect help '^ptboot: exit status=0 sbrk_calls=0 ' "no allocation"
boot_done
