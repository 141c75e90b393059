#!/bin/sh
# readme_block.sh - prints a block of README.md that a check runs word for
# word: the lines between <!-- begin NAME ...--> and <!-- end NAME -->, less
# the fences of a fenced block or the four spaces of an indented one.
#
#     test/docs/readme_block.sh NAME [README]
#
# Fails, naming the block, when its markers are missing or it is empty.
name=$1
readme=${2:-README.md}
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
	}' "$readme"
