#!/bin/sh
# The page `MAIN --trace=html` writes is trace_page.html, which the build
# turns into a string inside MAIN, with the walkthroughs put in: every line
# but theirs is the file's, byte for byte.  A build that kept an old copy of
# the page, or a generator that mangles a line, fails here.
#
# And the values a learner follows, which the page draws with the bytes
# (what a browser can check, make trace-page-test checks): `MAIN
# --trace=clone` reads path in every slice a yield copies out, so a
# yielding coroutine's heap copy holds the path it has just printed
# (choose prints it, then yields), a clone's holds its original's, and the
# page's steps carry the values the text trace gives.
#
#   test/docs/trace_page_html.sh MAIN [HTML]
set -eu
main=$1 html=${2:-trace_page.html}
page=$(mktemp) written=$(mktemp) source=$(mktemp) clone=$(mktemp)
trap 'rm -f "$page" "$written" "$source" "$clone"' EXIT
"$main" --trace=html > "$page"

# The page with its walkthroughs (from "var walkthroughs = [" to "];") as
# one line.
without_walkthroughs() {
	awk '
		/^var walkthroughs = \[\];$/ { print "(the walkthroughs)"; next }
		/^var walkthroughs = \[$/ { skip = 1; next }
		skip { if ($0 == "];") { skip = 0; print "(the walkthroughs)" } next }
		{ print }
	' "$1"
}
without_walkthroughs "$page" > "$written"
without_walkthroughs "$html" > "$source"
if ! cmp -s "$written" "$source"; then
	echo "$main --trace=html: the page is not $html with the walkthroughs put in:" >&2
	diff -u "$source" "$written" >&2 || true
	exit 1
fi
grep -q '^var walkthroughs = \[$' "$page" || { echo "$main --trace=html: the page has no walkthroughs" >&2; exit 1; }
echo "$main --trace=html: the page is $html with the walkthroughs put in"

# The clone walkthrough's steps that say path in each heap copy, as
# "STEP|VALUE0 VALUE1" (- for none), from the text trace, checking each
# yield's and clone's value on the way; and from the page.
"$main" --trace=clone > "$clone"
from_text=$(awk '
	function fault(what) { print "FAULT " what; exit }
	/^coroutine [0-9]+ : -?[0-9]+$/ { printed[$2] = $4 }
	/^  (yield|clone|coroutine [0-9]+ returned)/ { step = substr($0, 3); split(step, w, /[ :]+/); id = w[2]
		copy = step; sub(/.* to coroutine /, "", copy); sub(/[^0-9].*/, "", copy) }
	/^       heap copies. [^ ]+ \(at top-[0-9]+/ {
		for (c = 0; c < 2; c++) { s = $0; sub(".* coroutine " c " ", "", s); sub(/,.*/, "", s); v[c] = s ~ /^-?[0-9]+$/ ? s : "-" }
		if (step ~ /^yield/ && v[id] != printed[id]) fault(step ": path " v[id] ", where the coroutine printed " printed[id])
		if (step ~ /^clone/ && v[copy] != v[id]) fault(step ": the clone'"'"'s path is " v[copy] ", its original'"'"'s " v[id])
		print step "|" v[0] " " v[1]
	}' "$clone")
case $from_text in
*FAULT*) echo "$main --trace=clone: ${from_text##*FAULT }" >&2; exit 1 ;;
"") echo "$main --trace=clone: reads no path here, not checked"; exit 0 ;;
esac
from_page=$(awk '/^\{stack:.*,local:/ { on = 1; next } on && /^\]\},$/ { exit }
	on && /^\{title:"(yield|clone|coroutine [0-9]+ returned)/ {
		step = $0; sub(/^\{title:"/, "", step); sub(/".*/, "", step)
		values = $0; sub(/.*,values:\["/, "", values); sub(/"\].*/, "", values); split(values, v, /","/)
		print step "|" (v[1] == "" ? "-" : v[1]) " " (v[2] == "" ? "-" : v[2]) }' "$page")
if [ "$from_page" != "$from_text" ]; then
	echo "$main --trace=html: the clone walkthrough's path per heap copy is not --trace=clone's:" >&2
	echo "$from_text" > "$written"
	echo "$from_page" > "$source"
	diff "$written" "$source" >&2 || true
	exit 1
fi
echo "$main --trace=clone: each heap copy holds the path its coroutine printed at its yield, a clone its original's" \
	"(both: $(echo "$from_text" | awk -F'|' '$2 ~ /^-?[0-9]+ -?[0-9]+$/ { v = $2 } END { sub(/ /, " and ", v); print v }'));" \
	"the page carries them"
