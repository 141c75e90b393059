#!/bin/bash
# checks_test.sh - the build's own checks, each fed the fault it is there to
# catch, must report it (`make checks-test`, run by `make test`; from the
# source root):
#
#     test/support/checks_test.sh WORK-DIR [TARBALL]
#
# - targets-check (mk/docs.mk), on a docs/make-targets.md whose first
#   table, or a later one, names a target that does not exist, and on one
#   whose table lacks a target;
# - test/docs/links.sh, on a README and a docs/ file with a link to a file
#   that does not exist and one with an anchor that does not; on links that
#   GitHub's anchor rules make good (a repeated heading, closing #s,
#   punctuation) and links in code spans and code blocks, which must pass;
#   and on a document with no relative link;
# - test/docs/first_program.sh, on a README whose first program warns in
#   C89 and whose build lines fail before the last;
# - test/docs/quick_start.sh, on a README whose demo command a failed
#   apt-get update stops, whose test command runs make after a failed
#   install or ends 0 when make fails, and on a .ci/run that has README's
#   test command in a comment only;
# - test/support/run.sh, on a program that passes a test and then crashes,
#   and on one that ends early with exit status 0 (a crash under wine);
# - test/docs/tarball.sh, given TARBALL (a good one, from make dist, with
#   its .sha256 beside it), on copies that hold .ci/, whose .sha256 names
#   a path, whose README, or a file of docs/, names a file they do not hold;
# - test/support/pipes_check.sh, on a script that sets pipefail and pipes
#   into head, grep -q, -l or -m and sed q, on one whose pipes are in
#   comments (which must pass), and on a tree whose .ci/run and test/
#   script pipe into head and grep -q;
# - test/bugs/expect_checked.sh, on programs whose checked-build line names
#   another coroutine, main for another thread, one of several coroutines,
#   or an offset outside the slice.
# Each fault goes into a copy, in WORK-DIR, of the files the check reads.
# Prints a line per check as plain.h does ("ok"/"FAIL"), so that run.sh
# counts them.
# shellcheck disable=SC2016 # backquotes are Markdown's here, not the shell's
set -u
work=$1
tarball=${2:-}
failed=0

