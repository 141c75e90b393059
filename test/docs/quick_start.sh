#!/bin/sh
# quick_start.sh - README's Quick start commands, the demo's and the test
# command, outlive a package mirror's hiccup: when `apt-get update` fails
# and the install succeeds, they still run make; when the install fails,
# they stop before make; their status is make's.  They run here with an
# apt-get and a make that only say what they were asked.  And .ci/run runs
# the test command as README gives it, on a line of its own code (in a git
# checkout: the tarball leaves .ci/ out).  Run by `make readme-check`,
# from the source root (or the root of a copy).
#
#     test/docs/quick_start.sh
fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
# apt-get ends with $UPDATE or $INSTALL; make says its arguments in $RAN
# and ends with $MAKE.
cat > "$fake/apt-get" <<'FAKE'
#!/bin/sh
case $1 in update) exit $UPDATE ;; *) exit $INSTALL ;; esac
FAKE
cat > "$fake/make" <<'FAKE'
#!/bin/sh
echo "make $*" >> "$RAN"
exit $MAKE
FAKE
chmod +x "$fake/apt-get" "$fake/make"
failed=0
# runs COMMAND UPDATE INSTALL MAKE: the command's status and what make
# ran, "STATUS: make ARGS" (or "STATUS: no make"), with those exit codes.
runs() {
	rm -f "$fake/ran"
	PATH="$fake:$PATH" UPDATE=$2 INSTALL=$3 MAKE=$4 RAN=$fake/ran sh -c "$1" > /dev/null 2>&1
	echo "$?: $(cat "$fake/ran" 2> /dev/null || echo no make)"
}
for name in demo-command test-command; do
	command=$(test/docs/readme_block.sh "$name") || exit 1
	target=${command##* make }
	for case in "update fails:100 0 0:0: make $target" "install fails:0 100 0:100: no make" \
		"make fails:0 0 2:2: make $target"; do
		what=${case%%:*} codes=${case#*:} expected=${case#*:*:}
		codes=${codes%%:*}
		# shellcheck disable=SC2086 # three exit codes
		got=$(runs "$command" $codes)
		[ "$got" = "$expected" ] || {
			echo "README's $name, when $what: $got, not $expected: $command"
			failed=1
		}
	done
done
command=$(test/docs/readme_block.sh test-command) || exit 1
if [ -f .ci/run ] && ! cmd=$command awk '!/^[ \t]*#/ && index($0, ENVIRON["cmd"]) { found = 1 } END { exit !found }' .ci/run; then
	echo ".ci/run does not run README's test command: $command"
	failed=1
fi
[ "$failed" = 0 ] && echo "quick_start.sh: README's commands run make after a failed update, not after a failed install; .ci/run runs the test command"
