/*
 * test_switch.c - the context switch under load: every byte of every
 * coroutine's stack comes back intact after every switch, whatever the
 * number of coroutines, the order they run in, the depth they yield at and
 * the size of their live slice (from a few hundred bytes to nearly the
 * whole run stack).
 *
 * Each coroutine recurses; every level holds a block of bytes that depends
 * on the coroutine and the level, and a pointer to its caller's level.
 * After each yield returns, the yielding level walks the chain up to the
 * first level and checks every byte, and checks that it is still the
 * running coroutine.  (The pointers are to the coroutine's own locals, used
 * only by the coroutine itself: the shared-stack rule allows that, because
 * its slice comes back to the same addresses.)
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "coroutine.h"

#define LEVEL_BYTES 256
#define NO_LIMIT ((size_t)-1)

struct walker {
	struct schedule *S;
	int id;                /* the id it must see as running */
	int max_depth;         /* the deepest level it goes to */
	size_t span_goal;      /* ... or stops when its stack reaches this size */
	int yield_every;       /* yields at levels that are multiples of this,
	                          and at the deepest, on the way down and up */
	uintptr_t top;         /* the address of level 0 */
	size_t span;           /* the largest stack span it reached */
	int yields;            /* how many times it yielded */
	int bad;               /* resumes after which something was wrong */
};

struct level {
	const struct level *up;   /* the caller's level; NULL for level 0 */
	int depth;
	unsigned char bytes[LEVEL_BYTES];
};

static unsigned char expected_byte(const struct walker *w, int depth, int i)
{
	return (unsigned char)(w->id * 131 + depth * 7 + i);
}

static void fill_level(struct level *l, const struct walker *w)
{
	int i;
	for (i = 0; i < LEVEL_BYTES; i++)
		l->bytes[i] = expected_byte(w, l->depth, i);
}

static int levels_intact(const struct level *l, const struct walker *w)
{
	int i;
	for (; l != NULL; l = l->up) {
		for (i = 0; i < LEVEL_BYTES; i++)
			if (l->bytes[i] != expected_byte(w, l->depth, i))
				return 0;
	}
	return 1;
}

static void yield_and_check(struct walker *w, const struct level *l)
{
	w->yields++;
	coroutine_yield(w->S);
	if (coroutine_running(w->S) != w->id || !levels_intact(l, w))
		w->bad++;
}

static size_t span_at(const struct walker *w, const struct level *l)
{
	return (size_t)(w->top - (uintptr_t)l);
}

static void descend(struct walker *w, const struct level *up, int depth)
{
	struct level l;
	int deepest, yields_here;
	l.up = up;
	l.depth = depth;
	fill_level(&l, w);
	if (depth == 0)
		w->top = (uintptr_t)&l;
	if (span_at(w, &l) > w->span)
		w->span = span_at(w, &l);
	deepest = depth >= w->max_depth || span_at(w, &l) >= w->span_goal;
	yields_here = deepest || depth % w->yield_every == 0;
	if (yields_here)
		yield_and_check(w, &l);
	if (!deepest)
		descend(w, &l, depth + 1);
	if (yields_here)
		yield_and_check(w, &l);
}

static void walk(struct schedule *S, void *ud)
{
	(void)S;
	descend((struct walker *)ud, NULL, 0);
}

/* A small generator of our own, so that every run interleaves the same way. */
static unsigned next_random(unsigned *state)
{
	*state = *state * 1103515245u + 12345u;
	return (*state >> 16) & 0x7fff;
}

/*
 * Resumes the walkers in a random order until all have finished, checking
 * after each resume that the resumed one found its stack intact.
 */
static void run_in_random_order(struct schedule *S, struct walker *w, int n, unsigned seed)
{
	int *live = malloc((size_t)n * sizeof *live);
	int nlive = n, i;
	assert_non_null(live);
	for (i = 0; i < n; i++) {
		w[i].S = S;
		w[i].id = coroutine_new(S, walk, &w[i]);
		assert_int_equal(w[i].id, i);
		live[i] = i;
	}
	while (nlive > 0) {
		int k = (int)(next_random(&seed) % (unsigned)nlive);
		struct walker *r = &w[live[k]];
		coroutine_resume(S, r->id);
		assert_int_equal(r->bad, 0);
		if (coroutine_status(S, r->id) == COROUTINE_DEAD)
			live[k] = live[--nlive];
	}
	free(live);
}

static void test_thousands_of_coroutines_interleaved_keep_their_stacks(void **state)
{
	enum { N = 2000 };
	struct schedule *S = coroutine_open();
	struct walker *w = calloc(N, sizeof *w);
	unsigned seed = 1;
	int i;
	(void)state;
	assert_non_null(S);
	assert_non_null(w);
	for (i = 0; i < N; i++) {
		w[i].max_depth = (int)(next_random(&seed) % 16);
		w[i].span_goal = NO_LIMIT;
		w[i].yield_every = 1 + (int)(next_random(&seed) % 3);
	}
	run_in_random_order(S, w, N, 2);
	for (i = 0; i < N; i++) {
		int d = w[i].max_depth, every = w[i].yield_every;
		assert_int_equal(w[i].yields, 2 * (d / every + 1 + (d % every != 0)));
	}
	free(w);
	coroutine_close(S);
}

