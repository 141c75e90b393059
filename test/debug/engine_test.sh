#!/bin/sh
# engine_test.sh - the debugger's commands on test/debug/engine.cpp: 50
# coroutines in C++, one deleted, and a second thread with a schedule of its
# own, in gdb (debug/coroutine-gdb.py) or lldb (debug/coroutine_lldb.py).
#
# Stopped inside coroutine_delete's unwinding (in _Unwind_ForcedUnwind, then
# in the guard's destructor), the deleted coroutine is "being deleted" and
# its entry is actor.  Stopped in stop_here: a command that selects another
# thread or inferior, alone or from Python, leaves every thread's registers
# in that thread; one that turns calls or writes back on (with, set,
# Python) is refused; an id range over the deleted slot skips it with a
# line and goes on; frame apply all -s finds hit in whichever frame has it;
# a register written in the other thread is put back.  The registers of both
# threads, both run stacks and the selection must be as before, and the
# program, continued, must print what it prints without the debugger.  In
# gdb, on the core file taken there, with thread 2 selected: a coroutine's
# backtrace, and thread 2's own afterwards; and info coroutines and
# coroutine bt must take at most 3 times their CPU time live, the first
# command at most 3 times a copy and an opening of the core file more
# (the copy it opens once, in the core file's place).
#
#   engine_test.sh gdb PROG DIR
#   engine_test.sh lldb PROG DIR     (Debian's lldb: PYTHONPATH, see mk/debug.mk)
set -u
tool=$1 prog=$2 dir=$3
here=$(cd "$(dirname "$0")" && pwd)
debug=$here/../../debug
mkdir -p "$dir"
rm -rf "$dir"/*

fail() { echo "FAIL: $prog ($tool, engine): $1"; echo "---- $log:"; cat "$log"; exit 1; }
section() { awk -v n="@@ $1" '$0 == n { on = 1; next } /^@@ / { on = 0 } on' "$log" | grep -v '^(lldb)'; }
expect() { section "$1" | grep -Eq -- "$2" || fail "'$1' shows no line matching: $2"; }
expect_none() { ! section "$1" | grep -Eq -- "$2" || fail "'$1' shows a line matching: $2"; }
# The values a section printed, on one line.
values() { section "$1" | sed -n -e 's/^\$[0-9]* = //p' -e 's/^(int) \$[0-9]* = //p' | tr '\n' ' '; }
# The functions of a backtrace, after the library's at its top.
frames() {
	section "$1" | sed -n 's/^#[0-9]* *\(0x[0-9a-f]* in \)\{0,1\}\([A-Za-z_][A-Za-z_0-9]*\) (.*/\2/p' |
		awk '!seen && /^(coroutine_yield|coroutine_switch_context|swapcontext)$/ { next } { seen = 1; print }' |
		head -n "$2" | tr '\n' ' '
}
# The ids 0 to 49 but 3 (deleted), times 3: each actor's hit.
hits=$(awk 'BEGIN { for (i = 0; i < 50; i++) if (i != 3) printf "%d ", i * 3 }')
# The row of the deleted coroutine, stopped in its unwinding.
deleted_row='^ +3 +being deleted +- +(::)?actor(\([^)]*\))? '  # lldb's: ::actor(schedule *, void *)

"$prog" > "$dir/expected.out" 2>&1

if [ "$tool" = lldb ]; then
	log=$dir/lldb.log
	lldb -b -o "settings set interpreter.stop-command-source-on-error false" \
		-o "command script import $debug/coroutine_lldb.py" -o "breakpoint set -n _Unwind_ForcedUnwind" \
		-o "breakpoint set -n stop_here" -o "process launch -o $dir/live.out" \
		-o "script print('@@ unwinding')" -o "coroutine info" -o "breakpoint delete -f 1" -o continue \
		-o "frame select 1" -o "script print('@@ before')" -o "register read --all" -o "thread list" \
		-o "script print('@@ thread2')" -o "coroutine apply world 0 thread select 2" \
		-o "script print('@@ range')" -o "coroutine apply world 2-4 -q frame info" \
		-o "script print('@@ after')" -o "register read --all" -o "thread list" \
		-o "script print('@@ end')" -o continue "$prog" > "$log" 2>&1
	expect unwinding "$deleted_row"
	expect thread2 '^\* thread #2'
	[ "$(section range | grep -c '^frame #')" = 2 ] && expect range '^warning: coroutine 3: the slot is empty' ||
		fail "coroutine apply world 2-4 does not run among 2 and 4, skipping 3 with a line"
	[ "$(section before)" = "$(section after)" ] || fail "the registers or the selected thread changed"
	cmp -s "$dir/expected.out" "$dir/live.out" ||
		fail "the program printed otherwise under lldb: diff $dir/expected.out $dir/live.out"
	echo "ok: $prog (lldb, engine)"
	exit 0
