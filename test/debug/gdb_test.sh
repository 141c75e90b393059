#!/bin/sh
# gdb_test.sh - debug/coroutine-gdb.py against test/debug/waiting.c, in gdb's
# batch mode: live, stopped in stop_here while coroutines wait, then on the
# core file taken there.  Each command's output is checked; after them the
# registers and the run stack must be as before, and the program, continued,
# must print what it prints without gdb.
#
#   gdb_test.sh PROG DIR [-O0]     natively, with gdb
#   EMULATOR=qemu-aarch64 SYSROOT=/usr/aarch64-linux-gnu gdb_test.sh PROG DIR
#                                  under qemu-user's gdb stub, with gdb-multiarch
#
# -O0 also checks the arguments (optimized code may keep them nowhere).
# Prints one line per view; exits 1 at the first failure, with its log.
set -u
prog=$1 dir=$2 level=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
script=$here/../../debug/coroutine-gdb.py
GDB=${GDB:-gdb}
mkdir -p "$dir"
rm -f "$dir"/*

fail() { echo "FAIL: $prog ($1): $2"; echo "---- $dir/$1.log:"; cat "$dir/$1.log"; exit 1; }

# The section of a log between "@@ name" and the next marker.
section() { awk -v n="@@ $2" '$0 == n { on = 1; next } /^@@ / { on = 0 } on' "$dir/$1.log"; }

expect() { # view section regex (extended, one line must match)
	section "$1" "$2" | grep -Eq -- "$3" || fail "$1" "'$2' shows no line matching: $3"
}

# The functions of a backtrace after the library's frames at its top.
frames() {
	section "$1" "$2" | sed -n 's/^#[0-9]* *\(0x[0-9a-f]* in \)\{0,1\}\([A-Za-z_][A-Za-z_0-9]*\) (.*/\2/p' |
		awk '!seen && /^(coroutine_yield|coroutine_try_yield|switch_to_main|coroutine_switch_context)$/ { next }
		     { seen = 1; print }' | head -n "$3" | tr '\n' ' '
}

