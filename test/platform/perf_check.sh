#!/bin/sh
# perf_check.sh - perf's call graph of a program of coroutines, taken from
# the frame pointers (perf record -g), runs from each coroutine's work into
# the main loop that resumed it: of the samples whose stack holds the
# entities' coroutine function (live, in bench/profile_game.c built with
# frame pointers), at least 95 in 100 hold the loop (play_tick) and main
# too.  Without the link none does.  Skipped with a line, not failed, where
# perf cannot record (not installed, not allowed, no such event).
#
#   perf_check.sh PROG DIR
set -u
prog=$1 dir=$2
mkdir -p "$dir"
if ! command -v perf > /dev/null; then
	echo "skipped: $prog: no perf here (Debian: linux-perf)"
	exit 0
fi
if ! perf record -q -e cpu-clock -F 20000 -g -o "$dir/perf.data" -- "$prog" 300 > /dev/null 2> "$dir/record.err"; then
	echo "skipped: $prog: perf cannot record here: $(sed -n 1p "$dir/record.err")"
	exit 0
fi
perf script -i "$dir/perf.data" -F ip,sym > "$dir/stacks" 2> "$dir/script.err" ||
	{ echo "FAIL: $prog: perf script:"; cat "$dir/script.err"; exit 1; }

# Each sample is its stack, a frame a line, then an empty line.
set -- $(awk '
	NF == 0 { if (live) { n++; if (loop && main) linked++ } live = loop = main = 0; next }
	$2 == "live" { live = 1 }
	$2 == "play_tick" { loop = 1 }
	$2 == "main" { main = 1 }
	END { print n + 0, linked + 0 }' "$dir/stacks")
samples=$1 linked=$2
if [ "$samples" -lt 20 ] || [ $((linked * 100)) -lt $((samples * 95)) ]; then
	echo "FAIL: $prog: of $samples samples in the coroutines' work, $linked run on into play_tick and main (perf script: $dir/stacks)"
	exit 1
fi
echo "ok: $prog: $linked of $samples samples in the coroutines' work run on into play_tick and main"
