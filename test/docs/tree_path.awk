# tree_path.awk - the path from a tree's root down to a node, for the
# checks of main's second program (--trace=trees), which walks trees with
# walk, a function that calls itself for each child.
#
# Input lines: "SHAPE VALUE", a tree as main prints it, value(left,right)
# with - for no child, e.g. 1(-,4(3(2,-),-)), and a node's value.  Output
# lines: "NODES RIGHTS PATH | RIGHT-CHILDREN": how many nodes lie on the
# path from the root down to that node (it included), how many of them
# are right children, the path's values and the right children's values,
# e.g. "4 1 1 4 3 2 | 4" (nothing for a node not in the tree).
function node(depth, right, rights, trail, right_children,   v) {
	if (substr(shape, at, 1) == "-") {
		at++
		return
	}
	match(substr(shape, at), /^[0-9]+/)
	v = substr(shape, at, RLENGTH)
	at += RLENGTH
	trail = trail (trail == "" ? "" : " ") v
	if (right)
		right_children = right_children " " v
	if (v == want)
		found = (depth + 1) " " rights + right " " trail " |" right_children
	if (substr(shape, at, 1) == "(") {
		at++
		node(depth + 1, 0, rights + right, trail, right_children)
		at++ # the comma
		node(depth + 1, 1, rights + right, trail, right_children)
		at++ # the closing parenthesis
	}
}
{
	shape = $1; want = $2; at = 1; found = ""
	node(0, 0, 0, "", "")
	if (found != "")
		print found
}
