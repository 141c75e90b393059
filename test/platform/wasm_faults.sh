#!/bin/sh
# wasm_faults.sh RUN PROGRAM - runs test/platform/wasm_faults.c's cases under RUN
# (node), each with the exit status and the first line of stderr that it
# must have.  PROGRAM is built against a library with a 4 KiB asyncify
# area and linked with -sSTACK_OVERFLOW_CHECK=2 (see make wasm-test).
run=$1 program=$2
fails=0

# expect NAME STATUS FIRST-LINE ARGS...: STATUS is 0 or "fails" (any other);
# FIRST-LINE is a prefix of stderr's first line, or "" for an empty stderr.
expect() {
	name=$1 status=$2 first=$3
	shift 3
	$run "$program" "$@" > "$program.out" 2> "$program.err"
	got=$?
	line=$(head -n 1 "$program.err")
	if [ "$status" = 0 ] && [ $got != 0 ]; then
		echo "FAIL $name: exit status $got${line:+: $line}"; fails=$((fails + 1))
	elif [ "$status" != 0 ] && [ $got = 0 ]; then
		echo "FAIL $name: exit status 0"; fails=$((fails + 1))
	elif [ "${line#"$first"}" = "$line" ] && [ -n "$first$line" ]; then
		echo "FAIL $name: stderr begins \"$line\""; fails=$((fails + 1))
	else
		echo "ok   $name"
	fi
}

expect "misuse stops with the library's line" fails \
	"coroutine_resume: called from inside coroutine 0; only the main program may resume" misuse
expect "wasm frames that fit the asyncify area survive" 0 "" frames 30
grep -qx "frames ok" "$program.out" || { echo "FAIL frames 30 printed: $(cat "$program.out")"; fails=$((fails + 1)); }
expect "wasm frames that overflow the asyncify area stop with the library's line" fails \
	"coroutine: a switch unwound " frames 1000
grep -q "larger -DCOROUTINE_ASYNCIFY_SIZE" "$program.err" || { echo "FAIL the overflow line names no remedy"; fails=$((fails + 1)); }
expect "main's wasm frames that fit its area survive a resume" 0 "" resume 30
grep -qx "resume ok" "$program.out" || { echo "FAIL resume 30 printed: $(cat "$program.out")"; fails=$((fails + 1)); }
expect "main's wasm frames that overflow its area stop with the library's line" fails \
	"coroutine: a switch unwound " resume 1000
expect "a coroutine resumes another schedule's coroutines" 0 "" nested
grep -qx "nested ok" "$program.out" || { echo "FAIL nested printed: $(cat "$program.out")"; fails=$((fails + 1)); }
expect "a coroutine resumed from one C stack, then another, keeps the stack checks right" 0 "" moved
grep -qx "moved ok" "$program.out" || { echo "FAIL moved printed: $(cat "$program.out")"; fails=$((fails + 1)); }
expect "running off the run stack stops with -sSTACK_OVERFLOW_CHECK=2" fails \
	"Aborted(stack overflow" overflow
[ $fails = 0 ]
