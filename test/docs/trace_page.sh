#!/bin/bash
# The page of `main --trace=html`, checked in a real browser: headless
# Chromium (driven by test/docs/trace_page.js, with node) opens it at every
# step of the three walkthroughs (#walk=W&step=N, and &next=K, which presses its
# "next" button K times), in a window of 1,024 x 768 pixels, a projector's.
#
# What its script drew (the DOM after it ran) must say what the text trace
# says at that step (`main --trace` for the demo, `main --trace=trees` for
# the second, `main --trace=clone` for the third): the step count, the
# step's line, what the program printed, the frames on the run stack and in
# both heap copies with their bytes, the bytes that moved, in the clone
# walkthrough each heap copy's fingerprint and the value of path the trace
# read in its bytes (and in those on the run stack), and in the demo how
# far each heap copy's coroutine has counted (the number it printed last).
# And what a learner needs
# beside it: the heap copy drawn at its block's size (the deepest slice so
# far: a block never shrinks), one scale for every walkthrough, a first
# run drawing the frames the coroutine starts with (the library's entry,
# then its function), each frame's bytes said (return address, saved
# registers, locals), and in the trees walkthrough each tree with the node
# its coroutine is at and a caption that counts the walk frames its slice
# really holds, saying why there are fewer than nodes from the root where
# there are (tail calls).
#
# The trace itself must hold what the program makes it hold, on either
# backend: at every yield, the library's entry (the same at every yield),
# the coroutine's function (foo or choose; or walk, once per call still
# running: one per node from the root, less the right children where
# walk's call for a right child is a tail call, which its disassembly says
# on x86_64), coroutine_yield and the save, whose bytes add up to the
# slice.  And in the clone walkthrough, two heap copies of the same bytes
# that part: right after coroutine_clone both fingerprints are the
# original's, and once each has been resumed and has yielded again, each
# has a fingerprint of its own, neither the one they shared.
#
# Every step must show its run stack, heap copies and caption without
# scrolling, with no text under 12 pixels and no two texts overlapping,
# and the legend must open beside the step, over no part of it, and close
# on it (trace_page.js measures them); so must the steps of a copy of the
# page given a third coroutine (a third heap copy and tree), as a
# walkthrough with a clone of both coroutines would need.  Each of these
# checks, and those of the values drawn, is fed a copy of the page with the
# bug it is there for, and must report it.  Screenshots of every step, and
# where each step's parts end, the smallest text and the legend's and heap
# copies' boxes (heights.txt), are left in OUT.
#
#   test/docs/trace_page.sh MAIN OUT
set -euo pipefail
main=$1 out=$2
here=$(dirname "$0")
mkdir -p "$out"
rm -f "$out"/*.png "$out"/*.html
"$main" --trace > "$out/trace-1.txt"
"$main" --trace=trees > "$out/trace-2.txt"
"$main" --trace=clone > "$out/trace-3.txt"
"$main" --trace=html > "$out/trace.html"
page=$(realpath "$out/trace.html")

fail() { echo "trace page: $*" >&2; exit 1; }

# The page is trace_page.html with the walkthroughs put in, not an older copy.
"$here/trace_page_html.sh" "$main" || fail "the page is not trace_page.html's"

# One self-contained file: nothing fetched from anywhere.
if grep -n -i -E '<script[^>]*src|<link|<img|@import|url\(|https?://' "$page"; then
	fail "the page reaches for something outside itself (above)"
fi

# A trace's steps: every resume, yield, clone and return, one line each,
# and after each what the page must draw at that step, one line each: "run
# NAME|BYTES" for the frames its run stack holds (a yield's own, a copy
# back's or a kept slice's from that coroutine's last yield; at a clone,
# the original's if its bytes are still there; none at a first run or a
# return), "copy0 NAME|BYTES" and "copy1 ..." for the frames each heap copy
# holds (its coroutine's last yield's, a clone's those of the coroutine it
# was copied from; none once freed), "bytes0 A" and "bytes1 B" for the
# heap copies' bytes, named by their fingerprints where the trace gives
# them (the clone walkthrough), "local-run NAME = VALUE", "local0 NAME =
# VALUE" and "local1 ..." for the local the trace reads in the bytes on the
# run stack and in each heap copy (path, in the clone walkthrough), "count0
# N" and "count1 N" for the number each heap copy's coroutine printed last
# (given COUNTS 1: the demo), and "said LINE" for each line the program
# printed since the step before (the last step also gets what it printed
# after).  Frames are listed top first.
#
#   steps_of TRACE [COUNTS]
steps_of() {
	awk -v counts="${2:-0}" '
		function flush(   i, c, p) {
			if (line == "")
				return
			print line
			for (i = 0; i < n; i++) print "  run " f[i]
			for (c = 0; c < 2; c++) for (i = 0; i < last_n[c]; i++) print "  copy" c " " last[c, i]
			for (c = 0; c < 2; c++) if (sum[c] ~ /^[0-9a-f]+$/) print "  bytes" c " " letter[sum[c]]
			if (n > 0 && value[id] ~ /^-?[0-9]+$/) print "  local-run " local " = " value[id]
			for (c = 0; c < 2; c++) if (last_n[c] > 0 && value[c] ~ /^-?[0-9]+$/) print "  local" c " " local " = " value[c]
			for (i = 0; i < nsaid_step; i++)
				if (split(said_step[i], p, / : /) == 2 && p[1] ~ /^coroutine [0-9]+$/) printed[substr(p[1], 11)] = p[2]
			for (c = 0; c < 2; c++) if (counts && held[c] && (c in printed)) print "  count" c " " printed[c]
			for (i = 0; i < nsaid_step; i++) print "  said " said_step[i]
		}
		BEGIN { owner = -1 }
		/^  (resume|yield |clone |coroutine [0-9]+ returned)/ {
			flush()
			for (i = 0; i < nsaid; i++) said_step[i] = said[i]
			nsaid_step = nsaid; nsaid = 0
			line = substr($0, 3); n = 0
			split(line, w, /[ :]+/); id = w[2]
			if (line ~ /^resume/ && line !~ /first run/) { n = last_n[id]; for (i = 0; i < n; i++) f[i] = last[id, i] }
			if (line ~ /returned/) { last_n[id] = 0; owner = -1; held[id] = 0 }
			if (line ~ /^clone/) {
				if (owner == id) { n = last_n[id]; for (i = 0; i < n; i++) f[i] = last[id, i] }
				copy = line; sub(/.* to coroutine /, "", copy); sub(/[^0-9].*/, "", copy)
				last_n[copy] = last_n[id]; for (i = 0; i < last_n[id]; i++) last[copy, i] = last[id, i]
				held[copy] = 1
			}
			yielding = line ~ /^yield/
			if (yielding) { last_n[id] = 0; owner = id; held[id] = 1 }
			next
		}
		# the local the trace reads in every slice, in each heap copy
		/^       heap copies. [^ ]+ \(at top-[0-9]+/ {
			local = $3
			for (c = 0; c < 2; c++) { s = $0; sub(".* coroutine " c " ", "", s); sub(/,.*/, "", s); value[c] = s }
			next
		}
		# the bytes named A, B, ... in the order their fingerprints appear
		# (the page names them so: the values differ from run to run)
		/^       heap copies. bytes \(FNV-1a\):/ {
			for (c = 0; c < 2; c++) {
				s = $0; sub(".* coroutine " c " ", "", s); sub(/,.*/, "", s); sum[c] = s
				if (s ~ /^[0-9a-f]+$/ && !(s in letter)) letter[s] = sprintf("%c", 65 + letters++)
			}
			next
		}
		yielding && /^ +[0-9]+ B  / {
			name = $0; sub(/^ *[0-9]+ B  /, "", name)
			f[n] = name "|" $1; last[id, n] = f[n]; n++; last_n[id] = n
			next
		}
		!/^ / { said[nsaid++] = $0 }
		END { for (i = 0; i < nsaid; i++) said_step[nsaid_step++] = said[i]; flush() }
	' "$1"
}

