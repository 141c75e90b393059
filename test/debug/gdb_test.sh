#!/bin/sh
# gdb_test.sh - debug/coroutine-gdb.py against test/debug/waiting.c, in gdb's
# batch mode: live, stopped in stop_here while coroutines wait (frame #1
# selected), then on the core file taken there; and live again, stopped
# inside the library in the middle of switches.  Each command's output is
# checked; after them the registers, the run stacks and the selected frame
# must be as before (on the core file, the copy that the commands opened in
# its place must be the original byte for byte), and the program, continued,
# must print what it prints without gdb.
#
#   gdb_test.sh PROG DIR [-O0]     natively, with gdb
#   EMULATOR=qemu-aarch64 SYSROOT=/usr/aarch64-linux-gnu gdb_test.sh PROG DIR
#                                  under qemu-user's gdb stub, with gdb-multiarch
#
# -O0 also checks the arguments (optimized code may keep them nowhere), and
# a stop in the middle of a resume's copy.
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

# Whether the view ran the section (the core view runs some: see commands).
ran() { [ "$1" != core ] || grep -qxF "@@ $2" "$dir/$1.log"; }

expect() { # view section regex (extended, one line must match)
	! ran "$1" "$2" || section "$1" "$2" | grep -Eq -- "$3" || fail "$1" "'$2' shows no line matching: $3"
}

expect_none() { # view section regex: no line may match
	! ran "$1" "$2" || ! section "$1" "$2" | grep -Eq -- "$3" || fail "$1" "'$2' shows a line matching: $3"
}

# The functions of a backtrace after the library's frames at its top.
frames() {
	section "$1" "$2" | sed -n 's/^#[0-9]* *\(0x[0-9a-f]* in \)\{0,1\}\([A-Za-z_][A-Za-z_0-9]*\) (.*/\2/p' |
		awk '!seen && /^(coroutine_yield|coroutine_try_yield|switch_to_main|coroutine_switch_context|swapcontext)$/ { next }
		     { seen = 1; print }' | head -n "$3" | tr '\n' ' '
}

