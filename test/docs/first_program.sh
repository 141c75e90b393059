#!/bin/bash
# first_program.sh - README's first program builds as README says and
# prints what README shows (`make readme-check`, run by `make test`, and
# `make wasm-test`; from the source root).
#
#     test/docs/first_program.sh BUILD-DIR BLOCK...
#
# README's blocks (test/docs/readme_block.sh): "first.c", the program, and
# "first-output", what it prints; each BLOCK ("first-build", "first-build-cxx",
# "asm-build", "wasm-build") builds and runs it.  A BLOCK runs word for word
# in an empty directory holding the program as first.c and as first.cpp
# (README says it is C and C++ alike) and the library's files; what it prints
# on stdout must be first-output.  Prints a line per check as plain.h does
# ("ok"/"FAIL"), so that test/support/run.sh counts them.
set -u
work=$1
shift
block() { test/docs/readme_block.sh "$1"; }
failed=0

# report NAME [WHY]: one check's line.
report() {
	if [ $# = 1 ]; then echo "ok   $1"; else echo "FAIL $1: $2"; failed=$((failed + 1)); fi
}

rm -rf "$work"
mkdir -p "$work"
block first.c > "$work/first.c" && block first-output > "$work/expected" || exit 1

# The program is plain C89, warning-free: a learner copies it.
if cc -std=c89 -Wall -Wextra -Wpedantic -Werror -I. -fsyntax-only "$work/first.c" 2> "$work/c89.err"; then
	report "README's first program is warning-free C89"
else
	report "README's first program is warning-free C89" "$(cat "$work/c89.err")"
fi
# And C++, as README says it is: the same file as first.cpp.
if g++ -std=c++11 -Wall -Wextra -Wpedantic -Werror -I. -fsyntax-only -x c++ "$work/first.c" \
	2> "$work/cxx.err"; then
	report "README's first program is warning-free C++11"
else
	report "README's first program is warning-free C++11" "$(cat "$work/cxx.err")"
fi

for name in "$@"; do
	dir=$work/$name
	mkdir -p "$dir"
	cp coroutine.h coroutine.cpp asm_switch.S "$work/first.c" "$dir/"
	cp "$work/first.c" "$dir/first.cpp"
	block "$name" > "$work/$name.sh" || exit 1
	what="README's first program, built and run by README's \"$name\" lines"
	if ! (cd "$dir" && bash -e "../$name.sh") > "$work/$name.out" 2> "$work/$name.err"; then
		report "$what" "they failed: $(cat "$work/$name.err")"
	elif ! diff -u "$work/expected" "$work/$name.out" > "$work/$name.diff"; then
		report "$what" "it does not print README's output: $(cat "$work/$name.diff")"
	else
		report "$what"
	fi
done
[ "$failed" = 0 ]