fi

GDB=${GDB:-gdb}
log=$dir/live.log
# What both sessions use (gdb -x runs Python files in one namespace).
cat > "$dir/helpers.py" <<'EOF'
import hashlib, time
def state():
    """Every thread's registers, both run stacks, the selection."""
    here, level = gdb.selected_thread(), gdb.selected_frame().level()
    for thread in sorted(gdb.selected_inferior().threads(), key=lambda t: t.num):
        thread.switch()
        print("thread", thread.num, hashlib.sha1(gdb.execute("info all-registers", to_string=True).encode()).hexdigest())
    here.switch()
    for name in ("world", "side"):
        S = gdb.parse_and_eval(name)
        stack = bytes(gdb.selected_inferior().read_memory(int(S["stack"]), int(S["top"]) - int(S["stack"])))
        print("run stack of", name, hashlib.sha1(stack).hexdigest())
    print_thread()
    gdb.execute("frame %d" % level)
def print_thread():
    print(gdb.execute("thread", to_string=True).split(" (")[0])
def cpu(command, times):
    """The least CPU time gdb takes for command, of times."""
    best = None
    for _ in range(times):
        start = time.process_time()
        gdb.execute(command, to_string=True)
        spent = time.process_time() - start
        best = spent if best is None else min(best, spent)
    return best
def first_listing():
    """The first info coroutines on a core file (it opens the copy): its CPU time and its rows."""
    start = time.process_time()
    rows = gdb.execute("info coroutines", to_string=True)
    print("first %.6f" % (time.process_time() - start))
    print(rows)
def timing():
    print("info %.6f" % cpu("info coroutines", 3))
    print("bt %.6f" % cpu("coroutine bt world 5", 10))
def run(name, command):
    print("@@ " + name, flush=True)
    try:
        command() if callable(command) else gdb.execute(command)
    except gdb.error as e:
        print(e)
EOF
cat > "$dir/live.py" <<'EOF'
def from_thread_2():
    gdb.execute("thread 2", to_string=True)
    gdb.execute("coroutine apply world 0 thread 1")
    print_thread()
    gdb.execute("thread 1", to_string=True)
    gdb.execute("frame 1", to_string=True)
caller_saved = "rax" if gdb.selected_inferior().architecture().name() == "i386:x86-64" else "x0"
for name, command in [
        ("before", state),
        ("thread2", "coroutine apply world 0 thread 2"),
        ("python", "coroutine apply world 0 python [t for t in gdb.selected_inferior().threads() if t.num == 2][0].switch()"),
        ("inferior", "coroutine apply world 0 inferior 2"),
        ("fromthread2", from_thread_2),
        ("with", "coroutine apply world 0 with may-call-functions on -- with may-write-memory on -- print bump()"),
        ("set", "coroutine apply world 0 python gdb.execute('set may-write-memory on')"),
        ("setting", "show may-write-memory"),
        ("range", "coroutine apply world 2-4 -q frame apply all -s print hit"),
        ("hits", "coroutine apply world all -s -q frame apply all -s print hit"),
        ("register", "coroutine apply world 0 thread apply 2 set var $%s = 5" % caller_saved),
        ("timing", timing),
        ("after", state),
        ("end", "echo")]:
    run(name, command)
EOF
cat > "$dir/core.py" <<'EOF'
import os, shutil
def copy_time():
    """The CPU time of a copy of the core file."""
    start = time.process_time()
    shutil.copyfile(core, core + ".copy")
    spent = time.process_time() - start
    os.remove(core + ".copy")
    return spent
gdb.execute("thread 2", to_string=True)
gdb.execute("coroutine bt side 1", to_string=True)  # gdb reads the debug information, as it had live
for name, command in [("first", first_listing), ("timing", timing), ("ownbefore", "bt"), ("bt", "coroutine bt world 5"),
                      ("thread", print_thread), ("own", "bt"), ("side", "coroutine bt side 0"),
                      ("open", lambda: print("open %.6f" % (copy_time() + cpu("core-file " + core, 1))))]:
    run(name, command)
