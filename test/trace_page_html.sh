#!/bin/sh
# The page `MAIN --trace=html` writes is trace_page.html, which the build
# turns into a string inside MAIN, with the steps put in: every line but
# the steps is the file's, byte for byte.  A build that kept an old copy of
# the page, or a generator that mangles a line, fails here.
#
#   test/trace_page_html.sh MAIN [HTML]
set -eu
main=$1 html=${2:-trace_page.html}
page=$(mktemp) written=$(mktemp) source=$(mktemp)
trap 'rm -f "$page" "$written" "$source"' EXIT
"$main" --trace=html > "$page"

# The page with its steps (from "var steps = [" to "];") as one line.
without_steps() {
	awk '
		/^var steps = \[\];$/ { print "(the steps)"; next }
		/^var steps = \[$/ { skip = 1; next }
		skip { if ($0 == "];") { skip = 0; print "(the steps)" } next }
		{ print }
	' "$1"
}
without_steps "$page" > "$written"
without_steps "$html" > "$source"
if ! cmp -s "$written" "$source"; then
	echo "$main --trace=html: the page is not $html with the steps put in:" >&2
	diff -u "$source" "$written" >&2 || true
	exit 1
fi
grep -q '^var steps = \[$' "$page" || { echo "$main --trace=html: the page has no steps" >&2; exit 1; }
echo "$main --trace=html: the page is $html with the steps put in"
