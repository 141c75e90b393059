# help.awk - prints docs/make-targets.md (`make help`): its groups ("## ..."
# headings) in their order, the everyday targets first, each row's targets
# and text; or with -v list=1 the targets it names, one per line, and with
# -v list=1 -v first=1 those of the first group only (mk/docs.mk's
# targets-check).
# A row's first cell names one or more targets: `make x` / `y` / `make z V=1`.
/^## / && list && first && groups++ { exit }
/^## / && !list {
	heading = substr($0, 4)
	printf "%s%s:\n", (groups++ ? "\n" : ""), heading
	next
}
/^\| `/ {
	ncells = split($0, cell, "|")
	names = cell[2]; text = cell[3]
	for (i = 4; i < ncells; i++) text = text "|" cell[i]
	if (list) {
		n = split(names, part, "/")
		for (i = 1; i <= n; i++) {
			t = part[i]; gsub(/`/, "", t); sub(/^ *(make)? */, "", t); sub(/ .*$/, "", t)
			print (t == "" ? "all" : t)
		}
		next
	}
	gsub(/`/, "", names); gsub(/`/, "", text)
	sub(/^ +/, "", names); sub(/ +$/, "", names); sub(/^ +/, "", text); sub(/ +$/, "", text)
	print "  " names
	line = "      "
	n = split(text, word, " ")
	for (i = 1; i <= n; i++) {
		if (length(line) + length(word[i]) > 78) { print line; line = "      " }
		line = line (line == "      " ? "" : " ") word[i]
	}
	print line
}
