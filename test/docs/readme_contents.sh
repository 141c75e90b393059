#!/bin/sh
# readme_contents.sh - README's contents (the paragraph that starts with
# "Contents:") links every section ("## ") and links only headings that
# exist, by the anchors GitHub gives them (lower case, punctuation dropped,
# spaces as -).  Run by `make readme-check`.
#
#     test/docs/readme_contents.sh [README]
readme=${1:-README.md}
anchors=$(mktemp) sections=$(mktemp) links=$(mktemp)
trap 'rm -f "$anchors" "$sections" "$links"' EXIT
anchor() { sed 's/^#* //' | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9 _-]//g; s/ /-/g'; }
grep '^##' "$readme" | anchor | sort -u > "$anchors"
grep '^## ' "$readme" | anchor | sort -u > "$sections"
awk '/^Contents:/ { on = 1 } on && /^$/ { exit } on' "$readme" | grep -o '](#[^)]*)' |
	sed 's/^](#//; s/)$//' | sort -u > "$links"
[ -s "$links" ] || { echo "$readme: no contents (a paragraph starting \"Contents:\" with links)"; exit 1; }
missing=$(comm -23 "$sections" "$links")
unknown=$(comm -13 "$anchors" "$links")
[ -z "$missing" ] || echo "$readme's contents lack the sections:" $missing
[ -z "$unknown" ] || echo "$readme's contents link headings that do not exist:" $unknown
[ -z "$missing$unknown" ] && echo "$readme: the contents link every section"
