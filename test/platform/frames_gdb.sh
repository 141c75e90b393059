#!/bin/sh
# frames_gdb.sh - gdb's bt, stopped inside a coroutine (test/platform/resumers.c,
# in stop_here), goes on from the coroutine's start into the function that
# resumed it, and up to main: resume_from_a the first time, resume_from_b
# and resume_from_deeper the second; with no "Backtrace stopped" line.
# Under qemu-user, whose mappings grow upwards, the run stack lies above
# main's stack, and gdb stops a backtrace whose frames go down the stack
# ("previous frame inner to this frame"): there it may stop at the first
# frame past the start (the resumer's, or the library's frame that made
# the switch), with that line.
#
#   frames_gdb.sh PROG DIR          natively, with gdb
#   EMULATOR=qemu-aarch64 SYSROOT=/usr/aarch64-linux-gnu GDB=gdb-multiarch frames_gdb.sh PROG DIR
#                                   under qemu-user's gdb stub
# One line when it passes; the log when it fails.
set -u
prog=$1 dir=$2
GDB=${GDB:-gdb}
mkdir -p "$dir"
log=$dir/bt.log
{
	if [ -n "${EMULATOR:-}" ]; then
		port=$((20000 + $$ % 20000))
		$EMULATOR -L "$SYSROOT" -g $port "$prog" > "$dir/out" 2>&1 &
		echo "set sysroot $SYSROOT"
		echo "target remote :$port"
		echo "break stop_here"
		echo "continue"
	else
		echo "break stop_here"
		echo "run > $dir/out"
	fi
	printf '%s\n' 'echo @@ first\n' bt continue 'echo @@ second\n' bt 'echo @@ end\n' kill
} > "$dir/bt.gdb"
$GDB -nx -batch -x "$dir/bt.gdb" "$prog" > "$log" 2>&1
wait

# The functions of one backtrace, in order, but those of coroutine.cpp (the
# ucontext entry's C part, and the resume's, inlined or not): the start
# (asm_switch.S's, or the ucontext entry, which has no line) and the program's.
frames() {
	awk -v n="@@ $1" '$0 == n { on = 1; next } /^@@ / { on = 0 } on' "$log" | grep -v ' at coroutine\.cpp:' |
		sed -n 's/^#[0-9]* *\(0x[0-9a-f]* in \)\{0,1\}\([A-Za-z_][A-Za-z_0-9]*\) (.*/\2/p' | tr '\n' ' '
}
fail() { echo "FAIL: $prog: $1"; echo "---- $log:"; cat "$log"; exit 1; }

# bt SECTION RESUMER CALLERS: the section shows the coroutine's frames, its
# start, RESUMER, then CALLERS; or under an emulator the start, one frame
# past it at least, and gdb's stop.
stopped=
bt() {
	got=$(frames "$1") full="stop_here work coroutine_start_context $2 $3"
	[ "$got" != "$full" ] || return 0
	case "$got" in "stop_here work coroutine_start_context "*) ;; *) fail "the $1 bt shows '$got', not '$full'" ;; esac
	[ -n "${EMULATOR:-}" ] && awk -v n="@@ $1" '$0 == n { on = 1; next } /^@@ / { on = 0 } on' "$log" | awk '
		/^#[0-9]+ .* coroutine_start_context / { start = 1; next }
		start && /^#[0-9]+ / { past = 1 }
		/^Backtrace stopped: previous frame inner to this frame/ { inner = 1 }
		END { exit !(past && inner) }' &&
		stopped=" (under $EMULATOR, whose stack lies below the run stack, up to gdb's stop past the start)" &&
		return 0
	fail "the $1 bt shows '$got', not '$full'"
}
bt first resume_from_a "main "
bt second resume_from_b "resume_from_deeper main "
[ -n "$stopped" ] || ! grep -q "^Backtrace stopped" "$log" || fail "gdb stopped a backtrace short"
echo "ok: $prog: gdb's bt goes on from the coroutine's start into each resumer$stopped"
