#!/bin/bash
# checked_message.sh - README's checked build (in "The shared-stack rule"):
# its program, built by README's lines with COROUTINE_CHECKED=1, fails and
# prints on stderr README's line, the schedule's address and the offset
# from the top aside (they change from run to run and compiler to
# compiler).  NAME is the blocks' name: checked (the default), or
# checked-asan (the build under AddressSanitizer).  Run by `make test`
# (readme-check), from the source root.
#
#     test/docs/checked_message.sh BUILD-DIR [NAME]
set -u
work=$1
name=${2:-checked}
block() { test/docs/readme_block.sh "$1"; }
what="README's $name build stops its program with README's line"
# The line with the address and the offset as placeholders.
placeholders() { sed -e 's/schedule 0x[0-9a-f]*/schedule ADDRESS/' -e 's/(top-[0-9]*,/(top-OFFSET,/'; }

rm -rf "$work"
mkdir -p "$work"
block "$name.c" > "$work/$name.c" && block "$name-build" > "$work/build.sh" && block "$name-output" > "$work/expected" || exit 1
cp coroutine.h coroutine.cpp "$work/"
if (cd "$work" && bash -e build.sh) > "$work/out" 2> "$work/err"; then
	echo "FAIL $what: the program exited 0; its stderr: $(cat "$work/err")"
	exit 1
fi
placeholders < "$work/expected" > "$work/expected.line"
if ! grep -F "shared-stack rule" "$work/err" | placeholders | cmp -s - "$work/expected.line"; then
	echo "FAIL $what: it printed instead: $(cat "$work/err")"
	exit 1
fi
echo "ok   $what"
