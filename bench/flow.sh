#!/usr/bin/env bash
# `make bench-flow`: ptboot's instruction flow against libipt's, on every
# real trace of ../shared/traces/real (skips, saying so, when absent).
# docs/performance.md explains the figures. Per trace:
#
#   bench: flow file=<name> insns=<n> ptboot_minsn=<x> libipt_insn_minsn=<y> libipt_blk_minsn=<z> libipt=<version> setup=iscache
#   bench: flow-nocache file=<name> insns=<n> ptboot_minsn=<x>
#   bench: flow-count file=<name> insns=<n> ptboot_minsn=<x>
#       the decoders in one process (build/ptboot-bench: best round of
#       BENCH_ROUNDS each, alternating); libipt with its image-section cache
#   bench: flow-libipt-check file=<name> blk: bench=<x> plain=<y> insn: bench=<x> plain=<y> (plain/bench, median of 18 pairs: <a> <b>; best against best: <c> <d>; within 30%: yes|NO)
#       the same libipt figures from build/bench/libipt_count, a plain libipt
#       program that shares no code with the benchmark: 18 processes of
#       the benchmark's libipt side and 18 of the plain program's, in turn,
#       a sixth of the rounds each; each side's best (the flow line's
#       libipt figures are the benchmark side's), and the check on the
#       median ratio of the pairs run one after the other (libipt's speed
#       differs from process to process here)
#   bench: flow-process file=<name> insns=<n> ptboot_cpu_ms=<a> libipt_cpu_ms=<b> ratio=<b/a> ptboot_wall_ms=<c> libipt_wall_ms=<d> wall_ratio=<d/c> other_ptboot_cpu_ms=<e> other_libipt_cpu_ms=<f> other_ratio=<f/e> (goal >= 3x: met|NOT met)
#       whole processes: `ptboot flow --quiet --stat` against libipt_count
#       (load the code into an image-section cache, decode with the block
#       decoder, count), BENCH_PROCESSES rounds in which each runs twice
#       in a row (build/bench/proc_time --pairs); the best of the second
#       runs, each right after a run of itself (as consecutive runs of one
#       command), and, other_*, of the first runs, each right after the
#       other program (ptboot is slower after libipt's program, most
#       likely as the 2 MiB page it gets is colder, docs/performance.md); cpu =
#       user + system time of the process, wall = fork to exit
#
# Options (environment):
#   BENCH_ROUNDS=N        rounds of the in-process benchmark and of the plain
#                         libipt program's check (default 30 for a trace of
#                         under 2 M instructions, else 10: a short decode's
#                         best of 10 moved with the machine's load)
#   BENCH_PROCESSES=N     rounds of the whole processes (default 300 for a
#                         trace under 2 M instructions, else 100: the best
#                         of fewer moved with the machine's load, the more
#                         the shorter the process)
#   PTBOOT_LIBIPT_LIB=DIR also run libipt's side with the libipt.so.2 in DIR
#                         (e.g. a build of current libipt's sources): the
#                         same lines again, tagged with that version
#   PTXED=FILE            also time that ptxed (--quiet --stat, the pages as
#                         --raw sections) against `ptboot flow --quiet --stat`:
#                         bench: flow-process-ptxed file=<name> ... ratio=<x> ... other_ratio=<y>
#                         (PTXED_LD_LIBRARY_PATH: its libraries, e.g. XED's)
cd "$(dirname "$0")/.." || exit 1
. test/lib/real_traces.sh
real_traces_begin "bench: flow"
PARTS=6
for f in build/ptboot build/ptboot-bench build/bench/libipt_count build/bench/proc_time; do
    [ -x "$f" ] || { echo "bench-flow: $f missing (make bench-flow builds it)"; exit 1; }
