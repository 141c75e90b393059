#!/bin/bash
# run.sh - runs the suite's programs quietly and counts their tests
# (`make check`, `make test`; run from the source root).
#
#     test/support/run.sh PROGRAM...   each PROGRAM, under $RUN if set
#                                      (valgrind, qemu, wine, node): a line each
#     test/support/run.sh --command LABEL COMMAND...
#                                      one command (a check script), as LABEL
#     test/support/run.sh total        the closing line of `make test`
#
# A program's output, stdout and stderr, goes to PROGRAM.log (in $LOG_DIR
# if set).  Its tests are counted from what it prints: CMocka's
# "[       OK ]", "[  FAILED  ]" and "[  SKIPPED ]" lines, and plain.h's
# "ok" and "FAIL" lines.  A program that fails without a failed test (it
# crashed, a tool reported an error, it ended early) counts one failed
# test: the one that was running.  So does a program whose log has tests
# but not its closing line (CMocka's "[==========] N test(s) run.",
# plain.h's "N passed, N failed"): it ended early, though its exit status
# may say 0 (a crash under wine).  A failing program's log is printed
# whole; V=1 prints every log.  The counts are added to the file
# $TEST_TALLY (make test's, across suites and backends); without it, the
# total of these programs closes the output: "N passed, N failed".
set -u

# count LOG STATUS CLOSED: "PASSED FAILED SKIPPED NOT-RUN RUNNING", from
# the log of a program that exited with STATUS, which must have its closing
# line if CLOSED is 1.  CMocka lists the failed tests again after
# "[==========] N test(s) run.": only the lines before count.
count() {
	awk -v status="$2" -v must_close="$3" '
	/^\[==========\] Running [0-9]+ test/ { planned += $3; summary = 0 }
	/^\[==========\] [0-9]+ test\(s\) run\./ { summary = 1; closed = 1 }
	/^[0-9]+ passed, [0-9]+ failed\r?$/ { closed = 1 }
	/^\[ RUN      \] / && !summary { running = $NF }
	/^\[       OK \] / && !summary { passed++; running = "" }
	/^\[  FAILED  \] / && !summary { failed++; running = "" }
	/^\[  SKIPPED \] / && !summary { skipped++; running = "" }
	/^ok   / { passed++; last = substr($0, 6) }
	/^FAIL / { failed++; last = substr($0, 6) }
	END {
		if (must_close && !closed && planned + passed + failed > 0)
			status = "no closing line"
		if (status != 0 && failed == 0) {
			failed = 1
			if (running == "" && last != "") running = "the check after \"" last "\""
		}
		not_run = planned - passed - failed - skipped
		if (not_run < 0 || running == "") not_run = 0
		printf "%d %d %d %d %s\n", passed, failed, skipped, not_run, running
	}' "$1"
}

# total: the sum of $TEST_TALLY's lines; fails if a test failed.
total() {
	awk '{ p += $1; f += $2; s += $3 }
	END {
		printf "%d passed, %d failed%s\n", p, f, s ? ", " s " skipped" : ""
		exit f != 0
	}' "$TEST_TALLY"
}

if [ "${1:-}" = total ]; then
	total
	exit
fi

own_tally=
if [ -z "${TEST_TALLY:-}" ]; then
	TEST_TALLY=$(mktemp)
	own_tally=1
fi

# run_one LABEL LOG COMMAND...: runs COMMAND into LOG, prints LABEL's line
# (and LOG if it failed), adds its counts to the tally; fails if it failed.
run_one() {
	local label=$1 log=$2 must_close=$3 status passed failed skipped not_run running line why
	shift 3
	if [ -n "${V:-}" ]; then
		echo "== $*"
		"$@" 2>&1 | tee "$log"
		status=${PIPESTATUS[0]}
	else
		# (The braces keep bash's own "Aborted" line out: the line below says it.)
		{ "$@" > "$log" 2>&1; } 2> /dev/null
		status=$?
	fi
	read -r passed failed skipped not_run running < <(count "$log" "$status" "$must_close")
	echo "$passed $failed $skipped" >> "$TEST_TALLY"
	line="$passed passed, $failed failed"
	[ "$skipped" = 0 ] || line="$line, $skipped skipped"
	if [ "$failed" = 0 ] && [ "$status" = 0 ]; then
		printf '%-44s %s\n' "$label" "$line"
		return 0
	fi
	why="exit status $status"
	[ "$status" != 0 ] || why="ended before its closing line, exit status 0"
	[ "$status" -le 128 ] || [ -n "${RUN:-}" ] || why="killed by SIG$(kill -l $((status - 128)))"
	[ -z "$running" ] || why="$why, in $running"
	[ "$not_run" = 0 ] || why="$why; $not_run not run"
	printf '%-44s %s (%s)\n' "$label" "$line" "$why"
	[ -n "${V:-}" ] || { echo "---- $log"; cat "$log"; echo "---- end of $log"; }
	return 1
}

ok=1
if [ "${1:-}" = --command ]; then
	# --command LABEL COMMAND...: a check that prints plain.h's lines.
	label=$2
	shift 2
	run_one "$label" "${LOG_DIR:-.}/${label//[^A-Za-z0-9._-]/-}.log" 0 "$@" || ok=
else
	for program in "$@"; do
		# shellcheck disable=SC2086 # RUN is a command and its words
		run_one "$program" "${LOG_DIR:-$(dirname "$program")}/$(basename "$program").log" 1 \
			${RUN:-} "$program" || ok=
	done
fi

[ -z "$own_tally" ] || { total || ok=; rm -f "$TEST_TALLY"; }
[ -n "$ok" ]
