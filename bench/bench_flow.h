/* `ptboot bench --pt FILE --pages PREFIX|--raw ... [--filter LO-HI]`: the
 * instruction-flow benchmark (bench/bench_flow.c). */
#ifndef BENCH_FLOW_H
#define BENCH_FLOW_H

int bench_flow(int argc, char **argv);
/* True when the bench arguments ask for the flow benchmark (a code image). */
int bench_is_flow(int argc, char **argv);

#endif
