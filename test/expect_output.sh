#!/bin/sh
# Usage: expect_output.sh STDOUT_FILE STDERR_FILE STATUS PROGRAM [ARGS...]
# Runs PROGRAM (an emulator such as wine may come first) and succeeds only if
# it wrote exactly STDOUT_FILE's bytes on stdout and STDERR_FILE's on stderr
# (/dev/null: nothing) and exited with STATUS.  A Windows program writes its
# text with CRLF line ends: those are compared as LF, any other CR counts.
out_file=$1 err_file=$2 status=$3
shift 3
out=$(mktemp) err=$(mktemp)
"$@" > "$out" 2> "$err"
got=$?
sed -i 's/\r$//' "$out" "$err"
ok=1
if ! cmp -s "$out_file" "$out"; then
	echo "FAIL: $*: stdout differs from $out_file:" >&2
	diff "$out_file" "$out" | head -20 >&2
	ok=0
fi
if ! cmp -s "$err_file" "$err"; then
	echo "FAIL: $*: stderr differs from $err_file:" >&2
	diff "$err_file" "$err" | head -20 >&2
	ok=0
fi
if [ "$got" != "$status" ]; then
	echo "FAIL: $*: exit status $got, expected $status" >&2
	ok=0
fi
rm -f "$out" "$err"
[ $ok = 1 ] && echo "ok: $*"
[ $ok = 1 ]
