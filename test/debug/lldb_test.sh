#!/bin/sh
# lldb_test.sh - debug/coroutine_lldb.py against test/debug/waiting.c in
# lldb's batch mode, stopped in stop_here (frame #1 selected): each
# command's output is checked, the registers, the run stacks and the
# selected frame must be as before, and the program, continued, must print
# what it prints without lldb; then stopped inside the library, in a yield
# and in a resume; and on a core file, one line.
#
#     lldb_test.sh PROG DIR
#
# Debian's lldb finds its Python module only with PYTHONPATH set: see
# mk/debug.mk.  Prints one line per part; exits 1 at the first failure,
# with its log.
set -u
prog=$1 dir=$2
mkdir -p "$dir"
rm -f "$dir"/*
"$prog" > "$dir/expected.out" 2>&1

fail() { echo "FAIL: $prog (lldb, $1): $2"; echo "---- $dir/$1.log:"; cat "$dir/$1.log"; exit 1; }
section() { awk -v n="@@ $2" '$0 == n { on = 1; next } /^@@ / { on = 0 } on' "$dir/$1.log" | grep -v '^(lldb)'; }
expect() { section "$1" "$2" | grep -Eq -- "$3" || fail "$1" "'$2' shows no line matching: $3"; }
expect_none() { ! section "$1" "$2" | grep -Eq -- "$3" || fail "$1" "'$2' shows a line matching: $3"; }
# The functions of a backtrace, from the first outside the library.
frames() {
	section "$1" "$2" | sed -n 's/.*frame #[0-9]*: 0x[0-9a-f]* [^`]*`\([A-Za-z_][A-Za-z_0-9]*\).*/\1/p' |
		awk '!seen && /^(coroutine_yield|coroutine_switch_context|swapcontext)$/ { next } { seen = 1; print }' |
		head -n "$3" | tr '\n' ' '
}
expect_frames() { # log section functions...
	log=$1 sec=$2; shift 2
	got=$(frames "$log" "$sec" $#)
	[ "$got" = "$* " ] || fail "$log" "'$sec' shows frames '$got', not '$* '"
}

# The state the commands must leave as they found it: every register, the
# run stacks, the selected frame; and where the 96-byte slice lies.
cat > "$dir/state.py" <<'PY'
import hashlib, lldb
def state(debugger):
    target = debugger.GetSelectedTarget()
    thread = target.GetProcess().GetSelectedThread()
    frame = thread.GetSelectedFrame()
    registers = thread.GetFrameAtIndex(0).GetRegisters()
    for reg in registers.GetFirstValueByName("General Purpose Registers"):
        print(reg.GetName(), reg.GetValue())
    every = b"".join(bytes(r.GetData().uint8s) for i in range(registers.GetSize()) for r in registers.GetValueAtIndex(i))
    print("all registers", hashlib.sha1(every).hexdigest())
    for name in ("game", "other", "outer"):
        S = target.EvaluateExpression(name)
        stack = S.GetChildMemberWithName("stack").GetValueAsUnsigned()
        top = S.GetChildMemberWithName("top").GetValueAsUnsigned()
        error = lldb.SBError()
        print("run stack of", name, hashlib.sha1(target.GetProcess().ReadMemory(stack, top - stack, error)).hexdigest())
    print("frame", frame.GetFrameID(), frame.GetFunctionName())
def exact_place(debugger):
    target = debugger.GetSelectedTarget()
    view = target.FindGlobalVariables("coroutine_debugger_view", 1).GetValueAtIndex(0)
    field = lambda v, n: v.GetChildMemberWithName(n).GetValueAsUnsigned()
    S = target.EvaluateExpression("game")
    C = S.GetChildMemberWithName("co").GetChildAtIndex(5, lldb.eNoDynamicValues, True)
    size = C.Dereference().GetChildMemberWithName("size").GetValueAsUnsigned()
    start = C.GetValueAsUnsigned() + field(view, "coroutine_size")
    bottom = field(S, "top") - size
    print("size %d, shallow %d, deep one %d bytes further" % (size, field(view, "shallow_slice"), (bottom - start) & (field(view, "slice_align") - 1)))
PY

lldb_run() { # name commands...: lldb in batch mode, its log in DIR/name.log
	name=$1; shift
	for c in "$@"; do printf '%s\n' "$c"; done > "$dir/$name.lldb"
	lldb -b -o "settings set interpreter.stop-command-source-on-error false" \
		-o "command script import debug/coroutine_lldb.py" -s "$dir/$name.lldb" "$prog" > "$dir/$name.log" 2>&1
}

# at NAME COMMAND: the command after a marker.
at() { printf '%s\n' "script print('@@ $1')" "$2"; }

set -- "script import sys; sys.path.insert(0, '$dir'); import state" \
	"breakpoint set -n stop_here" "process launch -o $dir/live.out" "frame select 1" \
	"script print('@@ before')" "script state.state(lldb.debugger)"
while read -r name command; do
	set -- "$@" "script print('@@ $name')" "$command"
done <<EOF
info coroutine info
bt0 coroutine bt game 0
bt0last coroutine bt game 0 -2
bt3 coroutine bt game 3
bt4 coroutine bt game 4 full
bt5 coroutine bt game 5
bt6 coroutine bt game 6
btouter coroutine bt outer 0
bt1 coroutine bt game 1
mine coroutine apply game 0 p mine
n coroutine apply game 2 p n
block coroutine apply game 4 p block[0] + 1000 * block[332]
exact coroutine apply game 5 p exact_local
exactplace script state.exact_place(lldb.debugger)
x coroutine apply other 0 p x
outerlocal coroutine apply outer 0 p outer_local
all coroutine apply all -s -q p mine
allbt coroutine apply game all bt 1
list coroutine apply game 2 4-5 -q frame info
single coroutine apply game 2-2 p n
continuing coroutine apply game 0 2 -c p n
failing coroutine apply game 0 p no_such_variable
call coroutine apply game 2 p probe(1)
write coroutine apply game 4 p block[0] = 1
inplace coroutine apply other 0 p x = 5
register coroutine apply game 2 script lldb.debugger.GetSelectedTarget().GetProcess().GetSelectedThread().GetFrameAtIndex(0).FindRegister('rax').SetValueFromCString('1')
registercommand coroutine apply game 2 register write rax 1
memorywrite coroutine apply game 2 memory write \$sp 0
stepped coroutine apply game 2 script lldb.debugger.GetSelectedTarget().GetProcess().GetSelectedThread().StepInstruction(False)
nested coroutine apply game 2 coroutine info
empty coroutine bt game 7
range coroutine bt game 99
which coroutine bt 0
EOF
while read -r c; do
	set -- "$@" "script print('@@ resume $c')" "coroutine apply game 2 $c"
done <<EOF
n
s
c
finish
thread step-over
process continue
j 70
thread until 70
thread return
process kill
detach
EOF
set -- "$@" "script print('@@ after')" "script state.state(lldb.debugger)" \
	"script print('@@ runningcall')" "coroutine apply game 3 p probe(2)" "script print('@@ end')" continue
lldb_run live "$@"

v=live
section $v before > "$dir/before"
section $v after > "$dir/after"
grep -q "^run stack" "$dir/before" || fail $v "no state before the commands"
grep -q "^frame 1 runner" "$dir/before" || fail $v "frame #1 was not selected before the commands"
cmp -s "$dir/before" "$dir/after" || fail $v "registers, run stacks or frame changed: diff $dir/before $dir/after"
expect $v info '^ +0 +suspended +[0-9]+ +deep_walker +descend \(waiting\.c:[0-9]+\)$'
expect $v info '^ +1 +never started +0 +never_started +-$'
expect $v info '^ +3 +running +- +runner +stop_here \(waiting\.c:[0-9]+\)$'
expect $v info '^ +4 +suspended +[0-9]+ +array_keeper +sum_after_yield \(waiting\.c:[0-9]+\)$'
expect $v info '^ +5 +suspended +[0-9]+ +exact_waiter +exact_waiter \(waiting\.c:[0-9]+\)$'
expect $v info '^ +6 +suspended +[0-9]+ +door +descend \(waiting\.c:[0-9]+\)$'
expect $v info '^ +0 +suspended +[0-9]+ +other_schedule_waiter +other_schedule_waiter \(waiting\.c:[0-9]+\)$'
expect $v info '^ +0 +running +- +outer_resumer +outer_resumer \(waiting\.c:[0-9]+\)$'
expect_frames $v bt0 descend descend descend descend deep_walker
[ "$(section $v bt0last | grep 'frame #')" = "$(section $v bt0 | grep 'frame #' | tail -n 2)" ] ||
	fail $v "'bt0last' (bt -2) is not the last two frames of 'bt0'"
expect_frames $v bt3 stop_here runner
expect_frames $v bt4 sum_after_yield array_keeper
expect $v bt4 'block = '
expect_frames $v bt5 exact_waiter
expect_frames $v bt6 descend descend door
expect $v btouter '`outer_resumer'
expect $v bt1 '^coroutine 1 has not started: it will start in never_started$'
# The asm backend keeps a slice of 96 bytes or less at its block's start:
# coroutine 5's must be read from there (where a deep one would not lie).
if section $v info | grep -q 'asm backend'; then
	expect $v info '^ +5 +suspended +96 '
	expect $v exactplace '^size 96, shallow 96, deep one [1-9]'
fi
expect $v mine ' = 100$'
expect $v n ' = 13$'
expect $v block ' = 95019$'
expect $v exact ' = 29$'
expect $v x ' = 34.5$'
expect $v outerlocal ' = 37$'
[ "$(section $v all | sed -n 's/.* = //p' | tr '\n' ' ')" = "100 300 " ] ||
	fail $v "coroutine apply all does not print coroutine 0's and 6's mine (100 300)"
[ "$(section $v allbt | sed -n 's/^Coroutine \([0-9]*\) (.*):$/\1/p' | tr '\n' ' ')" = "0 1 2 3 4 5 6 " ] ||
	fail $v "coroutine apply game all does not go through coroutines 0 to 6"
[ "$(section $v list | sed -n 's/^frame #[0-9]*: .*`\([a-z_]*\)(.*/\1/p' | tr '\n' ' ')" = "shallow_waiter sum_after_yield exact_waiter " ] ||
	fail $v "coroutine apply game 2 4-5 does not run among coroutines 2, 4 and 5"
expect $v single ' = 13$'
expect $v continuing "undeclared identifier 'n'"
expect $v continuing ' = 13$'
expect $v failing "^error: use of undeclared identifier 'no_such_variable'$"
expect $v call '^error: coroutine apply: p probe\(1\) would call a function in the program, over the run stack.s bytes: refused'
expect $v write '^error: coroutine apply: p block\[0\] = 1 wrote to its frames: undone'
expect $v inplace '^error: coroutine apply: p x = 5 wrote to its frames: undone'  # the run stack's owner's, in place
expect $v register '^error: coroutine apply: script .* wrote to rax'
expect $v registercommand '^error: coroutine apply: register write rax 1 would write to the program: refused \(coroutine 2.s frames are a copy'
expect $v memorywrite '^error: coroutine apply: memory write \$sp 0 would write to the program: refused \(coroutine 2.s frames are a copy'
expect $v stepped "^error: coroutine apply: script .*StepInstruction\\(False\\) ran the program with coroutine 2's frames in place"

expect $v nested '^error: not inside coroutine apply \(coroutine 2.s frames are in place\)$'
for c in n s c finish 'thread step-over' 'process continue' 'j 70' 'thread until 70'; do
	expect $v "resume $c" "^error: coroutine apply: $c would resume the program and run coroutine 2 outside the library: refused"
done
expect $v "resume thread return" '^error: coroutine apply: thread return would pop frames of coroutine 2: refused'
for c in 'process kill' detach; do
	expect $v "resume $c" "^error: coroutine apply: $c would end, leave or change the program with coroutine 2's frames in place: refused"
done
expect $v runningcall ' = -?[0-9]+$'
expect $v empty '^error: coroutine 7: the slot is empty'
expect $v range '^error: coroutine 99 is out of range'
expect $v which '^error: 3 schedules are open'
cmp -s "$dir/expected.out" "$dir/live.out" || fail $v "the program printed otherwise under lldb: diff $dir/expected.out $dir/live.out"
echo "ok: $prog (lldb)"

# Stopped inside the library: in the program's first switch (main starting
# other's coroutine 0), in coroutine 0's first yield (its switch), and at
# the start of a resume that copies a slice back.
on_game='game != 0 && (long)$sp >= (long)game->stack && (long)$sp < (long)game->top && game->running == -1'
lldb_run switches "breakpoint set -o true -n coroutine_start_context" "breakpoint set -o true -n swapcontext" \
	"process launch -o $dir/switches.out" "script print('@@ start')" "coroutine info" "breakpoint delete -f" \
	"breakpoint set -n coroutine_switch_context -c '$on_game'" "breakpoint set -n swapcontext -c '$on_game'" \
	continue "script print('@@ yield')" "coroutine info" "coroutine bt game 0" \
	"breakpoint delete -f" "breakpoint set -n take_run_stack" continue "script print('@@ resume')" "coroutine info" \
	"breakpoint delete -f" continue
v=switches
expect $v start '^  stopped in a switch: main is starting coroutine 0$'
expect $v start '^ +0 +being started +0 +other_schedule_waiter +-$'
expect $v yield '^  stopped in a switch: coroutine 0 is yielding to main \(thread 1\)$'
expect $v yield '^ +0 +yielding +[0-9]+ +deep_walker +descend \(waiting\.c:[0-9]+\)$'
expect_frames $v yield descend descend descend descend deep_walker
expect $v resume '^  stopped in a switch: main is resuming coroutine [0-9]+$'
n=$(section $v resume | sed -n 's/.*main is resuming coroutine \([0-9]*\)$/\1/p')
expect $v resume "^ +$n +being resumed +[0-9]+ +[a-z_]+ +[a-z_]+ \\(waiting\\.c:[0-9]+\\)$"
cmp -s "$dir/expected.out" "$dir/switches.out" || fail $v "the program printed otherwise under lldb: diff $dir/expected.out $dir/switches.out"
echo "ok: $prog (lldb, stopped inside the library)"

# A core file (gdb takes it): one line.
gdb -nx -batch -ex 'break stop_here' -ex 'run > /dev/null' -ex "generate-core-file $dir/core" -ex kill "$prog" > /dev/null 2>&1
[ -s "$dir/core" ] || { echo "FAIL: $prog (lldb): gdb wrote no core file"; exit 1; }
printf '%s\n' "command script import debug/coroutine_lldb.py" "coroutine info" "coroutine bt game 0" > "$dir/core.lldb"
lldb -b -o "settings set interpreter.stop-command-source-on-error false" -s "$dir/core.lldb" \
	-c "$dir/core" "$prog" > "$dir/core.log" 2>&1
[ "$(grep -c '^error: coroutine commands need a live process: lldb writes neither memory nor registers of a core file' "$dir/core.log")" = 2 ] ||
	{ echo "FAIL: $prog (lldb, core): not one line per command"; cat "$dir/core.log"; exit 1; }
echo "ok: $prog (lldb, core file)"
