#!/bin/sh
# Usage: expect_checked.sh VERB THEN PROGRAM [ARGS...]
# Runs a bug program of the checked build (test/bugs/stale_pointer.h), which
# prints "expect: coroutine ID, schedule ADDR, slice N bytes" before it
# breaks the shared-stack rule (or, when the saved slices of several reach
# the local, as the line lists them and how many, "expect: coroutines 52,
# 116, 180, 244 or 11 others of 15, ..."),
# and ", by coroutine ID" when a coroutine breaks the rule, not main, with
# " (schedule ADDR)" when it is another schedule's, or ", by another
# thread".  It succeeds only if the program fails with the checked build's
# report naming who broke it, those coroutines and that schedule, where (an
# offset from the top within the slice, or under ASan a local it keeps off
# the run stack), and the access: VERB is "read" or "wrote to".
# VERB "-": the fault is not the checked build's, and nothing may be
# reported.  THEN, unless "-", is a line that must follow (the program's
# own handler, chained).  With CHECKED_ACCESS_UNKNOWN=1 (a CPU or emulator
# that does not tell a read from a write), "touched" is accepted instead.
verb=$1
then=$2
shift 2
log=$(mktemp)
fail() {
	echo "FAIL: $*: $why; its stderr:" >&2
	cat "$log" >&2
	rm -f "$log"
	exit 1
}
# A handler that fails to pass a fault on returns to the access again and
# again: give up after a while (where there is timeout(1)).
limit=
command -v timeout > /dev/null && limit="timeout -k 5 30"
if $limit "$@" 2> "$log"; then why="exited 0"; fail "$@"; fi
tr -d '\r' < "$log" > "$log.lf" && mv "$log.lf" "$log"
expect=$(sed -n 's/^expect: //p' "$log")
schedule=$(printf '%s\n' "$expect" | sed -n 's/^.*, schedule \(0x[0-9a-f]*\), slice [0-9]* bytes.*/\1/p')
slice=$(printf '%s\n' "$expect" | sed -n 's/^.*, slice \([0-9]*\) bytes.*/\1/p')
id=$(printf '%s\n' "$expect" | sed -n 's/^coroutine \([0-9]*\), schedule .*/\1/p')
# Several: "coroutines 13, 29 or 45 of 3", the line's "coroutine 13, 29 or 45".
ids=$(printf '%s\n' "$expect" | sed -n 's/^coroutines \(.*\) of [0-9]*, schedule .*/\1/p')
count=$(printf '%s\n' "$expect" | sed -n 's/^coroutines .* of \([0-9]*\), schedule .*/\1/p')
who=$(printf '%s\n' "$expect" | sed -n 's/^.*, by //p')
[ -n "$who" ] || who=main
[ "$who" != "another thread" ] || who="another thread (id [0-9]*)"
report=$(grep "shared-stack rule" "$log")
if [ "$verb" = - ]; then
	if [ -n "$report" ]; then why="a fault that is not the checked build's was reported as one"; fail "$@"; fi
else
	group=1
	[ -z "$CHECKED_ACCESS_UNKNOWN" ] || { verb="\\($verb\\|touched\\)"; group=2; }
	# Where: top-N on the run stack, or under ASan a local in its fake stack.
	rule="a suspended coroutine's locals have no address (the shared-stack rule)"
	if [ -n "$ids" ]; then
		pattern="^$who $verb the stack of coroutine $ids (\(top-\([0-9]*\)\), schedule $schedule) while they are suspended: $rule; the saved slices of all $count reach there, and gdb's coroutine bt ID shows which of their functions has a local at top-[0-9]*$"
		shown="$who $verb the stack of coroutine $ids (top-N, schedule $schedule) while they are suspended ..."
	else
		pattern="^$who $verb coroutine $id's stack (\(top-\([0-9]*\)\|a local that ASan keeps off the run stack\), schedule $schedule) while coroutine $id is suspended: $rule$"
		shown="$who $verb coroutine $id's stack (top-N, schedule $schedule) ..."
	fi
	if ! printf '%s\n' "$report" | grep -q "$pattern"; then
		why="no report: $shown"; fail "$@"
	fi
	offset=$(printf '%s\n' "$report" | sed -n "s/$pattern/\\$((group + 1))/p") # empty in a fake stack
	if [ -n "$offset" ] && { [ "$offset" -gt "$slice" ] || [ "$offset" -le 0 ]; }; then
		why="offset top-$offset is not in the slice of $slice bytes"; fail "$@"
	fi
fi
if [ "$then" != - ] && ! grep -q -- "$then" "$log"; then why="no line: $then"; fail "$@"; fi
line="ok: $*: ${report:-no report}"
[ "$then" = - ] || line="$line; then: $then"
echo "$line"
rm -f "$log"
