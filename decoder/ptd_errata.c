/* libptd errata table: see ptd_errata.h. */
#include "decoder/ptd_errata.h"

/* The sets of errata that CPUs share (a core generation each). */
enum {
    BROADWELL = PTD_ERRATUM_BDM70 | PTD_ERRATUM_BDM64,
    SKYLAKE = PTD_ERRATUM_BDM70 | PTD_ERRATUM_SKD007 | PTD_ERRATUM_SKD022 | PTD_ERRATUM_SKD010 |
              PTD_ERRATUM_SKL014 | PTD_ERRATUM_SKL168,
    SKYLAKE_SERVER =
        PTD_ERRATUM_BDM70 | PTD_ERRATUM_SKL014 | PTD_ERRATUM_SKD022 | PTD_ERRATUM_SKZ84,
    /* Sapphire Rapids and later servers: SKL014 fixed */
    SERVER = PTD_ERRATUM_BDM70 | PTD_ERRATUM_SKD022 | PTD_ERRATUM_SKZ84,
    ICELAKE = PTD_ERRATUM_BDM70 | PTD_ERRATUM_SKL014 | PTD_ERRATUM_SKD022,
    /* Alder Lake and later clients (hybrid): SKL014 fixed */
    HYBRID = PTD_ERRATUM_BDM70 | PTD_ERRATUM_SKD022 | PTD_ERRATUM_APL11,
    /* what libipt 2.0.5 applied to Alder Lake (with SKL014) */
    HYBRID_205 = HYBRID | PTD_ERRATUM_SKL014,
    GOLDMONT = PTD_ERRATUM_APL12 | PTD_ERRATUM_APL11,
    ATOM = PTD_ERRATUM_APL11,
    /* libipt 2.0.5 does not know the CPU */
    UNKNOWN = 0xffff,
};

struct cpu_errata {
    uint16_t family;
    uint8_t model;
    uint16_t current;  /* current libipt's errata */
    uint16_t libipt20; /* libipt 2.0.5's, or UNKNOWN */
};

static const struct cpu_errata cpus[] = {
    /* family 6 */
    { 6, 0x3d, BROADWELL, BROADWELL },
    { 6, 0x47, BROADWELL, BROADWELL },
    { 6, 0x4f, BROADWELL, BROADWELL },
    { 6, 0x56, BROADWELL, BROADWELL },
    { 6, 0x4e, SKYLAKE, SKYLAKE },
    { 6, 0x5e, SKYLAKE, SKYLAKE },
    { 6, 0x8e, SKYLAKE, SKYLAKE },
    { 6, 0x9e, SKYLAKE, SKYLAKE },
    { 6, 0xa5, SKYLAKE, SKYLAKE },
    { 6, 0xa6, SKYLAKE, SKYLAKE },
    { 6, 0x55, SKYLAKE_SERVER, SKYLAKE_SERVER },
    { 6, 0x6a, SKYLAKE_SERVER, SKYLAKE_SERVER },
    { 6, 0x6c, SKYLAKE_SERVER, SKYLAKE_SERVER },
    { 6, 0x8f, SERVER, SKYLAKE_SERVER },
    { 6, 0xcf, SERVER, UNKNOWN },
    { 6, 0xad, SERVER, UNKNOWN },
    { 6, 0xae, SERVER, UNKNOWN },
    { 6, 0x66, ICELAKE, ICELAKE },
    { 6, 0x7d, ICELAKE, ICELAKE },
    { 6, 0x7e, ICELAKE, ICELAKE },
    { 6, 0x8c, ICELAKE, ICELAKE },
    { 6, 0x8d, ICELAKE, ICELAKE },
    { 6, 0xa7, ICELAKE, ICELAKE },
    { 6, 0xa8, ICELAKE, ICELAKE },
    { 6, 0x97, HYBRID, HYBRID_205 },
    { 6, 0x9a, HYBRID, HYBRID_205 },
    { 6, 0xbf, HYBRID, HYBRID_205 },
    { 6, 0xba, HYBRID, UNKNOWN },
    { 6, 0xb7, HYBRID, UNKNOWN },
    { 6, 0xc5, HYBRID, UNKNOWN },
    { 6, 0xc6, HYBRID, UNKNOWN },
    { 6, 0xb5, HYBRID, UNKNOWN },
    { 6, 0xaa, HYBRID, UNKNOWN },
    { 6, 0xac, HYBRID, UNKNOWN },
    { 6, 0xbd, HYBRID, UNKNOWN },
    { 6, 0xcc, HYBRID, UNKNOWN },
    { 6, 0xd5, HYBRID, UNKNOWN },
    { 6, 0x5c, GOLDMONT, GOLDMONT },
    { 6, 0x5f, GOLDMONT, GOLDMONT },
    { 6, 0x7a, ATOM, ATOM },
    { 6, 0x86, ATOM, ATOM },
    { 6, 0x96, ATOM, ATOM },
    { 6, 0x9c, ATOM, ATOM },
    { 6, 0xb6, ATOM, UNKNOWN },
    { 6, 0xaf, ATOM, UNKNOWN },
    { 6, 0xdd, ATOM, UNKNOWN },
    /* family 18 (0x12) and 19 (0x13) */
    { 18, 0x01, HYBRID, UNKNOWN },
    { 18, 0x03, HYBRID, UNKNOWN },
    { 19, 0x01, SERVER, UNKNOWN },
};

bool ptd_errata_of_cpu(unsigned family, unsigned model, bool libipt20, unsigned *errata)
{
    *errata = 0;
    for (unsigned i = 0; i < sizeof cpus / sizeof cpus[0]; i++) {
        const struct cpu_errata *c = &cpus[i];
        unsigned e;
        if (c->family != family || c->model != model)
            continue;
        e = libipt20 ? c->libipt20 : c->current;
        if (e == UNKNOWN)
            return false;
        *errata = e;
        return true;
    }
    return false;
}
