#!/bin/sh
# gdb_two_copies.sh - two copies of the library in one process (the
# program's, asm; a plugin's, ucontext): info coroutines lists the schedules
# of both, and coroutine bt and apply work in each (a waiting coroutine's
# backtrace may start in coroutine_yield, where ucontext's waits); the
# program runs on.
#
#     test/debug/gdb_two_copies.sh TWO_COPIES PLUGIN DIR
set -u
prog=$1 plugin=$2 dir=$3
mkdir -p "$dir"
log=$dir/gdb.log
"$prog" "$plugin" > "$dir/expected.out" 2>&1
gdb -nx -batch -x debug/coroutine-gdb.py -ex 'break stop_here' -ex "run $plugin > $dir/live.out" \
	-ex 'info coroutines' -ex 'coroutine bt plugin_schedule 0' -ex 'coroutine bt host_schedule 0' \
	-ex 'coroutine apply plugin_schedule 0 print plugin_local' -ex 'coroutine apply host_schedule 0 print host_local' \
	-ex continue "$prog" > "$log" 2>&1
failed=0
for pattern in '^schedule 0x[0-9a-f]+: 1 coroutine, asm backend$' '^schedule 0x[0-9a-f]+: 1 coroutine, ucontext backend$' \
	'^ +0 +suspended +[0-9]+ +host_waiter +host_waiter \(two_copies\.c:[0-9]+\)$' '^ +0 +suspended +[0-9]+ +plugin_waiter +plugin_waiter \(plugin\.c:[0-9]+\)$' \
	'^#[01] .*plugin_waiter \(' '^#[01] .*host_waiter \(' '^\$1 = 40$' '^\$2 = 7$'; do
	grep -Eq -- "$pattern" "$log" || { echo "FAIL: two copies of the library: no line matching $pattern in $log"; failed=1; }
done
cmp -s "$dir/expected.out" "$dir/live.out" || { echo "FAIL: two copies: the program printed otherwise under gdb"; failed=1; }
[ $failed = 1 ] && cat "$log" && exit 1
echo "ok: two copies of the library in one process"
