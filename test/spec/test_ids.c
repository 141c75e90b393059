/*
 * test_ids.c - the ids coroutine_new hands out, exactly as in the original:
 * when all cap slots are taken the array doubles and the new id is the old
 * cap; otherwise it is the first empty slot scanning (nco + i) % cap for
 * i = 0, 1, ..., where nco is the number of live coroutines.
 *
 * A few hand-made cases name the rule's parts; then a reference model of
 * the rule is checked against the library over long random sequences.
 */
#include "support.h"

#include <stdlib.h>

/* Returns at once: resuming it once finishes it and empties its slot. */
static void finish_at_once(struct schedule *S, void *ud)
{
	(void)S, (void)ud;
}

static int new_coroutine(struct schedule *S)
{
	return coroutine_new(S, finish_at_once, NULL);
}

static void finish(struct schedule *S, int id)
{
	assert_int_equal(coroutine_status(S, id), COROUTINE_READY);
	coroutine_resume(S, id);
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
}

/* Creates n coroutines on a fresh schedule: they take ids 0 .. n-1. */
static struct schedule *open_with(int n)
{
	struct schedule *S = coroutine_open();
	int id;
	for (id = 0; id < n; id++)
		assert_int_equal(new_coroutine(S), id);
	return S;
}

/* ---- The rule, case by case --------------------------------------------- */

static void test_ids_count_up_from_zero(void **state)
{
	struct schedule *S = open_with(16);
	(void)state;
	coroutine_close(S);
}

static void test_new_on_full_array_takes_old_cap(void **state)
{
	struct schedule *S = open_with(16);
	(void)state;
	assert_int_equal(new_coroutine(S), 16);
	assert_int_equal(new_coroutine(S), 17);
	coroutine_close(S);
}

static void status_of_32(void *S)
{
	coroutine_status(S, 32);
}

static void test_full_array_doubles(void **state)
{
	struct schedule *S = open_with(17);
	struct child_result r;
	int id;
	(void)state;
	for (id = 17; id < 32; id++)
		assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
	r = run_in_child(status_of_32, S);
	assert_aborted_with(&r, "coroutine_status: id 32 is out of range [0, 32)");
	coroutine_close(S);
}

static void test_new_scans_from_nco_past_busy_slots(void **state)
{
	struct schedule *S = open_with(4);
	(void)state;
	finish(S, 0);
	/* nco is 3 and slot 3 is busy: the next free one at or after 3 is 4. */
	assert_int_equal(new_coroutine(S), 4);
	coroutine_close(S);
}

static void test_new_skips_free_slots_below_nco(void **state)
{
	struct schedule *S = open_with(6);
	(void)state;
	finish(S, 3);
	finish(S, 4);
	/* nco is 4: slot 3 is free but lies below it. */
	assert_int_equal(new_coroutine(S), 4);
	/* nco is 5: slot 3 is still skipped, and 5 is busy. */
	assert_int_equal(new_coroutine(S), 6);
	coroutine_close(S);
}

static void test_new_wraps_around_to_low_slots(void **state)
{
	struct schedule *S = open_with(16);
	(void)state;
	finish(S, 0);
	finish(S, 1);
	/* nco is 14; slots 14 and 15 are busy, so the scan wraps to 0. */
	assert_int_equal(new_coroutine(S), 0);
	assert_int_equal(new_coroutine(S), 1);
	assert_int_equal(new_coroutine(S), 16);
	coroutine_close(S);
}

static void test_finished_coroutines_do_not_shrink_the_array(void **state)
{
	struct schedule *S = open_with(17);
	int id;
	(void)state;
	for (id = 0; id < 17; id++)
		finish(S, id);
	assert_int_equal(coroutine_status(S, 31), COROUTINE_DEAD);
	assert_int_equal(new_coroutine(S), 0);
	coroutine_close(S);
}

/* ---- The reference model ---------------------------------------------- */

enum { MODEL_MAX_SLOTS = 4096 };

struct id_model {
	int cap;
	int nco;
	unsigned char busy[MODEL_MAX_SLOTS];
	int live[MODEL_MAX_SLOTS]; /* the busy ids, in no order */
};

/* The rule of coroutine_new, written as plainly as possible. */
static int model_new(struct id_model *m)
{
	int id, i;
	if (m->nco >= m->cap) {
		id = m->cap;
		m->cap *= 2;
	} else {
		for (i = 0; m->busy[(m->nco + i) % m->cap]; i++)
			;
		id = (m->nco + i) % m->cap;
	}
	m->busy[id] = 1;
	m->live[m->nco++] = id;
	return id;
}

/* Finishes the coroutine at position k of the live list; returns its id. */
static int model_finish(struct id_model *m, int k)
{
	int id = m->live[k];
	m->live[k] = m->live[--m->nco];
	m->busy[id] = 0;
	return id;
}

static void assert_statuses_match(struct schedule *S, const struct id_model *m)
{
	int id;
	for (id = 0; id < m->cap; id++)
		assert_int_equal(coroutine_status(S, id), m->busy[id] ? COROUTINE_READY : COROUTINE_DEAD);
}

/*
 * Random news and finishes, steered towards `target` live coroutines: new
 * is likelier below the target, finish above it, so that the schedule
 * grows to the target and then churns there, leaving holes everywhere.
 */
static void churn_towards(struct schedule *S, struct id_model *m, uint64_t *rng, int target, int steps)
{
	int step;
	for (step = 0; step < steps; step++) {
		int new_odds = m->nco < target ? 3 : 1;
		if (m->nco == 0 || (int)random_below(rng, 4) < new_odds) {
			int expected = model_new(m);
			assert_true(m->cap <= MODEL_MAX_SLOTS);
			assert_int_equal(new_coroutine(S), expected);
		} else {
			finish(S, model_finish(m, (int)random_below(rng, (unsigned)m->nco)));
		}
	}
	assert_statuses_match(S, m);
}

static void test_ids_follow_the_model(void **state)
{
	/* Past 16, past 32, down to a few (holes low and high), past 1024,
	 * down again, up to a middle size, and empty. */
	static const int targets[] = { 20, 40, 3, 1100, 5, 300, 0 };
	struct id_model *m = calloc(1, sizeof *m);
	struct schedule *S = coroutine_open();
	uint64_t rng = 42;
	size_t i;
	(void)state;
	m->cap = 16;
	for (i = 0; i < sizeof targets / sizeof targets[0]; i++)
		churn_towards(S, m, &rng, targets[i], 3 * targets[i] + 400);
	assert_int_equal(m->cap, 2048);
	coroutine_close(S);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids_count_up_from_zero),
		cmocka_unit_test(test_new_on_full_array_takes_old_cap),
		cmocka_unit_test(test_full_array_doubles),
		cmocka_unit_test(test_new_scans_from_nco_past_busy_slots),
		cmocka_unit_test(test_new_skips_free_slots_below_nco),
		cmocka_unit_test(test_new_wraps_around_to_low_slots),
		cmocka_unit_test(test_finished_coroutines_do_not_shrink_the_array),
		cmocka_unit_test(test_ids_follow_the_model),
	};
	return run_suite(tests);
}
