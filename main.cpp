/*
 * The original demo: two coroutines counting, resumed in turn by main.
 *
 * With --trace, main also shows what every switch copied and which frames
 * each yield saved (trace.cpp); --trace=html writes the same as a page to
 * step through.  Trace lines are indented, so that the demo's own lines
 * read the same with or without it.
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

static int trace;

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
	trace = trace_start(argc == 2 ? argv[1] : NULL);
	if (argc > 2 || trace < 0) {
		fprintf(stderr, "usage: %s [--trace | --trace=html]\n", argv[0]);
		return 2;
	}
	S = coroutine_open();
	test(S);
	coroutine_close(S);
	if (trace)
		trace_end();
	return 0;
}
