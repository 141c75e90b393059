#!/bin/sh
# gdb_demo.sh - the commands on a program not written for them: the demo
# (main.cpp) built at -O0, stopped in coroutine 0's third turn while
# coroutine 1 waits in its second: coroutine 1's frames and locals, live
# and on a core file taken there; and the program runs on as without gdb.
#
#     test/debug/gdb_demo.sh MAIN DIR
set -u
main=$1 dir=$2
script=debug/coroutine-gdb.py
mkdir -p "$dir"
rm -f "$dir/core"
failed=0

# check NAME LOG REGEX: LOG has a line matching REGEX.
check() {
	if grep -Eq -- "$3" "$2"; then echo "ok: $1"; else
		echo "FAIL: $1: no line matching $3 in $2:"; cat "$2"; failed=1; fi
}

# The fifth stop at foo's printf is coroutine 0's third turn (stopped in
# foo's own frame: at -O0, loading coroutine 1's frame pointer there makes
# gdb select an outer frame).
line=$(grep -n 'coroutine_running(S), start + i' main.cpp | cut -d: -f1)
"$main" > "$dir/plain.out"
gdb -nx -batch -x $script -ex "break main.cpp:$line" -ex 'ignore 1 4' -ex "run > $dir/gdb.out" \
	-ex 'info coroutines' -ex 'coroutine bt 1' -ex 'coroutine apply 1 info locals' \
	-ex "generate-core-file $dir/core" -ex delete -ex continue "$main" > "$dir/live.log" 2>&1
gdb -nx -batch -x $script -ex 'info coroutines' -ex 'coroutine bt 1' -ex 'coroutine apply 1 info locals' \
	"$main" "$dir/core" > "$dir/core.log" 2>&1
for view in live core; do
	check "the demo ($view): coroutine 1 waits in foo" "$dir/$view.log" '^ +1 +suspended +[0-9]+ +foo +foo \(main\.cpp:[0-9]+\)$'
	check "the demo ($view): its backtrace" "$dir/$view.log" '^#[0-9]+ +0x[0-9a-f]+ in foo \(S=0x[0-9a-f]+, ud=0x[0-9a-f]+\) at main\.cpp:[0-9]+$'
	check "the demo ($view): its locals" "$dir/$view.log" '^i = 1$'
done
check "the demo ran on" "$dir/live.log" 'exited normally'
if cmp -s "$dir/plain.out" "$dir/gdb.out"; then echo "ok: the demo printed what it prints without gdb"; else
	echo "FAIL: the demo printed otherwise under gdb"; diff "$dir/plain.out" "$dir/gdb.out"; failed=1; fi
exit $failed
