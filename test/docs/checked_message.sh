#!/bin/bash
# checked_message.sh - README's checked build (in "The shared-stack rule"):
# its program, built by README's lines with COROUTINE_CHECKED=1, fails and
# prints on stderr README's line, the schedule's address and the offset
# from the top aside (they change from run to run and compiler to
# compiler).  NAME is the blocks' name: checked (the default), or
# checked-asan (the build under AddressSanitizer, docs/checking.md).
# Where the documents have them, also: NAME-plain-build, the program built
# without the check, runs to the end and prints NAME-plain-output (the
# wrong answer); NAME-gdb-build, under gdb, prints NAME-gdb-output (gdb's
# stop at the faulting line, then the library's line), where gdb is
# installed.  Run by `make test` (readme-check), from the source root.
#
#     test/docs/checked_message.sh BUILD-DIR [NAME]
set -u
work=$1
name=${2:-checked}
block() { test/docs/readme_block.sh "$1"; }
has_block() { test/docs/readme_block.sh --where "$1" > /dev/null 2>&1; }
what="README's $name build stops its program with README's line"
failed=0
# The line with the address and the offset as placeholders.
placeholders() { sed -e 's/schedule 0x[0-9a-f]*/schedule ADDRESS/' -e 's/(top-[0-9]*,/(top-OFFSET,/'; }
# build DIR BLOCK: DIR holds the program and the library; BLOCK's lines run there.
build() {
	mkdir -p "$1"
	cp "$work/$name.c" coroutine.h coroutine.cpp coroutine_checked.h "$1/" && block "$2" > "$1/build.sh" || exit 1
}

rm -rf "$work"
mkdir -p "$work"
block "$name.c" > "$work/$name.c" && block "$name-output" > "$work/expected" || exit 1
build "$work/checked" "$name-build"
if (cd "$work/checked" && bash -e build.sh) > "$work/out" 2> "$work/err"; then
	echo "FAIL $what: the program exited 0; its stderr: $(cat "$work/err")"
	failed=1
else
	placeholders < "$work/expected" > "$work/expected.line"
	if ! grep -F "shared-stack rule" "$work/err" | placeholders | cmp -s - "$work/expected.line"; then
		echo "FAIL $what: it printed instead: $(cat "$work/err")"
		failed=1
	else
		echo "ok   $what"
	fi
fi

if has_block "$name-plain-build"; then
	what="README's $name program, built without the check, prints README's wrong answer"
	build "$work/plain" "$name-plain-build"
	block "$name-plain-output" > "$work/plain.expected" || exit 1
	if ! (cd "$work/plain" && bash -e build.sh) > "$work/plain.out" 2> "$work/plain.err"; then
		echo "FAIL $what: it failed: $(cat "$work/plain.err")"
		failed=1
	elif ! diff -u "$work/plain.expected" "$work/plain.out" > "$work/plain.diff"; then
		echo "FAIL $what: $(cat "$work/plain.diff")"
		failed=1
	else
		echo "ok   $what"
	fi
fi

if has_block "$name-gdb-build"; then
	what="README's $name program under gdb stops at the faulting line, then prints the library's line"
	if ! command -v gdb > /dev/null; then
		echo "README's $name program under gdb: not run, no gdb here (Debian: gdb)"
	else
		build "$work/gdb" "$name-gdb-build"
		block "$name-gdb-output" | placeholders > "$work/gdb.expected" || exit 1
		# gdb's notes on libthread_db say nothing of the program.
		(cd "$work/gdb" && bash -e build.sh) 2>&1 |
			grep -v -e '^\[Thread debugging' -e '^Using host libthread_db' -e '^\[Inferior .* exited' |
			sed -e '/./,$!d' | placeholders > "$work/gdb.out"
		if diff -u "$work/gdb.expected" "$work/gdb.out" > "$work/gdb.diff"; then
			echo "ok   $what"
		else
			echo "FAIL $what: $(cat "$work/gdb.diff")"
			failed=1
		fi
	fi
fi
[ "$failed" = 0 ]
