#!/bin/bash
# The page of `main --trace=html`, checked in a real browser: headless
# Chromium opens it at several steps (#step=N, and #step=N&next=K, which
# presses its "next" button K times), and what its script drew (the DOM
# after it ran) must say what `main --trace` says at that step: the step
# count, the step's line, the frames on the run stack with their bytes, and
# the bytes that moved.  Screenshots of a few steps are kept in OUT.
#
#   test/trace_page.sh MAIN OUT
set -euo pipefail
main=$1 out=$2
chromium=${CHROMIUM:-chromium}
mkdir -p "$out"
"$main" --trace > "$out/trace.txt"
"$main" --trace=html > "$out/trace.html"
page=$(realpath "$out/trace.html")

fail() { echo "trace page: $*" >&2; exit 1; }

# The page is trace_page.html with the steps put in, not an older copy.
"$(dirname "$0")/trace_page_html.sh" "$main" || fail "the page is not trace_page.html's"

# One self-contained file: nothing fetched from anywhere.
if grep -n -i -E '<script[^>]*src|<link|<img|@import|url\(|https?://' "$page"; then
	fail "the page reaches for something outside itself (above)"
fi

# The trace's steps: every resume, yield and return, one line each, and
# after each the frames its run stack holds (name|bytes, top first): a
# yield's own, a copy back's or a kept slice's from that coroutine's last
# yield, none at a first run or a return.
awk '
	function flush() { if (line != "") { print line; for (i = 0; i < n; i++) print "  " f[i] } }
	/^  (resume|yield |coroutine [0-9]+ returned)/ {
		flush()
		line = substr($0, 3); n = 0
		split(line, w, /[ :]+/); id = w[2]
		if (line ~ /^resume/ && line !~ /first run/) { n = last_n[id]; for (i = 0; i < n; i++) f[i] = last[id, i] }
		yielding = line ~ /^yield/
		next
	}
	yielding && /^ +[0-9]+ B  / {
		name = $0; sub(/^ *[0-9]+ B  /, "", name)
		f[n] = name "|" $1; last[id, n] = f[n]; n++; last_n[id] = n
	}
	END { flush() }
' "$out/trace.txt" > "$out/steps.txt"
steps=$(grep -c -v '^  ' "$out/steps.txt")
[ "$steps" -gt 0 ] || fail "no steps in $main --trace"
yields=$(grep -c '^yield' "$out/steps.txt")
frames=$(grep -c '^  ' "$out/steps.txt")
[ "$frames" -ge $((5 * yields)) ] || fail "$main --trace names fewer than 5 frames per yield"

# What the trace says at step k (1-based): its line, then its frames.
expected() { awk -v k="$1" '!/^  / { s++ } s == k' "$out/steps.txt"; }

dom() {
	timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--virtual-time-budget=2000 --dump-dom "file://$page#$1" 2> /dev/null
}

check_step() { # url-hash, step shown
	local hash=$1 k=$2 d want got
	d=$(dom "$hash")
	echo "$d" | grep -q "<b id=\"steps\">$steps</b>" || fail "#$hash: the page does not count $steps steps"
	echo "$d" | grep -q "<b id=\"step\">$k</b>" || fail "#$hash: the page is not at step $k"
	want=$(expected "$k")
	got=$(echo "$d" | sed -n 's|.*<div id="title">\([^<]*\)</div>.*|\1|p')
	[ "$got" = "$(echo "$want" | head -1)" ] || fail "#$hash: step $k says '$got', the trace '$(echo "$want" | head -1)'"
	got=$(echo "$d" | { grep -o 'class="frame[^"]*" data-name="[^"]*" data-bytes="[0-9]*"' || true; } |
		sed 's/.*data-name="\([^"]*\)" data-bytes="\([0-9]*\)"/  \1|\2/' | sed 's/&amp;/\&/g')
	[ "$got" = "$(echo "$want" | tail -n +2)" ] ||
		fail "#$hash: step $k draws the frames"$'\n'"$got"$'\n'"the trace has"$'\n'"$(echo "$want" | tail -n +2)"
	# The bytes that moved: a yield's out, a copy back's in.
	local line moved dir
	line=$(echo "$want" | head -1)
	case $line in
	yield*) dir=out moved=$(echo "$line" | sed 's/.*copied \([0-9]*\) bytes.*/\1/') ;;
	*copy*back*) dir=in moved=$(echo "$line" | sed 's/.*copy \([0-9]*\) bytes.*/\1/') ;;
	*still*) dir=kept moved=$(echo "$line" | sed 's/.*its \([0-9]*\) bytes.*/\1/') ;;
	*) dir=none moved=0 ;;
	esac
	echo "$d" | grep -q "id=\"arrow\" data-dir=\"$dir\" data-bytes=\"$moved\"" ||
		echo "$d" | grep -q "data-dir=\"$dir\" data-bytes=\"$moved\"[^>]*id=\"arrow\"" ||
		fail "#$hash: step $k does not show $moved bytes moving ($dir)"
	echo "trace page: step $k of $steps (#$hash) draws what the trace says"
}

check_step "step=1" 1
check_step "step=2" 2
check_step "step=4&next=1" 5
check_step "step=$((steps - 1))" $((steps - 1))
check_step "step=1&next=$((steps + 3))" "$steps"

for k in 2 3 5 $((steps - 1)); do
	timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,760 \
		--screenshot="$out/step-$k.png" "file://$page#step=$k" > /dev/null 2>&1 ||
		fail "no screenshot of step $k"
	[ -s "$out/step-$k.png" ] || fail "no screenshot of step $k"
done
echo "trace page: screenshots in $out/step-*.png"
