/*
 * test_stack.c - what stack copying promises: the values in a coroutine's
 * frames are the same after every yield, however deep it is, however big
 * its frames, whatever the other coroutines did to the run stack meanwhile.
 * And the limit: overflowing the run stack kills by SIGSEGV (the guard).
 *
 * Only values are checked, never addresses: a suspended coroutine's locals
 * do not live at their addresses (see coroutine.h).
 */
#include "support.h"

#include <stdlib.h>

/* ---- Recursive frames of random sizes ----------------------------------- */

enum {
	WALKERS = 5,
	WALKS = 8,         /* each walker goes down and up this many times */
	MAX_DEPTH = 60,
	MAX_FRAME = 4096,  /* so a walk uses at most 240 KiB of run stack */
};

struct walker {
	uint64_t rng;
	int yields;
	int corrupt; /* frames found changed after a switch */
};

static void check_frame(struct walker *w, const unsigned char *frame, size_t size, uint64_t seed)
{
	if (!holds_random(frame, size, seed))
		w->corrupt++;
}

static void yield_and_check(struct schedule *S, struct walker *w,
			    const unsigned char *frame, size_t size, uint64_t seed)
{
	w->yields++;
	coroutine_yield(S);
	check_frame(w, frame, size, seed);
}

/*
 * One frame of random size filled with random bytes; yields on the way
 * down and on the way up, and checks the frame after every switch and after
 * the deeper frames return.
 */
static void descend(struct schedule *S, struct walker *w, int depth)
{
	size_t size = 1 + random_below(&w->rng, MAX_FRAME);
	uint64_t seed = next_random(&w->rng);
	unsigned char frame[size];
	fill_random(frame, size, seed);
	yield_and_check(S, w, frame, size, seed);
	if (depth > 1) {
		descend(S, w, depth - 1);
		check_frame(w, frame, size, seed);
		yield_and_check(S, w, frame, size, seed);
	}
}

/* Walks of random depth one after another: the saved slice grows and
 * shrinks from one yield to the next. */
static void walk(struct schedule *S, void *ud)
{
	struct walker *w = ud;
	int i;
	for (i = 0; i < WALKS; i++)
		descend(S, w, 1 + (int)random_below(&w->rng, MAX_DEPTH));
}

static int live_coroutines(struct schedule *S)
{
	int id, live = 0;
	for (id = 0; id < WALKERS; id++)
		live += coroutine_status(S, id) != COROUTINE_DEAD;
	return live;
}

static void test_frames_survive_interleaved_yields(void **state)
{
	struct schedule *S = coroutine_open();
	struct walker w[WALKERS];
	uint64_t order = 7;
	int i, yields = 0;
	(void)state;
	for (i = 0; i < WALKERS; i++) {
		w[i].rng = 1000 + (uint64_t)i;
		w[i].yields = 0;
		w[i].corrupt = 0;
		assert_int_equal(coroutine_new(S, walk, &w[i]), i);
	}
	/* Random order, so that the copy back (and its skipping when the
	 * same coroutine runs twice in a row) is exercised both ways. */
	while (live_coroutines(S) > 0)
		coroutine_resume(S, (int)random_below(&order, WALKERS));
	for (i = 0; i < WALKERS; i++) {
		assert_int_equal(w[i].corrupt, 0);
		yields += w[i].yields;
	}
	assert_true(yields > WALKERS * WALKS);
	coroutine_close(S);
}

/* ---- A slice of almost the whole run stack ---------------------------- */

enum { BIG_FRAME = 900 * 1024 };

struct big_holder {
	uint64_t seed;
	int intact;
};

static void hold_big_frame(struct schedule *S, void *ud)
{
	struct big_holder *h = ud;
	unsigned char frame[BIG_FRAME];
	fill_random(frame, sizeof frame, h->seed);
	coroutine_yield(S);
	h->intact = holds_random(frame, sizeof frame, h->seed);
}

static void test_900_kib_frame_survives_another_coroutine(void **state)
{
	struct schedule *S = coroutine_open();
	struct big_holder a = { 1, 0 }, b = { 2, 0 };
	(void)state;
	coroutine_new(S, hold_big_frame, &a);
	coroutine_new(S, hold_big_frame, &b);
	coroutine_resume(S, 0);
	coroutine_resume(S, 1); /* overwrites a's bytes on the run stack */
	coroutine_resume(S, 0);
	coroutine_resume(S, 1);
	assert_true(a.intact);
	assert_true(b.intact);
	assert_int_equal(coroutine_status(S, 0), COROUTINE_DEAD);
	assert_int_equal(coroutine_status(S, 1), COROUTINE_DEAD);
	coroutine_close(S);
}

/* ---- Overflow ------------------------------------------------------------ */

/*
 * Where the coroutine's stack is, as a number: only the mapping around it
 * is looked at, never the memory itself.  The frame's address, not a
 * local's: with ASAN_OPTIONS=detect_stack_use_after_return=1, ASan moves
 * locals to a "fake stack" on the heap.
 */
static void note_stack_address(struct schedule *S, void *ud)
{
	(void)S;
	*(uintptr_t *)ud = (uintptr_t)__builtin_frame_address(0);
}

/* The mapping that contains addr in /proc/self/maps (Linux). */
struct mapping {
	uintptr_t start, end;
	char perms[5];
};

static int find_mapping(uintptr_t addr, int (*match)(const struct mapping *, uintptr_t), struct mapping *found)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	int ok = 0;
	assert_non_null(maps);
	while (!ok && fgets(line, sizeof line, maps)) {
		unsigned long start, end;
		if (sscanf(line, "%lx-%lx %4s", &start, &end, found->perms) != 3)
			continue;
		found->start = start;
		found->end = end;
		ok = match(found, addr);
	}
	fclose(maps);
	return ok;
}

