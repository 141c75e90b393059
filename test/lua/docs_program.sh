#!/bin/bash
# docs_program.sh - docs/lua.md's host builds as docs/lua.md says and prints
# what it shows (make lua-test; from the source root).  The block FILE
# (frames.c) is the program, NAME-build (NAME is FILE without .c) the lines
# that build and run it in a directory holding the library's files and the
# pair it embeds, examples/lua_scripts.[ch], as docs/lua.md tells a host to
# copy them, and NAME-output what it prints on stdout.  The program, which a
# host copies, must be warning-free C99 (Lua's headers need C99).  Prints a line per
# check as plain.h does ("ok"/"FAIL"), so that test/support/run.sh counts them.
#
#     test/lua/docs_program.sh BUILD-DIR FILE
set -u
work=$1 file=$2 name=${2%.c}
run=$work/run
block() { test/docs/readme_block.sh "$1" docs/lua.md; }
failed=0
check() { # WHAT FILE: ok when FILE (the errors) is empty
	if [ -s "$2" ]; then echo "FAIL $1: $(cat "$2")"; failed=1; else echo "ok   $1"; fi
}

rm -rf "$work"
mkdir -p "$run"
block "$file" > "$run/$file" && block "$name-build" > "$work/build.sh" && block "$name-output" > "$work/expected" ||
	exit 1
cp coroutine.h coroutine.cpp asm_switch.S examples/lua_scripts.h examples/lua_scripts.c "$run/"

# shellcheck disable=SC2046 # pkg-config's flags are words
cc -std=c99 -Wall -Wextra -Wpedantic -Werror $(pkg-config --cflags lua5.4) -fsyntax-only "$run/$file" 2> "$work/c99.err"
check "docs/lua.md's $file is warning-free C99" "$work/c99.err"

(cd "$run" && bash -e ../build.sh) > "$work/out" 2> "$work/build.err" ||
	echo "its \"$name-build\" lines failed: $(cat "$work/build.err")" > "$work/errors"
diff -u "$work/expected" "$work/out" >> "$work/errors"
check "docs/lua.md's $file, built and run by its \"$name-build\" lines, prints its \"$name-output\"" "$work/errors"
[ "$failed" = 0 ]