expect_frames() { # view section functions...
	view=$1 sec=$2; shift 2
	got=$(frames "$view" "$sec" $#)
	[ "$got" = "$* " ] || fail "$view" "'$sec' shows frames '$got', not '$* '"
}

# The commands, each after a marker, each run whatever the last one did
# (a failing command ends a batch gdb's command file); the state (registers,
# run stack, selected frame) before and after them.
commands() {
	cat <<'EOF'
import hashlib
def state():
    gdb.execute("info registers")
    S = gdb.parse_and_eval("game")
    stack = bytes(gdb.selected_inferior().read_memory(int(S["stack"]), int(S["top"]) - int(S["stack"])))
    print("run stack", hashlib.sha1(stack).hexdigest())
    gdb.execute("frame")
def run(name, command):
    print("@@ " + name, flush=True)
    try:
        command() if callable(command) else gdb.execute(command)
    except (gdb.error, KeyboardInterrupt) as e:
        print(e or type(e).__name__)
for name, command in [
        ("before", state),
        ("info", "info coroutines"),
        ("bt0", "coroutine bt game 0"),
        ("bt2", "coroutine bt game 2"),
        ("bt3", "coroutine bt game 3"),
        ("bt4", "coroutine bt game 4 full"),
        ("btother", "coroutine bt other 0"),
        ("bt1", "coroutine bt game 1"),
        ("mine", "coroutine apply game 0 frame apply all -s -q print mine"),
        ("n", "coroutine apply game 2 print n"),
        ("block", "coroutine apply game 4 print block[0] + 1000 * block[332]"),
        ("x", "coroutine apply other 0 print x"),
        ("up", "coroutine apply game 0 up 3"),
        ("failing", "coroutine apply game 0 print no_such_variable"),
        ("interrupted", "coroutine apply game 0 python import os, signal, time; os.kill(os.getpid(), signal.SIGINT); time.sleep(0.5)"),
        ("empty", "coroutine bt game 7"),
        ("range", "coroutine bt game 99"),
        ("which", "coroutine bt 0"),
        ("notschedule", "coroutine bt stop_here 0"),
        ("notopen", "coroutine bt game+1 0"),
        ("nextbest", lambda: print(next_best(*split_schedule(["game", "0"])[:2], find_coroutine(*split_schedule(["game", "0"])[:2], "0")[1]))),
        ("nextbest4", lambda: print(next_best(*split_schedule(["game", "4"])[:2], find_coroutine(*split_schedule(["game", "4"])[:2], "4")[1]))),
        ("after", state),
        ("end", "echo")]:
    run(name, command)
EOF
}

check_view() { # view
	v=$1
	[ -s "$dir/$v.log" ] || fail "$v" "gdb printed nothing"
	section "$v" before > "$dir/$v.before"
	section "$v" after > "$dir/$v.after"
	grep -q "^run stack" "$dir/$v.before" || fail "$v" "no state before the commands"
	cmp -s "$dir/$v.before" "$dir/$v.after" || fail "$v" "registers, run stack or frame changed: diff $dir/$v.before $dir/$v.after"
	expect "$v" info '^ +0 +suspended +[0-9]+ +descend \(waiting\.c:[0-9]+\)$'
	expect "$v" info '^ +1 +never started +0 +will start in never_started$'
	expect "$v" info '^ +2 +suspended +[0-9]+ +shallow_waiter \(waiting\.c:[0-9]+\)$'
	expect "$v" info '^ +3 +running +- +stop_here \(waiting\.c:[0-9]+\)$'
	expect "$v" info '^ +4 +suspended +[0-9]+ +sum_after_yield \(waiting\.c:[0-9]+\)$'
	expect "$v" info '^ +0 +suspended +[0-9]+ +other_schedule_waiter \(waiting\.c:[0-9]+\)$'
	expect_frames "$v" bt0 descend descend descend descend deep_walker
	expect_frames "$v" bt2 shallow_waiter
	expect_frames "$v" bt3 stop_here runner
	expect_frames "$v" bt4 sum_after_yield array_keeper
	expect "$v" bt4 '^ +block = '
	expect_frames "$v" btother other_schedule_waiter
	if [ "$level" = -O0 ]; then
		expect "$v" bt0 'descend \(S=0x[0-9a-f]+, depth=0, seed=10\)'
		expect "$v" bt0 'descend \(S=0x[0-9a-f]+, depth=3, seed=7\)'
		expect "$v" bt0 'deep_walker \(S=0x[0-9a-f]+, ud=0x[0-9a-f]+\)'
		expect "$v" bt3 'stop_here \(step=17\)'
	fi
	expect "$v" bt1 '^coroutine 1 has not started: it will start in never_started$'
	[ "$(section "$v" mine | sed -n 's/^\$[0-9]* = //p' | tr '\n' ' ')" = "100 91 82 73 " ] ||
		fail "$v" "the four descend frames' mine are not 100 91 82 73"
	expect "$v" n '^\$[0-9]+ = 13$'
	expect "$v" block '^\$[0-9]+ = 95019$'
	expect "$v" x '^\$[0-9]+ = 34.5$'
	expect "$v" up '^#[0-9]+ +0x[0-9a-f]+ in descend \(.*waiting\.c:[0-9]+$'
	expect "$v" failing '^No symbol "no_such_variable" in current context.$'
	expect "$v" interrupted 'KeyboardInterrupt'
	expect "$v" empty '^coroutine 7: the slot is empty'
	expect "$v" range '^coroutine 99 is out of range: schedule 0x[0-9a-f]+ has ids \[0, 16\)$'
	expect "$v" which '^2 schedules are open: name one first'
	expect "$v" notschedule '^stop_here is a .*not a struct schedule \* nor an id$'
	expect "$v" notopen '^game\+1 \(0x[0-9a-f]+\) is not an open schedule$'
	# Where no view can be had (a core file it cannot patch): the
	# functions and lines of the code addresses in the saved slice.
	expect "$v" nextbest '(^|, )descend \(waiting\.c:[0-9]+\), (.*, )?descend \(waiting\.c:[0-9]+\), .*deep_walker \(waiting\.c:[0-9]+\)'
	expect "$v" nextbest4 '(^|, )sum_after_yield \(waiting\.c:[0-9]+\), (.*, )?array_keeper \(waiting\.c:[0-9]+\)'
	echo "ok: $prog ($v)"
}

if [ -n "${EMULATOR:-}" ]; then
	port=$((20000 + $$ % 20000))
	$EMULATOR -L "$SYSROOT" -g $port "$prog" > "$dir/expected.out" 2>&1 &
	{ echo "set sysroot $SYSROOT"; echo "set solib-search-path $SYSROOT/lib"
	  echo "target remote :$port"; } > "$dir/start.gdb"
	$GDB -nx -batch -x "$dir/start.gdb" -ex continue > /dev/null 2>&1
	wait
	$EMULATOR -L "$SYSROOT" -g $port "$prog" > "$dir/live.out" 2>&1 &
	start="-x $dir/start.gdb"
	run="continue"
	# qemu-user's gdb stub has no memory map: gdb would write a core of
	# the whole address space.
	core=
else
	"$prog" > "$dir/expected.out" 2>&1
	start=
	run="run > $dir/live.out 2>&1"
	core="generate-core-file $dir/core"
fi

# Live: stopped in stop_here, the commands, a core file, then on to the end.
commands > "$dir/commands.py"
$GDB -nx -batch $start -x "$script" -ex "break stop_here" -ex "$run" -x "$dir/commands.py" \
	${core:+-ex "$core"} -ex continue "$prog" > "$dir/live.log" 2>&1
wait
check_view live
cmp -s "$dir/expected.out" "$dir/live.out" || fail live "the program printed otherwise under gdb: diff $dir/expected.out $dir/live.out"

# The core file taken at the same point.
if [ -z "$core" ]; then
	echo "not checked: $prog (core): gdb takes no core file through qemu-user's stub"
elif [ -s "$dir/core" ]; then
	$GDB -nx -batch -x "$script" -x "$dir/commands.py" "$prog" "$dir/core" > "$dir/core.log" 2>&1
	check_view core
else
	echo "FAIL: $prog: gdb wrote no core file"; exit 1
fi
