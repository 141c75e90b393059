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
# Readers flagged: head (but head -n -N, which reads all), grep with -q,
# -m, -l or -L among its options, sed with q; not in comments.  Without
# SCRIPT: every script of the tree that sets pipefail, and .ci/run.
set -u
if [ $# = 0 ]; then
	sets_pipefail='^[[:space:]]*set -[a-z]*o pipefail'
	mapfile -t scripts < <(grep -rlE --include='*.sh' "$sets_pipefail" test examples debug mk 2>/dev/null
		grep -lE "$sets_pipefail" .ci/run 2>/dev/null)
	set -- "${scripts[@]}"
fi
status=0
for script in "$@"; do
	# Lines without their comments, joined where they end in a pipe or a
	# backslash, then each pipe's reader: the words after a | that is not ||.
	awk -v file="$script" '
		# The line without its comment: from a # that begins a word, outside quotes.
		function uncommented(line,    i, c, quote, before) {
			before = " "
			for (i = 1; i <= length(line); i++) {
				c = substr(line, i, 1)
				if (quote != "") {
					if (c == quote) quote = ""
					else if (c == "\\" && quote == "\"") i++
				} else if (c == "\\") i++
				else if (c == "\047" || c == "\"") quote = c
				else if (c == "#" && before ~ /[ \t;|&(]/) return substr(line, 1, i - 1)
				before = c
			}
			return line
		}
		# What makes the reader r stop before its input ends, or "".
		function stops_early(r,    words, n, i) {
			if (r ~ /^head([ \t]|$)/ && r !~ /^head[ \t]+-[nc][ \t]*-/ || r ~ /^sed[ \t][^|]*[0-9$;{\/]q([ \t;}\047"]|$)/) {
				sub(/[;&<>)`\001].*/, "", r) # the end of the command
				split(r, words, /[ \t]+/)
				return words[1] " " words[2]
			}
			if (r !~ /^grep([ \t]|$)/) return ""
			# Any of its options, before the pattern or after, not in quotes.
			gsub(/\047[^\047]*\047|"[^"]*"/, "\"\"", r)
			sub(/[;&<>)`\001].*/, "", r)
			n = split(r, words, /[ \t]+/)
			for (i = 2; i <= n; i++)
				if (words[i] ~ /^-[a-zA-Z]*[qmlL]/ || words[i] ~ /^--(quiet|silent|max-count|files-with(out)?-match)/)
					return "grep " words[i]
			return ""
		}
		/^[ \t]*#/ { next }
		{ $0 = uncommented($0); line = (held == "" ? "" : held " ") $0; start = (held == "" ? NR : start); held = "" }
		/(\||\\)[ \t]*$/ { held = line; next }
		{
			s = line; gsub(/\|\|/, "\001", s)
			n = split(s, parts, "|")
			for (i = 2; i <= n; i++) {
				r = parts[i]; sub(/^[ \t]+/, "", r)
				if ((what = stops_early(r)) != "") {
					printf "%s:%d: under pipefail, a reader that may stop early (%s) makes its writer die of SIGPIPE at random\n",
						file, start, what
					bad = 1
				}
			}
		}
		END { exit bad }' "$script" || status=1
done
exit $status
