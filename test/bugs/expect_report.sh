#!/bin/sh
# Usage: expect_report.sh TEXT PROGRAM [ARGS...]
# Runs a deliberately buggy program under a checking tool (the tool is part of
# PROGRAM ARGS, or compiled in) and succeeds only if the program fails and its
# stderr contains TEXT: a tool that stays silent about a real bug fails `make`.
text=$1
shift
log=$(mktemp)
if "$@" 2> "$log"; then
	echo "FAIL: $* exited 0; expected a report of: $text" >&2
	rm -f "$log"
	exit 1
fi
if ! grep -q -- "$text" "$log"; then
	echo "FAIL: $* failed without reporting: $text; its stderr:" >&2
	cat "$log" >&2
	rm -f "$log"
	exit 1
fi
eval "program=\${$#}"
echo "ok: $program: $text"
rm -f "$log"
