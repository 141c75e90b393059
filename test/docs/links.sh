#!/bin/sh
# links.sh - every relative link of README.md and docs/*.md leads somewhere:
# its file exists (relative to the document's directory), and its anchor
# (#...), in that file or the document itself, is a heading's, as GitHub
# names them (lower case, punctuation dropped, spaces as -, a repeated
# heading's anchor numbered -1, -2, ...; a heading's closing #s are not
# part of it).  Links in code spans and in fenced or indented code blocks
# are not links.  Links to other sites are not followed.  Run by
# `make test` (readme-check), from the source root.
#
#     test/docs/links.sh [DOCUMENT...]
#
# Prints a line per broken link, and fails if there is one, or if the
# documents have no relative link at all (the check would be reading
# nothing).
[ $# -gt 0 ] || set -- README.md docs/*.md
for doc in "$@"; do [ -f "$doc" ] || { echo "links.sh: no file $doc"; exit 1; }; done
# markdown anchors|links FILE...: the files' headings' anchors, as
# "FILE#anchor" lines, or their relative links, as "FILE LINE TARGET"
# lines; code blocks hold neither.
markdown() {
	want=$1
	shift
	awk -v want="$want" '
		FNR == 1 { fence = ""; delete seen }
		# A fenced block, from ``` or ~~~ to a line that begins with the same.
		{ opening = $0; sub(/^ */, "", opening); opening = substr(opening, 1, 3) }
		fence != "" { if (opening == fence) fence = ""; next }
		opening == "```" || opening == "~~~" { fence = opening; next }
		# An indented block.
		/^(    |\t)/ { next }
		want == "anchors" && /^#+ / {
			a = $0
			sub(/^#+ +/, "", a); sub(/ +#* *$/, "", a)
			a = tolower(a)
			gsub(/[^a-z0-9 _-]/, "", a)
			gsub(/ /, "-", a)
			n = seen[a]++
			print FILENAME "#" (n ? a "-" n : a)
		}
		want == "links" {
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
markdown links "$@" | while read -r doc line target; do
	path=${target%%#*}
	[ -n "$path" ] && echo "$(dirname "$doc")/$path" || echo "$doc"
done | sed 's|^\./||; s|[^/]*/\.\./||g' | grep '\.md$' | sort -u > "$list"
known=$( { printf '%s\n' "$@"; cat "$list"; } | sort -u | while read -r f; do [ -f "$f" ] && echo "$f"; done)
# shellcheck disable=SC2086 # one word per file
all_anchors=$(markdown anchors $known)
broken=0
markdown links "$@" > "$list"
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
	elif [ -n "$anchor" ]; then
		case "
$all_anchors
" in
		*"
$file#$anchor
"*) ;;
		*)
			echo "$doc:$line: link to $target: $file has no heading with the anchor #$anchor"
			broken=$((broken + 1)) ;;
		esac
	fi
done < "$list"
n=$(wc -l < "$list")
if [ "$broken" -gt 0 ]; then
	echo "links.sh: $broken of $n relative links are broken"
	exit 1
fi
[ "$n" -gt 0 ] || { echo "links.sh: no relative links found in $*: is the check broken?"; exit 1; }
echo "links.sh: the $n relative links of $# documents lead to files and headings that exist"
