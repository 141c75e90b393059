/*
 * test_next.c - coroutine_next, the second addition to the original API:
 * the next slot after an id that holds a coroutine, so that a main loop can
 * walk the schedule without keeping the ids itself.
 */
#include "support.h"

#include <limits.h>

/* ---- Bodies ------------------------------------------------------------- */

static void end_at_once(struct schedule *S, void *ud)
{
	(void)S;
	(void)ud;
}

/* Yields until stop[its id] is set (ud is stop, or NULL: forever). */
static void yield_until_stopped(struct schedule *S, void *ud)
{
	const char *stop = ud;
	while (stop == NULL || !stop[coroutine_running(S)])
		coroutine_yield(S);
}

/* Stores what coroutine_next(S, -1) says from inside the coroutine. */
static void ask_first(struct schedule *S, void *ud)
{
	*(int *)ud = coroutine_next(S, -1);
}

/* ---- Helpers -------------------------------------------------------------- */

/*
 * A schedule of cap slots (a power of two, at least 16) of which exactly
 * the ids in keep[0..n) (ascending) hold a coroutine, suspended in
 * yield_until_stopped(S, stop): made by filling cap slots and ending the
 * others.
 */
static struct schedule *open_keeping(int cap, const int *keep, int n, const char *stop)
{
	struct schedule *S = coroutine_open();
	for (int i = 0, k = 0; i < cap; i++) {
		int kept = k < n && keep[k] == i;
		int id = kept ? coroutine_new(S, yield_until_stopped, (void *)stop)
			      : coroutine_new(S, end_at_once, NULL);
		assert_int_equal(id, i);
		k += kept;
	}
	for (int i = 0; i < cap; i++)
		coroutine_resume(S, i);
	return S;
}

/* The walk from -1 gives exactly want[0..n), then -1. */
static void assert_walk_is(struct schedule *S, const int *want, int n)
{
	int id = -1;
	for (int k = 0; k < n; k++) {
		id = coroutine_next(S, id);
		assert_int_equal(id, want[k]);
	}
	assert_int_equal(coroutine_next(S, id), -1);
}

/* One pass of the loop coroutine.h shows; returns how many it resumed. */
static int walk_once(struct schedule *S, int *resumed)
{
	int n = 0;
	for (int id = coroutine_next(S, -1); id != -1; id = coroutine_next(S, id)) {
		resumed[n++] = id;
		coroutine_resume(S, id);
	}
	return n;
}

/* ---- Tests --------------------------------------------------------------- */

static void test_next_of_an_empty_schedule_is_minus_1(void **state)
{
	struct schedule *S = coroutine_open();
	(void)state;
	assert_int_equal(coroutine_next(S, -1), -1);
	assert_int_equal(coroutine_next(S, 0), -1);
	coroutine_close(S);
}

static void test_next_skips_empty_slots_in_order(void **state)
{
	static const int keep[] = { 1, 2, 5, 9, 14 };
	struct schedule *S = open_keeping(16, keep, 5, NULL);
	(void)state;
	assert_walk_is(S, keep, 5);
	coroutine_close(S);
}

static void test_next_is_after_the_id_given_not_at_it(void **state)
{
	static const int keep[] = { 3, 4, 7 };
	struct schedule *S = open_keeping(16, keep, 3, NULL);
	(void)state;
	assert_int_equal(coroutine_next(S, 3), 4);
	assert_int_equal(coroutine_next(S, 4), 7);
	assert_int_equal(coroutine_next(S, 5), 7);
	assert_int_equal(coroutine_next(S, 7), -1);
	coroutine_close(S);
}

/*
 * Slot 63 ends the first 64-bit word of slots, 4095 the first 64 words (a
 * word of the bitmap of words in use); 4160 to 12293 crosses two of those,
 * one of them all empty.
 */
static void test_next_crosses_word_boundaries(void **state)
{
	static const int keep[] = { 0, 63, 64, 127, 128, 4095, 4096, 4160, 12293, 16383 };
	struct schedule *S = open_keeping(16384, keep, 10, NULL);
	(void)state;
	assert_walk_is(S, keep, 10);
	coroutine_close(S);
}

static void test_next_of_an_id_at_or_past_the_slot_count_is_minus_1(void **state)
{
	static const int keep[] = { 14, 15 };
	struct schedule *S = open_keeping(16, keep, 2, NULL);
	(void)state;
	assert_int_equal(coroutine_next(S, 14), 15);
	assert_int_equal(coroutine_next(S, 15), -1);
	assert_int_equal(coroutine_next(S, 16), -1);
	assert_int_equal(coroutine_next(S, INT_MAX), -1);
	coroutine_close(S);
}

