/* libptd decode summaries, internal: the tables in the arena
 * (ptd_sum_tab.c), used by ptd_sum.c. */
#ifndef PTD_SUM_TAB_H
#define PTD_SUM_TAB_H

#include "decoder/ptd_sum.h"

/* Carves s->cfg.arena into the tables and empties them. */
void ptd_sum_tab_layout(struct ptd_sum *s);
/* The entry of a function / tree node (PTD_SUM_NONE: parent of a root),
 * created on first use; PTD_SUM_NONE when the table has no room. */
uint32_t ptd_sum_func_get(struct ptd_sum *s, uint64_t entry, uint8_t kind);
uint32_t ptd_sum_node_get(struct ptd_sum *s, uint32_t parent, uint32_t func);
/* The block starting at ip, or NULL when the table has no room. */
struct ptd_sum_block *ptd_sum_block_get(struct ptd_sum *s, uint64_t ip);
/* Counts one from -> to transition of the given kind. */
void ptd_sum_edge_add(struct ptd_sum *s, uint64_t from, uint64_t to, uint32_t kind);
/* Appends a transition to the last-N ring. */
void ptd_sum_ring_add(struct ptd_sum *s, uint64_t from, uint64_t to, uint32_t kind, int known_to);

#endif
