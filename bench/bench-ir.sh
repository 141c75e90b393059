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
#
# The costs of coroutine_clone and coroutine_delete follow, each beside what
# it saves or replaces (see COSTS), counting only the operation.
#
# The peer programs (bench/peer.c: peer, peer-cxx) are counted apart, each
# variant beside libaco's (aco_NAME) when the program was built with libaco:
# those of PEER_VARIANTS (not "dirty", see below; not hold65536, whose count
# is memcpy's; not "heap", which is bytes).
# Usage: [QEMU=qemu-ARCH] bench-ir.sh BENCH_BINARY...   (build/<backend>/bench,
#                                                        build/<backend>/peer)
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
# (x86 asm benches only; the others skip them).  rt1_checked: the round trip
# of a checked build (its system calls count a few instructions each: the
# kernel's are not counted, see make bench for the time).
VARIANTS="fcontext rt1 rt4 rt1_48 rt4_48 rounding rt1_reload rounding_reload rt1_checked stack1024 create"
# The costs of a clone and a delete (bench.cpp's cost rows), each beside
# what it saves or replaces (NAME:BESIDE).  Only the operation is counted:
# the bench toggles callgrind's collection on and off around it, and these
# run with collection off at the start; each is exact, so K_COSTS is small.
# Not under qemu, which would count the setup too.  fork's work is the
# kernel's, which callgrind does not see: "-".
COSTS="first48:- clone48:first48 first1024:- clone1024:first1024 first4096:- clone4096:first4096
	fork:clone48 replay10:clone48 replay100:clone48
	end_plain:- delete_plain:end_plain end_object:- delete_object:end_object delete_new:-"
K_COSTS=2000
CALLGRIND_OPTIONS=
PEER_VARIANTS="rt4 rt1 hold1024 hold4096 create"

instructions() {
	if [ -z "$QEMU" ]; then
		# shellcheck disable=SC2086 # none, or one option
		valgrind --tool=callgrind --callgrind-out-file=/dev/null $CALLGRIND_OPTIONS "$@" 2>&1 |
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
# With g++ 12 -O2 the round trip counts 126, 143, 134 and 159: a yield has
# a frame of its own, whose call, return and saved register cost 9 to 11
# (docs/performance.md, "Where the instructions go").
goal() {
	case "$QEMU:$1:$2" in
	:asm:rt1) echo 120 ;;
	:asm:rt4) echo 140 ;;
	:asm:rt1_48) echo 130 ;;
	:asm:rt4_48) echo 150 ;;
	*) echo - ;;
	esac
}

# instructions per operation of variant $2 of program $1, over $3 (K) of them
per_op() {
	k=${3:-$K}
	once=$(instructions "$1" once "$2" "$k")
	twice=$(instructions "$1" once "$2" $((2 * k)))
	awk -v d="$((twice - once))" -v k="$k" 'BEGIN { printf "%.1f", d / k }'
}

# The cost rows of bench $1 (backend $2): each beside what it saves or
# replaces, their ratio, and for the asm backend natively the goal: a clone
# of a small slice no dearer than a new coroutine run to its first yield.
cost_rows() {
	counted=
	for pair in $COSTS; do
		v=${pair%%:*} beside=${pair#*:}
		per=- theirs=- ratio=- g=-
		if [ "$v" != fork ]; then
			per=$(CALLGRIND_OPTIONS=--collect-atstart=no per_op "$1" "$v" $K_COSTS)
			counted="$counted $v=$per"
		fi
		if [ "$beside" != - ]; then
			# shellcheck disable=SC2086 # one NAME=COUNT a line
			theirs=$(printf '%s\n' $counted | sed -n "s/^$beside=//p")
			[ "$per" = - ] || ratio=$(awk -v o="$per" -v t="$theirs" 'BEGIN { printf "%.2f", o / t }')
		fi
		case "$2:$v:$ratio" in
		asm:clone48:[0-9]*) g=$(awk -v r="$ratio" 'BEGIN { printf "<= 1.00 %s", r <= 1 ? "met" : "MISSED" }') ;;
		esac
		printf '%-10s %-16s %12s   %-14s %12s %8s   %s\n' "$2" "$v" "$per" "$beside" "$theirs" "$ratio" "$g"
	done
}

# The peer program $1: this library's count beside libaco's, their ratio,
# and the goal (a 4 coroutine round trip of small slices, natively on
# x86_64: no more than libaco's).  From the C++ host only create+run+free,
# which looks for no late C++ runtime there.
peer_rows() {
	host=C variants=$PEER_VARIANTS
	case $1 in *-cxx) host=C++ variants=create ;; esac
	for v in $variants; do
		ours=$(per_op "$1" "$v")
		aco=- ratio=-
		if $QEMU "$1" once "aco_$v" 1 >/dev/null 2>&1; then
			aco=$(per_op "$1" "aco_$v")
			ratio=$(awk -v o="$ours" -v a="$aco" 'BEGIN { printf "%.2f", o / a }')
		fi
		g=-
		case "$QEMU:$v:$ratio" in
		:rt4:-) ;;
		:rt4:*) g=$(awk -v r="$ratio" 'BEGIN { printf "<= 1.00 %s", r <= 1 ? "met" : "MISSED" }') ;;
		esac
		printf '%-10s %-16s %12s %12s %8s   %s\n' "$host" "$v" "$ours" "$aco" "$ratio" "$g"
	done
}

printf '%-10s %-16s %12s %10s   %s\n' backend variant instr/op floor goal
peers=
for bin in "$@"; do
	case $(basename "$bin") in peer*) peers="$peers $bin"; continue ;; esac
	backend=$(basename "$(dirname "$bin")")
	floor=-
	for v in $VARIANTS; do
		# A bench built without Boost.Context has no fcontext variant.
		$QEMU "$bin" once "$v" 1 >/dev/null 2>&1 || continue
		per=$(per_op "$bin" "$v")
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
if [ -z "$QEMU" ]; then
	echo
	echo "the costs of coroutine_clone and coroutine_delete: the operation's instructions alone, beside what it saves or replaces"
	printf '%-10s %-16s %12s   %-14s %12s %8s   %s\n' backend variant instr/op beside instr/op ratio goal
	for bin in "$@"; do
		case $(basename "$bin") in bench) cost_rows "$bin" "$(basename "$(dirname "$bin")")" ;; esac
	done
fi
[ -z "$peers" ] && exit 0
echo
set -- $peers
echo "this library beside libaco (bench/peer.c), $(basename "$(dirname "$1")") backend, 48 bytes held unless the name says"
printf '%-10s %-16s %12s %12s %8s   %s\n' host variant instr/op libaco ratio goal
for bin in $peers; do
	peer_rows "$bin"
done