# report NAME [WHY]: one check's line.
report() {
	if [ $# = 1 ]; then echo "ok   $1"; else echo "FAIL $1: $2"; failed=$((failed + 1)); fi
}

# said FILE: what a check printed, indented, so that run.sh counts none of
# its lines as this script's.
said() {
	sed 's/^/    /' "$1"
}

# expect_report NAME SAYS COMMAND...: COMMAND must fail, saying SAYS
# (what it said is left in $work/said).
expect_report() {
	local name=$1 says=$2 out=$work/said
	shift 2
	if "$@" > "$out" 2>&1; then
		report "$name" "it passed:
$(said "$out")"
	elif ! grep -qF -- "$says" "$out"; then
		report "$name" "it failed without saying \"$says\":
$(said "$out")"
	else
		report "$name"
	fi
}

# copy_tree DIR FILE SED-SCRIPT: the build files, the library and the
# documents in DIR, with FILE (README.md, docs/x.md) as SED-SCRIPT changes it.
copy_tree() {
	mkdir -p "$1"
	cp -R Makefile mk test docs README.md coroutine.h coroutine.cpp asm_switch.S "$1/"
	sed "$3" "$2" > "$1/$2"
	cmp -s "$2" "$1/$2" && { echo "checks_test.sh: $3 changes nothing in $2"; exit 1; }
}

rm -rf "$work"
mkdir -p "$work"

# ---- targets-check ---------------------------------------------------------
# A row of the table that names one target: one more row after it, or none.
targets=docs/make-targets.md
row=$(grep -m 1 -E '^\| `make [a-z-]+` \|' $targets)
target=$(echo "$row" | sed -E 's/^\| `make ([a-z-]+)`.*/\1/')
[ -n "$target" ] || { echo "checks_test.sh: $targets has no row for one target"; exit 1; }
copy_tree "$work/unknown-target" $targets "/^| \`make $target\` |/a | \`make no-such-target\` | a row for a target that does not exist |"
expect_report "targets-check reports a README row that names no target" "no-such-target" \
	make -s --no-print-directory -C "$work/unknown-target" targets-check
# The same in the last table (the first tells the everyday targets apart).
last=$(awk '/^\| `make [a-z-]+` \|/ { row = $0 } END { print row }' $targets |
	sed -E 's/^\| `make ([a-z-]+)`.*/\1/')
[ -n "$last" ] && [ "$last" != "$target" ] || { echo "checks_test.sh: $targets's last table has no row for one target"; exit 1; }
copy_tree "$work/unknown-target-later" $targets "/^| \`make $last\` |/a | \`make no-such-later-target\` | a row for a target that does not exist |"
expect_report "targets-check reports a row of a later table that names no target" "no-such-later-target" \
	make -s --no-print-directory -C "$work/unknown-target-later" targets-check
copy_tree "$work/missing-target" $targets "/^| \`make $target\` |/d"
expect_report "targets-check reports a target that README's table lacks" "lacks: $target" \
	make -s --no-print-directory -C "$work/missing-target" targets-check

# ---- README's first program --------------------------------------------------
# long long is not C89 (a warning under -Wpedantic); a build line that
# fails must stop the lines, or the ones after it would build and print the
# right output.
copy_tree "$work/first" README.md '/^<!-- begin first.c /,/^#include "coroutine.h"/s/^#include "coroutine.h"$/&\nlong long not_c89;/
/^<!-- begin first-build /a\    false'
(cd "$work/first" && test/docs/first_program.sh build first-build) > "$work/first.out" 2>&1
# first_says NAME LINE: first_program.sh must have printed LINE.
first_says() {
	if grep -qF -- "$2" "$work/first.out"; then report "$1"; else report "$1" "it did not:
$(said "$work/first.out")"; fi
}
first_says "first_program.sh reports a first program that is not warning-free C89" \
	"FAIL README's first program is warning-free C89"
first_says "first_program.sh reports build lines that fail before the last" \
	"FAIL README's first program, built and run by README's \"first-build\" lines: they failed"

# ---- links.sh -------------------------------------------------------------------
# A link to a file that does not exist, and an anchor with a typo, in
# README and in docs/: each is reported, by file and line.
copy_tree "$work/links" README.md 's|(docs/api\.md)|(docs/apii.md)|; s|(docs/api\.md#the-clone-rule)|(docs/api.md#the-clone-rul)|'
echo 'See [the API](api-reference.md) and [the rule](../README.md#the-shared-stack).' >> "$work/links/docs/checking.md"
(cd "$work/links" && test/docs/links.sh) > "$work/links.out" 2>&1
# links_says NAME LINE: links.sh must have printed LINE.
links_says() {
	if grep -qF -- "$2" "$work/links.out"; then report "$1"; else report "$1" "it did not:
$(said "$work/links.out")"; fi
}
links_says "links.sh reports a link of README to a file that does not exist" "link to docs/apii.md: no file docs/apii.md"
links_says "links.sh reports a link of README to an anchor that does not exist" \
	"link to docs/api.md#the-clone-rul: docs/api.md has no heading with the anchor #the-clone-rul"
links_says "links.sh reports a link of docs/ to a file that does not exist" "link to api-reference.md: no file docs/api-reference.md"
links_says "links.sh reports a link of docs/ to an anchor that does not exist" \
	"link to ../README.md#the-shared-stack: README.md has no heading with the anchor #the-shared-stack"
if (cd "$work/links" && test/docs/links.sh) > /dev/null 2>&1; then report "links.sh fails on broken links" "it passed"; else report "links.sh fails on broken links"; fi
# Links that GitHub's rules make good: links.sh must pass them, and name
# none.  And a document set with no relative link at all is a failure.
mkdir -p "$work/anchors/docs"
cat > "$work/anchors/README.md" <<'MARKDOWN'
# Anchors

## Setup

## Setup

## Closing hashes ##

## The API: `coroutine_resume()` & friends

The [second setup](#setup-1), [closing](#closing-hashes), [the API](#the-api-coroutine_resume--friends),
[the guide](docs/guide.md#usage). No link in a code span: `[a](in-a-code-span.md)`.

    [b](in-an-indented-block.md)

```
[c](in-a-fenced-block.md)
~~~
[d](in-a-fenced-block-after-tildes.md)
```

~~~
[e](in-a-tilde-fence.md)
```
~~~
MARKDOWN
printf '%s\n' '# Guide' '## Usage' 'Back to [the setup](../README.md#setup).' > "$work/anchors/docs/guide.md"
# links_ignores NAME TARGET: links.sh named no link to TARGET.
links_ignores() {
	if grep -qF -- "$2" "$work/links.out"; then report "$1" "it did:
$(said "$work/links.out")"; else report "$1"; fi
}
(cd "$work/anchors" && "$OLDPWD/test/docs/links.sh" README.md docs/guide.md) > "$work/links.out" 2>&1
links_status=$?
links_ignores "links.sh numbers a repeated heading's anchor" "#setup-1"
links_ignores "links.sh leaves a heading's closing #s out of its anchor" "#closing-hashes"
links_ignores "links.sh drops punctuation from an anchor, keeps _ and -" "#the-api-coroutine_resume--friends"
links_ignores "links.sh reads no link in a code span" "in-a-code-span.md"
links_ignores "links.sh reads no link in an indented code block" "in-an-indented-block.md"
links_ignores "links.sh reads no link in a fenced code block" "in-a-fenced-block"
links_ignores "links.sh reads no link in a code block fenced with ~~~" "in-a-tilde-fence.md"
if [ "$links_status" = 0 ]; then report "links.sh passes the links GitHub's rules make good"; else
	report "links.sh passes the links GitHub's rules make good" "it failed:
$(said "$work/links.out")"; fi
printf '%s\n' '# No links' 'Only [another site](https://example.org/).' > "$work/anchors/none.md"
expect_report "links.sh fails on documents without a relative link" "no relative links found" \
	sh -c 'cd "$1" && "$2" none.md' - "$work/anchors" "$PWD/test/docs/links.sh"

# ---- quick_start.sh ------------------------------------------------------------
# README's demo command stopped by a failed apt-get update, its test command
# running make after a failed install, or ending 0 when make fails; and a
# .ci/run with README's test command in a comment only.
copy_tree "$work/update-stops" README.md "s/^    apt-get update; /    apt-get update \&\& /"
expect_report "quick_start.sh reports a command that a failed apt-get update stops" \
	"README's demo-command, when update fails: 100: no make, not 0: make run" \
	sh -c 'cd "$1" && test/docs/quick_start.sh' - "$work/update-stops"
copy_tree "$work/install-goes-on" README.md "s/ libcmocka-dev && make test$/ libcmocka-dev; make test/"
expect_report "quick_start.sh reports a command that runs make after a failed install" \
	"README's test-command, when install fails: 0: make test, not 100: no make" \
	sh -c 'cd "$1" && test/docs/quick_start.sh' - "$work/install-goes-on"
copy_tree "$work/make-fails" README.md "s/ && make test$/ \&\& make test; true/"
expect_report "quick_start.sh reports a command whose status is not make's" \
	"README's test-command, when make fails: 0: make test, not 2: make test" \
	sh -c 'cd "$1" && test/docs/quick_start.sh' - "$work/make-fails"
mkdir -p "$work/ci-comment/.ci"
copy_tree "$work/ci-comment" .ci/run 's/^  apt-get update; \(.*\)$/  # apt-get update; \1\n  make test ) || exit 1/'
expect_report "quick_start.sh reports a .ci/run that has README's test command in a comment only" \
	".ci/run does not run README's test command" sh -c 'cd "$1" && test/docs/quick_start.sh' - "$work/ci-comment"

# ---- run.sh ---------------------------------------------------------------------
# A program that crashes after a passed test has failed one: the one running.
cat > "$work/crashes" <<'PROGRAM'
#!/bin/sh
echo "[==========] Running 2 test(s)."
echo "[ RUN      ] test_passes"
echo "[       OK ] test_passes"
echo "[ RUN      ] test_crashes"
kill -SEGV $$
PROGRAM
chmod +x "$work/crashes"
expect_report "run.sh counts a program that crashed as a failed test" "1 passed, 1 failed" \
	env -u TEST_TALLY -u RUN -u V -u LOG_DIR test/support/run.sh "$work/crashes"
if grep -qF "killed by SIGSEGV, in test_crashes" "$work/said"; then
	report "run.sh says which signal stopped a program, in which test"
else
	report "run.sh says which signal stopped a program, in which test" "
$(said "$work/said")"
fi

# A program that ends early with exit status 0, without its closing line,
# has failed one too.
cat > "$work/ends-early" <<'PROGRAM'
#!/bin/sh
echo "ok   first"
exit 0
PROGRAM
chmod +x "$work/ends-early"
expect_report "run.sh counts a program that ended before its closing line as a failed test" \
	"1 passed, 1 failed (ended before its closing line" \
	env -u TEST_TALLY -u RUN -u V -u LOG_DIR test/support/run.sh "$work/ends-early"

# ---- tarball.sh -----------------------------------------------------------------
# bad_tarball NAME COMMAND: a copy of the tarball, unpacked in NAME/, changed
# by COMMAND (run there), packed again with its .sha256 as make dist writes it.
bad_tarball() {
	local dir=$work/$1 top
	mkdir -p "$dir"
	tar xzf "$tarball" -C "$dir" || exit 1
	top=$(ls "$dir")
	(cd "$dir/$top" && eval "$2") || exit 1
	tar czf "$work/$1.tar.gz" -C "$dir" "$top"
	(cd "$work" && sha256sum "$1.tar.gz" > "$1.tar.gz.sha256")
}

if [ -n "$tarball" ]; then
	bad_tarball with-ci 'mkdir .ci && echo "#!/bin/sh" > .ci/run'
	expect_report "tarball.sh reports .ci/ in the tarball" "it holds .ci" test/docs/tarball.sh "$work/with-ci.tar.gz"
	bad_tarball with-path 'true'
	(cd "$work/.." && sha256sum "$(basename "$work")/with-path.tar.gz") > "$work/with-path.tar.gz.sha256"
	expect_report "tarball.sh reports a .sha256 that names a path" "sha256sum -c beside it" \
		test/docs/tarball.sh "$work/with-path.tar.gz"
	bad_tarball readme-names-more 'echo "See \`test/support/nowhere.c\` and [this](examples/nowhere.c)." >> README.md &&
		echo "See \`test/support/elsewhere.c\`." >> docs/api.md'
	expect_report "tarball.sh reports a file README names that the tarball lacks" "names test/support/nowhere.c" \
		test/docs/tarball.sh "$work/readme-names-more.tar.gz"
	expect_report "tarball.sh reports a link in README to a file that the tarball lacks" "names examples/nowhere.c" \
		test/docs/tarball.sh "$work/readme-names-more.tar.gz"
	expect_report "tarball.sh reports a file that docs/ names and the tarball lacks" "docs/api.md line" \
		test/docs/tarball.sh "$work/readme-names-more.tar.gz"
	grep -qF "names test/support/elsewhere.c" "$work/said" ||
		report "tarball.sh names the file docs/ names and the tarball lacks" "it did not: $(said "$work/said")"
fi

# ---- pipes_check.sh -------------------------------------------------------------
# A script under pipefail that pipes into readers that stop early, each
# named with its line: head, grep with -q, -l or -m (before its pattern or
# after), sed q, one after a quoted #, one after a comment line.
printf '%s\n' '#!/bin/bash' 'set -euo pipefail' 'first=$(echo "$1" |' '	head -1)' 'find . | grep -q x && echo x' \
	'seq 9 | sed 3q' 'ls | grep -l x' 'ls | grep -E x -m 1 || true' 'echo "a # b" | head -c 1' \
	'ls |' '	# a comment between the writer and its reader' '	head -n 1' > "$work/early-readers.sh"
for reader in '3:head -1' '5:grep -q' '6:sed 3q' '7:grep -l' '8:grep -m' '9:head -c' '10:head -n'; do
	expect_report "pipes_check.sh reports a pipe into ${reader#*:} under pipefail" \
		"early-readers.sh:${reader%%:*}: under pipefail, a reader that may stop early (${reader#*:})" \
		test/support/pipes_check.sh "$work/early-readers.sh"
done
# The same pipes in comments, a line's own or after a command, are none.
printf '%s\n' '#!/bin/bash' 'set -euo pipefail' '# first=$(echo "$1" | head -1)' '	# find . | grep -q x' \
	'seq 9 | sort # not | sed 3q' 'ls; # | grep -l x' > "$work/commented-readers.sh"
if test/support/pipes_check.sh "$work/commented-readers.sh" > "$work/said" 2>&1; then
	report "pipes_check.sh passes pipes in comments"
else
	report "pipes_check.sh passes pipes in comments" "it failed:
$(said "$work/said")"
fi
# Without arguments it reads the tree's scripts and .ci/run.
mkdir -p "$work/pipes-tree/.ci" "$work/pipes-tree/test"
printf '%s\n' '#!/bin/bash' 'set -euo pipefail' 'ls | head -1' > "$work/pipes-tree/.ci/run"
printf '%s\n' '#!/bin/bash' 'set -o pipefail' 'ls | grep -q x' > "$work/pipes-tree/test/lists.sh"
expect_report "pipes_check.sh reads .ci/run" ".ci/run:3: under pipefail" \
	sh -c 'cd "$1" && "$2"' - "$work/pipes-tree" "$PWD/test/support/pipes_check.sh"
expect_report "pipes_check.sh reads the tree's scripts" "test/lists.sh:3: under pipefail" \
	sh -c 'cd "$1" && "$2"' - "$work/pipes-tree" "$PWD/test/support/pipes_check.sh"

# ---- expect_checked.sh ------------------------------------------------------------
# A bug program of the checked build (a script here) prints what the line
# must name, then a line that names something else, and fails as the
# program would: the check must fail too.
rule="a suspended coroutine's locals have no address (the shared-stack rule)"
# bug_says NAME EXPECT LINE: the script NAME, whose stderr is both lines.
bug_says() {
	printf 'expect: %s\n%s\n' "$2" "$3" > "$work/$1.err"
	printf '#!/bin/sh\ncat "%s" >&2\nexit 1\n' "$work/$1.err" > "$work/$1"
	chmod +x "$work/$1"
}
bug_says other-coroutine "coroutine 0, schedule 0x10, slice 80 bytes" \
	"main read coroutine 1's stack (top-36, schedule 0x10) while coroutine 1 is suspended: $rule"
expect_report "expect_checked.sh reports a line that names another coroutine" "no report: main read coroutine 0's" \
	test/bugs/expect_checked.sh read - "$work/other-coroutine"
bug_says thread-as-main "coroutine 0, schedule 0x10, slice 80 bytes, by another thread" \
	"main read coroutine 0's stack (top-36, schedule 0x10) while coroutine 0 is suspended: $rule"
expect_report "expect_checked.sh reports another thread named main" "no report: another thread" \
	test/bugs/expect_checked.sh read - "$work/thread-as-main"
bug_says one-of-several "coroutines 0, 1 or 2 of 3, schedule 0x10, slice 80 bytes" \
	"main read coroutine 2's stack (top-36, schedule 0x10) while coroutine 2 is suspended: $rule"
expect_report "expect_checked.sh reports one coroutine named where several are" \
	"no report: main read the stack of coroutine 0, 1 or 2" test/bugs/expect_checked.sh read - "$work/one-of-several"
bug_says outside-the-slice "coroutine 0, schedule 0x10, slice 80 bytes" \
	"main read coroutine 0's stack (top-100, schedule 0x10) while coroutine 0 is suspended: $rule"
expect_report "expect_checked.sh reports an offset outside the slice" "offset top-100 is not in the slice of 80 bytes" \
	test/bugs/expect_checked.sh read - "$work/outside-the-slice"
[ "$failed" = 0 ]
