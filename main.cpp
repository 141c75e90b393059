/*
 * The original demo: two coroutines counting, resumed in turn by main.
 *
 * With --trace, main also shows what every switch copied and which frames
 * each yield saved (trace.cpp); --trace=html writes the same as a page to
 * step through.  Trace lines are indented, so that the demo's own lines
 * read the same with or without it.  The trace has a second walkthrough,
 * --trace=trees, of a second program (below the demo): its coroutines
 * yield from different depths; and a third, --trace=clone, of a third
 * program, which copies a waiting coroutine with coroutine_clone.
 */
#include "coroutine.h"
#include "trace.h"
#include <stdio.h>

struct args {
	int n;
};

static void foo(struct schedule *S, void *ud)
{
	struct args *arg = (struct args *)ud;
	int start = arg->n;
	int i;
	for (i = 0; i < 5; i++) {
		printf("coroutine %d : %d\n", coroutine_running(S), start + i);
		coroutine_yield(S);
	}
}

static int trace; /* what main's argument asks for: enum trace_mode */

/* coroutine_resume(S, id), traced if asked; other is the other coroutine. */
static void resume(struct schedule *S, int id, int other)
{
	if (trace)
		trace_resume(S, id);
	coroutine_resume(S, id);
	if (trace)
		trace_after_resume(S, id, other);
}

static void test(struct schedule *S)
{
	struct args arg1 = { 0 };
	struct args arg2 = { 100 };

	int co1 = coroutine_new(S, foo, &arg1);
	int co2 = coroutine_new(S, foo, &arg2);
	printf("main start\n");
	while (coroutine_status(S, co1) && coroutine_status(S, co2)) {
		resume(S, co1, co2);
		resume(S, co2, co1);
	}
	printf("main end\n");
}

/*
 * The trace's second program (--trace=trees, and the page's second
 * walkthrough): the same loop as test, but each coroutine walks a tree in
 * order, with a function that calls itself for each child and yields at
 * every node.  A node deep in its tree is yielded from below more frames
 * than the root, so the live slice, the bytes copied out and back, grows
 * and shrinks from one yield to the next.
 */
struct node {
	int value;
	struct node *left, *right;
};

static void walk(struct schedule *S, struct node *n)
{
	if (n->left != NULL)
		walk(S, n->left);
	printf("coroutine %d : %d\n", coroutine_running(S), n->value);
	coroutine_yield(S);
	if (n->right != NULL)
		walk(S, n->right);
}

static void walk_tree(struct schedule *S, void *ud)
{
	walk(S, (struct node *)ud);
}

/* 1 2 3 4 in order, in two shapes: a chain leaning left, whose first node
 * is the deepest, and a root whose right child leans left. */
static struct node chain1 = { 1, NULL, NULL }, chain2 = { 2, &chain1, NULL }, chain3 = { 3, &chain2, NULL },
		   chain4 = { 4, &chain3, NULL };
static struct node tree2 = { 2, NULL, NULL }, tree3 = { 3, &tree2, NULL }, tree4 = { 4, &tree3, NULL },
		   tree1 = { 1, NULL, &tree4 };

/* A tree as value(left,right), - for no child: the page draws it. */
static int tree_shape(const struct node *n, char *out, int len)
{
	if (n == NULL)
		return snprintf(out, len, "-");
	if (n->left == NULL && n->right == NULL)
		return snprintf(out, len, "%d", n->value);
	int k = snprintf(out, len, "%d(", n->value);
	k += tree_shape(n->left, out + k, len - k);
	k += snprintf(out + k, len - k, ",");
	k += tree_shape(n->right, out + k, len - k);
	return k + snprintf(out + k, len - k, ")");
}

static void trees(struct schedule *S)
{
	int co1 = coroutine_new(S, walk_tree, &chain4);
	int co2 = coroutine_new(S, walk_tree, &tree1);
	if (trace) {
		char shape[64];
		tree_shape(&chain4, shape, sizeof shape);
		trace_tree(co1, shape);
		tree_shape(&tree1, shape, sizeof shape);
		trace_tree(co2, shape);
	}
	printf("main start\n");
	while (coroutine_status(S, co1) && coroutine_status(S, co2)) {
		resume(S, co1, co2);
		resume(S, co2, co1);
	}
	printf("main end\n");
}

/*
 * The trace's third program (--trace=clone, and the page's third
 * walkthrough): main clones a waiting coroutine.  The clone is the same
 * bytes in a heap copy of its own, waiting at the same yield.  Resumed,
 * each asks coroutine_running which one it is (as a process asks fork
 * which side it is on) and adds that to path, a local kept in its frame
 * (volatile: in memory, in the slice), so from there their bytes differ.
 *
 * Under AddressSanitizer with detect_stack_use_after_return, an
 * instrumented frame keeps its locals in a "fake stack" on the heap, which
 * a clone would share, and coroutine_clone refuses it: choose is left
 * uninstrumented, so that path stays in its frame.
 */
#if defined(__GNUC__) || defined(__clang__)
#define LOCALS_ON_THE_RUN_STACK __attribute__((no_sanitize_address))
#else
#define LOCALS_ON_THE_RUN_STACK
#endif

LOCALS_ON_THE_RUN_STACK static void choose(struct schedule *S, void *ud)
{
	volatile int path = *(int *)ud;
	if (trace)
		trace_local("path", &path); /* the trace reads it in each slice */
	for (int i = 0; i < 2; i++) {
		printf("coroutine %d : %d\n", coroutine_running(S), path);
		coroutine_yield(S);
		path = path * 10 + coroutine_running(S);
	}
	printf("coroutine %d : %d\n", coroutine_running(S), path);
}

static void clones(struct schedule *S)
{
	int start = 1;
	int co1 = coroutine_new(S, choose, &start);
	printf("main start\n");
	resume(S, co1, co1 + 1); /* the other: its clone, not made yet */
	int co2 = coroutine_clone(S, co1);
	if (co2 < 0) {
		printf("main: out of memory\n");
		return;
	}
	if (trace)
		trace_clone(S, co1, co2);
	while (coroutine_status(S, co1) && coroutine_status(S, co2)) {
		resume(S, co1, co2);
		resume(S, co2, co1);
	}
	printf("main end\n");
}

/* One program on a schedule of its own. */
static void run(void (*program)(struct schedule *))
{
	struct schedule *S = coroutine_open();
	if (trace)
		trace_begin(S);
	program(S);
	coroutine_close(S);
}

int main(int argc, char *argv[])
{
	trace = trace_start(argc == 2 ? argv[1] : NULL);
	if (argc > 2 || trace == TRACE_BAD) {
		fprintf(stderr, "usage: %s [--trace | --trace=trees | --trace=clone | --trace=html]\n", argv[0]);
		return 2;
	}
	if (trace == TRACE_OFF || trace == TRACE_TEXT || trace == TRACE_HTML)
		run(test);
	if (trace == TRACE_TREES || trace == TRACE_HTML)
		run(trees);
	if (trace == TRACE_CLONE || trace == TRACE_HTML)
		run(clones);
	if (trace)
		trace_end();
	return 0;
}
