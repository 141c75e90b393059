#!/bin/sh
# readme_session.sh - the gdb session of docs/debugging.md is what gdb
# prints on its game.c, built by its "debug-build" lines.
#
#     test/debug/readme_session.sh check|write BUILD-DIR
#
# check (make debug-test): the session gdb prints now must be the file's
# block "debug-session", addresses and the library's line numbers aside
# (they change with every build); write: puts it in the file.
set -u
mode=$1 dir=$2
block() { test/docs/readme_block.sh "$1"; }
doc=$(test/docs/readme_block.sh --where debug-session) || exit 1
rm -rf "$dir"
mkdir -p "$dir"
block game.c > "$dir/game.c" || exit 1
block debug-build > "$dir/build.sh" || exit 1
cp coroutine.h coroutine.cpp debug/coroutine-gdb.py "$dir/"

# The commands of the session, each echoed after gdb's prompt.
cat > "$dir/session.gdb" <<'EOF'
break game.c:10 if now == 1 && t == 5
run > /dev/null
info coroutines
coroutine bt 0
coroutine apply 0 frame apply all -s print hp
coroutine apply all -q print t
coroutine apply 0 print &t
print &t
coroutine apply 0 next
coroutine apply 0 print wait_until(S, 3)
EOF
# Each as its own -ex, echoed after gdb's prompt: gdb goes on after an error
# (a command file would stop there).
set --
while IFS= read -r line; do
	set -- "$@" -ex "echo (gdb) $(printf '%s' "$line" | sed 's/\\/\\\\/g')\n" -ex "$line"
done < "$dir/session.gdb"
(cd "$dir" && sh -e build.sh > build.log 2>&1) ||
	{ echo "FAIL: the debug-build lines: $(cat "$dir/build.log")"; exit 1; }
# (The session ends in a refusal: gdb's status is 1.)
(cd "$dir" && gdb -q -nx -batch -x coroutine-gdb.py "$@" ./game > session.raw 2>&1)
# gdb's notes on libthread_db say nothing of coroutines.
grep -v -e '^\[Thread debugging' -e '^Using host libthread_db' -e '^$' "$dir/session.raw" > "$dir/session"

normalize() { sed -e 's/0x[0-9a-f]*/0x.../g' -e 's/coroutine\.cpp:[0-9]*/coroutine.cpp:N/g' -e 's/ *$//'; }

case $mode in
write)
	awk -v session="$dir/session" '
		/^<!-- begin debug-session/ { print; while ((getline line < session) > 0) print "    " line; skip = 1; next }
		/^<!-- end debug-session -->/ { skip = 0 }
		!skip' "$doc" > "$dir/doc.md" && cp "$dir/doc.md" "$doc"
	echo "wrote $doc's debug-session";;
check)
	block debug-session | normalize > "$dir/expected"
	normalize < "$dir/session" > "$dir/got"
	if diff -u "$dir/expected" "$dir/got" > "$dir/diff"; then
		echo "ok: the gdb session of $doc is what gdb prints"
	else
		echo "FAIL: the gdb session of $doc is not what gdb prints (test/debug/readme_session.sh write $dir rewrites it):"
		cat "$dir/diff"; exit 1
	fi;;
esac