# What the DOM drew, in the same form, after the step's line.
drawn() {
	local d=$1
	unescape() { sed 's/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&#39;/'"'"'/g; s/&amp;/\&/g'; }
	{ grep -o 'class="band frame[^"]*" data-name="[^"]*" data-bytes="[0-9]*"' || true; } < "$d" |
		sed 's/.*data-name="\([^"]*\)" data-bytes="\([0-9]*\)"/  run \1|\2/' | unescape
	{ grep -o 'class="band hframe[^"]*" data-copy="[01]" data-name="[^"]*" data-bytes="[0-9]*"' || true; } < "$d" |
		sed 's/.*data-copy="\([01]\)" data-name="\([^"]*\)" data-bytes="\([0-9]*\)"/  copy\1 \2|\3/' | unescape
	{ grep -o 'class="heap" data-id="[01]"[^>]*data-sum="[A-Z]*"' || true; } < "$d" |
		sed 's/.*data-id="\([01]\)".*data-sum="\([A-Z]*\)"/  bytes\1 \2/'
	{ grep -o '<small class="value" data-where="[a-z0-9]*">[^<]*</small>' || true; } < "$d" |
		sed 's|.*data-where="copy\([0-9]\)">\(.*\)</small>|  local\1 \2|; s|.*data-where="run">\(.*\)</small>|  local-run \1|'
	{ grep -o '<small class="count" data-copy="[01]"><b>[^<]* = [^<]*</b>' || true; } < "$d" |
		sed 's|.*data-copy="\([01]\)"><b>[^<]* = \(.*\)</b>|  count\1 \2|'
	{ grep -o '<div class="said-line">[^<]*</div>' || true; } < "$d" |
		sed 's|<div class="said-line">\(.*\)</div>|  said \1|' | unescape
}

