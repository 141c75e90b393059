#!/bin/sh
# The page `MAIN --trace=html` writes is trace_page.html, which the build
# turns into a string inside MAIN, with the walkthroughs put in: every line
# but theirs is the file's, byte for byte.  A build that kept an old copy of
# the page, or a generator that mangles a line, fails here.
#
#   test/docs/trace_page_html.sh MAIN [HTML]
set -eu
main=$1 html=${2:-trace_page.html}
page=$(mktemp) written=$(mktemp) source=$(mktemp)
trap 'rm -f "$page" "$written" "$source"' EXIT
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
