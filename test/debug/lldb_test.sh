#!/bin/sh
# lldb_test.sh - debug/coroutine_lldb.py against test/debug/waiting.c in
# lldb's batch mode, stopped in stop_here: each command's output is
# checked, the registers and the run stack must be as before, and the
# program, continued, must print what it prints without lldb.
#
#     lldb_test.sh PROG DIR
#
# Debian's lldb finds its Python module only with PYTHONPATH set: see
# mk/debug.mk.  Prints one line; exits 1 at the first failure, with its log.
set -u
prog=$1 dir=$2
log=$dir/lldb.log
mkdir -p "$dir"
rm -f "$dir"/*
"$prog" > "$dir/expected.out" 2>&1

fail() { echo "FAIL: $prog (lldb): $1"; echo "---- $log:"; cat "$log"; exit 1; }
section() { awk -v n="@@ $1" '$0 == n { on = 1; next } /^@@ / { on = 0 } on' "$log"; }
expect() { section "$1" | grep -Eq -- "$2" || fail "'$1' shows no line matching: $2"; }

# The state the commands must leave as they found it.
cat > "$dir/state.py" <<'PY'
import hashlib, lldb
def state(debugger):
    target = debugger.GetSelectedTarget()
    frame = target.GetProcess().GetSelectedThread().GetSelectedFrame()
    for reg in frame.GetRegisters().GetFirstValueByName("General Purpose Registers"):
        print(reg.GetName(), reg.GetValue())
    S = target.EvaluateExpression("game")
    stack = S.GetChildMemberWithName("stack").GetValueAsUnsigned()
    top = S.GetChildMemberWithName("top").GetValueAsUnsigned()
    error = lldb.SBError()
    print("run stack", hashlib.sha1(target.GetProcess().ReadMemory(stack, top - stack, error)).hexdigest())
    print("frame", frame.GetFrameID(), frame.GetFunctionName())
PY

set -- \
	"script import sys; sys.path.insert(0, '$dir'); import state" \
	"script print('@@ before')" "script state.state(lldb.debugger)" \
	"script print('@@ info')" "coroutine info" \
	"script print('@@ bt0')" "coroutine bt game 0" \
	"script print('@@ bt3')" "coroutine bt game 3" \
	"script print('@@ bt4')" "coroutine bt game 4 full" \
	"script print('@@ bt1')" "coroutine bt game 1" \
	"script print('@@ mine')" "coroutine apply game 0 p mine" \
	"script print('@@ n')" "coroutine apply game 2 p n" \
	"script print('@@ block')" "coroutine apply game 4 p block[0] + 1000 * block[332]" \
	"script print('@@ x')" "coroutine apply other 0 p x" \
	"script print('@@ failing')" "coroutine apply game 0 p no_such_variable" \
	"script print('@@ empty')" "coroutine bt game 7" \
	"script print('@@ range')" "coroutine bt game 99" \
	"script print('@@ which')" "coroutine bt 0" \
	"script print('@@ after')" "script state.state(lldb.debugger)" \
	"script print('@@ end')" continue
for c in "$@"; do printf '%s\n' "$c"; done > "$dir/commands.lldb"
lldb -b -o "settings set interpreter.stop-command-source-on-error false" \
	-o "command script import debug/coroutine_lldb.py" -o "breakpoint set -n stop_here" \
	-o "process launch -o $dir/live.out" -s "$dir/commands.lldb" "$prog" > "$log" 2>&1

section before | grep -v '^(lldb)' > "$dir/before"
section after | grep -v '^(lldb)' > "$dir/after"
grep -q "^run stack" "$dir/before" || fail "no state before the commands"
cmp -s "$dir/before" "$dir/after" || fail "registers, run stack or frame changed: diff $dir/before $dir/after"
expect info '^ +0 +suspended +[0-9]+ +descend \(waiting\.c:[0-9]+\)$'
expect info '^ +1 +never started +0 +will start in never_started$'
expect info '^ +3 +running +- +stop_here \(waiting\.c:[0-9]+\)$'
expect info '^ +4 +suspended +[0-9]+ +sum_after_yield \(waiting\.c:[0-9]+\)$'
expect info '^ +0 +suspended +[0-9]+ +other_schedule_waiter \(waiting\.c:[0-9]+\)$'
[ "$(section bt0 | grep -Eo '`(descend|deep_walker)' | tr -d '`' | tr '\n' ' ')" = "descend descend descend descend deep_walker " ] ||
	fail "'bt0' does not show descend four times, then deep_walker"
expect bt3 '`stop_here'
expect bt3 '`runner'
expect bt4 '`sum_after_yield'
expect bt4 'block = '
expect bt1 '^coroutine 1 has not started: it will start in never_started$'
expect mine ' = 100$'
expect n ' = 13$'
expect block ' = 95019$'
expect x ' = 34.5$'
expect failing "undeclared identifier 'no_such_variable'"
expect empty '^error: coroutine 7: the slot is empty'
expect range '^error: coroutine 99 is out of range'
expect which '^error: 2 schedules are open'
cmp -s "$dir/expected.out" "$dir/live.out" || fail "the program printed otherwise under lldb: diff $dir/expected.out $dir/live.out"
echo "ok: $prog (lldb)"
