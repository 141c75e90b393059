/*
 * wasm_faults.c - what stops a WebAssembly program, and what does not
 * (make wasm-test runs it under node and checks its status and the first
 * line of its stderr).
 *
 *     wasm_faults misuse        resumes from inside a coroutine: the
 *                               library's one-line message, as everywhere
 *     wasm_faults frames DEPTH  yields DEPTH calls deep, twice, beside a
 *                               second coroutine that takes the asyncify
 *                               area in between; prints "frames ok" when
 *                               the wasm frames fit the area, and is
 *                               stopped with the library's line when not
 *     wasm_faults resume DEPTH  resumes a coroutine from DEPTH calls deep in
 *                               main, whose wasm frames go to main's area
 *     wasm_faults nested        a coroutine of one schedule resumes the
 *                               coroutines of another; prints "nested ok"
 *     wasm_faults moved         a coroutine is resumed in turn by a
 *                               coroutine of another schedule and by main,
 *                               on two C stacks; prints "moved ok"
 *     wasm_faults overflow      a coroutine that runs off the run stack:
 *                               stopped by Emscripten's check when linked
 *                               with -sSTACK_OVERFLOW_CHECK=2
 */
#include "coroutine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void resume_from_inside(struct schedule *S, void *ud)
{
	(void)ud;
	coroutine_resume(S, 0);
}

/* Recursion that the compiler cannot flatten: each level adds its locals
 * to the wasm frames a yield unwinds.  Returns a sum that depends on every
 * level, checked by the caller. */
static int nest(struct schedule *S, int depth)
{
	volatile int here = depth;
	if (depth == 0) {
		coroutine_yield(S);
		coroutine_yield(S);
		return 0;
	}
	return here + nest(S, depth - 1);
}

struct nesting {
	int depth;
	int sum;
};

static void nest_and_yield(struct schedule *S, void *ud)
{
	struct nesting *n = (struct nesting *)ud;
	n->sum = nest(S, n->depth);
}

static int frames(int depth)
{
	struct schedule *S = coroutine_open();
	struct nesting deep = { depth, -1 }, shallow = { 1, -1 };
	coroutine_new(S, nest_and_yield, &deep);
	coroutine_new(S, nest_and_yield, &shallow);
	while (coroutine_status(S, 0) != COROUTINE_DEAD || coroutine_status(S, 1) != COROUTINE_DEAD) {
		coroutine_resume(S, 0);
		coroutine_resume(S, 1);
	}
	coroutine_close(S);
	if (deep.sum != depth * (depth + 1) / 2 || shallow.sum != 1) {
		printf("frames wrong: sums %d and %d\n", deep.sum, shallow.sum);
		return 1;
	}
	printf("frames ok\n");
	return 0;
}

static void yield_once(struct schedule *S, void *ud)
{
	(void)ud;
	coroutine_yield(S);
}

/* Resumes coroutine 0 twice from depth calls down; returns a sum that
 * depends on every level. */
static int resume_from(struct schedule *S, int depth)
{
	volatile int here = depth;
	if (depth == 0) {
		coroutine_resume(S, 0);
		coroutine_resume(S, 0);
		return 0;
	}
	return here + resume_from(S, depth - 1);
}

/* Counts to 3, a yield after each step. */
static void count(struct schedule *S, void *ud)
{
	for (int i = 0; i < 3; i++) {
		++*(int *)ud;
		coroutine_yield(S);
	}
}

struct inner {
	struct schedule *schedule; /* opened by main, or NULL: by the coroutine */
	int sum;
};

/* Runs two counters of an inner schedule to the end, yielding to its own
 * main between their steps. */
static void run_inner_schedule(struct schedule *S, void *ud)
{
	struct inner *in = (struct inner *)ud;
	struct schedule *inner = in->schedule ? in->schedule : coroutine_open();
	int counted[2] = { 0, 0 };
	coroutine_new(inner, count, &counted[0]);
	coroutine_new(inner, count, &counted[1]);
	while (coroutine_status(inner, 0) != COROUTINE_DEAD || coroutine_status(inner, 1) != COROUTINE_DEAD) {
		coroutine_resume(inner, 0);
		coroutine_resume(inner, 1);
		coroutine_yield(S);
	}
	coroutine_close(inner);
	in->sum = counted[0] + counted[1];
}