declare -A nsteps
for w in 1 2 3; do
	steps_of "$out/trace-$w.txt" "$([ "$w" = 1 ] && echo 1 || echo 0)" > "$out/steps-$w.txt"
	nsteps[$w]=$(grep -c -v '^  ' "$out/steps-$w.txt")
	[ "${nsteps[$w]}" -gt 0 ] || fail "no steps in trace-$w.txt"
done
# The second walkthrough is there to show slices of different sizes.
[ "$(sed -n 's/^yield  [0-9]*: copied \([0-9]*\) bytes.*/\1/p' "$out/steps-2.txt" | sort -u | wc -l)" -ge 3 ] ||
	fail "main --trace=trees yields fewer than 3 different slice sizes"

# ---- What every yield's slice holds, as the program makes it -----------------
# Each coroutine's tree, as main --trace=trees prints it.
declare -A tree
while read -r id shape; do tree[$id]=$shape; done < <(sed -n 's/^  coroutine \([0-9]*\) walks \([^:]*\):.*/\1 \2/p' "$out/trace-2.txt")
[ "${#tree[@]}" = 2 ] || fail "main --trace=trees does not print both coroutines' trees"

# Tail calls, read from the program's disassembly on x86_64: a call that
# is a function's last act may be a jump that makes no frame.  Whether
# walk's call for a right child is one (walk calls walk once, for the left
# child, instead of twice); elsewhere, what the first yield below a right
# child shows, which must then hold for every yield.  And whether foo or
# walk jumps to coroutine_yield (clang's foo does at its last yield): that
# yield's slice then holds one frame of theirs fewer.
tail=
declare -A jumps_to_yield=([foo]=0 [walk]=0 [choose]=0)
if [ "$(uname -m)" = x86_64 ] && command -v objdump > /dev/null; then
	objdump -d -C --no-show-raw-insn "$main" > "$out/main.dis"
	# in_function F REGEX: how many instructions of F match REGEX
	in_function() {
		awk -v f="$1" -v what="$2" '$0 ~ "^[0-9a-f]+ <" f "\\(" { on = 1; next } on && /^$/ { on = 0 }
			on && $0 ~ what { n++ } END { print n + 0 }' "$out/main.dis"
	}
	case $(in_function walk '\tcall .*<walk\\(') in
	1) tail=1 ;;
	2) tail=0 ;;
	*) fail "walk calls walk $(in_function walk '\tcall .*<walk\\(') times in $main's disassembly, not once or twice" ;;
	esac
	for f in foo walk choose; do
		[ "$(in_function $f '\tjmp .*<coroutine_yield>')" = 0 ] || jumps_to_yield[$f]=1
	done
fi

