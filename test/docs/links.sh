#!/bin/sh
# links.sh - every relative link of README.md and docs/*.md leads somewhere:
# its file exists (relative to the document's directory), and its anchor
# (#...), in that file or the document itself, is a heading's, as GitHub
# names them (lower case, punctuation dropped, spaces as -, a repeated
# heading's anchor numbered -1, -2, ...).  Links to other sites are not
# followed.  Run by `make test` (readme-check), from the source root.
#
#     test/docs/links.sh [DOCUMENT...]
#
# Prints a line per broken link, and fails if there is one.
[ $# -gt 0 ] || set -- README.md docs/*.md
for doc in "$@"; do [ -f "$doc" ] || { echo "links.sh: no file $doc"; exit 1; }; done
# The documents' anchors, as "FILE#anchor" lines, for every Markdown file
# a link may lead to: the documents and what they link to.
anchors() {
	awk '
		FNR == 1 { fenced = 0; delete seen }
		/^ *```/ { fenced = !fenced; next }
		fenced || !/^#+ / { next }
		{
			a = $0
			sub(/^#+ +/, "", a); sub(/ +#* *$/, "", a)
			a = tolower(a)
			gsub(/[^a-z0-9 _-]/, "", a)
			gsub(/ /, "-", a)
			n = seen[a]++
			print FILENAME "#" (n ? a "-" n : a)
		}' "$@"
}
# The relative links, as "DOCUMENT LINE TARGET" lines.
links() {
	awk '
		FNR == 1 { fenced = 0 }
		/^ *```/ { fenced = !fenced; next }
		fenced || /^    / { next }
		{
			line = $0
			gsub(/`[^`]*`/, "", line)  # code spans hold no links
			while (match(line, /\]\([^) ]+\)/)) {
				t = substr(line, RSTART + 2, RLENGTH - 3)
				line = substr(line, RSTART + RLENGTH)
				if (t !~ /^[a-z]+:/) print FILENAME, FNR, t
			}
		}' "$@"
}
list=$(mktemp)
trap 'rm -f "$list"' EXIT
# The Markdown files linked to, with the documents, normalised (a/../b is b).
links "$@" | while read -r doc line target; do
	path=${target%%#*}
	[ -n "$path" ] && echo "$(dirname "$doc")/$path" || echo "$doc"
done | sed 's|^\./||; s|[^/]*/\.\./||g' | grep '\.md$' | sort -u > "$list"
known=$( { printf '%s\n' "$@"; cat "$list"; } | sort -u | while read -r f; do [ -f "$f" ] && echo "$f"; done)
# shellcheck disable=SC2086 # one word per file
all_anchors=$(anchors $known)
broken=0
links "$@" > "$list"
while read -r doc line target; do
	path=${target%%#*}
	anchor=
	case $target in *"#"*) anchor=${target#*#} ;; esac
	if [ -n "$path" ]; then
		file=$(echo "$(dirname "$doc")/$path" | sed 's|^\./||; s|[^/]*/\.\./||g')
	else
		file=$doc
	fi
	if [ ! -e "$file" ]; then
		echo "$doc:$line: link to $target: no file $file"
		broken=$((broken + 1))
	elif [ -n "$anchor" ] && ! printf '%s\n' "$all_anchors" | grep -qxF "$file#$anchor"; then
		echo "$doc:$line: link to $target: $file has no heading with the anchor #$anchor"
		broken=$((broken + 1))
	fi
done < "$list"
n=$(wc -l < "$list")
if [ "$broken" -gt 0 ]; then
	echo "links.sh: $broken of $n relative links are broken"
	exit 1
fi
[ "$n" -gt 0 ] || { echo "links.sh: no relative links found in $*: is the check broken?"; exit 1; }
echo "links.sh: the $n relative links of $# documents lead to files and headings that exist"