/* The run stack is 1 MiB; each slice here reaches 1 MiB less 64 KiB. */
static void test_slices_of_nearly_the_whole_run_stack_survive(void **state)
{
	enum { N = 3 };
	const size_t goal = 1024 * 1024 - 64 * 1024;
	struct schedule *S = coroutine_open();
	struct walker *w = calloc(N, sizeof *w);
	int i;
	(void)state;
	assert_non_null(S);
	assert_non_null(w);
	for (i = 0; i < N; i++) {
		w[i].max_depth = INT_MAX;
		w[i].span_goal = goal;
		w[i].yield_every = 500;
	}
	run_in_random_order(S, w, N, 3);
	for (i = 0; i < N; i++) {
		assert_true(w[i].span >= goal);
		assert_true(w[i].yields >= 4);
	}
	free(w);
	coroutine_close(S);
}

/* ---- Values held in registers ------------------------------------------ */

/* The values one side (main or a coroutine) holds across its switches. */
struct held {
	volatile long n[10];
	volatile double x[8];
};

static void fill_held(struct held *h, int who)
{
	int i;
	for (i = 0; i < 10; i++)
		h->n[i] = 1000L * who + i;
	for (i = 0; i < 8; i++)
		h->x[i] = 0.5 * who + i;
}

/*
 * Calls call(arg) with eighteen values live across the call, read from
 * volatile memory so that the compiler can neither fold nor recompute
 * them: it keeps what it can in callee-saved registers (rbx, rbp, r12-r15
 * on x86_64; x19-x28 and d8-d15 on aarch64), which only the context switch
 * preserves, and spills the rest.  Returns whether all came back.
 */
static int values_survive(void (*call)(void *), void *arg, const struct held *h)
{
	long n0 = h->n[0], n1 = h->n[1], n2 = h->n[2], n3 = h->n[3], n4 = h->n[4];
	long n5 = h->n[5], n6 = h->n[6], n7 = h->n[7], n8 = h->n[8], n9 = h->n[9];
	double x0 = h->x[0], x1 = h->x[1], x2 = h->x[2], x3 = h->x[3];
	double x4 = h->x[4], x5 = h->x[5], x6 = h->x[6], x7 = h->x[7];
	call(arg);
	return n0 == h->n[0] && n1 == h->n[1] && n2 == h->n[2] && n3 == h->n[3] &&
	       n4 == h->n[4] && n5 == h->n[5] && n6 == h->n[6] && n7 == h->n[7] &&
	       n8 == h->n[8] && n9 == h->n[9] && x0 == h->x[0] && x1 == h->x[1] &&
	       x2 == h->x[2] && x3 == h->x[3] && x4 == h->x[4] && x5 == h->x[5] &&
	       x6 == h->x[6] && x7 == h->x[7];
}

struct holder {
	struct held held;
	int lost;          /* yields after which a value was wrong */
};

static void yield_call(void *S)
{
	coroutine_yield((struct schedule *)S);
}

static void hold_across_yields(struct schedule *S, void *ud)
{
	struct holder *h = (struct holder *)ud;
	int i;
	for (i = 0; i < 5; i++)
		if (!values_survive(yield_call, S, &h->held))
			h->lost++;
}

struct resume_args {
	struct schedule *S;
	int id;
};

static void resume_call(void *arg)
{
	struct resume_args *r = (struct resume_args *)arg;
	coroutine_resume(r->S, r->id);
}

static void test_callee_saved_registers_survive_switches(void **state)
{
	struct schedule *S = coroutine_open();
	struct holder co[2];
	struct held mine;
	struct resume_args r;
	int i;
	(void)state;
	assert_non_null(S);
	fill_held(&mine, 1);
	for (i = 0; i < 2; i++) {
		fill_held(&co[i].held, i + 2);
		co[i].lost = 0;
		assert_int_equal(coroutine_new(S, hold_across_yields, &co[i]), i);
	}
	r.S = S;
	while (coroutine_status(S, 0) != COROUTINE_DEAD || coroutine_status(S, 1) != COROUTINE_DEAD) {
		for (r.id = 0; r.id < 2; r.id++) {
			assert_true(values_survive(resume_call, &r, &mine));
			assert_int_equal(co[r.id].lost, 0);
		}
	}
	coroutine_close(S);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thousands_of_coroutines_interleaved_keep_their_stacks),
		cmocka_unit_test(test_slices_of_nearly_the_whole_run_stack_survive),
		cmocka_unit_test(test_callee_saved_registers_survive_switches),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