# yield W: for each yield of walkthrough W, its step, its coroutine, its
# slice's bytes, the node it printed (walkthrough 2) and its frames' names
# and bytes, one line: "STEP ID BYTES NODE NAME|BYTES;NAME|BYTES;...".
yields() {
	awk '!/^  / { k++; y = $0 ~ /^yield/; if (y) { split($0, a, /[ :]+/); id[k] = a[2]; bytes[k] = a[4] } next }
		y && /^  run / { sub(/^  run /, ""); fr[k] = fr[k] $0 ";" }
		/^  said coroutine [0-9]+ : [0-9]+$/ { node[k] = $NF }
		END { for (i = 1; i <= k; i++) if (i in id) print i, id[i], bytes[i], (i in node ? node[i] : "-"), fr[i] }' "$out/steps-$1.txt"
}
# The function each walkthrough's coroutines run: foo, walk, choose.
body_of() { case $1 in 1) echo foo ;; 2) echo walk ;; 3) echo choose ;; esac; }
for w in 1 2 3; do
	body=$(body_of "$w") entry_seen=
	while read -r k id bytes node list; do
		where="walkthrough $w, step $k (yield of coroutine $id)"
		names=$(tr ';' '\n' <<< "$list" | sed '/^$/d; s/|[0-9]*$//')
		sum=$(tr ';' '\n' <<< "$list" | awk -F'|' '{ s += $NF } END { print s + 0 }')
		[ "${sum:-0}" = "$bytes" ] || fail "$where: its frames' bytes add up to ${sum:-0}, not the slice's $bytes:"$'\n'"$names"
		[[ $(tail -1 <<< "$names") == save_* ]] || fail "$where: the last frame is not the save:"$'\n'"$names"
		[ "$(awk '{ before = last; last = $0 } END { print before }' <<< "$names")" = coroutine_yield ] || fail "$where: no coroutine_yield above the save:"$'\n'"$names"
		entry=$(awk -v b="$body" '$0 == b || $0 == "coroutine_yield" { exit } { print }' <<< "$names")
		[ -n "$entry" ] || fail "$where: no library entry above $body:"$'\n'"$names"
		[ -z "$entry_seen" ] || [ "$entry" = "$entry_seen" ] ||
			fail "$where: the entry is"$'\n'"$entry"$'\n'"at an earlier yield"$'\n'"$entry_seen"
		entry_seen=$entry
		calls=$(sed '1,'"$(wc -l <<< "$entry")"'d' <<< "$names" | head -n -2)
		[ -z "$(grep -v -x "$body" <<< "$calls")" ] || fail "$where: frames other than $body between the entry and coroutine_yield:"$'\n'"$names"
		count=$(grep -c -x "$body" <<< "$calls" || true)
		# one frame fewer where the yield is a tail call
		if [ "$w" != 2 ]; then
			[ "$count" = 1 ] || { [ "$count" = 0 ] && [ "${jumps_to_yield[$body]}" = 1 ]; } ||
				fail "$where: $count $body frames, not 1$([ "${jumps_to_yield[$body]}" = 0 ] || echo " (or 0: $body jumps to coroutine_yield)")"
			continue
		fi
		read -r nodes rights _ <<< "$(echo "${tree[$id]} $node" | awk -f "$here/tree_path.awk")"
		[ -n "${nodes:-}" ] || fail "$where: node $node is not in coroutine $id's tree ${tree[$id]}"
		# A right child on the path: whether its call made a frame says
		# whether walk's call for a right child is a tail call.
		if [ "$rights" -gt 0 ] && [ -z "$tail" ]; then tail=$(( count == nodes ? 0 : 1 )); fi
		want=$(( nodes - ${tail:-0} * rights ))
		[ "$count" = "$want" ] || { [ "${jumps_to_yield[walk]}" = 1 ] && [ "$count" = $((want - 1)) ]; } ||
			fail "$where: at node $node, $nodes nodes from the root, $rights of them right children," \
			"the slice holds $count walk frames, not $want (walk's call for a right child $([ "${tail:-0}" = 1 ] || echo "not ")a tail call)"
	done < <(yields "$w")
done
[ -n "$tail" ] || fail "cannot tell whether walk's call for a right child is a tail call: no yield below one"
yields 2 | awk '{ print $2, $4 }' | while read -r id node; do echo "${tree[$id]} $node"; done |
	awk -f "$here/tree_path.awk" | awk '$1 > 1 && $2 > 0 { found = 1 } END { exit !found }' ||
	fail "no yield of main --trace=trees is below a right child"
echo "trace page: every yield holds the entry ($(paste -sd";" <<< "$entry_seen" | sed "s/;/; /g")), foo or a walk frame per call" \
	"still running (walk's call for a right child $([ "$tail" = 1 ] && echo "a tail call, with no frame" || echo "a call with a frame")), coroutine_yield and the save"

# The clone walkthrough: the clone's heap copy holds the original's bytes,
# then each copy's own once both have yielded again.
parted=$(awk '!/^  / { if (shared != "" && $0 ~ /^yield/) { split($0, a, /[ :]+/); again[a[2]] = 1 } step = $0; next }
	step ~ /^clone/ && /^  bytes[01] / { s[$1] = $2; if ($1 == "bytes1") { if (s["bytes0"] != s["bytes1"]) { print "at the clone: " s["bytes0"] " and " s["bytes1"]; exit }
		shared = s["bytes0"]; print "shared: " shared } next }
	shared != "" && again[0] && again[1] && /^  bytes[01] / { t[$1] = $2
		if ($1 == "bytes1") { print (t["bytes0"] != t["bytes1"] && t["bytes0"] != shared && t["bytes1"] != shared ? "parted: " : "not parted: ") t["bytes0"] " and " t["bytes1"]; exit } }' "$out/steps-3.txt")
first=${parted%%$'\n'*} then=${parted#*$'\n'}
case $first/$then in
"shared: "*/"parted: "*) echo "trace page: the clone's heap copy holds the original's bytes ($first), then each its own ($then)" ;;
/) echo "trace page: main --trace=clone gives no fingerprints here, not checked" ;;
*) fail "main --trace=clone: the heap copies are not the same bytes at the clone, then each its own: $first; $then" ;;
esac

