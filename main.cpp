/*
 * The original demo: two coroutines counting, resumed in turn by main.
 *
 * With --trace, main also shows what every switch copied: after each
 * resume it asks coroutine_stack_size how many bytes the coroutine saved,
 * and draws where they sat on the run stack.  Trace lines are indented, so
 * that the demo's own lines read the same with or without it.
 */
#include "coroutine.h"
#include <stdio.h>
#include <string.h>

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

/* ---- --trace ----------------------------------------------------------- */

static int trace;

/*
 * Whose bytes are on the run stack: the last coroutine resumed, unless it
 * has ended.  coroutine_resume skips the copy back for that one.
 */
static int on_run_stack = -1;

static void trace_resume(struct schedule *S, int id)
{
	long size = coroutine_stack_size(S, id);
	if (coroutine_status(S, id) == COROUTINE_READY)
		printf("  resume %d: first run, starts at the top of the run stack\n", id);
	else if (id == on_run_stack)
		printf("  resume %d: its %ld bytes are still on the run stack, nothing to copy\n", id, size);
	else
		printf("  resume %d: copy %ld bytes back from its heap copy to top-%ld .. top\n", id, size, size);
}

static void show_heap_copy(struct schedule *S, int id)
{
	if (coroutine_stack_size(S, id) == 0)
		printf("none yet");
	else
		printf("%ld bytes", coroutine_stack_size(S, id));
}

/* The run stack just after id yielded, beside both coroutines' heap copies. */
static void draw_stacks(struct schedule *S, int id, int other)
{
	long size = coroutine_stack_size(S, id);
	printf("       run stack                       heap\n");
	printf("   top +---------------------+\n");
	printf("       | coroutine %d %4ld B  |  -->  coroutine %d: ", id, size, id);
	show_heap_copy(S, id);
	printf("\n  -%-4ld+---------------------+       coroutine %d: ", size, other);
	show_heap_copy(S, other);
	printf("\n       :        free         :\n");
}

static void trace_after_resume(struct schedule *S, int id, int other)
{
	if (coroutine_status(S, id) == COROUTINE_DEAD) {
		printf("  coroutine %d returned: its slot and its heap copy are freed\n", id);
		on_run_stack = -1;
		return;
	}
	printf("  yield  %d: copied %ld bytes, top-%ld .. top, out to its heap copy\n",
	       id, coroutine_stack_size(S, id), coroutine_stack_size(S, id));
	draw_stacks(S, id, other);
	on_run_stack = id;
}

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

int main(int argc, char *argv[])
{
	struct schedule *S;
	if (argc > 2 || (argc == 2 && strcmp(argv[1], "--trace") != 0)) {
		fprintf(stderr, "usage: %s [--trace]\n", argv[0]);
		return 2;
	}
	trace = argc == 2;
	S = coroutine_open();
	test(S);
	coroutine_close(S);
	return 0;
}
