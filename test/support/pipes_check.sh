#!/bin/bash
# pipes_check.sh - no script that sets pipefail pipes into a reader that
# may stop before its input ends (`make pipes-check`, run by `make test`;
# from the source root):
#
#     test/support/pipes_check.sh [SCRIPT...]
#
# Under pipefail, `echo "$text" | head -1` fails now and then: head exits
# after its line, the writer's next write gets SIGPIPE, and the pipeline's
# status is 141.  Whether the writer had finished first depends on timing,
# so the script passes on one machine and fails on another.  Read a
# variable with ${text%%$'\n'*} or `head -1 <<< "$text"`, a file with
# `grep -q PATTERN FILE`, and find's first match with -print -quit.
# Readers flagged: head (but head -n -N, which reads all), grep -q/-m/-l,
# sed with q.  Without SCRIPT: every script of the tree that sets pipefail.
set -u
if [ $# = 0 ]; then
	sets_pipefail='^[[:space:]]*set -[a-z]*o pipefail'
	mapfile -t scripts < <(grep -rlE --include='*.sh' "$sets_pipefail" test examples debug mk 2>/dev/null
		grep -lE "$sets_pipefail" .ci/run 2>/dev/null)
	set -- "${scripts[@]}"
fi
status=0
for script in "$@"; do
	# Lines joined where they end in a pipe or a backslash, then each
	# pipe's reader: the words after a | that is not ||.
	awk -v file="$script" '
		/^[ \t]*#/ { next }
		{ line = (held == "" ? "" : held " ") $0; start = (held == "" ? NR : start); held = "" }
		/(\||\\)[ \t]*$/ { held = line; next }
		{
			s = line; gsub(/\|\|/, "  ", s)
			n = split(s, parts, "|")
			for (i = 2; i <= n; i++) {
				r = parts[i]; sub(/^[ \t]+/, "", r)
				if ((r ~ /^head([ \t]|$)/ && r !~ /^head[ \t]+-[nc][ \t]*-/) || r ~ /^grep[ \t]+(-[a-zA-Z]*[qml][a-zA-Z]*|--quiet|--max-count)/ ||
				    r ~ /^sed[ \t][^|]*[0-9$;{\/]q([ \t;}\047"]|$)/) {
					split(r, words, /[ \t]+/)
					printf "%s:%d: under pipefail, a reader that may stop early (%s %s) makes its writer die of SIGPIPE at random\n",
						file, start, words[1], words[2]
					bad = 1
				}
			}
		}
		END { exit bad }' "$script" || status=1
done
exit $status