# ---- The page in Chromium ----------------------------------------------------
# Every step of the three walkthroughs; the steps reached by &next=K and by
# an address without walk=; the legend opened at the first step and at the
# step with the most frames of each walkthrough; and a copy of the page
# with two more walkthroughs, the first two's steps with a third coroutine
# whose heap copy and tree are coroutine 0's, at every step and with the
# legend; and copies of the page with a bug planted, each at a step where
# its check must report it.
perl -0pe '
	# two more tabs, and the words of the first two for them
	s{^(<a id="walk-3".*\n)}{$1<a id="walk-4" href="#walk=4">4</a>\n<a id="walk-5" href="#walk=5">5</a>\n}m;
	s{^(<p class="about" id="about-1"[^>]*>.*?</p>\n)(<p class="about" id="about-2">.*?</p>\n)}{
		my ($one, $two) = ($1, $2); my ($four, $five) = ($one, $two);
		$four =~ s/about-1/about-4/; $five =~ s/about-2/about-5/; "$one$two$four$five" }mse;
	# the same steps, with a third coroutine: a copy of coroutine 0
	s{^(\];\n)}{$1\[0, 1].forEach(function (k) { var c = JSON.parse(JSON.stringify(walkthroughs[k]));
		c.trees.push(c.trees[0]); c.steps.forEach(function (s) { s.heap.push(s.heap[0]); s.copies.push(s.copies[0]); });
		walkthroughs.push(c); });\n}m;
' "$page" > "$out/three.html"
[ "$(grep -c 'id="walk-[45]"\|id="about-[45]"\|walkthroughs.push(c)' "$out/three.html")" = 5 ] ||
	fail "cannot make the page with a third coroutine ($out/three.html)"
# plant NAME PERL-SUBSTITUTION: a copy of the page with a bug, OUT/planted-NAME.html.
plant() {
	perl -0pe "$2" "$page" > "$out/planted-$1.html"
	! cmp -s "$page" "$out/planted-$1.html" || fail "cannot plant a bug in the page: $2"
}
plant legend 's/(<\/style>)/#legend.on { position: fixed; right: 12px; top: 200px; width: 420px; }\n$1/' # over the heap copies
plant small 's/(\.label small \{ display: block; font-size: )var\(--small\)/${1}11px/' # the frames' details at 11 pixels
plant overlap 's/#zoom \{ padding-left: 40px; \}//' # the run stack's heading over the whole run stack's
plant values 's/text: s\.values\[id\]/text: s.values[1 - id]/; s/count \+ " = " \+ s\.at\[id\]/count + " = " + s.at[1 - id]/'
deepest() { awk '!/^  / { k++ } /^  run / { n[k]++ } END { for (i in n) if (n[i] > m) { m = n[i]; s = i } print s }' "$out/steps-$1.txt"; }
{
	for w in 1 2 3; do
		for k in $(seq 1 "${nsteps[$w]}"); do echo "walk-$w-step-$k $page walk=$w&step=$k"; done
		for k in $(printf '%s\n' 1 3 "$(deepest "$w")" | sort -un); do echo "walk-$w-step-$k-legend $page walk=$w&step=$k legend"; done
		echo "walk-$w-next $page walk=$w&step=4&next=1"
		echo "walk-$w-last $page walk=$w&step=1&next=$((nsteps[$w] + 3))"
		[ "$w" = 3 ] && continue
		for k in $(seq 1 "${nsteps[$w]}"); do echo "three-$((w + 3))-step-$k $out/three.html walk=$((w + 3))&step=$k"; done
		echo "three-$((w + 3))-step-$(deepest "$w")-legend $out/three.html walk=$((w + 3))&step=$(deepest "$w") legend"
	done
	echo "no-walk $page step=3"
	echo "plant-legend $out/planted-legend.html walk=2&step=$(deepest 2) legend planted=lies_over_heaps"
	echo "plant-small $out/planted-small.html walk=1&step=2 planted=a_text_under_12_pixels"
	echo "plant-overlap $out/planted-overlap.html walk=1&step=2 planted=texts_overlap"
	echo "plant-path $out/planted-values.html walk=3&step=5"
	echo "plant-count $out/planted-values.html walk=1&step=4"
} > "$out/visits.txt"
node "$here/trace_page.js" "$out" < "$out/visits.txt" > "$out/heights.txt" ||
	fail "in Chromium, at 1,024 x 768 (above; where each step's parts end: $out/heights.txt)"
