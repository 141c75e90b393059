#!/bin/bash
# The page of `main --trace=html`, checked in a real browser: headless
# Chromium opens it at several steps of both walkthroughs (#walk=W&step=N,
# and &next=K, which presses its "next" button K times), and what its
# script drew (the DOM after it ran) must say what the text trace says at
# that step (`main --trace` for the demo, `main --trace=trees` for the
# second): the step count, the step's line, what the program printed, the
# frames on the run stack and in both heap copies with their bytes, and
# the bytes that moved.  And what a learner needs beside it: the heap copy
# drawn at its block's size (the deepest slice so far: a block never
# shrinks), one scale for both walkthroughs, a first run drawing the frames
# the coroutine starts with (the library's entry, then its function), each
# frame's bytes said (return address, saved registers, locals), and in the
# trees walkthrough each tree with the node its coroutine is at, one walk
# frame per node from the root.  Every step of both walkthroughs must fit a
# window 1,024 pixels wide, nothing drawn beyond it.  Screenshots of a few
# steps of each walkthrough, 1,024 pixels wide, are kept in OUT.
#
#   test/docs/trace_page.sh MAIN OUT
set -euo pipefail
main=$1 out=$2
chromium=${CHROMIUM:-chromium}
mkdir -p "$out"
rm -f "$out"/*.png
"$main" --trace > "$out/trace-1.txt"
"$main" --trace=trees > "$out/trace-2.txt"
"$main" --trace=html > "$out/trace.html"
page=$(realpath "$out/trace.html")

fail() { echo "trace page: $*" >&2; exit 1; }

# The page is trace_page.html with the walkthroughs put in, not an older copy.
"$(dirname "$0")/trace_page_html.sh" "$main" || fail "the page is not trace_page.html's"

# One self-contained file: nothing fetched from anywhere.
if grep -n -i -E '<script[^>]*src|<link|<img|@import|url\(|https?://' "$page"; then
	fail "the page reaches for something outside itself (above)"
fi

# A trace's steps: every resume, yield and return, one line each, and after
# each what the page must draw at that step, one line each: "run NAME|BYTES"
# for the frames its run stack holds (a yield's own, a copy back's or a kept
# slice's from that coroutine's last yield; none at a first run or a
# return), "copy0 NAME|BYTES" and "copy1 ..." for the frames each heap copy
# holds (its coroutine's last yield's, none once freed), and "said LINE"
# for each line the program printed since the step before (the last step
# also gets what it printed after).  Frames are listed top first.
steps_of() {
	awk '
		function flush(   i, c) {
			if (line == "")
				return
			print line
			for (i = 0; i < n; i++) print "  run " f[i]
			for (c = 0; c < 2; c++) for (i = 0; i < last_n[c]; i++) print "  copy" c " " last[c, i]
			for (i = 0; i < nsaid_step; i++) print "  said " said_step[i]
		}
		/^  (resume|yield |coroutine [0-9]+ returned)/ {
			flush()
			for (i = 0; i < nsaid; i++) said_step[i] = said[i]
			nsaid_step = nsaid; nsaid = 0
			line = substr($0, 3); n = 0
			split(line, w, /[ :]+/); id = w[2]
			if (line ~ /^resume/ && line !~ /first run/) { n = last_n[id]; for (i = 0; i < n; i++) f[i] = last[id, i] }
			if (line ~ /returned/) last_n[id] = 0
			yielding = line ~ /^yield/
			if (yielding) last_n[id] = 0
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
	unescape() { sed 's/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&amp;/\&/g'; }
	echo "$d" | { grep -o 'class="band frame[^"]*" data-name="[^"]*" data-bytes="[0-9]*"' || true; } |
		sed 's/.*data-name="\([^"]*\)" data-bytes="\([0-9]*\)"/  run \1|\2/' | unescape
	echo "$d" | { grep -o 'class="band hframe[^"]*" data-copy="[01]" data-name="[^"]*" data-bytes="[0-9]*"' || true; } |
		sed 's/.*data-copy="\([01]\)" data-name="\([^"]*\)" data-bytes="\([0-9]*\)"/  copy\1 \2|\3/' | unescape
	echo "$d" | { grep -o '<div class="said-line">[^<]*</div>' || true; } |
		sed 's|<div class="said-line">\(.*\)</div>|  said \1|' | unescape
}

declare -A nsteps
for w in 1 2; do
	steps_of "$out/trace-$w.txt" > "$out/steps-$w.txt"
	nsteps[$w]=$(grep -c -v '^  ' "$out/steps-$w.txt")
	[ "${nsteps[$w]}" -gt 0 ] || fail "no steps in trace-$w.txt"
	yields=$(grep -c '^yield' "$out/steps-$w.txt")
	[ "$(awk '/^yield/ { y = 1; next } /^[^ ]/ { y = 0 } y && /^  run/' "$out/steps-$w.txt" | wc -l)" -ge \
		$((5 * yields)) ] || fail "trace-$w.txt names fewer than 5 frames per yield"
done
# The second walkthrough is there to show slices of different sizes.
[ "$(sed -n 's/^yield  [0-9]*: copied \([0-9]*\) bytes.*/\1/p' "$out/steps-2.txt" | sort -u | wc -l)" -ge 3 ] ||
	fail "main --trace=trees yields fewer than 3 different slice sizes"

