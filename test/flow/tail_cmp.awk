# A cut trace's flow with its tail against the whole run (test/flow/
# tail_real.sh, tail_vpt.sh). First file: the whole run's lines; second:
# the flow of the cut trace with --tail. -v run=WORDS names the first in
# messages. The lines before [tail] must be the run's first ones; the
# tail's must go on as the run did, until an event of the run (the tail
# stops before it) or the run's end. Prints "ok TAIL SAME EVENTS" or a
# FAIL line.
FNR == NR {
    if ($0 ~ /^[0-9a-f]+$/) { n++; ip[n] = $0 }
    else if ($0 != "[end of trace]") ev[n + 1] = 1   # before instruction n+1
    next
}
/^\[tail\]$/ { intail = 1; next }
!/^[0-9a-f]+$/ { next }
!intail {
    k++
    if (k > n || $0 != ip[k]) { print "FAIL flow instruction " k " is " $0 ", " run " " ip[k]; exit }
    next
}
{
    j++
    if (stop) next
    if (k + j > n) { stop = 1; next }
    if (ev[k + j]) { stop = 1; evs++; next }
    if ($0 != ip[k + j]) { print "FAIL tail instruction " j " is " $0 ", " run " " ip[k + j]; exit }
    same++
}
END { printf "ok %d %d %d\n", j, same, evs }
