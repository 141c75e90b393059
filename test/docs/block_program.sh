#!/bin/bash
# block_program.sh - a program of the documents builds as they say and
# prints what they show (`make test`, readme-check; from the source root):
# the block FILE (cxx.cpp, say) is the program, NAME-build (NAME is FILE
# without its extension) the lines that build and run it in an empty
# directory with the library's files, NAME-output what it prints on
# stdout.  A C++ FILE must also be warning-free C++11.  Prints a line per
# check as plain.h does ("ok"/"FAIL"), so that test/support/run.sh counts them.
#
#     test/docs/block_program.sh BUILD-DIR FILE
set -u
work=$1 file=$2 name=${2%.*}
block() { test/docs/readme_block.sh "$1"; }
failed=0
report() {
	if [ $# = 1 ]; then echo "ok   $1"; else echo "FAIL $1: $2"; failed=1; fi
}
rm -rf "$work"
mkdir -p "$work/run"
block "$file" > "$work/run/$file" && block "$name-build" > "$work/build.sh" && block "$name-output" > "$work/expected" ||
	exit 1
cp coroutine.h coroutine.cpp asm_switch.S "$work/run/"
case $file in
*.cpp)
	what="the documents' $file is warning-free C++11"
	if g++ -std=c++11 -Wall -Wextra -Wpedantic -Werror -I. -fsyntax-only "$work/run/$file" 2> "$work/cxx.err"; then
		report "$what"
	else
		report "$what" "$(cat "$work/cxx.err")"
	fi ;;
esac
what="the documents' $file, built and run by their \"$name-build\" lines, prints their output"
if ! (cd "$work/run" && bash -e ../build.sh) > "$work/out" 2> "$work/err"; then
	report "$what" "they failed: $(cat "$work/err")"
elif ! diff -u "$work/expected" "$work/out" > "$work/diff"; then
	report "$what" "$(cat "$work/diff")"
else
	report "$what"
fi
[ "$failed" = 0 ]
