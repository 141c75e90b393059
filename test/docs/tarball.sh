#!/bin/bash
# tarball.sh - checks a release tarball as a user gets it (`make dist-check`,
# run by `make test`; from the source root):
#
#     test/docs/tarball.sh TARBALL
#
# - it leaves out what `make dist` leaves out: .ci/ and .gitignore;
# - its SHA-256 file, TARBALL.sha256, checks with `sha256sum -c` beside it,
#   in any directory: it names the tarball without a path;
# - its README.md and docs/*.md name only files the tarball holds, or say, in the
#   paragraph (or table row) that names one it does not hold, where to get
#   it (that paragraph says "tarball").  A name is a backquoted word or a
#   link target whose first part is a name at the top of the source tree
#   (`test/lua/`, `.ci/run`, `LICENSE`); `<name>` or `*` stands for any name.
# Prints a line per check as plain.h does ("ok"/"FAIL"), so that
# test/support/run.sh counts them.
set -u
tarball=$1
name=$(basename "$tarball")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

# report NAME [WHY]: one check's line.
report() {
	if [ $# = 1 ]; then echo "ok   $1"; else echo "FAIL $1: $2"; failed=$((failed + 1)); fi
}

# What it holds, without its top directory (coroutine-1.0.0/) or the
# slash after a directory's name.
tar tzf "$tarball" > "$work/listing" || exit 1
top=$(head -n 1 "$work/listing" | cut -d/ -f1)
sed -e "s|^$top/||" -e 's|/$||' "$work/listing" | grep -v '^$' > "$work/contents"

what="the tarball leaves out .ci/ and .gitignore"
left_in=$(grep -E '^(\.ci(/|$)|\.gitignore$)' "$work/contents")
if [ -z "$left_in" ]; then report "$what"; else report "$what" "it holds $(paste -sd' ' <<< "$left_in")"; fi

what="its SHA-256 file checks with sha256sum -c beside it, in another directory"
mkdir "$work/beside"
cp "$tarball" "$tarball.sha256" "$work/beside/" 2> "$work/cp.err" || { report "$what" "$(cat "$work/cp.err")"; exit 1; }
named=$(sed -n '1s/^[0-9a-f]* [ *]//p' "$tarball.sha256")
if [ "$named" != "$name" ]; then
	report "$what" "it names \"$named\", not \"$name\""
elif (cd "$work/beside" && sha256sum -c "$name.sha256") > "$work/sha.out" 2>&1; then
	report "$what"
else
	report "$what" "$(cat "$work/sha.out") ($(cat "$tarball.sha256"))"
fi

# The names at the top of the source tree, the tarball's and git's (which
# has what the tarball leaves out): a word that starts with one of them
# names a file of the project's.
{ sed 's|/.*||' "$work/contents"; git ls-tree --name-only HEAD 2> /dev/null; } | sort -u > "$work/tops"
mkdir "$work/docs"
tar xzf "$tarball" -C "$work/docs" "$top/README.md" "$top/docs" || exit 1
(cd "$work/docs/$top" && ls README.md docs/*.md) > "$work/documents" || exit 1
(cd "$work/docs/$top" && awk -v tops="$work/tops" -v contents="$work/contents" '
	BEGIN {
		while ((getline t < tops) > 0) top[t] = 1
		while ((getline c < contents) > 0) held[c] = 1
	}
	# A paragraph (a table row is one) that says "tarball" may name what
	# the tarball does not hold.
	FNR == 1 { done_with_paragraph() }
	/^ *$/ || /^\|/ { done_with_paragraph() }
	{ paragraph = paragraph " " $0 }
	# The words of a line that may name files: backquoted spans, split at
	# spaces and "=", and link targets.
	{
		n = 0
		line = $0
		while (match(line, /`[^`]+`/)) {
			span = substr(line, RSTART + 1, RLENGTH - 2)
			line = substr(line, RSTART + RLENGTH)
			k = split(span, part, /[ =]+/)
			for (i = 1; i <= k; i++) word[++n] = part[i]
		}
		line = $0
		while (match(line, /\]\([^)]+\)/)) {
			word[++n] = substr(line, RSTART + 2, RLENGTH - 3)
			line = substr(line, RSTART + RLENGTH)
		}
		for (i = 1; i <= n; i++) check(word[i])
	}
	function check(w, first, pattern, c, found) {
		sub(/^\.\//, "", w)
		sub(/#.*$/, "", w)
		sub(/[,;:]+$/, "", w)
		sub(/\/+$/, "", w)
		first = w
		sub(/\/.*/, "", first)
		if (!(first in top))
			return
		named++
		if (w ~ /[<*[]/) {	# a pattern: <name>, * or a class such as [ch]
			pattern = w
			gsub(/\./, "\\.", pattern)
			gsub(/<[^>]*>|\*/, "[^/]*", pattern)
			for (c in held)
				if (c ~ ("^" pattern "$")) found = 1
		} else {
			found = w in held
		}
		if (!found)
			missing = missing sprintf("%s line %d names %s\n", FILENAME, FNR, w)
	}
	function done_with_paragraph() {
		if (paragraph !~ /tarball/)
			printf "%s", missing
		paragraph = missing = ""
	}
	END {
		done_with_paragraph()
		printf "%d\n", named > "/dev/stderr"
	}
' $(cat "$work/documents")) > "$work/missing" 2> "$work/named"

what="its README and docs/ name only files it holds, or say where to get them"
named=$(cat "$work/named")
if [ -s "$work/missing" ]; then
	report "$what" "$(paste -sd';' "$work/missing" | sed 's/;/; /g'), not in the tarball"
elif [ "${named:-0}" -lt 10 ]; then
	report "$what" "README.md and docs/ seem to name $named of the project's files: is the check broken?"
else
	report "$what ($named names)"
fi
[ "$failed" = 0 ]