# What the trace says at step k (1-based) of walkthrough w.
expected() { awk -v k="$2" '!/^  / { s++ } s == k' "$out/steps-$1.txt"; }

dom() {
	timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--virtual-time-budget=2000 --dump-dom "file://$page#$1" 2> /dev/null
}

check_step() { # walkthrough, url-hash, step shown
	local w=$1 hash=$2 k=$3 d want got steps=${nsteps[$1]}
	d=$(dom "$hash")
	grep -q "id=\"walk-$w\"[^>]*class=\"on\"" <<< "$d" || fail "#$hash: the page does not show walkthrough $w"
	grep -q "<b id=\"steps\">$steps</b>" <<< "$d" || fail "#$hash: the page does not count $steps steps"
	grep -q "<b id=\"step\">$k</b>" <<< "$d" || fail "#$hash: the page is not at step $k"
	want=$(expected "$w" "$k")
	got=$(echo "$d" | sed -n 's|.*<div id="title">\([^<]*\)</div>.*|\1|p')
	[ "$got" = "$(echo "$want" | head -1)" ] || fail "#$hash: step $k says '$got', the trace '$(echo "$want" | head -1)'"
	got=$(drawn "$d")
	[ "$got" = "$(echo "$want" | tail -n +2)" ] ||
		fail "#$hash: step $k draws"$'\n'"$got"$'\n'"the trace has"$'\n'"$(echo "$want" | tail -n +2)"
	# The bytes that moved: a yield's out, a copy back's in.
	local line moved dir run
	line=$(echo "$want" | head -1)
	case $line in
	yield*) dir=out moved=$(echo "$line" | sed 's/.*copied \([0-9]*\) bytes.*/\1/') ;;
	*copy*back*) dir=in moved=$(echo "$line" | sed 's/.*copy \([0-9]*\) bytes.*/\1/') ;;
	*still*) dir=kept moved=$(echo "$line" | sed 's/.*its \([0-9]*\) bytes.*/\1/') ;;
	*) dir=none moved=0 ;;
	esac
	grep -q "id=\"arrow\" data-dir=\"$dir\" data-bytes=\"$moved\"" <<< "$d" ||
		grep -q "data-dir=\"$dir\" data-bytes=\"$moved\"[^>]*id=\"arrow\"" <<< "$d" ||
		fail "#$hash: step $k does not show $moved bytes moving ($dir)"
	# The whole run stack: a guard below it, and the slice on it, the run
	# stack's frames' bytes.
	# Each heap copy in its block, at least as big as its coroutine's
	# deepest slice so far (until it is freed), drawn at that size.
	local c block
	for c in 0 1; do
		block=$(awk -v k="$k" -v c="$c" '!/^  / { s++ } s > k { exit }
			$0 ~ "^yield  " c ":" { n = $4 + 0; if (n > b) b = n }
			$0 ~ "^coroutine " c " returned" { b = -1 } END { print b + 0 }' "$out/steps-$w.txt")
		[ "$block" -le 0 ] && continue
		grep -q "class=\"box c$c[^\"]*\"[^>]*data-block=\"$block\"" <<< "$d" ||
			fail "#$hash: coroutine $c's heap copy is not drawn in a block of $block bytes (its deepest slice so far)"
	done
	# One scale for both walkthroughs.
	grep -q "id=\"zoom\" data-scale=\"$scale\"" <<< "$d" ||
		fail "#$hash: another scale than the other walkthrough's ($scale pixels per byte)"
	# Every frame on the run stack says what its bytes are.
	[ "$(grep -o 'class="why"' <<< "$d" | wc -l)" -ge "$(echo "$want" | grep -c '^  run ' || true)" ] ||
		fail "#$hash: a frame on the run stack does not say what its bytes are"
	# Where the trace read a frame's saved registers, its parts add up to
	# its bytes; at a yield it read them for some frame (the function's
	# call frame information says which registers it saved).
	local sums
	sums=$(perl -ne 'while (/class="b">(\d+) B<\/span>.*?class="why">([^<]*)</g) { my ($b, $t) = ($1, $2);
		next unless $t =~ /saved register/; my $s = 0; $s += $1 while $t =~ /(\d+) B/g;
		print $s == $b ? "ok\n" : "$b B frame: $t\n" }' <<< "$d")
	[ -z "$sums" ] || ! grep -v '^ok$' <<< "$sums" || fail "#$hash: a frame's parts do not add up to its bytes (above)"
	[[ $line != yield* ]] || grep -q '^ok$' <<< "$sums" ||
		fail "#$hash: no frame on the run stack says which registers it saved"
	# A first run: the frames it starts with, the entry down to the
	# coroutine's function (foo, or walk), which its next yield saves.
	if [[ $line == *"first run"* ]]; then
		local body start next
		body=$([ "$w" = 1 ] && echo foo || echo walk)
		start=$(echo "$d" | { grep -o 'class="band start[^"]*" data-name="[^"]*" data-bytes="[0-9]*"' || true; } |
			sed 's/.*data-name="\([^"]*\)" data-bytes="\([0-9]*\)"/\1|\2/' | sed 's/&#39;/'"'"'/g; s/&amp;/\&/g')
		next=$(awk -v k="$k" -v id="${line#resume }" 'BEGIN { sub(/:.*/, "", id) } !/^  / { s++; y = s > k && $0 ~ "^yield  " id ":" }
			y && /^  run / { sub(/^  run /, ""); print } s > k && !/^  / && !y && f { exit } y { f = 1 }' "$out/steps-$w.txt")
		[ -n "$start" ] && [ "$(echo "$start" | tail -1 | cut -d'|' -f1)" = "$body" ] &&
			[ "$(echo "$next" | head -n "$(echo "$start" | wc -l)")" = "$start" ] ||
			fail "#$hash: the first run does not draw the frames it starts with, down to $body:"$'\n'"$start"$'\n'"its first yield saves"$'\n'"$next"
	fi
	# The trees walkthrough: at a yield, the coroutine's tree shows the
	# node it printed, as deep as the walk frames its slice holds.
	if [ "$w" = 2 ] && [[ $line == yield* ]]; then
		local id=${line#yield  } at depth
		id=${id%%:*}
		at=$(echo "$want" | sed -n "s/^  said coroutine $id : \([0-9]*\)\$/\1/p" | tail -1)
		depth=$(echo "$want" | grep -c '^  run walk|' || true)
		grep -q "class=\"tree\" data-id=\"$id\" data-at=\"$at\" data-depth=\"$depth\"" <<< "$d" ||
			fail "#$hash: coroutine $id's tree does not show node $at, $depth walk frames down"
	fi
	[ "$w" = 2 ] || ! grep -q 'id="trees" class="on"' <<< "$d" || fail "#$hash: trees drawn for the demo"
	grep -q 'id="whole"[^>]*data-stack="[1-9][0-9]*" data-guard="[1-9][0-9]*"' <<< "$d" ||
		fail "#$hash: the whole run stack has no size or no guard"
	run=$(echo "$want" | awk -F'|' '/^  run / { b += $NF } END { print b + 0 }')
	[ "$run" = 0 ] || grep -q "class=\"sliver\" data-bytes=\"$run\"" <<< "$d" ||
		fail "#$hash: the whole run stack does not show the $run-byte slice"
	echo "trace page: walkthrough $w, step $k of $steps (#$hash) draws what the trace says"
}

# The scale the first walkthrough is drawn at: the other's must be the same.
scale=$(dom "walk=1&step=2" | sed -n 's/.*id="zoom" data-scale="\([0-9.e-]*\)".*/\1/p')
[ -n "$scale" ] || fail "the page says no scale"

for w in 1 2; do
	n=${nsteps[$w]}
	check_step "$w" "walk=$w&step=1" 1
	check_step "$w" "walk=$w&step=2" 2
	check_step "$w" "walk=$w&step=4&next=1" 5
	check_step "$w" "walk=$w&step=$((n - 1))" $((n - 1))
	check_step "$w" "walk=$w&step=1&next=$((n + 3))" "$n"
done
check_step 1 "step=3" 3
check_step 2 "walk=2&step=3" 3
[ "${nsteps[2]}" -lt 9 ] || check_step 2 "walk=2&step=9" 9
check_step 2 "walk=2&step=10" 10

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
	for hash in "walk=1&step=2" "walk=2&step=2"; do
		dom "$hash" | sed 's/<wbr>//g' | perl -ne 'while (/class="b">\d+ B<\/span><span>([a-z_]+)<small class="why">[^<]*?(\d+) saved register/g) {
			print "$1 $2\n" }' | sort -u > "$out/saved.txt"
		missing=$(comm -23 "$out/pushes.txt" "$out/saved.txt" |
			{ grep -v "^$([ "$hash" = "walk=1&step=2" ] && echo walk || echo foo) " || true; })
		[ -z "$missing" ] || fail "#$hash: the page does not give these functions' saved registers (function, pushes): $missing; it says: $(cat "$out/saved.txt")"
	done
	echo "trace page: the frames' saved registers are what their prologues push ($(paste -sd, "$out/pushes.txt"))"
fi

# Every step of both walkthroughs in a window 1,024 pixels wide (a
# projector's): the page may not scroll sideways, and nothing it draws may
# reach past the window's right edge.  A script added to a copy of the page
# draws each step and writes what it measured into the page.
sed '/^<\/body>/i <script>\
(function () {\
  var worst = { right: 0, what: "" }, scroll = 0;\
  walkthroughs.forEach(function (w, wi) {\
    walk = wi;\
    w.steps.forEach(function (s, k) {\
      go(k);\
      scroll = Math.max(scroll, document.documentElement.scrollWidth);\
      document.querySelectorAll("body *").forEach(function (e) {\
        var r = e.getBoundingClientRect();\
        if (r.width > 0 \&\& r.right > worst.right)\
          worst = { right: Math.ceil(r.right), what: "walkthrough " + (wi + 1) + ", step " + (k + 1) + ": " + e.tagName + "." + e.className };\
      });\
    });\
  });\
  var out = document.createElement("pre");\
  out.id = "measured";\
  out.textContent = window.innerWidth + " " + scroll + " " + worst.right + " " + worst.what;\
  document.body.appendChild(out);\
})();\
</script>' "$page" > "$out/measure.html"
measured=$(timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1024,768 \
	--virtual-time-budget=5000 --dump-dom "file://$(realpath "$out/measure.html")" 2> /dev/null |
	sed -n 's|.*<pre id="measured">\([^<]*\)</pre>.*|\1|p')
read -r window scroll right what <<< "$measured"
[ "${window:-0}" = 1024 ] || fail "could not measure the page in a window 1,024 pixels wide ('$measured')"
[ "$scroll" -le 1024 ] && [ "$right" -le 1024 ] ||
	fail "the page is $scroll pixels wide in a 1,024-pixel window; its widest part ends at $right ($what)"
echo "trace page: every step of both walkthroughs fits 1,024 pixels (widest part ends at $right)"

for w in 1 2; do
	for k in 2 3 5 $((nsteps[$w] - 1)); do
		shot=$out/walk-$w-step-$k.png
		timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1024,1100 \
			--screenshot="$shot" "file://$page#walk=$w&step=$k" > /dev/null 2>&1 || fail "no screenshot of $shot"
		[ -s "$shot" ] || fail "no screenshot $shot"
	done
done
echo "trace page: screenshots in $out/walk-*-step-*.png"