/* The inner schedules opened in main and in a coroutine: main's fiber is
 * then a coroutine of the outer schedule, whose C stack is the outer run
 * stack (which -sSTACK_OVERFLOW_CHECK=2 must be told). */
static int nested(struct schedule *S)
{
	struct inner in[2] = { { coroutine_open(), 0 }, { NULL, 0 } };
	coroutine_new(S, run_inner_schedule, &in[0]);
	coroutine_new(S, run_inner_schedule, &in[1]);
	while (coroutine_status(S, 0) != COROUTINE_DEAD || coroutine_status(S, 1) != COROUTINE_DEAD) {
		coroutine_resume(S, 0);
		coroutine_resume(S, 1);
	}
	coroutine_close(S);
	if (in[0].sum != 6 || in[1].sum != 6) {
		printf("nested wrong: %d and %d\n", in[0].sum, in[1].sum);
		return 1;
	}
	printf("nested ok\n");
	return 0;
}

/* Resumes the inner schedule's coroutine 0 from the outer run stack: first
 * its start, then once more after main has resumed it meanwhile. */
static void resume_inner_twice(struct schedule *S, void *ud)
{
	struct schedule *inner = (struct schedule *)ud;
	coroutine_resume(inner, 0);
	coroutine_yield(S);
	coroutine_resume(inner, 0);
}

/*
 * Who resumes a schedule's coroutine may change from one resume to the
 * next, and with it the C stack that a yield goes back to: each yield must
 * give -sSTACK_OVERFLOW_CHECK=2 the bounds of the stack its resumer is on,
 * not those of the resumer at the coroutine's start (the check would
 * then stop main, or a coroutine, on a stack it takes for overflowed).
 */
static int moved(struct schedule *outer)
{
	struct schedule *inner = coroutine_open();
	int counted = 0;
	coroutine_new(inner, count, &counted);
	coroutine_new(outer, resume_inner_twice, inner);
	coroutine_resume(outer, 0); /* started on the outer run stack */
	coroutine_resume(inner, 0); /* resumed from main's stack */
	coroutine_resume(outer, 0); /* from the outer run stack again */
	coroutine_resume(inner, 0); /* and from main's, to its end */
	int ended = coroutine_status(inner, 0) == COROUTINE_DEAD && coroutine_status(outer, 0) == COROUTINE_DEAD;
	coroutine_close(inner);
	coroutine_close(outer);
	if (counted != 3 || !ended) {
		printf("moved wrong: counted %d, %s\n", counted, ended ? "ended" : "not ended");
		return 1;
	}
	printf("moved ok\n");
	return 0;
}

/* Each level holds 64 KiB of the run stack until the level below returns:
 * the 17th is past its end. */
__attribute__((noinline)) static int run_off(int levels)
{
	char block[64 * 1024];
	block[0] = (char)levels;
	/* The whole block escapes: the compiler cannot shrink it. */
	__asm__ volatile("" : : "r"(block) : "memory");
	int below = levels == 0 ? 0 : run_off(levels - 1);
	return below + block[0];
}

static void overflow_run_stack(struct schedule *S, void *ud)
{
	(void)S;
	*(int *)ud = run_off(20);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	struct schedule *S = coroutine_open();
	if (strcmp(what, "misuse") == 0) {
		coroutine_new(S, resume_from_inside, NULL);
		coroutine_resume(S, 0);
	} else if (strcmp(what, "frames") == 0 && argc > 2) {
		coroutine_close(S);
		return frames(atoi(argv[2]));
	} else if (strcmp(what, "resume") == 0 && argc > 2) {
		int depth = atoi(argv[2]);
		coroutine_new(S, yield_once, NULL);
		int sum = resume_from(S, depth);
		printf("resume %s\n", sum == depth * (depth + 1) / 2 && coroutine_status(S, 0) == COROUTINE_DEAD ? "ok" : "wrong");
	} else if (strcmp(what, "nested") == 0) {
		return nested(S);
	} else if (strcmp(what, "moved") == 0) {
		return moved(S);
	} else if (strcmp(what, "overflow") == 0) {
		int sum = 0;
		coroutine_new(S, overflow_run_stack, &sum);
		coroutine_resume(S, 0);
		printf("ran off the run stack unchecked: %d\n", sum);
	} else {
		fprintf(stderr, "usage: %s misuse | frames DEPTH | resume DEPTH | nested | moved | overflow\n", argv[0]);
		return 2;
	}
	coroutine_close(S);
	return 0;
}