done

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< "$2"; }
max() { awk -v a="$1" -v b="$2" 'BEGIN { print (b + 0 > a + 0) ? b : a }'; }
# the median of the numbers given (the mean of the middle two of an even count)
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# process_line KIND NAME OTHER TIMES EXTRA GOAL: the bench line of
# proc_time --pairs' two lines TIMES (ptboot's, then the OTHER program's):
# each side's best CPU and wall time after itself, the first runs' (after
# the other program) as other_*; EXTRA goes after the file's name, and
# GOAL (non-empty) adds the verdict on the 3x goal
process_line() {
    local p l
    p=$(sed -n 1p <<< "$4")
    l=$(sed -n 2p <<< "$4")
    awk -v k="$1" -v n="$2" -v o="$3" -v x="$5" -v goal="$6" \
        -v pc="$(field cpu_min_ms "$p")" -v lc="$(field cpu_min_ms "$l")" \
        -v pw="$(field wall_min_ms "$p")" -v lw="$(field wall_min_ms "$l")" \
        -v po="$(field after_other_cpu_min_ms "$p")" -v lo="$(field after_other_cpu_min_ms "$l")" 'BEGIN {
        r = lc / pc
        printf "bench: %s file=%s%s ptboot_cpu_ms=%.3f %s_cpu_ms=%.3f ratio=%.2f ptboot_wall_ms=%.3f %s_wall_ms=%.3f wall_ratio=%.2f other_ptboot_cpu_ms=%.3f other_%s_cpu_ms=%.3f other_ratio=%.2f",
               k, n, x, pc, o, lc, r, pw, o, lw, lw / pw, po, o, lo, lo / po
        if (goal != "")
            printf " (goal >= 3x: %s)", (r >= 3 ? "met" : "NOT met")
        printf "\n" }'
}

