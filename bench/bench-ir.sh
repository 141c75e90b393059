#!/bin/sh
# Instructions per operation, counted by valgrind's callgrind: the count of a
# run of 2*K operations minus that of a run of K, divided by K, so that all
# that is not the operations (start-up, setup, teardown) cancels out.
# Usage: bench-ir.sh BENCH_BINARY...   (build/<backend>/bench)
set -eu
command -v valgrind >/dev/null || { echo "bench-ir.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
K=20000
# No "dirty": valgrind does not keep MXCSR's sticky flags, and the cost of a
# dirty MXCSR is latency, not instructions.
VARIANTS="rt1 rt4 stack1024 create fcontext"

instructions() {
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 |
		sed -n 's/.*Collected : //p'
}

printf '%-10s %-10s %12s\n' backend variant instr/op
for bin in "$@"; do
	backend=$(basename "$(dirname "$bin")")
	for v in $VARIANTS; do
		# A bench built without Boost.Context has no fcontext variant.
		"$bin" once "$v" 1 >/dev/null 2>&1 || continue
		once=$(instructions "$bin" once "$v" $K)
		twice=$(instructions "$bin" once "$v" $((2 * K)))
		awk -v b="$backend" -v v="$v" -v d="$((twice - once))" -v k=$K 'BEGIN { printf "%-10s %-10s %12.1f\n", b, v, d / k }'
	done
done
