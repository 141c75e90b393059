#!/bin/sh
# gdb_nonstop.sh - test/debug/nonstop.c in gdb's non-stop mode: main stopped
# while another thread runs a coroutine of the schedule whose coroutine 0 is
# suspended.  Any thread may run on a schedule's run stack, so every
# coroutine command must say in one line that a thread runs, and touch
# nothing: the program, continued, must print what it prints without gdb.
#
#     test/debug/gdb_nonstop.sh NONSTOP DIR
set -u
prog=$1 dir=$2
mkdir -p "$dir"
log=$dir/gdb.log
"$prog" > "$dir/expected.out" 2>&1
gdb -nx -batch -x debug/coroutine-gdb.py -ex 'set non-stop on' -ex 'break stop_here' -ex "run > $dir/live.out 2>&1" \
	-ex 'info coroutines' -ex 'coroutine bt shared 0' -ex 'coroutine apply shared 0 print kept' \
	-ex 'coroutine bt shared 1' -ex 'coroutine apply all bt' -ex continue "$prog" > "$log" 2>&1
failed=0
refusal='^(info coroutines|coroutine bt|coroutine apply): thread [0-9]+ is running, and any thread may run on a schedule.s run stack: stop them all first \(interrupt -a\)$'
[ "$(grep -Ec -- "$refusal" "$log")" = 5 ] || { echo "FAIL: non-stop: not one line per command saying that a thread runs"; failed=1; }
grep -q 'Selected thread is running' "$log" && { echo "FAIL: non-stop: gdb's own 'Selected thread is running.'"; failed=1; }
grep -q 'changed 0 times' "$dir/expected.out" || { echo "FAIL: non-stop: the program alone does not find its array intact"; failed=1; }
cmp -s "$dir/expected.out" "$dir/live.out" || { echo "FAIL: non-stop: the program printed otherwise under gdb"; diff "$dir/expected.out" "$dir/live.out"; failed=1; }
[ $failed = 1 ] && cat "$log" && exit 1
echo "ok: $prog (non-stop: a thread runs on the run stack)"