# ptxed's --raw options for a page dump: one per run of pages that follow
# each other in the file and in memory.
ptxed_raw() {
    local prefix=$1 k=0 start=0 prev= a
    local -a out=()
    for a in $(od -An -v -tx8 "$prefix.addr"); do
        a=$((16#$a))
        if [ -n "$prev" ] && [ "$a" -ne $((prev + 4096)) ]; then
            out+=(--raw "$prefix.dump:$((start * 4096))-$((k * 4096)):$(printf '0x%x' "$first")")
            start=$k
        fi
        [ "$start" -eq "$k" ] && first=$a
        prev=$a
        k=$((k + 1))
    done
    [ "$k" -gt 0 ] && out+=(--raw "$prefix.dump:$((start * 4096))-$((k * 4096)):$(printf '0x%x' "$first")")
    printf '%s\n' "${out[@]}"
}

# The plain libipt program's M insn/s on the current trace, best of $1
# rounds (libenv, args: one_trace's), its block decoder or, with --insn,
# its instruction decoder.
plain_minsn() {
    env "${libenv[@]}" build/bench/libipt_count "${args[@]}" --rounds "$@" |
        sed -n 's/.* minsn=\([^ ]*\).*/\1/p'
}

# One trace against the libipt the dynamic linker finds, with "$1" (empty,
# or LD_LIBRARY_PATH=DIR) in the environment of the libipt programs only:
# ptboot's start-up must not pay for the directories searched.
one_trace() {
    local libenv=(${1:+"$1"})
    local line out x blk_b=0 insn_b=0 blk_p=0 insn_p=0 insns k j
    local rounds=${BENCH_ROUNDS:-$((want < 2000000 ? 30 : 10))}
    local per=$(((rounds + PARTS - 1) / PARTS))
    out=$(env "${libenv[@]}" build/ptboot-bench "${args[@]}" --rounds "$rounds") || return 1
    line=$(head -1 <<< "$out")
    insns=$(field insns "$line")
    # libipt's speed here differs from process to process, in either
    # program and with or without address randomization (Unzip's block
    # decoder 45-55 or 68-80 M insn/s, the fast state sometimes once in
    # 16 processes): 3 * PARTS processes of the benchmark's libipt side
    # (--libipt-only) and as many of the plain program's, in turn, so that
    # a change in the machine's load falls on both (not the run above,
    # before them). The flow line's libipt figures are the benchmark
    # side's best. The check compares the two programs pair by pair: the
    # median of the plain/bench ratios of processes run one after the
    # other. The best of each side alone failed it whenever one side's
    # processes met the fast state and the other's did not (Unzip's 58.5
    # against 81.7 with libipt master, while 15 of 16 pairs agreed).
    local rb=() ri=() b bi pb pi
    for ((k = 0; k < PARTS; k++)); do
        for j in 1 2 3; do
            x=$(env "${libenv[@]}" build/ptboot-bench "${args[@]}" --rounds "$per" --libipt-only 2> /dev/null) || return 1
            b=$(field libipt_blk_minsn "$x")
            bi=$(field libipt_insn_minsn "$x")
            pb=$(plain_minsn "$per")
            pi=$(plain_minsn "$per" --insn)
            blk_b=$(max "$blk_b" "$b")
            insn_b=$(max "$insn_b" "$bi")
            blk_p=$(max "$blk_p" "$pb")
            insn_p=$(max "$insn_p" "$pi")
            rb+=("$(awk -v p="$pb" -v b="$b" 'BEGIN { print p / b }')")
            ri+=("$(awk -v p="$pi" -v b="$bi" 'BEGIN { print p / b }')")
        done
    done
    sed -E "1s/libipt_insn_minsn=[^ ]*/libipt_insn_minsn=$insn_b/; 1s/libipt_blk_minsn=[^ ]*/libipt_blk_minsn=$blk_b/" <<< "$out"
    awk -v n="$name" -v bb="$blk_b" -v bp="$blk_p" -v ib="$insn_b" -v ip="$insn_p" \
        -v mb="$(median "${rb[@]}")" -v mi="$(median "${ri[@]}")" -v pairs="${#rb[@]}" 'BEGIN {
        ok = (mb >= 1 / 1.3 && mb <= 1.3 && mi >= 1 / 1.3 && mi <= 1.3) ? "yes" : "NO"
        printf "bench: flow-libipt-check file=%s blk: bench=%s plain=%s insn: bench=%s plain=%s (plain/bench, median of %d pairs: %.2f %.2f; best against best: %.2f %.2f; within 30%%: %s)\n",
               n, bb, bp, ib, ip, pairs, mb, mi, bp / bb, ip / ib, ok }'
    local t
    procs=${BENCH_PROCESSES:-$((want < 2000000 ? 300 : 100))}
    t=$(build/bench/proc_time --pairs "$procs" build/ptboot flow "${args[@]}" --quiet --stat -- \
        "${libenv[@]}" build/bench/libipt_count "${args[@]}") || return 1
    process_line flow-process "$name" libipt "$t" " insns=$insns" goal
}

status=0
for t in $REAL_TRACES; do
    real_trace_read "$t"
    one_trace "" || status=1
    if [ -n "$PTBOOT_LIBIPT_LIB" ]; then
        one_trace "LD_LIBRARY_PATH=$PTBOOT_LIBIPT_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" |
            sed 's/^bench: flow/bench: flow-lib2/' || status=1
    fi
    if [ -n "$PTXED" ]; then
        lo=${filter%-*} hi=${filter#*-}
        mapfile -t raw < <(ptxed_raw "$REAL_DIR/$name/pages")
        xenv=()
        [ -n "$PTXED_LD_LIBRARY_PATH" ] && xenv=("LD_LIBRARY_PATH=$PTXED_LD_LIBRARY_PATH")
        x=$(build/bench/proc_time --pairs "$procs" build/ptboot flow "${args[@]}" --quiet --stat -- \
            "${xenv[@]}" "$PTXED" --filter:addr0_cfg 1 --filter:addr0_a "0x$lo" --filter:addr0_b "0x$hi" \
            --pt "$REAL_DIR/$name/trace.pt" "${raw[@]}" --quiet --stat) || { status=1; continue; }
        process_line flow-process-ptxed "$name" ptxed "$x" "" ""
    fi
done
exit $status
