/* `ptboot bench --pt FILE --pages PREFIX|--raw ... [--filter LO-HI]`: the
 * instruction-flow benchmark (host/bench_flow.c). */
#ifndef HOST_BENCH_FLOW_H
#define HOST_BENCH_FLOW_H

int host_bench_flow(int argc, char **argv);
/* True when the bench arguments ask for the flow benchmark (a code image). */
int host_bench_is_flow(int argc, char **argv);

#endif