expect_frames() { # view section functions...
	view=$1 sec=$2; shift 2
	ran "$view" "$sec" || return 0
	got=$(frames "$view" "$sec" $#)
	[ "$got" = "$* " ] || fail "$view" "'$sec' shows frames '$got', not '$* '"
}

# The commands, each after a marker, each run whatever the last one did
# (a failing command ends a batch gdb's command file); the state (all
# registers, the run stacks, the selected frame, and the core file's bytes)
# before and after them.
# On the core file (commands core), those whose path differs there: each
# view of one opens a patched copy of the core, which takes gdb a second.
commands() {
	if [ -n "${1:-}" ]; then echo "CORE = True"; else echo "CORE = False"; fi
	cat <<'EOF'
CORE_NAMES = ("before", "info", "bt0", "bt3", "bt4", "btouter", "bt1", "n", "outerlocal", "all", "failing",
              "interrupted", "call", "register", "resume next", "empty", "range", "which", "notschedule", "notopen",
              "nextbest", "nextbest4", "after", "runningcall", "end")
import hashlib, re
def state():
    gdb.execute("info registers")
    # qemu-user's stub reads SVE's predicates (p0-p15, ffr) with other
    # bytes past their length each time gdb fetches them: those are left out.
    registers = gdb.execute("info all-registers", to_string=True).splitlines()
    kept = [line for line in registers if not re.match(r"^(p[0-9]+|ffr) ", line)]
    print("all registers", len(kept), hashlib.sha1("\n".join(kept).encode()).hexdigest())
    for name in ("game", "other", "outer"):
        S = gdb.parse_and_eval(name)
        stack = bytes(gdb.selected_inferior().read_memory(int(S["stack"]), int(S["top"]) - int(S["stack"])))
        print("run stack of", name, hashlib.sha1(stack).hexdigest())
    if CORE:  # the one open: the original before the commands, the copy they opened after
        print("core file", hashlib.sha1(open(core_file_name(), "rb").read()).hexdigest())
    gdb.execute("frame")
def run(name, command):
    print("@@ " + name, flush=True)
    try:
        command() if callable(command) else gdb.execute(command)
    except (gdb.error, KeyboardInterrupt) as e:
        print(e or type(e).__name__)
def exact_place():
    """Where the 96-byte slice lies in its block, and where a deep one
    would: the test tells the two apart only if they differ."""
    lib, S, _ = split_schedule(["game"])
    C = S["co"][5]
    size, bottom = int(C["size"]), int(S["top"]) - int(C["size"])
    start = int(C) + lib.coroutine_size
    print("size %d, shallow %d, deep one %d bytes further" % (size, lib.shallow_slice, (bottom - start) & (lib.slice_align - 1)))
caller_saved = "rax" if gdb.selected_inferior().architecture().name() == "i386:x86-64" else "x0"
resuming = ["next", "n", "step", "stepi", "nexti", "finish", "continue", "until", "advance", "jump", "signal",
            "reverse-continue", "return", "run", "kill", "detach", "quit", "thread apply all next"]
def users_hook():
    """A hook-next of the user's own, kept after ours."""
    gdb.execute("define hook-next\necho the user's own hook\\n\nend")
    gdb.execute("coroutine apply game 2 print n", to_string=True)
    gdb.execute("show user hook-next")
def call_no_hook_sees():
    """A call in a command of the user's own (if is no command: no hook)."""
    gdb.execute("define probe_if\nif probe(1) != 0\nend\nend")
    gdb.execute("coroutine apply game 2 with may-call-functions on -- with may-write-memory on -- probe_if")
for name, command in [
        ("before", state),
        ("info", "info coroutines"),
        ("bt0", "coroutine bt game 0"),
        ("bt0last", "coroutine bt game 0 -2"),
        ("bt2", "coroutine bt game 2"),
        ("bt3", "coroutine bt game 3"),
        ("bt4", "coroutine bt game 4 full"),
        ("bt5", "coroutine bt game 5"),
        ("bt6", "coroutine bt game 6"),
        ("btother", "coroutine bt other 0"),
        ("btouter", "coroutine bt outer 0"),
        ("bt1", "coroutine bt game 1"),
        ("mine", "coroutine apply game 0 frame apply all -s -q print mine"),
        ("n", "coroutine apply game 2 print n"),
        ("block", "coroutine apply game 4 print block[0] + 1000 * block[332]"),
        ("exact", "coroutine apply game 5 print exact_local"),
        ("exactplace", exact_place),
        ("x", "coroutine apply other 0 print x"),
        ("outerlocal", "coroutine apply outer 0 print outer_local"),
        ("up", "coroutine apply game 0 up 3"),
        ("all", "coroutine apply all -s -q print mine"),
        ("allbt", "coroutine apply game all bt 1"),
        ("list", "coroutine apply game 2 4-5 -q print $pc"),
        ("single", "coroutine apply game 2-2 print n"),
        ("silent", "coroutine apply game all -s frame apply all -s print mine"),
        ("continuing", "coroutine apply game 0 2 -c print n"),
        ("stopping", "coroutine apply game 0 2 print n"),
        ("failing", "coroutine apply game 0 print no_such_variable"),
        ("interrupted", "coroutine apply game 0 python import os, signal, time; os.kill(os.getpid(), signal.SIGINT); time.sleep(0.5)"),
        ("call", "coroutine apply game 2 print probe(1)"),
        ("callcommand", "coroutine apply game 2 call probe(1)"),
        ("write", "coroutine apply game 4 print block[0] = 1"),
        ("inplace", "coroutine apply other 0 print x = 5"),
        ("register", "coroutine apply game 2 set var $%s = 1" % caller_saved),
        ("nested", "coroutine apply game 2 info coroutines"),
        ("python", "coroutine apply game 2 python gdb.execute('next')")] + \
        [("resume " + c, "coroutine apply game 2 " + c + {"advance": " stop_here", "jump": " *$pc", "signal": " 0"}.get(c, "")) for c in resuming] + [
        ("runningresume", "coroutine apply game 3 next"),
        ("userhook", users_hook),
        ("empty", "coroutine bt game 7"),
        ("range", "coroutine bt game 99"),
        ("which", "coroutine bt 0"),
        ("notschedule", "coroutine bt stop_here 0"),
        ("notopen", "coroutine bt game+1 0"),
        ("nextbest", lambda: print(next_best(*split_schedule(["game", "0"])[:2], find_coroutine(*split_schedule(["game", "0"])[:2], "0")[1]))),
        ("nextbest4", lambda: print(next_best(*split_schedule(["game", "4"])[:2], find_coroutine(*split_schedule(["game", "4"])[:2], "4")[1]))),
        ("after", state),
        # The running coroutine's frames are the thread's: a call runs
        # below them, as in any thread (after "after": it writes there).
        ("runningcall", "coroutine apply game 3 print probe(2)"),
        # A call that no hook refuses runs over the run stack: said, and
        # the run stack put back (after "after": it writes below it).
        ("nohook", call_no_hook_sees),
        ("end", "echo")]:
    if not CORE or name in CORE_NAMES:
        run(name, command)
EOF
}

check_view() { # view
	v=$1
	[ -s "$dir/$v.log" ] || fail "$v" "gdb printed nothing"
	section "$v" before > "$dir/$v.before"
	section "$v" after > "$dir/$v.after"
	grep -q "^run stack" "$dir/$v.before" || fail "$v" "no state before the commands"
	grep -q "^#1 " "$dir/$v.before" || fail "$v" "frame #1 was not selected before the commands"
	cmp -s "$dir/$v.before" "$dir/$v.after" || fail "$v" "registers, run stacks, frame or core file changed: diff $dir/$v.before $dir/$v.after"
	expect "$v" info '^ +0 +suspended +[0-9]+ +deep_walker +descend \(waiting\.c:[0-9]+\)$'
	expect "$v" info '^ +1 +never started +0 +never_started +-$'
	expect "$v" info '^ +2 +suspended +[0-9]+ +shallow_waiter +shallow_waiter \(waiting\.c:[0-9]+\)$'
	expect "$v" info '^ +3 +running +- +runner +stop_here \(waiting\.c:[0-9]+\)$'
	expect "$v" info '^ +4 +suspended +[0-9]+ +array_keeper +sum_after_yield \(waiting\.c:[0-9]+\)$'
	expect "$v" info '^ +5 +suspended +[0-9]+ +exact_waiter +exact_waiter \(waiting\.c:[0-9]+\)$'
	expect "$v" info '^ +6 +suspended +[0-9]+ +door +descend \(waiting\.c:[0-9]+\)$'
	expect "$v" info '^ +0 +suspended +[0-9]+ +other_schedule_waiter +other_schedule_waiter \(waiting\.c:[0-9]+\)$'
	expect "$v" info '^ +0 +running +- +outer_resumer +outer_resumer \(waiting\.c:[0-9]+\)$'
	expect_none "$v" info 'stopped in a switch'
	expect_frames "$v" bt0 descend descend descend descend deep_walker
	! ran "$v" bt0last || [ "$(section "$v" bt0last | grep '^#')" = "$(section "$v" bt0 | grep '^#' | tail -n 2)" ] ||
		fail "$v" "'bt0last' (bt -2) is not the last two frames of 'bt0'"
	expect_frames "$v" bt2 shallow_waiter
	expect_frames "$v" bt3 stop_here runner
	expect_frames "$v" bt4 sum_after_yield array_keeper
	expect "$v" bt4 '^ +block = '
	expect_frames "$v" bt5 exact_waiter
	expect_frames "$v" bt6 descend descend door
	expect_frames "$v" btother other_schedule_waiter
	expect "$v" btouter '^#[0-9]+ +(0x[0-9a-f]+ in )?outer_resumer \('
	if [ "$level" = -O0 ]; then
		expect "$v" bt0 'descend \(S=0x[0-9a-f]+, depth=0, seed=10\)'
		expect "$v" bt0 'descend \(S=0x[0-9a-f]+, depth=3, seed=7\)'
		expect "$v" bt0 'deep_walker \(S=0x[0-9a-f]+, ud=0x[0-9a-f]+\)'
		expect "$v" bt3 'stop_here \(step=17\)'
	elif section "$v" info | grep -q 'asm backend'; then
		# Optimized asm builds make coroutine 5's slice 96 bytes, the
		# largest that the backend keeps at its block's start (where a
		# deep one must not lie, or the test could not tell them apart).
		expect "$v" info '^ +5 +suspended +96 '
		expect "$v" exactplace '^size 96, shallow 96, deep one [1-9]'
	fi
	expect "$v" bt1 '^coroutine 1 has not started: it will start in never_started$'
	! ran "$v" mine || [ "$(section "$v" mine | sed -n 's/^\$[0-9]* = //p' | tr '\n' ' ')" = "100 91 82 73 " ] ||
		fail "$v" "the four descend frames' mine are not 100 91 82 73"
	expect "$v" n '^\$[0-9]+ = 13$'
	expect "$v" block '^\$[0-9]+ = 95019$'
	expect "$v" exact '^\$[0-9]+ = 29$'
	expect "$v" x '^\$[0-9]+ = 34.5$'
	expect "$v" outerlocal '^\$[0-9]+ = 37$'
	expect "$v" up '^#[0-9]+ +0x[0-9a-f]+ in descend \(.*waiting\.c:[0-9]+$'
	# Every coroutine, of every schedule: the ones whose frame has a mine.
	[ "$(section "$v" all | sed -n 's/^\$[0-9]* = //p' | tr '\n' ' ')" = "100 300 " ] ||
		fail "$v" "coroutine apply all does not print coroutine 0's and 6's mine (100 300)"
	! ran "$v" allbt || [ "$(section "$v" allbt | sed -n 's/^Coroutine \([0-9]*\) (.*):$/\1/p' | tr '\n' ' ')" = "0 1 2 3 4 5 6 " ] ||
		fail "$v" "coroutine apply game all does not go through coroutines 0 to 6"
	expect "$v" allbt '^coroutine 1 has not started: it will start in never_started$'
	! ran "$v" list || [ "$(section "$v" list | sed -n 's/.*<\([a-z_]*\)+[0-9]*>$/\1/p' | tr '\n' ' ')" = "shallow_waiter sum_after_yield exact_waiter " ] ||
		fail "$v" "coroutine apply game 2 4-5 does not run among coroutines 2, 4 and 5"
	expect "$v" single '^\$[0-9]+ = 13$'
	! ran "$v" silent || [ "$(section "$v" silent | sed -n 's/^Coroutine \([0-9]*\) (.*):$/\1/p' | tr '\n' ' ')" = "0 6 " ] ||
		fail "$v" "coroutine apply -s prints the header of a coroutine whose command printed nothing (only 0 and 6 have a mine)"
	expect "$v" continuing '^No symbol "n" in current context\.$'
	expect "$v" continuing '^\$[0-9]+ = 13$'
	expect "$v" stopping '^No symbol "n" in current context\.$'
	expect_none "$v" stopping '^\$[0-9]+ = 13$'
	expect "$v" failing '^No symbol "no_such_variable" in current context.$'
	expect "$v" interrupted 'KeyboardInterrupt'
	# A command may only look among a suspended coroutine's frames.
	expect "$v" call '^coroutine apply: print probe\(1\) would call a function in the program, over the run stack.s bytes: refused'
	expect "$v" callcommand '^coroutine apply: call probe\(1\) would call a function in the program, over the run stack.s bytes: refused'
	expect "$v" write '^coroutine apply: print block\[0\] = 1 would write to the program: refused'
	expect "$v" inplace '^coroutine apply: print x = 5 would write to the program: refused'  # the run stack's owner's, in place
	for c in next step stepi nexti finish continue until advance jump signal reverse-continue; do
		expect "$v" "resume $c" "^coroutine apply: $c would resume the program and run coroutine 2 outside the library: refused"
	done
	expect "$v" "resume n" '^coroutine apply: next would resume the program'  # an alias, refused as its command
	expect "$v" "resume return" '^coroutine apply: return would pop frames of coroutine 2: refused'
	for c in run kill detach quit; do
		expect "$v" "resume $c" "^coroutine apply: $c would end, leave or change the program with coroutine 2's frames in place: refused"
	done
	expect "$v" "resume thread apply all next" '^coroutine apply: next would resume the program'
	expect "$v" python '^gdb.error: coroutine apply: next would resume the program'
	expect "$v" runningresume '^coroutine apply: next would resume the program and run coroutine 3 outside the library: refused'
	expect "$v" nested '^info coroutines: not inside coroutine apply \(coroutine 2.s frames are in place\)$'
	! ran "$v" userhook || section "$v" userhook | tr '\n' ' ' | grep -q 'coroutine_refuses("next").*the user.s own hook' ||
		fail "$v" "the user's own hook-next is not kept after ours"
	if [ "$v" = live ]; then
		expect "$v" register '^coroutine apply: set var \$(rax|x0) = 1 wrote to register (rax|x0): undone'
		expect "$v" runningcall '^\$[0-9]+ = -?[0-9]+$'
		expect "$v" nohook "^coroutine apply: with may-call-functions on -- with may-write-memory on -- probe_if called a function in the program among coroutine 2's frames: the run stack and the registers are put back"
	else
		expect "$v" register "^You can't do that without a process to debug\.$"
		expect "$v" runningcall "^You can't do that without a process to debug\.$"
	fi
	expect "$v" empty '^coroutine 7: the slot is empty'
	expect "$v" range '^coroutine 99 is out of range: schedule 0x[0-9a-f]+ has ids \[0, 16\)$'
	expect "$v" which '^3 schedules are open: name one first'
	expect "$v" notschedule '^stop_here is a .*not a struct schedule \* nor an id$'
	expect "$v" notopen '^game\+1 \(0x[0-9a-f]+\) is not an open schedule$'
	# Where no view can be had (a core file it cannot patch): the
	# functions and lines of the code addresses in the saved slice.
	expect "$v" nextbest '(^|, )descend \(waiting\.c:[0-9]+\), (.*, )?descend \(waiting\.c:[0-9]+\), .*deep_walker \(waiting\.c:[0-9]+\)'
	expect "$v" nextbest4 '(^|, )sum_after_yield \(waiting\.c:[0-9]+\), (.*, )?array_keeper \(waiting\.c:[0-9]+\)'
	echo "ok: $prog ($v)"
}

# Stopped inside the library: in the program's first switch (main starting
# other's coroutine 0), in a yield of game's coroutine 0 (its switch, after
# the library has said no coroutine runs), at the start of a resume that
# copies a slice back (take_run_stack), and at -O0 once the copy is made
# (before the run stack's owner changes, in put_back_slice, which
# take_run_stack calls).  The conditions are gdb's to test (qemu-user's
# stub would take the -1 of an int for 0xffffffff).
owner_line=$(awk '/ void put_back_slice\(/ { on = 1 } on && /S->owner = C;/ { print NR; exit }' \
	"$here/../../coroutine.cpp")
switches() {
	on_game='game != 0 && (long)$sp >= (long)game->stack && (long)$sp < (long)game->top && game->running == -1'
	cat <<EOF
set breakpoint pending on
set breakpoint condition-evaluation host
tbreak coroutine_start_context
tbreak swapcontext@plt
$run
echo @@ start\n
info coroutines
delete
break coroutine_switch_context if $on_game
break swapcontext@plt if $on_game
continue
echo @@ yield\n
info coroutines
coroutine bt game 0
delete
break take_run_stack
continue
echo @@ resume\n
info coroutines
python import re; n = re.search(r"resuming coroutine ([0-9]+)", gdb.execute("info coroutines", to_string=True)).group(1); print("@@ resumed"); gdb.execute("coroutine bt game " + n)
EOF
	[ "$level" = -O0 ] && cat <<EOF
delete
break coroutine.cpp:$owner_line
continue
echo @@ copied\n
info coroutines
echo @@ copied3\n
coroutine bt game 3
echo @@ copiedstep\n
coroutine apply game 3 frame apply all -s -q print step
echo @@ copied0\n
coroutine bt game 0
EOF
	echo delete
	echo continue
}

# Every schedule that the section lists has a row for each of its coroutines.
all_rows() { # view section
	section "$1" "$2" | awk '
		/^schedule 0x[0-9a-f]+: [0-9]+ coroutines?,/ { if (want != rows) bad = 1; want = $3; rows = 0; next }
		/^ +[0-9]+  / { rows++ }
		END { exit bad || want != rows }' || fail "$1" "'$2' does not list every coroutine"
}

check_switches() {
	v=switches
	expect $v start '^  stopped in a switch: main is starting coroutine 0$'
	expect $v start '^ +0 +being started +0 +other_schedule_waiter +-$'
	all_rows $v start
	expect $v yield '^  stopped in a switch: coroutine 0 is yielding to main \(thread 1\)$'
	expect $v yield '^ +0 +yielding +[0-9]+ +deep_walker +descend \(waiting\.c:[0-9]+\)$'
	expect $v yield '^ +1 +never started +0 +never_started +-$'
	expect_frames $v yield descend descend descend descend deep_walker
	expect $v resume '^  stopped in a switch: main is resuming coroutine [0-9]+$'
	n=$(section $v resume | sed -n 's/.*main is resuming coroutine \([0-9]*\)$/\1/p')
	expect $v resume "^ +$n +being resumed +[0-9]+ +[a-z_]+ +[a-z_]+ \\(waiting\\.c:[0-9]+\\)$"
	all_rows $v yield
	all_rows $v resume
	expect $v resumed '^#[0-9]+ .* in [a-z_]+ \(.*waiting\.c:[0-9]+$'
	if [ "$level" = -O0 ]; then
		expect $v copied '^  stopped in a switch: main is resuming coroutine 0$'
		expect $v copied '^ +3 +suspended +[0-9]+ +runner +runner \(waiting\.c:[0-9]+\)$'
		expect_frames $v copied3 runner
		expect $v copiedstep '^\$[0-9]+ = 17$'  # on the run stack, under 0's copied slice
		expect_frames $v copied0 descend descend descend descend deep_walker
	fi
	echo "ok: $prog (stopped inside the library)"
}

if [ -n "${EMULATOR:-}" ]; then
	port=$((20000 + $$ % 20000))
	$EMULATOR -L "$SYSROOT" -g $port "$prog" > "$dir/expected.out" 2>&1 &
	{ echo "set sysroot $SYSROOT"; echo "set solib-search-path $SYSROOT/lib"
	  echo "target remote :$port"; } > "$dir/start.gdb"
	$GDB -nx -batch -x "$dir/start.gdb" -ex continue > /dev/null 2>&1
	wait
	start_program() { $EMULATOR -L "$SYSROOT" -g $port "$prog" > "$dir/$1.out" 2>&1 & }
	start="-x $dir/start.gdb"
	run="continue"
	# qemu-user's gdb stub has no memory map: gdb would write a core of
	# the whole address space.
	core=
else
	"$prog" > "$dir/expected.out" 2>&1
	start_program() { run="run > $dir/$1.out 2>&1"; }
	start=
	core="generate-core-file $dir/core"
fi

# Live: stopped in stop_here, frame #1 selected, the commands, a core file,
# then on to the end.
commands > "$dir/commands.py"
commands core > "$dir/core-commands.py"
start_program live
$GDB -nx -batch $start -x "$script" -ex "break stop_here" -ex "$run" -ex up -x "$dir/commands.py" \
	${core:+-ex "$core"} -ex continue "$prog" > "$dir/live.log" 2>&1
wait
check_view live
cmp -s "$dir/expected.out" "$dir/live.out" || fail live "the program printed otherwise under gdb: diff $dir/expected.out $dir/live.out"

# The core file taken at the same point.
if [ -z "$core" ]; then
	echo "not checked: $prog (core): gdb takes no core file through qemu-user's stub"
elif [ -s "$dir/core" ]; then
	$GDB -nx -batch -x "$script" -ex up -x "$dir/core-commands.py" "$prog" "$dir/core" > "$dir/core.log" 2>&1
	check_view core
else
	echo "FAIL: $prog: gdb wrote no core file"; exit 1
fi

# Live again, stopped inside the library.
start_program switches
switches > "$dir/switches.gdb"
$GDB -nx -batch $start -x "$script" -x "$dir/switches.gdb" "$prog" > "$dir/switches.log" 2>&1
wait
check_switches
cmp -s "$dir/expected.out" "$dir/switches.out" ||
	fail switches "the program printed otherwise under gdb: diff $dir/expected.out $dir/switches.out"
