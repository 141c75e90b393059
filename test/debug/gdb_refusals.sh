#!/bin/sh
# gdb_refusals.sh - what debug/coroutine-gdb.py says when it cannot show
# anything: one line, and the program runs on as without gdb.
#
#     test/debug/gdb_refusals.sh WAITING NO-G NO-HOOK DIR
#
# WAITING is test/debug/waiting.c built with -g, NO-G the same without -g,
# NO-HOOK with -g against a coroutine.cpp whose debugger's view is cut out.
set -u
waiting=$1 no_g=$2 no_hook=$3 dir=$4
script=debug/coroutine-gdb.py
mkdir -p "$dir"
failed=0

# check NAME LOG REGEX: LOG has a line matching REGEX.
check() {
	if grep -Eq -- "$3" "$2"; then echo "ok: $1"; else
		echo "FAIL: $1: no line matching $3 in $2:"; cat "$2"; failed=1; fi
}

# With no process (not started yet, or ended) and no core file.
gdb -nx -batch -x $script -ex 'info coroutines' -ex 'run > /dev/null' -ex 'coroutine bt 0' \
	"$waiting" > "$dir/no-process.log" 2>&1
check "no process: info coroutines" "$dir/no-process.log" '^no process: run the program, attach to it, or open a core file$'
[ "$(grep -c '^no process:' "$dir/no-process.log")" = 2 ] || { echo "FAIL: no process: not one line per command"; failed=1; }

# Before any schedule is open, and while the first is half made (its run
# stack being mapped: the first mmap of coroutine_open), when it is not
# listed yet: a schedule joins the list once its run stack is there.
gdb -nx -batch -x $script -ex 'break main' -ex 'run > /dev/null' -ex 'info coroutines' -ex 'coroutine bt 0' \
	-ex 'break mmap' -ex continue -ex 'info coroutines' -ex 'coroutine bt 0' -ex 'delete' -ex continue \
	"$waiting" > "$dir/none.log" 2>&1
check "no schedule open: info coroutines" "$dir/none.log" '^No schedule is open\.$'
check "no schedule open: coroutine bt" "$dir/none.log" '^no schedule is open$'
[ "$(grep -c '^No schedule is open\.$' "$dir/none.log")" = 2 ] && echo "ok: a schedule being opened is not listed" ||
	{ echo "FAIL: a schedule being opened: listed before its run stack is mapped"; cat "$dir/none.log"; failed=1; }
check "the program ran on" "$dir/none.log" 'exited normally'

for case in no_g no_hook; do
	eval prog=\$$case
	gdb -nx -batch -x $script -ex 'break stop_here' -ex 'run > /dev/null' -ex 'info coroutines' \
		-ex 'coroutine bt 0' -ex 'coroutine apply 0 bt' -ex continue "$prog" > "$dir/$case.log" 2>&1
	[ $case = no_g ] && why='^the coroutine library has no debug information: build coroutine.cpp with -g$' ||
		why="^this coroutine library has no debugger's hook"
	check "$case: info coroutines, coroutine bt, coroutine apply" "$dir/$case.log" "$why"
	[ "$(grep -Ec -- "$why" "$dir/$case.log")" = 3 ] || { echo "FAIL: $case: not one line per command"; failed=1; }
	check "$case: the program ran on" "$dir/$case.log" 'exited normally'
done

gdb -nx -batch -x $script -ex 'info coroutines' /bin/true > "$dir/other.log" 2>&1
check "a program without the library" "$dir/other.log" '^no coroutine library in this program'
exit $failed
