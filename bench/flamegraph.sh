#!/bin/sh
# flamegraph.sh - a perf profile as a flame graph drawn by speedscope, in a
# PNG: speedscope's page reads `perf script`'s text, handed to it as its
# command-line launcher does (a script that calls loadFileFromBase64), in
# its "left heavy" view (identical stacks merged, the heaviest first, the
# outermost frame on top), and headless Chromium takes the picture.
#
#   flamegraph.sh PERF_DATA TITLE SPEEDSCOPE_INDEX_HTML OUT.png
set -eu
data=$1 title=$2 index=$3 out=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
perf script -i "$data" > "$work/perf.txt" 2> "$work/perf.err"
node -e '
	const fs = require("fs");
	const [text, title, js] = process.argv.slice(1);
	const b64 = fs.readFileSync(text).toString("base64");
	fs.writeFileSync(js, "speedscope.loadFileFromBase64(" + JSON.stringify(title) + ", " + JSON.stringify(b64) + ")");
' "$work/perf.txt" "$title" "$work/profile.js"
${CHROMIUM:-chromium} --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
	--disable-component-update --disable-sync --user-data-dir="$work/chromium" --allow-file-access-from-files \
	--hide-scrollbars --window-size=1400,720 --virtual-time-budget=3000 --screenshot="$out" \
	"file://$(cd "$(dirname "$index")" && pwd)/$(basename "$index")#localProfilePath=$work/profile.js&view=left-heavy" \
	> "$work/chromium.log" 2>&1
[ -s "$out" ] || { echo "flamegraph.sh: Chromium drew nothing:" >&2; cat "$work/chromium.log" >&2; exit 1; }
echo "wrote $out"
