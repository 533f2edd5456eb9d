#!/usr/bin/env bash
# make test's virtual-PT step: the committed fixtures (no QEMU) and one live
# boot per scenario under the plugin (about 60 s in all), with the ptboot
# differences of test/vpt/ptboot-known.txt tolerated (and printed).
exec bash "$(dirname "$0")/vpt-check.sh" --ci
