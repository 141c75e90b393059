#!/bin/sh
# clones_test.sh - the debugger's commands list clones like any coroutine:
# test/debug/clones.c, stopped in stop_here (frame #1 selected), in gdb
# (debug/coroutine-gdb.py) or lldb (debug/coroutine_lldb.py).  Its listing
# must have a row for each clone, with its own entry function, where it
# waits, and the bytes it saved (its original's); coroutine bt must show a
# clone's own frames, and coroutine apply its own locals: the clones that
# were resumed after the clone differ from their original (path 10 and 11),
# the one that was not has its original's (11; and a deep clone, the same
# mine in each of its descend frames).  The program, continued, must print
# what it prints without the debugger.
#
#   clones_test.sh gdb PROG DIR       natively, with gdb
#   clones_test.sh lldb PROG DIR      with lldb (Debian's: PYTHONPATH, see mk/debug.mk)
#   EMULATOR=qemu-aarch64 SYSROOT=/usr/aarch64-linux-gnu GDB=gdb-multiarch clones_test.sh gdb PROG DIR
#                                     under qemu-user's gdb stub, with gdb-multiarch
set -u
tool=$1 prog=$2 dir=$3
here=$(cd "$(dirname "$0")" && pwd)
debug=$here/../../debug
GDB=${GDB:-gdb}
mkdir -p "$dir"
rm -f "$dir"/*
log=$dir/$tool.log

fail() { echo "FAIL: $prog ($tool, clones): $1"; echo "---- $log:"; cat "$log"; exit 1; }
section() { awk -v n="@@ $1" '$0 == n { on = 1; next } /^@@ / { on = 0 } on' "$log" | grep -v '^(lldb)'; }
expect() { section "$1" | grep -Eq -- "$2" || fail "'$1' shows no line matching: $2"; }
# The values a section printed, in order, on one line.
values() { section "$1" | sed -n 's/^\(([a-z ]*) \)\{0,1\}\$[0-9]* = //p' | tr '\n' ' '; }
# A coroutine's row of the listing: state, saved, entry, where.
row() { section info | awk -v id="$1" '$1 == id { $1 = ""; sub(/^ /, ""); print; exit }'; }
# The functions of a backtrace, after the library's at its top.
frames() {
	section "$1" | sed -n -e 's/^#[0-9]* *\(0x[0-9a-f]* in \)\{0,1\}\([A-Za-z_][A-Za-z_0-9]*\) (.*/\2/p' \
		-e 's/.*frame #[0-9]*: 0x[0-9a-f]* [^`]*`\([A-Za-z_][A-Za-z_0-9]*\).*/\1/p' |
		awk '!seen && /^(coroutine_yield|switch_to_main|coroutine_switch_context|swapcontext)$/ { next } { seen = 1; print }' |
		head -n "$2" | tr '\n' ' '
}

# name command: each command after a marker.
commands="info:info coroutines
bt0:coroutine bt game 0
bt1:coroutine bt game 1
bt2:coroutine bt game 2
bt3:coroutine bt game 3
bt4:coroutine bt game 4
bt6:coroutine bt game 6
path0:coroutine apply game 0 print path
path1:coroutine apply game 1 print path
path2:coroutine apply game 2 print path
all:coroutine apply all -s -q print path
mine3:coroutine apply game 3 print mine
mine4:coroutine apply game 4 print mine"

${EMULATOR:+$EMULATOR -L "$SYSROOT"} "$prog" > "$dir/expected.out" 2>&1
if [ "$tool" = lldb ]; then
	echo "$commands" | awk -F: '{ c = $2; sub(/^info coroutines$/, "coroutine info", c); sub(/ print /, " p ", c)
		print "script print(\"@@ " $1 "\")"; print c }' > "$dir/commands.lldb"
	lldb -b -o "settings set interpreter.stop-command-source-on-error false" \
		-o "command script import $debug/coroutine_lldb.py" -o "breakpoint set -n stop_here" \
		-o "process launch -o $dir/live.out" -o "frame select 1" -s "$dir/commands.lldb" -o continue \
		"$prog" > "$log" 2>&1
else
	echo "$commands" | awk -F: '{ print "echo @@ " $1 "\\n"; print $2 }' > "$dir/commands.gdb"
	if [ -n "${EMULATOR:-}" ]; then
		port=$((20000 + $$ % 20000))
		$EMULATOR -L "$SYSROOT" -g $port "$prog" > "$dir/live.out" 2>&1 &
		$GDB -nx -batch -ex "set sysroot $SYSROOT" -ex "set solib-search-path $SYSROOT/lib" -ex "target remote :$port" \
			-x "$debug/coroutine-gdb.py" -ex "break stop_here" -ex continue -ex up -x "$dir/commands.gdb" \
			-ex continue "$prog" > "$log" 2>&1
		wait
	else
		$GDB -nx -batch -x "$debug/coroutine-gdb.py" -ex "break stop_here" -ex "run > $dir/live.out 2>&1" -ex up \
			-x "$dir/commands.gdb" -ex continue "$prog" > "$log" 2>&1
	fi
fi

# A row for every coroutine, clones too: each with its entry, where it
# waits, and a clone that has not run since with its original's bytes.
[ "$(section info | grep -c '^ *[0-9]  ')" = 8 ] || fail "the listing does not have a row for each of the 8 coroutines"
for id in 0 1 2; do
	expect info "^ +$id +suspended +[0-9]+ +explorer +explorer \\(clones\\.c:[0-9]+\\)$"
done
for id in 3 4; do
	expect info "^ +$id +suspended +[0-9]+ +deep_walker +descend \\(clones\\.c:[0-9]+\\)$"
done
for id in 5 6; do
	expect info "^ +$id +never started +0 +never_started +-$"
done
expect info '^ +7 +running +- +runner +stop_here \(clones\.c:[0-9]+\)$'
[ "$(row 2 | awk '{ print $2 }')" = "$(row 1 | awk '{ print $2 }')" ] || fail "clone 2 has not saved its original's bytes (1's)"
[ "$(row 4 | awk '{ print $2 }')" = "$(row 3 | awk '{ print $2 }')" ] || fail "clone 4 has not saved its original's bytes (3's)"
# Its own frames.
for id in 0 1 2; do
	[ "$(frames bt$id 1)" = "explorer " ] || fail "coroutine $id's backtrace shows '$(frames bt$id 1)', not explorer"
done
for id in 3 4; do
	[ "$(frames bt$id 5)" = "descend descend descend descend deep_walker " ] ||
		fail "coroutine $id's backtrace shows '$(frames bt$id 5)', not descend (4 times) and deep_walker"
done
expect bt6 '^coroutine 6 has not started: it will start in never_started$'
# Its own locals.
[ "$(values path0)" = "10 " ] || fail "coroutine 0's path is '$(values path0)', not 10"
[ "$(values path1)" = "11 " ] || fail "clone 1's path is '$(values path1)', not 11 (its own, after its resume)"
[ "$(values path2)" = "11 " ] || fail "clone 2's path is '$(values path2)', not 11 (its original's)"
[ "$(values all)" = "10 11 11 " ] || fail "coroutine apply all prints '$(values all)', not the paths 10 11 11"
[ -n "$(values mine3)" ] && [ "$(values mine4)" = "$(values mine3)" ] ||
	fail "clone 4's mine is '$(values mine4)', not its original's ('$(values mine3)')"
cmp -s "$dir/expected.out" "$dir/live.out" ||
	fail "the program printed otherwise under the debugger: diff $dir/expected.out $dir/live.out"
echo "ok: $prog ($tool, clones)"