static int contains(const struct mapping *m, uintptr_t addr)
{
	return m->start <= addr && addr < m->end;
}

static int ends_at(const struct mapping *m, uintptr_t addr)
{
	return m->end == addr;
}

static void test_run_stack_has_1_mib_guard_below(void **state)
{
	struct schedule *S = coroutine_open();
	struct mapping run_stack, guard;
	uintptr_t addr = 0;
	(void)state;
	coroutine_resume(S, coroutine_new(S, note_stack_address, &addr));
	assert_true(find_mapping(addr, contains, &run_stack));
	assert_true(find_mapping(run_stack.start, ends_at, &guard));
	assert_string_equal(guard.perms, "---p");
	assert_true(guard.end - guard.start >= 1024 * 1024);
	coroutine_close(S);
}

/*
 * Frames of 1 KiB, each written to, so the first frame past the run stack
 * lands in the guard.  The limit only keeps the compiler from seeing
 * an infinite recursion; it is far beyond what fits in 1 MiB.
 */
static int recurse(int depth, int limit)
{
	volatile char pad[1024];
	pad[0] = (char)depth;
	if (depth == limit)
		return 0;
	return recurse(depth + 1, limit) + pad[0];
}

static void overflow(struct schedule *S, void *ud)
{
	(void)S;
	*(int *)ud = recurse(0, 1 << 24);
}

static void run_overflowing_coroutine(void *arg)
{
	static int result;
	struct schedule *S = coroutine_open();
	(void)arg;
	coroutine_new(S, overflow, &result);
	coroutine_resume(S, 0);
}

static void test_overflow_dies_of_sigsegv(void **state)
{
	struct child_result r = run_in_child(run_overflowing_coroutine, NULL);
	(void)state;
	assert_killed_by(&r, SIGSEGV);
	assert_string_equal(r.err, "");
}

/* ---- Coroutines of two schedules, one inside the other -------------------- */

/*
 * Schedules opened one after the other get run stacks close together (on
 * Linux, mmap puts each right below or above the last).  A coroutine of
 * one, deep in its run stack, resumes a coroutine of the other: the stack
 * pointer moves less than valgrind's largest frame (2 MB), which valgrind
 * takes for a frame being pushed or popped, not for a move to another
 * stack, unless the library told it where each run stack lies.  Then the
 * values of either would be taken for garbage.
 */
enum { NEST_YIELDS = 4, NEST_DEPTH_BYTES = 512 * 1024, NEST_LOCAL = 1024 };

struct nest {
	struct schedule *inner; /* the other schedule */
	int inner_id;           /* its coroutine, resumed from inside ours */
	int corrupt;            /* values found changed after a switch */
};

/* Holds random bytes across its yields. */
static void hold_across_yields(struct schedule *S, void *ud)
{
	struct nest *n = ud;
	unsigned char local[NEST_LOCAL];
	int i;
	for (i = 0; i < NEST_YIELDS; i++) {
		fill_random(local, sizeof local, (uint64_t)i);
		coroutine_yield(S);
		n->corrupt += !holds_random(local, sizeof local, (uint64_t)i);
	}
}

/* Descends NEST_DEPTH_BYTES into the run stack, then resumes the inner
 * coroutine until it has finished, checking its own bytes in between. */
static void resume_inner_from_deep_down(struct nest *n, size_t left)
{
	unsigned char local[4096];
	fill_random(local, sizeof local, left);
	if (left > sizeof local) {
		resume_inner_from_deep_down(n, left - sizeof local);
	} else {
		while (coroutine_status(n->inner, n->inner_id) != COROUTINE_DEAD) {
			coroutine_resume(n->inner, n->inner_id);
			n->corrupt += !holds_random(local, sizeof local, left);
		}
	}
	n->corrupt += !holds_random(local, sizeof local, left);
}

static void resume_inner_deep_down(struct schedule *S, void *ud)
{
	(void)S;
	resume_inner_from_deep_down(ud, NEST_DEPTH_BYTES);
}

/* A deep coroutine of outer resumes a coroutine of inner. */
static int values_lost_nesting(struct schedule *outer, struct schedule *inner)
{
	struct nest n;
	n.inner = inner;
	n.corrupt = 0;
	n.inner_id = coroutine_new(inner, hold_across_yields, &n);
	coroutine_resume(outer, coroutine_new(outer, resume_inner_deep_down, &n));
	return n.corrupt;
}

/*
 * Three schedules, each nesting a coroutine of each other one: whichever
 * two run stacks lie next to each other, and whichever of them lies
 * higher, one nesting moves the stack pointer less than 2 MB.
 */
enum { NEIGHBOURS = 3 };

static void test_coroutine_of_a_neighbour_schedule_resumed_deep_down(void **state)
{
	struct schedule *S[NEIGHBOURS];
	int i, j;
	(void)state;
	for (i = 0; i < NEIGHBOURS; i++)
		S[i] = coroutine_open();
	for (i = 0; i < NEIGHBOURS; i++)
		for (j = 0; j < NEIGHBOURS; j++)
			if (i != j)
				assert_int_equal(values_lost_nesting(S[i], S[j]), 0);
	for (i = 0; i < NEIGHBOURS; i++)
		coroutine_close(S[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frames_survive_interleaved_yields),
		cmocka_unit_test(test_900_kib_frame_survives_another_coroutine),
		cmocka_unit_test(test_coroutine_of_a_neighbour_schedule_resumed_deep_down),
		cmocka_unit_test(test_run_stack_has_1_mib_guard_below),
		cmocka_unit_test(test_overflow_dies_of_sigsegv),
	};
	return run_suite(tests);
}
