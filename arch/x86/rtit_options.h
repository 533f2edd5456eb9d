/* Configuration options as words, shared by `ptboot plan` on the host and
 * the UEFI app's command line / \ptboot.cfg, so both spell them the same:
 *
 *   output=topa|single  regions=N  region-size=SIZE  mode=ring|stop
 *   single-size=SIZE  buffer-base=ADDR  table-base=ADDR
 *   user  no-os  no-branch  no-tsc  dis-retc  mtc=N  cyc=N  psb=N
 *   ptwrite  fup-on-ptw  power-events  event-trace  dis-tnt
 *   inject-psb-pmi  fabric  cr3=VALUE  filter=N:START:END
 *   trace-stop=N:START:END  range-cfg=N:CFG:START:END
 *
 * Numbers are decimal or 0x hex; SIZE also takes a K, M or G suffix. The
 * options only fill struct rtit_config: rtit_check() judges the result.
 * An address range N may be named once (filter, trace-stop or range-cfg):
 * a second one is refused ("range-duplicate"), never merged or dropped. */
#ifndef PTBOOT_ARCH_X86_RTIT_OPTIONS_H
#define PTBOOT_ARCH_X86_RTIT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "arch/x86/rtit_config.h"

/* 1 if option `name` takes a value, 0 if it is a flag, -1 if unknown. */
int rtit_option_takes_value(const char *name);

/* Applies one option (value NULL for flags). Returns 0, or -1 with a
 * one-line reason in err (always NUL-terminated when errlen > 0). */
int rtit_option_apply(struct rtit_config *cfg, const char *name, const char *value, char *err,
                      size_t errlen);

/* Number parsing used above: decimal or 0x hex, an optional K/M/G suffix
 * (decoder/ptd_num.h's one parser; suffix is kept for the callers and no
 * longer narrows it). Returns 0 or -1 (syntax or overflow). */
int rtit_parse_u64(const char *s, uint64_t *out, bool suffix);

#endif
