#!/bin/sh
# Instructions per operation, counted by valgrind's callgrind: the count of a
# run of 2*K operations minus that of a run of K, divided by K, so that all
# that is not the operations (start-up, setup, teardown) cancels out.  Each
# round trip stands beside its floor (a Boost.Context fcontext round trip,
# when the bench has it) and, for the asm backend, beside the project's
# performance goal.
#
# Under qemu-user (QEMU=qemu-aarch64, for a cross-built bench), where
# callgrind cannot run, qemu counts instead: -d in_asm logs each translated
# block's instructions once, -d exec (with nochain, so that no block jumps
# straight into the next) logs every block executed, and awk sums the two.
# Slower, so K is smaller; the counts are of the guest's instructions.
# Usage: [QEMU=qemu-ARCH] bench-ir.sh BENCH_BINARY...   (build/<backend>/bench)
set -eu
QEMU=${QEMU:-}
if [ -n "$QEMU" ]; then
	K=2000
	LOG=$(mktemp)
	trap 'rm -f "$LOG"' EXIT
else
	command -v valgrind >/dev/null || { echo "bench-ir.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
	K=20000
fi
# No "dirty": valgrind does not keep MXCSR's sticky flags, and the cost of a
# dirty MXCSR is latency, not instructions.  fcontext first: the floor of the
# round trips.  rt1_reload and rounding_reload: the same with the other FP switch
# (x86 asm benches only; the others skip them).
VARIANTS="fcontext rt1 rt4 rounding rt1_reload rounding_reload stack1024 create"

instructions() {
	if [ -z "$QEMU" ]; then
		valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 |
			sed -n 's/.*Collected : //p'
		return
	fi
	"$QEMU" -d in_asm,exec,nochain -D "$LOG" "$@" >/dev/null
	# "0x5500001234:  insn" lines follow "IN:", one block at a time;
	# "Trace N: host [flags/pc/...]" is one execution of the block at pc.
	awk '
	function hex(s) { sub(/^0x/, "", s); sub(/^0+/, "", s); return s }
	/^IN:/ { block = ""; next }
	/^0x[0-9a-f]+:/ { a = hex(substr($1, 1, length($1) - 1)); if (block == "") { block = a; n[block] = 0 } n[block]++; next }
	/^Trace / { block = ""; split($0, f, "/"); total += n[hex(f[2])] }
	END { printf "%d\n", total }' "$LOG"
}

# The asm backend's goal for variant $2 (on x86_64, natively), or "-".
goal() {
	case "$QEMU:$1:$2" in
	:asm:rt1) echo 130 ;;
	:asm:rt4) echo 150 ;;
	*) echo - ;;
	esac
}

printf '%-10s %-16s %12s %10s   %s\n' backend variant instr/op floor goal
for bin in "$@"; do
	backend=$(basename "$(dirname "$bin")")
	floor=-
	for v in $VARIANTS; do
		# A bench built without Boost.Context has no fcontext variant.
		$QEMU "$bin" once "$v" 1 >/dev/null 2>&1 || continue
		once=$(instructions "$bin" once "$v" $K)
		twice=$(instructions "$bin" once "$v" $((2 * K)))
		per=$(awk -v d="$((twice - once))" -v k=$K 'BEGIN { printf "%.1f", d / k }')
		case $v in
		fcontext) floor=$per; shown_floor=- ;;
		rt*|rounding*) shown_floor=$floor ;;
		*) shown_floor=- ;;
		esac
		g=$(goal "$backend" "$v")
		[ "$g" = - ] || g=$(awk -v p="$per" -v g="$g" 'BEGIN { printf "<= %d %s", g, p <= g ? "met" : "MISSED" }')
		printf '%-10s %-16s %12s %10s   %s\n' "$backend" "$v" "$per" "$shown_floor" "$g"
	done
done
