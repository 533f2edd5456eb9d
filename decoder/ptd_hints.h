/* libptd's compiler hints, named once. Each changes only the code the
 * compiler makes (which way a branch is laid out, whether a function is
 * kept out of its callers' loops), never a result, and falls back to
 * nothing (or a plain inline) for a compiler without GNU C's extensions.
 * Where the decoder's hot loops use them, docs/performance.md has what
 * they were measured to save. */
#ifndef PTD_HINTS_H
#define PTD_HINTS_H

#if defined(__GNUC__)
/* x is seldom true: its branch laid out of the common path */
#define PTD_RARE(x) __builtin_expect(!!(x), 0)
/* a function kept out of line: rare work that would crowd a loop */
#define PTD_NOINLINE __attribute__((noinline))
/* a function inlined even where the compiler would not (after static) */
#define PTD_ALWAYS_INLINE __attribute__((always_inline)) inline
/* start loading what p points to into the cache */
#define PTD_PREFETCH(p) __builtin_prefetch((p))
/* hide where a value came from, so that its fields are taken from it
 * again instead of from copies the compiler would keep in registers */
#define PTD_OPAQUE(x) __asm__("" : "+r"(x))
#else
#define PTD_RARE(x) (x)
#define PTD_NOINLINE
#define PTD_ALWAYS_INLINE inline
#define PTD_PREFETCH(p)   ((void)(p))
#define PTD_OPAQUE(x)     ((void)0)
#endif

#endif
