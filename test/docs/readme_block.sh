#!/bin/sh
# readme_block.sh - prints a block of the documents that a check runs word
# for word: the lines between <!-- begin NAME ...--> and <!-- end NAME -->,
# less the fences of a fenced block or the four spaces of an indented one.
# The block is looked for in README.md and docs/*.md, unless FILE is given.
#
#     test/docs/readme_block.sh NAME [FILE]
#     test/docs/readme_block.sh --where NAME    prints the file that holds it
#
# Fails, naming the block, when its markers are missing or it is empty, or
# when more than one file holds it.
where=
[ "$1" = --where ] && { where=1; shift; }
name=$1
if [ $# -ge 2 ]; then
	files=$2
else
	files=$(grep -l -F -e "<!-- begin $name " -e "<!-- begin $name -->" README.md docs/*.md 2> /dev/null)
	case $files in
	"") echo "README.md, docs/*.md: no block \"$name\"" >&2; exit 1 ;;
	*"
"*) echo "block \"$name\" is in more than one file:" $files >&2; exit 1 ;;
	esac
fi
[ -z "$where" ] || { echo "$files"; exit 0; }
awk -v name="$name" '
	index($0, "<!-- begin " name " ") == 1 || $0 == "<!-- begin " name " -->" { inside = 1; next }
	inside && $0 == "<!-- end " name " -->" { found = 1; exit }
	inside && /^ *```/ { next }
	inside { sub(/^    /, ""); lines[n++] = $0 }
	END {
		while (n > 0 && lines[n - 1] == "") n--
		for (i = 0; i < n && lines[i] == ""; i++) ;
		if (!found || i == n) {
			printf "%s: no block \"%s\" between its begin and end markers\n", FILENAME, name > "/dev/stderr"
			exit 1
		}
		for (; i < n; i++) print lines[i]
	}' "$files"
