#!/bin/sh
# readme_session.sh - README's gdb session ("Debugging") is what gdb prints
# on README's first program, built by README's "debug-build" lines.
#
#     test/debug/readme_session.sh check|write BUILD-DIR
#
# check (make debug-test): the session gdb prints now must be README's
# block "debug-session", addresses and the library's line numbers aside
# (they change with every build); write: puts it in README.
set -u
mode=$1 dir=$2
block() { test/docs/readme_block.sh "$1"; }
rm -rf "$dir"
mkdir -p "$dir"
block first.c > "$dir/first.c" || exit 1
block debug-build > "$dir/build.sh" || exit 1
cp coroutine.h coroutine.cpp debug/coroutine-gdb.py "$dir/"

# The commands of the session, each echoed after gdb's prompt.
cat > "$dir/session.gdb" <<'EOF'
break first.c:10 if i == 2
run > /dev/null
info coroutines
coroutine bt 1
coroutine apply 1 print name
coroutine apply 1 print &i
print &i
EOF
awk '{ gsub(/\\/, "\\\\"); print "echo (gdb) " $0 "\\n"; print }' "$dir/session.gdb" > "$dir/echoed.gdb"
(cd "$dir" && sh -e build.sh > build.log 2>&1 &&
	gdb -q -nx -batch -x coroutine-gdb.py -x echoed.gdb ./first > session.raw 2>&1) ||
	{ echo "FAIL: README's debug-build lines: $(cat "$dir/build.log")"; exit 1; }
# gdb's notes on libthread_db say nothing of coroutines.
grep -v -e '^\[Thread debugging' -e '^Using host libthread_db' -e '^$' "$dir/session.raw" > "$dir/session"

normalize() { sed -e 's/0x[0-9a-f]*/0x.../g' -e 's/coroutine\.cpp:[0-9]*/coroutine.cpp:N/g' -e 's/ *$//'; }

case $mode in
write)
	awk -v session="$dir/session" '
		/^<!-- begin debug-session/ { print; while ((getline line < session) > 0) print "    " line; skip = 1; next }
		/^<!-- end debug-session -->/ { skip = 0 }
		!skip' README.md > "$dir/README.md" && cp "$dir/README.md" README.md
	echo "wrote README's debug-session";;
check)
	block debug-session | normalize > "$dir/expected"
	normalize < "$dir/session" > "$dir/got"
	if diff -u "$dir/expected" "$dir/got" > "$dir/diff"; then
		echo "ok: README's gdb session is what gdb prints"
	else
		echo "FAIL: README's gdb session is not what gdb prints (test/debug/readme_session.sh write $dir rewrites it):"
		cat "$dir/diff"; exit 1
	fi;;
esac