# The tightest visit of each walkthrough, without and with the legend:
# the lowest part of the step, then the heap copies'.
for w in 1 2 3; do
	for legend in "" -legend; do
		awk -v w="$w" -v legend="$legend" '$1 ~ "^walk-" w "-step-[0-9]+" legend "$" {
			for (i = 1; i < NF; i++) if ($i == "lowest" || $i == "copies") v[$i] = $(i + 1) + 0
			if (v["lowest"] * 1000 + v["copies"] > m) { m = v["lowest"] * 1000 + v["copies"]; s = $0 } }
			END { print "trace page: the tightest step" (legend ? " with the legend" : "") ": " s }' "$out/heights.txt"
	done
done

# ---- What the page draws at each step, against the trace ---------------------
# What the trace says at step k (1-based) of walkthrough w.
expected() { awk -v k="$2" '!/^  / { s++ } s == k' "$out/steps-$1.txt"; }

check_step() { # walkthrough, visit, step shown
	local w=$1 name=$2 k=$3 d want line got steps=${nsteps[$1]}
	d=$out/$name.html
	grep -q "id=\"walk-$w\"[^>]*class=\"on\"" "$d" || fail "$name: the page does not show walkthrough $w"
	grep -q "<b id=\"steps\">$steps</b>" "$d" || fail "$name: the page does not count $steps steps"
	grep -q "<b id=\"step\">$k</b>" "$d" || fail "$name: the page is not at step $k"
	want=$(expected "$w" "$k")
	line=${want%%$'\n'*}
	got=$(sed -n 's|.*<div id="title">\([^<]*\)</div>.*|\1|p' "$d")
	[ "$got" = "$line" ] || fail "$name: step $k says '$got', the trace '$line'"
	got=$(drawn "$d")
	[ "$got" = "$(echo "$want" | tail -n +2)" ] ||
		fail "$name: step $k draws"$'\n'"$got"$'\n'"the trace has"$'\n'"$(echo "$want" | tail -n +2)"
	# The bytes that moved: a yield's out, a copy back's in.
	local moved dir run
	case $line in
	yield*) dir=out moved=$(echo "$line" | sed 's/.*copied \([0-9]*\) bytes.*/\1/') ;;
	clone*) dir=clone moved=$(echo "$line" | sed 's/.*heap copy, \([0-9]*\) bytes.*/\1/') ;;
	*copy*back*) dir=in moved=$(echo "$line" | sed 's/.*copy \([0-9]*\) bytes.*/\1/') ;;
	*still*) dir=kept moved=$(echo "$line" | sed 's/.*its \([0-9]*\) bytes.*/\1/') ;;
	*) dir=none moved=0 ;;
	esac
	grep -q "id=\"arrow\" data-dir=\"$dir\" data-bytes=\"$moved\"" "$d" ||
		grep -q "data-dir=\"$dir\" data-bytes=\"$moved\"[^>]*id=\"arrow\"" "$d" ||
		fail "$name: step $k does not show $moved bytes moving ($dir)"
	# Each heap copy in its block, at least as big as its coroutine's
	# deepest slice so far (until it is freed), drawn at that size.
	local c block
	for c in 0 1; do
		block=$(awk -v k="$k" -v c="$c" '!/^  / { s++ } s > k { exit }
			$0 ~ "^yield  " c ":" { n = $4 + 0; if (n > b) b = n }
			$0 ~ "^clone .* to coroutine " c "'"'"'s" { n = $7 + 0; if (n > b) b = n }
			$0 ~ "^coroutine " c " returned" { b = -1 } END { print b + 0 }' "$out/steps-$w.txt")
		[ "$block" -le 0 ] && continue
		grep -q "class=\"box c$c[^\"]*\"[^>]*data-block=\"$block\"" "$d" ||
			fail "$name: coroutine $c's heap copy is not drawn in a block of $block bytes (its deepest slice so far)"
	done
	# One scale for both walkthroughs.
	grep -q "id=\"zoom\" data-scale=\"$scale\"" "$d" ||
		fail "$name: another scale than the other walkthrough's ($scale pixels per byte)"
	# Every frame on the run stack says what its bytes are: its parts, or
	# that they are those of the frame above it, which is the same frame.
	local labels
	labels=$(perl -ne 'while (/<div class="label"[^>]*><span class="b">(\d+) B<\/span><span>(.*?)<small class="why( same)?">([^<]*)</g) {
		my ($b, $n, $same, $t) = ($1, $2, $3, $4); $n =~ s/<[^>]*>//g; print "$b|$n|", ($same ? "same" : ""), "|$t\n" }' "$d")
	[ "$(grep -c . <<< "$labels" || true)" -ge "$(echo "$want" | grep -c '^  run ' || true)" ] ||
		fail "$name: a frame on the run stack does not say what its bytes are"
	local sums
	sums=$(awk -F'|' '$3 == "same" { if ($1 != b || $2 != n) print "a frame said the same as the one above is not:", $0; next }
		{ b = $1; n = $2 } $4 ~ /saved register/ { s = 0; t = $4; while (match(t, /[0-9]+ B/)) { s += substr(t, RSTART, RLENGTH - 2); t = substr(t, RSTART + RLENGTH) }
		print (s == $1 ? "ok" : $1 " B frame: " $4) }' <<< "$labels")
	[ -z "$(grep -v '^ok$' <<< "$sums")" ] || fail "$name: a frame's parts do not add up to its bytes:"$'\n'"$(grep -v '^ok$' <<< "$sums")"
	# Where the trace read a frame's saved registers, its parts add up to
	# its bytes; at a yield it read them for some frame (the function's
	# call frame information says which registers it saved).
	[[ $line != yield* ]] || grep -q '^ok$' <<< "$sums" ||
		fail "$name: no frame on the run stack says which registers it saved"
	# A first run: the frames it starts with, which its next yield saves:
	# the entry down to the function the coroutine was made with (foo, or
	# walk_tree), or where that one left no frame (walk_tree's call of walk
	# is a tail call) the function it jumped to.
	if [[ $line == *"first run"* ]]; then
		local body start next
		body=$(body_of "$w")
		start=$({ grep -o 'class="band start[^"]*" data-name="[^"]*" data-bytes="[0-9]*"' || true; } < "$d" |
			sed 's/.*data-name="\([^"]*\)" data-bytes="\([0-9]*\)"/\1|\2/' | sed 's/&#39;/'"'"'/g; s/&amp;/\&/g')
		next=$(awk -v k="$k" -v id="${line#resume }" 'BEGIN { sub(/:.*/, "", id) } !/^  / { s++; y = s > k && $0 ~ "^yield  " id ":" }
			y && /^  run / { sub(/^  run /, ""); print } s > k && !/^  / && !y && f { exit } y { f = 1 }' "$out/steps-$w.txt")
		grep -q '^walk_tree|' <<< "$next" && body=walk_tree
		[ -n "$start" ] && [ "$(echo "$start" | tail -1 | cut -d'|' -f1)" = "$body" ] &&
			[ "$(head -n "$(wc -l <<< "$start")" <<< "$next")" = "$start" ] ||
			fail "$name: the first run does not draw the frames it starts with, down to $body:"$'\n'"$start"$'\n'"its first yield saves"$'\n'"$next"
	fi
	# The trees walkthrough: each coroutine's tree shows the node it
	# printed last, and its caption counts the walk frames of its last
	# yield's slice (in its heap copy, or back on the run stack) against
	# the nodes from the root, saying why where they differ.
	if [ "$w" = 2 ]; then
		for c in 0 1; do
			local at frames nodes rights path caption why
			at=$(expected_so_far 2 "$k" | sed -n "s/^  said coroutine $c : \([0-9]*\)\$/\1/p" | tail -1)
			frames=$(echo "$want" | grep -c "^  copy$c walk|" || true)
			if [ -z "$at" ] || [ "$frames" = 0 ]; then continue; fi
			read -r nodes rights path <<< "$(echo "${tree[$c]} $at" | awk -f "$here/tree_path.awk")"
			grep -q "class=\"tree\" data-id=\"$c\" data-at=\"$at\" data-depth=\"$frames\" data-nodes=\"$nodes\"" "$d" ||
				fail "$name: coroutine $c's tree does not show node $at, $nodes nodes down, with $frames walk frames"
			caption=$(perl -ne 'print "$1\n" if /class="tree" data-id="'"$c"'".*?<div class="where">([^<]*)</' "$d")
			[[ $caption == "at node $at: $frames walk frame"*" for $nodes node"* ]] ||
				fail "$name: coroutine $c's caption does not count $frames walk frames for $nodes nodes: '$caption'"
			# where the missing frames are the right children's (walk's
			# tail calls), it names them: "4 is a right child", "4 and 6
			# are right children"
			why="tail call"
			if [ "$tail" = 1 ] && [ $((nodes - frames)) = "$rights" ]; then
				why=$(echo "${path#*| }" | awk '{ s = $1; for (i = 2; i <= NF; i++) s = s (i == NF ? " and " : ", ") $i
					print s (NF > 1 ? " are right children" : " is a right child") }')
			fi
			[ "$frames" = "$nodes" ] || [[ $caption == *"$why"*"tail call"* ]] ||
				fail "$name: coroutine $c's caption does not say why $((nodes - frames)) frames are missing ($why): '$caption'"
		done
	fi
	[ "$w" = 2 ] || ! grep -q 'id="trees" class="on"' "$d" || fail "$name: trees drawn for the demo"
	grep -q 'id="whole"[^>]*data-stack="[1-9][0-9]*" data-guard="[1-9][0-9]*"' "$d" ||
		fail "$name: the whole run stack has no size or no guard"
	run=$(echo "$want" | awk -F'|' '/^  run / { b += $NF } END { print b + 0 }')
	[ "$run" = 0 ] || grep -q "class=\"sliver\" data-bytes=\"$run\"" "$d" ||
		fail "$name: the whole run stack does not show the $run-byte slice"
}
# What the trace says at steps 1 .. k of walkthrough w.
expected_so_far() { awk -v k="$2" '!/^  / { s++ } s <= k' "$out/steps-$1.txt"; }

# The scale the first walkthrough is drawn at: the other's must be the same.
scale=$(sed -n 's/.*id="zoom" data-scale="\([0-9.e-]*\)".*/\1/p' "$out/walk-1-step-2.html")
[ -n "$scale" ] || fail "the page says no scale"

for w in 1 2 3; do
	for k in $(seq 1 "${nsteps[$w]}"); do check_step "$w" "walk-$w-step-$k" "$k"; done
	check_step "$w" "walk-$w-next" 5
	check_step "$w" "walk-$w-last" "${nsteps[$w]}"
done
check_step 1 no-walk 3
echo "trace page: every step of the three walkthroughs draws what the trace says (${nsteps[1]}, ${nsteps[2]} and ${nsteps[3]} steps)"
# A page that draws each heap copy's value from the other one: path in
# the clone walkthrough, the count in the demo.
for planted in "3 plant-path 5 path" "1 plant-count 4 count"; do
	read -r w name k what <<< "$planted"
	if (check_step "$w" "$name" "$k") 2> "$out/$name.txt"; then fail "$name: a wrong $what drawn is not reported"; fi
	grep -q "^trace page: $name: step $k draws" "$out/$name.txt" ||
		fail "$name: a wrong $what drawn is reported as another fault: $(cat "$out/$name.txt")"
done
echo "trace page: the checks report the bugs planted for them (the legend over the heap copies, text at 11 pixels," \
	"two texts overlapping, a wrong path and a wrong count drawn)"

# The saved registers a frame names are the function's: on x86_64, the
# registers its prologue pushes before its first call, in the program's
# own disassembly (objdump), for the demo's and the trees' functions.
if [ "$(uname -m)" = x86_64 ] && command -v objdump > /dev/null; then
	objdump -d -C --no-show-raw-insn "$main" | awk '
		/^[0-9a-f]+ <(foo|walk|coroutine_yield)[(>]/ {
			name = $2; sub(/^</, "", name); sub(/[(>].*/, "", name); n = 0; on = 1; next }
		on && /\tpush / { n++ }
		on && (/\tcall / || /\tret/ || /^$/) { print name, n; on = 0 }' | sort -u > "$out/pushes.txt"
	[ "$(wc -l < "$out/pushes.txt")" = 3 ] || fail "cannot read foo's, walk's and coroutine_yield's prologues"
	for name in walk-1-step-2 walk-2-step-2; do
		sed 's/<wbr>//g' "$out/$name.html" | perl -ne 'while (/class="b">\d+ B<\/span><span>([a-z_]+)<small class="why">[^<]*?(\d+) saved register/g) {
			print "$1 $2\n" }' | sort -u > "$out/saved.txt"
		missing=$(comm -23 "$out/pushes.txt" "$out/saved.txt" |
			{ grep -v "^$([ "$name" = walk-1-step-2 ] && echo walk || echo foo) " || true; })
		[ -z "$missing" ] || fail "$name: the page does not give these functions' saved registers (function, pushes): $missing; it says: $(cat "$out/saved.txt")"
	done
	echo "trace page: the frames' saved registers are what their prologues push ($(paste -sd, "$out/pushes.txt"))"
fi
echo "trace page: screenshots of every step in $out/*.png"