static void test_next_counts_ready_suspended_and_running_coroutines(void **state)
{
	struct schedule *S = coroutine_open();
	int first = -2;
	int ready = coroutine_new(S, yield_until_stopped, NULL);
	int suspended = coroutine_new(S, yield_until_stopped, NULL);
	int running = coroutine_new(S, ask_first, &first);
	(void)state;
	coroutine_resume(S, suspended);
	assert_walk_is(S, (const int[]){ ready, suspended, running }, 3);
	/* Seen from inside, ready is still the first; then running ends. */
	coroutine_resume(S, running);
	assert_int_equal(first, ready);
	assert_walk_is(S, (const int[]){ ready, suspended }, 2);
	coroutine_close(S);
}

/* A random tenth of 32768 slots in use: the walk agrees with coroutine_status. */
static void test_next_agrees_with_status_on_a_sparse_schedule(void **state)
{
	enum { CAP = 32768 };
	static int keep[CAP];
	uint64_t seed = 18;
	int n = 0;
	(void)state;
	for (int i = 0; i < CAP; i++)
		if (random_below(&seed, 10) == 0)
			keep[n++] = i;
	struct schedule *S = open_keeping(CAP, keep, n, NULL);
	for (int i = 0, k = 0; i < CAP; i++) {
		int in_use = coroutine_status(S, i) != COROUTINE_DEAD;
		assert_int_equal(in_use, k < n && keep[k] == i);
		k += in_use;
	}
	assert_walk_is(S, keep, n);
	coroutine_close(S);
}

/* ---- The walk, while coroutines end and are made ------------------------- */

static void make_one(struct schedule *S, void *ud)
{
	*(int *)ud = coroutine_new(S, end_at_once, NULL);
}

static void test_walk_meets_a_coroutine_made_during_it(void **state)
{
	/* All 16 slots in use: the coroutine made in slot 5 takes id 16, past
	 * the slots there were when the walk started. */
	struct schedule *S = coroutine_open();
	int made = -1, resumed[32];
	(void)state;
	for (int i = 0; i < 16; i++)
		coroutine_new(S, i == 5 ? make_one : yield_until_stopped, i == 5 ? (void *)&made : NULL);
	assert_int_equal(walk_once(S, resumed), 17);
	assert_int_equal(made, 16);
	assert_int_equal(resumed[16], 16);
	coroutine_close(S);
}

static void test_walk_goes_on_past_coroutines_that_end_during_it(void **state)
{
	static const int keep[] = { 0, 1, 2, 3, 10, 63, 64, 65, 70, 127 };
	static char stop[128];
	struct schedule *S = open_keeping(128, keep, 10, stop);
	int resumed[16];
	(void)state;
	stop[0] = stop[1] = stop[10] = stop[64] = stop[65] = stop[127] = 1;
	assert_int_equal(walk_once(S, resumed), 10);
	assert_walk_is(S, (const int[]){ 2, 3, 63, 70 }, 4);
	coroutine_close(S);
}

/* ---- Misuse -------------------------------------------------------------- */

static void ask_for_id(void *arg)
{
	struct schedule *S = coroutine_open();
	coroutine_next(S, *(int *)arg);
}

static void ask_null_schedule(void *arg)
{
	(void)arg;
	coroutine_next(NULL, -1);
}

static void test_next_of_id_below_minus_1_aborts(void **state)
{
	int id = -2;
	struct child_result r = run_in_child(ask_for_id, &id);
	(void)state;
	assert_aborted_with(&r, "coroutine_next: id -2 is below -1 (-1 asks for the first coroutine)");
}

static void test_next_of_null_schedule_aborts(void **state)
{
	struct child_result r = run_in_child(ask_null_schedule, NULL);
	(void)state;
	assert_aborted_with(&r, "coroutine_next: the schedule is NULL");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_next_of_an_empty_schedule_is_minus_1),
		cmocka_unit_test(test_next_skips_empty_slots_in_order),
		cmocka_unit_test(test_next_is_after_the_id_given_not_at_it),
		cmocka_unit_test(test_next_crosses_word_boundaries),
		cmocka_unit_test(test_next_of_an_id_at_or_past_the_slot_count_is_minus_1),
		cmocka_unit_test(test_next_counts_ready_suspended_and_running_coroutines),
		cmocka_unit_test(test_next_agrees_with_status_on_a_sparse_schedule),
		cmocka_unit_test(test_walk_meets_a_coroutine_made_during_it),
		cmocka_unit_test(test_walk_goes_on_past_coroutines_that_end_during_it),
		cmocka_unit_test(test_next_of_id_below_minus_1_aborts),
		cmocka_unit_test(test_next_of_null_schedule_aborts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
