#!/bin/sh
# Instructions per round trip of bench_lua's variants, counted by valgrind's
# callgrind, as bench-ir.sh counts the library's: the count of a run of 2*K
# round trips minus that of a run of K, divided by K, so that start-up,
# loading and closing cancel out.  The floor is Lua's own coroutine.yield.
# Usage: bench-lua-ir.sh BENCH_LUA_BINARY...   (build/<backend>/bench_lua)
set -eu
command -v valgrind >/dev/null || { echo "bench-lua-ir.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
K=20000

instructions() {
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 | sed -n 's/.*Collected : //p'
}

printf '%-10s %-12s %12s %8s\n' backend variant instr/op ratio
for bin in "$@"; do
	backend=$(basename "$(dirname "$bin")")
	floor=
	for v in yield_top wait_sort wait_top; do
		once=$(instructions "$bin" once $v $K)
		twice=$(instructions "$bin" once $v $((2 * K)))
		per=$(awk -v d="$((twice - once))" -v k=$K 'BEGIN { printf "%.1f", d / k }')
		[ -n "$floor" ] || floor=$per
		ratio=$(awk -v p="$per" -v f="$floor" 'BEGIN { printf "%.2f", p / f }')
		printf '%-10s %-12s %12s %8s\n' "$backend" $v "$per" "$ratio"
	done
done