EOF
"$GDB" -nx -batch -x "$debug/coroutine-gdb.py" -ex 'set breakpoint pending on' -ex 'break _Unwind_ForcedUnwind' \
	-ex 'break stop_in_destructor' -ex 'break stop_here' -ex "run > $dir/live.out 2>&1" \
	-ex 'echo @@ unwinding\n' -ex 'info coroutines' -ex continue -ex 'echo @@ destructor\n' -ex 'info coroutines' \
	-ex 'delete' -ex 'break stop_here' -ex continue -ex 'add-inferior' -ex 'frame 1' -x "$dir/helpers.py" -x "$dir/live.py" \
	-ex "generate-core-file $dir/core" -ex 'delete' -ex continue "$prog" > "$log" 2>&1
expect unwinding "$deleted_row"
expect destructor "$deleted_row"' *stop_in_destructor \('

section before > "$dir/before"
section after > "$dir/after"
grep -q '^thread 2 ' "$dir/before" || fail "no state of thread 2 before the commands"
cmp -s "$dir/before" "$dir/after" || fail "registers, run stacks or selection changed: diff $dir/before $dir/after"
expect fromthread2 '^\[Current thread is (1\.)?2$'
expect with "^coroutine apply: with may-call-functions on -- with may-write-memory on -- print bump\\(\\) turns may-call-functions and may-write-memory on among coroutine 0's frames: refused"
expect set "coroutine apply: python gdb.execute\\('set may-write-memory on'\\) turns may-write-memory on among coroutine 0's frames: refused"
expect setting 'is on\.$'
[ "$(values range)" = "6 12 " ] && expect range '^warning: coroutine 3: the slot is empty' ||
	fail "coroutine apply world 2-4 does not print 2's and 4's hit (6 12), skipping 3 with a line"
[ "$(values hits)" = "$hits" ] || fail "frame apply all -s print hit does not find every actor's hit"
expect register '^coroutine apply: thread apply 2 set var \$(rax|x0) = 5 wrote to register (rax|x0) \(in thread 2\): undone'
cmp -s "$dir/expected.out" "$dir/live.out" ||
	fail "the program printed otherwise under gdb: diff $dir/expected.out $dir/live.out"
echo "ok: $prog (gdb, engine)"

# The core file, thread 2 selected.
live=$(section timing)
log=$dir/core.log
"$GDB" -nx -batch -x "$debug/coroutine-gdb.py" -x "$dir/helpers.py" -ex "python core = '$dir/core'" \
	-x "$dir/core.py" "$prog" "$dir/core" > "$log" 2>&1
[ "$(section ownbefore)" = "$(section own)" ] && grep -q '^#0 ' "$dir/core.log" ||
	fail "thread 2's own backtrace is not the same after coroutine bt"
expect thread '^\[Current thread is 2$'
[ "$(frames bt 3)" = "think think actor " ] || fail "coroutine bt world 5 (thread 2 selected) shows '$(frames bt 3)', not think, think, actor"
[ "$(frames side 1)" = "side_waiter " ] || fail "coroutine bt side 0 shows '$(frames side 1)', not side_waiter"
# CPU times: live and core, each the least of a few; the first command on
# the core copies it and opens the copy, once ("open": a copy and an
# opening, also at most 3 times).
expect first '^ +0 +suspended +[0-9]+ +side_waiter +side_waiter \(engine\.cpp:[0-9]+\)$'
expect first '^ +5 +suspended +[0-9]+ +actor +think \(engine\.cpp:[0-9]+\)$'
echo "$live" "$(section timing)" "$(section first | grep '^first ')" "$(section open)" | awk '
	{ for (i = 1; i < NF; i += 2) t[$i, ++n[$i]] = $(i + 1) }
	END {
		printf "engine: info coroutines %.3fs live, %.3fs on the core (%.3fs the first time, a copy and an opening %.3fs); coroutine bt %.4fs, %.4fs\n",
			t["info", 1], t["info", 2], t["first", 1], t["open", 1], t["bt", 1], t["bt", 2]
		exit !(t["info", 2] <= 3 * t["info", 1] && t["bt", 2] <= 3 * t["bt", 1] &&
		       t["first", 1] - t["info", 2] <= 3 * t["open", 1])
	}' || fail "on the core file, the commands take more than 3 times their time live (the first, more than 3 times a copy and an opening more)"
echo "ok: $prog (gdb, engine's core file)"
