#!/bin/sh
# The walkthrough of `./main --trace` (docs/how-it-works.md), made from
# what the program prints.  Three blocks of docs/how-it-works.md lie
# between marker comments: the trace excerpt and the frame table, and from
# `./main --trace=trees`, the first yield whose slice holds fewer walk
# frames than there are nodes from the root to the node it printed.
#
#   test/docs/readme_trace.sh write MAIN [FILE]   rewrites the blocks
#   test/docs/readme_trace.sh check MAIN [FILE]   fails, showing the
#                                               difference, if they are stale
#
# MAIN must be built as the file says (make readme-trace and make test build
# it: g++ -O2 -g, x86_64, the ucontext backend).
set -eu
mode=$1 main=$2 readme=${3:-docs/how-it-works.md}
version=$(g++ -dumpversion | cut -d. -f1)
trace=$(mktemp) trees=$(mktemp) new=$(mktemp)
trap 'rm -f "$trace" "$trees" "$new"' EXIT
"$main" --trace > "$trace"
"$main" --trace=trees > "$trees"

# The excerpt: the first two resumes and yields, and the first copy back.
excerpt() {
	echo "The excerpt below comes from g++ $version -O2 -g on x86_64 with the ucontext backend;"
	echo "other compilers, flags and backends give other sizes."
	echo
	awk '
		!cut { print "    " $0 }
		/^  yield  1:/ { cut = 1; print "           ..." }
		cut == 1 && /^  resume 0: copy/ { cut = 2; print "    " $0; next }
		cut == 2 { print "    " $0; exit }
	' "$trace"
}

# The frame table: the frames of the first yield, top of the run stack first.
table() {
	echo "   | bytes | frame (top of the run stack first) |"
	echo "   |---:|---|"
	awk '
		/frames in the slice/ { on = 1; next }
		on && /^       +[0-9]+ B  / {
			bytes = $1
			name = $0
			sub(/^ *[0-9]+ B  /, "", name)
			what = "`" name "`"
			if (name ~ /^makecontext.s start routine/ && bytes == 0)
				what = what ": the entry'"'"'s caller, none of it in the slice: what `makecontext` put above the entry'"'"'s return address (a null word and padding) lies above the top (see `TOP_ROOM`)"
			else if (name ~ /^makecontext.s start routine/)
				what = what ": the entry, what `makecontext` put at the top: a return address into libc'"'"'s start routine (glibc'"'"'s `__start_context`, a local symbol, which gdb names `??`), where `run_coroutine_ucontext` would return if it ever did, and a null word"
			else if (name == "coroutine_start_context" && bytes == 0)
				what = what ": the entry'"'"'s caller, none of it in the slice: the library'"'"'s start, which `makecontext` runs, and whose frame leads on to the resumer'"'"'s while the coroutine runs (see [The link to the resumer](#the-link-to-the-resumer))"
			else if (name ~ /^run_coroutine/)
				what = what ": the library'"'"'s entry, which calls the coroutine'"'"'s function"
			else if (name == "foo")
				what = what ": its return address and the registers it saves for its caller; it keeps `i`, `start` and `S` in registers, which the switch saves in the coroutine'"'"'s context, not in the slice"
			else if (name == "coroutine_yield")
				what = what ": its return address and the registers it saves"
			else if (name ~ /^save/ && bytes == 0)
				what = what ": none of it: the slice starts at `dummy`'"'"'s address rounded up to 16, in a function with no frame, which is coroutine_yield'"'"'s stack pointer"
			else if (name ~ /^save/)
				what = what ": its return address and the registers it saves, down to `dummy`'"'"'s address rounded up to 16 (the rest of its frame is not saved)"
			printf "   | %s | %s |\n", bytes, what
			next
		}
		on { exit }
	' "$trace"
}

# The trees excerpt: the tree, what the coroutine printed, its yield and
# its slice's frames, and a sentence that counts them against the path
# from the root (test/docs/tree_path.awk), with its right children.
trees_excerpt() {
	local id node walks said yield last shape nodes rights path right first
	awk '
		/^coroutine [0-9]+ : [0-9]+$/ { said = NR; node = $NF }
		/^  yield / { split($0, a, /[ :]+/); id = a[3]; y = NR; n = 0 }
		y && /^ +[0-9]+ B  walk$/ { n++ }
		y && /^ +[0-9]+ B  / { last = NR }
		y && /^  (resume|coroutine [0-9]+ returned)/ { print id, node, n, said, y, last; y = 0 }
	' "$trees" | while read -r id node walks said yield last; do
		shape=$(sed -n "s/^  coroutine $id walks \([^:]*\):.*/\1/p" "$trees")
		path=$(echo "$shape $node" | awk -f "$(dirname "$0")/tree_path.awk")
		nodes=${path%% *} path=${path#* }
		rights=${path%% *} path=${path#* }
		[ "$walks" -lt "$nodes" ] || continue
		right=${path#*| }
		path=$(echo "${path% |*}" | sed 's/ / → /g')
		echo "    $(grep "^  coroutine $id walks" "$trees")"
		echo "           ..."
		sed -n "${said}p; ${yield}p" "$trees" | sed 's/^/    /'
		echo "           ..."
		first=$(sed -n "/frames in the slice/=" "$trees" | awk -v y="$yield" '$1 > y { print; exit }')
		sed -n "${first},${last}p" "$trees" | sed 's/^/    /'
		echo
		echo "At node $node, $nodes nodes down coroutine $id's tree ($path; $(echo "$right" | sed 's/ /, /g')" \
			"$([ "$rights" = 1 ] && echo "is a right child" || echo "are right children")), its slice holds $walks" \
			"\`walk\` frames."
		break
	done
}

# The file with the text between "<!-- begin NAME" and "<!-- end NAME" lines
# replaced by the file $2.
replace() {
	awk -v name="$1" -v file="$2" '
		index($0, "<!-- begin " name) > 0 { print; while ((getline line < file) > 0) print line; skip = 1; next }
		index($0, "<!-- end " name) > 0 { skip = 0 }
		!skip { print }
	'
}

excerpt > "$trace.excerpt"
table > "$trace.table"
trees_excerpt > "$trace.trees"
[ -s "$trace.trees" ] || { echo "$main --trace=trees: no yield holds fewer walk frames than nodes from the root" >&2; exit 1; }
replace "trace excerpt" "$trace.excerpt" < "$readme" | replace "frame table" "$trace.table" |
	replace "trees excerpt" "$trace.trees" > "$new"
rm -f "$trace.excerpt" "$trace.table" "$trace.trees"
grep -q '<!-- begin trace excerpt' "$readme" && grep -q '<!-- begin frame table' "$readme" &&
	grep -q '<!-- begin trees excerpt' "$readme" || {
	echo "$readme: the marker comments of the walkthrough are missing" >&2
	exit 1
}
case $mode in
write)
	cp "$new" "$readme"
	;;
check)
	if ! cmp -s "$new" "$readme"; then
		echo "$readme: the walkthrough differs from what $main --trace prints (make readme-trace rewrites it):" >&2
		diff -u "$readme" "$new" >&2 || true
		exit 1
	fi
	echo "$readme: the walkthrough is what $main --trace prints"
	;;
*)
	echo "usage: $0 write|check MAIN [FILE]" >&2
	exit 2
	;;
esac
