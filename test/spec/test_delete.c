/*
 * test_delete.c - coroutine_delete, and what coroutine_close does with
 * suspended coroutines, seen from C: a deleted coroutine's cleanup
 * attributes run, innermost first, once; one waiting in
 * coroutine_try_yield is told COROUTINE_ENDING there and returns; a delete
 * asked inside a coroutine (of another, of itself, twice) is carried out
 * once control is back in main, before main's resume or delete returns;
 * a cleanup that waits leaves its coroutine to be freed; its slot is
 * emptied and ids are then handed out as the original hands them out; the
 * other coroutines are untouched; close ends the coroutines waiting on its
 * own thread, wherever the schedule was last; misuse stops with one line.
 * C++ destructors, and what a catch (...) sees, are test_delete_cxx.cpp's;
 * a C program with no unwinder, test_delete_no_unwinder.c's.
 *
 * Built with -fexceptions (see mk/test.mk), so that its frames have
 * cleanups for the unwinder to run, and the unwinder is linked in.
 *
 * Built with -DTEST_PLAIN it needs no CMocka (test/support/plain_suite.h),
 * for the targets that have none; the cases that must stop the program
 * run in a child process (child.h), which is this program run again with
 * "--child NAME" where there is no fork.
 */
#ifdef TEST_PLAIN
#include "plain_suite.h"
#include "child.h"
#else
#include "support.h"
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
#define CLEANUP(f) __attribute__((cleanup(f), unused)) /* read by f alone */
#if defined(__has_feature)
#define ASAN_BY_FEATURE __has_feature(address_sanitizer) /* clang's */
#else
#define ASAN_BY_FEATURE 0
#endif

/* Numbers in [0, n) from *state (xorshift). */
static unsigned random_number(uint32_t *state, unsigned n)
{
	*state ^= *state << 13;
	*state ^= *state >> 17;
	*state ^= *state << 5;
	return *state % n;
}

/* ---- What the cleanups saw ----------------------------------------------- */

/* The labels of the cleanups that ran, in the order they ran. */
static int ran[64];
static int ran_count;

static void forget_cleanups(void)
{
	ran_count = 0;
}

static void note_cleanup(int *label)
{
	if (ran_count < (int)(sizeof ran / sizeof ran[0]))
		ran[ran_count] = *label;
	ran_count++;
}

/* ---- Bodies ------------------------------------------------------------- */

static void finish_at_once(struct schedule *S, void *ud)
{
	(void)S, (void)ud;
}

static void yield_forever(struct schedule *S, void *ud)
{
	(void)ud;
	for (;;)
		coroutine_yield(S);
}

/* Three frames, a cleanup in each: 1 outermost, 3 innermost, which waits. */
NOINLINE static void third_frame(struct schedule *S)
{
	int label CLEANUP(note_cleanup) = 3;
	coroutine_yield(S);
	label = -3; /* resumed instead of deleted */
}

NOINLINE static void second_frame(struct schedule *S)
{
	int label CLEANUP(note_cleanup) = 2;
	third_frame(S);
	label = -2;
}

static void three_frames(struct schedule *S, void *ud)
{
	int label CLEANUP(note_cleanup) = 1;
	(void)ud;
	second_frame(S);
	label = -1;
}

/* Notes its own id as its cleanup's label, and waits. */
static void note_own_id(struct schedule *S, void *ud)
{
	int label CLEANUP(note_cleanup) = coroutine_running(S);
	(void)ud;
	coroutine_yield(S);
}

/* Holds a pattern in a local array of size bytes across yields yields,
 * then returns; counts the resumes after which the array had changed. */
struct holder {
	size_t size;
	uint32_t seed;
	int yields;  /* before it returns */
	int corrupt;
	int finished;
};

static uint32_t next_byte(uint32_t *x)
{
	return random_number(x, 256);
}

static void hold(struct schedule *S, void *ud)
{
	struct holder *h = (struct holder *)ud;
	unsigned char data[16384];
	int label CLEANUP(note_cleanup) = coroutine_running(S);
	uint32_t x = h->seed;
	size_t i;
	int k;
	for (i = 0; i < h->size; i++)
		data[i] = (unsigned char)next_byte(&x);
	for (k = 0; k < h->yields; k++) {
		coroutine_yield(S);
		x = h->seed;
		for (i = 0; i < h->size; i++)
			if (data[i] != (unsigned char)next_byte(&x)) {
				h->corrupt++;
				break;
			}
	}
	h->finished = 1;
	label = -label - 1;
}

static struct holder holder_of(size_t size, uint32_t seed, int yields)
{
	struct holder h;
	h.size = size;
	h.seed = seed;
	h.yields = yields;
	h.corrupt = 0;
	h.finished = 0;
	return h;
}

/* ---- What a delete runs ------------------------------------------------------ */

static void test_delete_runs_cleanups_innermost_first_once(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int id = coroutine_new(S, three_frames, NULL);
	forget_cleanups();
	coroutine_resume(S, id);
	coroutine_delete(S, id);
	assert_int_equal(ran_count, 3);
	assert_int_equal(ran[0], 3);
	assert_int_equal(ran[1], 2);
	assert_int_equal(ran[2], 1);
}

static void test_delete_empties_the_slot(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int id = coroutine_new(S, three_frames, NULL);
	coroutine_resume(S, id);
	coroutine_delete(S, id);
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
	assert_int_equal(coroutine_stack_size(S, id), 0);
	assert_int_equal(coroutine_next(S, -1), -1);
}

/* A coroutine that never started is freed: its function never runs. */
static void count_starts(struct schedule *S, void *ud)
{
	(void)S;
	++*(int *)ud;
}

static void test_delete_frees_a_coroutine_that_never_started(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int starts = 0;
	int id = coroutine_new(S, count_starts, &starts);
	coroutine_delete(S, id);
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
	coroutine_resume(S, id); /* an empty slot now: nothing runs */
	assert_int_equal(starts, 0);
	assert_int_equal(coroutine_new(S, count_starts, &starts), id);
}

static void test_delete_leaves_an_empty_slot_as_it_is(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int a = coroutine_new(S, yield_forever, NULL);
	int b = coroutine_new(S, yield_forever, NULL);
	coroutine_resume(S, a);
	coroutine_delete(S, 5);
	coroutine_delete(S, b);
	coroutine_delete(S, b); /* empty by now */
	assert_int_equal(coroutine_status(S, a), COROUTINE_SUSPEND);
	/* One live coroutine: the next id is the first empty slot from 1. */
	assert_int_equal(coroutine_new(S, yield_forever, NULL), 1);
}

/* A cleanup that waits: the delete frees its coroutine there, as the
 * original frees one, and the cleanups outside it never run.  The run
 * stack's bytes are nobody's then: a new coroutine, which malloc may well
 * place where the freed one was, starts afresh. */
static int cleanup_waits, cleanup_came_back;

static void wait_in_cleanup(struct schedule **S)
{
	cleanup_waits++;
	coroutine_yield(*S);
	cleanup_came_back++;
}

static void wait_with_a_cleanup_that_waits(struct schedule *S, void *ud)
{
	int outer CLEANUP(note_cleanup) = 1;
	struct schedule *own CLEANUP(wait_in_cleanup) = S;
	int inner CLEANUP(note_cleanup) = 3;
	(void)ud;
	coroutine_yield(S);
	own = NULL, outer = inner = 0;
}

static void test_cleanup_that_waits_during_a_delete_leaves_its_coroutine_to_be_freed(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int starts = 0, id = coroutine_new(S, wait_with_a_cleanup_that_waits, NULL), next;
	coroutine_resume(S, id);
	forget_cleanups();
	cleanup_waits = cleanup_came_back = 0;
	coroutine_delete(S, id);
	assert_int_equal(ran_count, 1);
	assert_int_equal(ran[0], 3);
	assert_int_equal(cleanup_waits, 1);
	assert_int_equal(cleanup_came_back, 0);
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
	next = coroutine_new(S, count_starts, &starts);
	coroutine_resume(S, next);
	assert_int_equal(starts, 1);
	assert_int_equal(coroutine_status(S, next), COROUTINE_DEAD);
}

/* ---- Waiting in coroutine_try_yield: told COROUTINE_ENDING -------------------- */

/* Waits in coroutine_try_yield until told anything but 0, notes what, and
 * returns: its cleanup runs as at any return. */
static int told;

static void wait_until_told(struct schedule *S, void *ud)
{
	int label CLEANUP(note_cleanup) = 8;
	(void)ud;
	while ((told = coroutine_try_yield(S)) == 0)
		continue;
	label = 80 + told; /* returned the ordinary way */
}

static void test_delete_tells_a_coroutine_waiting_in_try_yield_it_is_ending(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int id = coroutine_new(S, wait_until_told, NULL);
	coroutine_resume(S, id);
	coroutine_resume(S, id); /* resumed, it is told 0 and waits again */
	forget_cleanups();
	told = -2;
	coroutine_delete(S, id);
	assert_int_equal(told, COROUTINE_ENDING);
	assert_int_equal(ran_count, 1);
	assert_int_equal(ran[0], 80 + COROUTINE_ENDING);
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
}

static void test_close_tells_coroutines_waiting_in_try_yield_they_are_ending(void **state)
{
	struct schedule *S = coroutine_open();
	int i;
	(void)state;
	for (i = 0; i < 3; i++)
		coroutine_resume(S, coroutine_new(S, wait_until_told, NULL));
	forget_cleanups();
	coroutine_close(S);
	assert_int_equal(ran_count, 3);
	for (i = 0; i < 3; i++)
		assert_int_equal(ran[i], 80 + COROUTINE_ENDING);
}

/* Told COROUTINE_ENDING, waits again (counting the answers): it is unwound
 * from there, its cleanup run once, by the unwinding. */
static int answers_ending;

static void wait_again_when_told(struct schedule *S, void *ud)
{
	int label CLEANUP(note_cleanup) = 9;
	(void)ud;
	for (;;)
		answers_ending += coroutine_try_yield(S) == COROUTINE_ENDING;
}

static void test_try_yield_that_waits_again_after_ending_is_unwound_there(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int id = coroutine_new(S, wait_again_when_told, NULL);
	coroutine_resume(S, id);
	forget_cleanups();
	answers_ending = 0;
	coroutine_delete(S, id);
	assert_int_equal(answers_ending, 1);
	assert_int_equal(ran_count, 1);
	assert_int_equal(ran[0], 9);
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
}

static void test_coroutine_running_in_a_cleanup_is_the_deleted_coroutine(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int other = coroutine_new(S, yield_forever, NULL);
	int id = coroutine_new(S, note_own_id, NULL);
	coroutine_resume(S, other);
	coroutine_resume(S, id);
	forget_cleanups();
	coroutine_delete(S, id);
	assert_int_equal(ran_count, 1);
	assert_int_equal(ran[0], id);
	assert_int_equal(coroutine_running(S), -1);
}

/* ---- Deletes asked inside a coroutine: carried out when main is back ---------- */

/* Deletes its target, notes what it sees of it then, and yields or returns. */
struct deleter {
	int target;
	int then_return;   /* instead of yielding */
	int status_inside; /* the target's status right after the delete */
	int listed_inside; /* whether coroutine_next still walks to it */
	int ran_inside;    /* the cleanups that had run by then */
};

static struct deleter deleter_of(int target, int then_return)
{
	struct deleter d;
	d.target = target;
	d.then_return = then_return;
	d.status_inside = d.listed_inside = d.ran_inside = -1;
	return d;
}

static void delete_the_target(struct schedule *S, void *ud)
{
	struct deleter *d = (struct deleter *)ud;
	coroutine_delete(S, d->target);
	d->status_inside = coroutine_status(S, d->target);
	d->listed_inside = coroutine_next(S, d->target - 1) == d->target;
	d->ran_inside = ran_count;
	if (!d->then_return)
		coroutine_yield(S);
}

/* The target waits in three_frames; script runs, with d, to its first wait
 * (or its end).  Returns the script's id. */
static int run_against_a_waiting_target(struct schedule *S, coroutine_func script, struct deleter *d, int then_return)
{
	int id;
	*d = deleter_of(coroutine_new(S, three_frames, NULL), then_return);
	coroutine_resume(S, d->target);
	forget_cleanups();
	id = coroutine_new(S, script, d);
	coroutine_resume(S, id);
	return id;
}

static void test_script_that_deletes_another_still_finds_it_there(void **state)
{
	struct deleter d;
	run_against_a_waiting_target((struct schedule *)*state, delete_the_target, &d, 0);
	assert_int_equal(d.status_inside, COROUTINE_SUSPEND);
	assert_int_equal(d.listed_inside, 1);
	assert_int_equal(d.ran_inside, 0);
}

static void test_delete_asked_by_a_script_that_yields_is_done_before_the_resume_returns(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	struct deleter d;
	int script = run_against_a_waiting_target(S, delete_the_target, &d, 0);
	assert_int_equal(ran_count, 3);
	assert_int_equal(ran[0], 3);
	assert_int_equal(ran[2], 1);
	assert_int_equal(coroutine_status(S, d.target), COROUTINE_DEAD);
	assert_int_equal(coroutine_status(S, script), COROUTINE_SUSPEND);
}

static void test_delete_asked_by_a_script_that_returns_is_done_before_the_resume_returns(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	struct deleter d;
	run_against_a_waiting_target(S, delete_the_target, &d, 1);
	assert_int_equal(ran_count, 3);
	assert_int_equal(coroutine_status(S, d.target), COROUTINE_DEAD);
	assert_int_equal(coroutine_next(S, -1), -1);
}

static void test_delete_asked_inside_frees_a_coroutine_that_never_started(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int starts = 0;
	int target = coroutine_new(S, count_starts, &starts);
	struct deleter d = deleter_of(target, 0);
	coroutine_resume(S, coroutine_new(S, delete_the_target, &d));
	assert_int_equal(d.status_inside, COROUTINE_READY);
	assert_int_equal(coroutine_status(S, target), COROUTINE_DEAD);
	assert_int_equal(starts, 0);
}

/* Deletes 5, 2, the empty slot 7 and 4, in that order: they end in id order. */
static void delete_three_and_an_empty_slot(struct schedule *S, void *ud)
{
	(void)ud;
	coroutine_delete(S, 5);
	coroutine_delete(S, 2);
	coroutine_delete(S, 7);
	coroutine_delete(S, 4);
	coroutine_yield(S);
}

static void test_deletes_asked_inside_are_done_in_id_order(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int id;
	for (id = 0; id < 6; id++)
		coroutine_resume(S, coroutine_new(S, note_own_id, NULL));
	id = coroutine_new(S, delete_three_and_an_empty_slot, NULL);
	assert_int_equal(id, 6);
	forget_cleanups();
	coroutine_resume(S, id);
	assert_int_equal(ran_count, 3);
	assert_int_equal(ran[0], 2);
	assert_int_equal(ran[1], 4);
	assert_int_equal(ran[2], 5);
}

static void delete_the_target_twice(struct schedule *S, void *ud)
{
	struct deleter *d = (struct deleter *)ud;
	coroutine_delete(S, d->target);
	coroutine_delete(S, d->target);
	coroutine_yield(S);
}

static void test_delete_asked_twice_ends_the_coroutine_once(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	struct deleter d;
	run_against_a_waiting_target(S, delete_the_target_twice, &d, 0);
	assert_int_equal(ran_count, 3);
	assert_int_equal(coroutine_status(S, d.target), COROUTINE_DEAD);
}

/* A cleanup that asks to delete its own coroutine, which a delete ends. */
static void delete_own_coroutine(struct schedule **S)
{
	int label = 13;
	note_cleanup(&label);
	coroutine_delete(*S, coroutine_running(*S));
}

static void wait_with_a_cleanup_that_deletes_its_coroutine(struct schedule *S, void *ud)
{
	struct schedule *own CLEANUP(delete_own_coroutine) = S;
	int label CLEANUP(note_cleanup) = 12;
	(void)ud;
	coroutine_yield(S);
	own = NULL, label = -12;
}

static void test_cleanup_that_deletes_its_own_coroutine_while_it_ends_changes_nothing(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int id = coroutine_new(S, wait_with_a_cleanup_that_deletes_its_coroutine, NULL);
	int later = coroutine_new(S, three_frames, NULL);
	coroutine_resume(S, id);
	coroutine_resume(S, later);
	forget_cleanups();
	coroutine_delete(S, id);
	assert_int_equal(ran_count, 2);
	assert_int_equal(ran[0], 12);
	assert_int_equal(ran[1], 13);
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
	assert_int_equal(coroutine_status(S, later), COROUTINE_SUSPEND);
}

/* ---- A coroutine that deletes itself ----------------------------------------------- */

/* Deletes itself, notes that it went on, then waits as it is told to (or
 * returns), and notes whether it came back and what it was told. */
enum then { THEN_YIELD, THEN_TRY_YIELD, THEN_RETURN };

struct self_deleter {
	enum then then;
	int went_on;
	int came_back;
	int told;
};

static void delete_itself(struct schedule *S, void *ud)
{
	struct self_deleter *d = (struct self_deleter *)ud;
	int label CLEANUP(note_cleanup) = 10;
	coroutine_delete(S, coroutine_running(S));
	d->went_on = coroutine_status(S, coroutine_running(S)) == COROUTINE_RUNNING;
	if (d->then == THEN_YIELD) {
		coroutine_yield(S);
		d->came_back = 1;
	} else if (d->then == THEN_TRY_YIELD) {
		d->told = coroutine_try_yield(S);
	}
}

static struct self_deleter run_self_deleter(struct schedule *S, enum then then, int *id)
{
	struct self_deleter d;
	memset(&d, 0, sizeof d);
	d.then = then;
	d.told = -2;
	*id = coroutine_new(S, delete_itself, &d);
	forget_cleanups();
	coroutine_resume(S, *id);
	return d;
}

static void test_coroutine_that_deletes_itself_goes_on_and_is_unwound_at_its_yield(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int id;
	struct self_deleter d = run_self_deleter(S, THEN_YIELD, &id);
	assert_int_equal(d.went_on, 1);
	assert_int_equal(d.came_back, 0);
	assert_int_equal(ran_count, 1);
	assert_int_equal(ran[0], 10);
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
}

static void test_coroutine_that_deletes_itself_is_told_ending_at_its_try_yield(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int id;
	struct self_deleter d = run_self_deleter(S, THEN_TRY_YIELD, &id);
	assert_int_equal(d.went_on, 1);
	assert_int_equal(d.told, COROUTINE_ENDING);
	assert_int_equal(ran_count, 1);
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
}

/* It returns before any wait: it ends as any coroutine that returns, and
 * the next coroutine in its slot is not taken for it. */
static void test_coroutine_that_deletes_itself_then_returns_ends_as_usual(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int id, next;
	struct self_deleter d = run_self_deleter(S, THEN_RETURN, &id);
	assert_int_equal(d.went_on, 1);
	assert_int_equal(ran_count, 1);
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
	next = coroutine_new(S, three_frames, NULL);
	assert_int_equal(next, id);
	coroutine_resume(S, next);
	assert_int_equal(coroutine_status(S, next), COROUTINE_SUSPEND);
	assert_int_equal(ran_count, 1);
}

/* ---- Ids after a delete: the original's rule -------------------------------- */

/*
 * A model of the original's ids: when all cap slots are taken the slots
 * double and the id is the old cap; otherwise it is the first empty slot
 * scanning (nco + i) % cap.  A delete empties a slot, as a coroutine that
 * finishes does.  Random news, resumes (each coroutine finishes after a
 * number of yields of its own, and may be told to delete another, or
 * itself, first) and deletes from main, of suspended and never-started
 * coroutines, are played against the library and the model.
 */
#define MODEL_SLOTS 256

struct model {
	int cap, nco;
	int used[MODEL_SLOTS];
	int yields_left[MODEL_SLOTS];
};

static int model_new(struct model *m)
{
	int i, id = -1;
	if (m->nco >= m->cap) {
		id = m->cap;
		m->cap *= 2;
	} else {
		for (i = 0; i < m->cap && id < 0; i++)
			if (!m->used[(m->nco + i) % m->cap])
				id = (m->nco + i) % m->cap;
	}
	m->used[id] = 1;
	m->nco++;
	return id;
}

static void model_free(struct model *m, int id)
{
	if (!m->used[id])
		return;
	m->used[id] = 0;
	m->nco--;
}

/* What a coroutine of the model does at each resume: deletes victim, if
 * any, then yields, or returns once it has yielded yields times. */
struct plan {
	int yields;
	int victim; /* -1: none */
};

static void follow_the_plan(struct schedule *S, void *ud)
{
	struct plan *p = (struct plan *)ud;
	for (;;) {
		if (p->victim >= 0)
			coroutine_delete(S, p->victim);
		p->victim = -1;
		if (p->yields-- == 0)
			return;
		coroutine_yield(S);
	}
}

/* Resumes id, told to delete victim (or -1) first, in the library and the model. */
static void resume_in_both(struct schedule *S, struct model *m, struct plan *p, int id, int victim)
{
	p->victim = victim;
	coroutine_resume(S, id);
	if (--m->yields_left[id] == 0)
		model_free(m, id);
	if (victim >= 0)
		model_free(m, victim); /* ended before the resume returned */
}

static void test_ids_after_deletes_follow_the_original_rule(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	static struct model m;
	static struct plan plans[MODEL_SLOTS];
	uint32_t seed = 12345;
	int step, live_ids = 0, asked_inside = 0;
	int wrong_id_at = -1, wrong_status_at = -1; /* the first step that disagreed */
	memset(&m, 0, sizeof m);
	m.cap = 16;
	for (step = 0; step < 4000; step++) {
		unsigned what = random_number(&seed, 10);
		int id = (int)random_number(&seed, (unsigned)m.cap);
		int victim = (int)random_number(&seed, (unsigned)m.cap);
		if (what < 4 && m.nco < 100) {
			int got, want = model_new(&m);
			plans[want].yields = (int)random_number(&seed, 4);
			m.yields_left[want] = plans[want].yields + 1;
			got = coroutine_new(S, follow_the_plan, &plans[want]);
			if (got != want && wrong_id_at < 0)
				wrong_id_at = step;
			live_ids++;
		} else if (what < 6 && m.used[id]) {
			resume_in_both(S, &m, &plans[id], id, -1);
		} else if (what < 7 && m.used[id]) {
			resume_in_both(S, &m, &plans[id], id, victim); /* sometimes itself, or an empty slot */
			asked_inside++;
		} else if (m.used[id]) {
			coroutine_delete(S, id);
			model_free(&m, id);
		}
		if (m.used[id] != (coroutine_status(S, id) != COROUTINE_DEAD) && wrong_status_at < 0)
			wrong_status_at = step;
		if (m.used[victim] != (coroutine_status(S, victim) != COROUTINE_DEAD) && wrong_status_at < 0)
			wrong_status_at = step;
	}
	assert_int_equal(wrong_id_at, -1);
	assert_int_equal(wrong_status_at, -1);
	assert_true(live_ids > 1000);
	assert_true(asked_inside > 100);
}

/* ---- The others, untouched ----------------------------------------------------- */

/* Four holders, each keeping its data across yields; b is deleted while
 * another owns the run stack, d while it owns it: the rest resume, find
 * their data, and finish. */
static void test_other_coroutines_keep_their_data_and_finish(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	struct holder h[4];
	int id[4], i, round;
	for (i = 0; i < 4; i++) {
		h[i] = holder_of(3000 + 1000 * (size_t)i, 7u + (uint32_t)i, 3);
		id[i] = coroutine_new(S, hold, &h[i]);
		coroutine_resume(S, id[i]);
	}
	forget_cleanups();
	coroutine_delete(S, id[1]); /* d owns the run stack */
	coroutine_delete(S, id[3]); /* now nobody does */
	assert_int_equal(ran_count, 2);
	assert_int_equal(ran[0], id[1]);
	assert_int_equal(ran[1], id[3]);
	for (round = 0; round < 3; round++) {
		coroutine_resume(S, id[0]);
		coroutine_resume(S, id[2]);
	}
	assert_int_equal(h[0].finished + h[2].finished, 2);
	assert_int_equal(h[0].corrupt + h[2].corrupt, 0);
	assert_int_equal(h[1].finished + h[3].finished, 0);
	assert_int_equal(coroutine_status(S, id[0]), COROUTINE_DEAD);
	assert_int_equal(coroutine_status(S, id[2]), COROUTINE_DEAD);
}

static void test_delete_the_run_stacks_owner(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	struct holder h = holder_of(2000, 99, 2);
	int waiting = coroutine_new(S, hold, &h);
	int owner = coroutine_new(S, three_frames, NULL);
	coroutine_resume(S, waiting);
	coroutine_resume(S, owner); /* last to run: its bytes are on the run stack */
	forget_cleanups();
	coroutine_delete(S, owner);
	assert_int_equal(ran_count, 3);
	assert_int_equal(ran[0], 3);
	coroutine_resume(S, waiting);
	coroutine_resume(S, waiting);
	assert_int_equal(h.finished, 1);
	assert_int_equal(h.corrupt, 0);
}

/* Once the run stack's owner is deleted, its bytes there are nobody's: a
 * copy made next, whose block malloc may well place where the deleted
 * one's was, must get its own bytes put back, not run on those.  Not under
 * ASan, which keeps hold's array in a fake stack (a clone refuses those)
 * and keeps malloc from handing the freed block out again. */
#if !defined(__SANITIZE_ADDRESS__) && !ASAN_BY_FEATURE
#define TEST_COPY_AFTER_DELETE 1
static void test_a_copy_made_after_deleting_the_run_stacks_owner_runs_on_its_own_bytes(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	struct holder kept = holder_of(2000, 11, 1), deleted = holder_of(2000, 22, 1);
	int original = coroutine_new(S, hold, &kept);
	int owner = coroutine_new(S, hold, &deleted);
	int copy;
	coroutine_resume(S, original);
	coroutine_resume(S, owner); /* last to run: its bytes are on the run stack */
	coroutine_delete(S, owner);
	copy = coroutine_clone(S, original);
	assert_true(copy >= 0);
	coroutine_resume(S, copy);
	assert_int_equal(coroutine_status(S, copy), COROUTINE_DEAD);
	assert_int_equal(kept.finished, 1);
	assert_int_equal(kept.corrupt, 0);
	assert_int_equal(deleted.finished, 0);
	coroutine_resume(S, original);
	assert_int_equal(kept.corrupt, 0);
}
#endif

static void test_delete_a_coroutine_whose_bytes_are_in_its_block(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	struct holder h = holder_of(2000, 98, 2);
	int saved = coroutine_new(S, three_frames, NULL);
	int owner = coroutine_new(S, hold, &h);
	coroutine_resume(S, saved);
	coroutine_resume(S, owner); /* saved's bytes are in its block only */
	forget_cleanups();
	coroutine_delete(S, saved);
	assert_int_equal(ran_count, 3);
	assert_int_equal(ran[0], 3);
	assert_int_equal(ran[2], 1);
	coroutine_resume(S, owner);
	coroutine_resume(S, owner);
	assert_int_equal(h.finished, 1);
	assert_int_equal(h.corrupt, 0);
}

/* ---- Deep and shallow slices ----------------------------------------------------- */

/* Where deep's array escapes to: clang keeps all of an array whose address
 * escapes, and splits one that does not into the bytes it uses. */
static volatile char *volatile bulk_seen;

/* Frames of several KiB each, a cleanup in each. */
NOINLINE static void deep(struct schedule *S, int depth)
{
	volatile char bulk[3000];
	int label CLEANUP(note_cleanup) = depth;
	bulk_seen = bulk;
	bulk[0] = (char)depth;
	if (depth > 0)
		deep(S, depth - 1);
	else
		coroutine_yield(S);
	label = -bulk[0];
}

static void four_deep_frames(struct schedule *S, void *ud)
{
	(void)ud;
	deep(S, 3);
}

static void test_delete_a_deep_slice(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int id = coroutine_new(S, four_deep_frames, NULL);
	coroutine_resume(S, id);
#if !defined(__SANITIZE_ADDRESS__) && !ASAN_BY_FEATURE /* ASan may keep the frames' arrays off the run stack */
	assert_true(coroutine_stack_size(S, id) > 12000);
#endif
	coroutine_resume(S, coroutine_new(S, finish_at_once, NULL)); /* the run stack changes hands */
	forget_cleanups();
	coroutine_delete(S, id);
	assert_int_equal(ran_count, 4);
	assert_int_equal(ran[0], 0);
	assert_int_equal(ran[3], 3);
}

/* Yields from its own frame: with the assembly switch the slice is the
 * shallow kind (SHALLOW_SLICE in coroutine.cpp), saved and put back with
 * no stack frame of the library's. */
static void yield_shallow(struct schedule *S, void *ud)
{
	int label CLEANUP(note_cleanup) = 7;
	(void)ud;
	coroutine_yield(S);
	label = -7;
}

static void test_delete_a_shallow_slice(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int id = coroutine_new(S, yield_shallow, NULL);
	int other = coroutine_new(S, yield_shallow, NULL);
	coroutine_resume(S, id);
	coroutine_resume(S, other);
	forget_cleanups();
#if COROUTINE_ASM && defined(__OPTIMIZE__) && !defined(__SANITIZE_ADDRESS__) && !ASAN_BY_FEATURE && !defined(_WIN32)
	assert_true(coroutine_stack_size(S, id) <= 96); /* the shallow kind (Windows' frames are larger) */
#endif
	coroutine_delete(S, id);  /* not the run stack's owner */
	coroutine_delete(S, other); /* the owner */
	assert_int_equal(ran_count, 2);
	assert_int_equal(ran[0], 7);
	assert_int_equal(ran[1], 7);
}

/* ---- A coroutine of another schedule deletes: it is that schedule's main ----------- */

struct nested {
	struct schedule *inner;
	int id;
};

static void delete_in_the_inner_schedule(struct schedule *S, void *ud)
{
	struct nested *n = (struct nested *)ud;
	int label CLEANUP(note_cleanup) = 100;
	coroutine_delete(n->inner, n->id);
	coroutine_yield(S);
}

static void test_a_coroutine_deletes_in_a_schedule_of_its_own(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	struct nested n;
	int outer;
	n.inner = coroutine_open();
	n.id = coroutine_new(n.inner, three_frames, NULL);
	coroutine_resume(n.inner, n.id);
	outer = coroutine_new(S, delete_in_the_inner_schedule, &n);
	forget_cleanups();
	coroutine_resume(S, outer);
	assert_int_equal(ran_count, 3);
	assert_int_equal(coroutine_status(n.inner, n.id), COROUTINE_DEAD);
	coroutine_delete(S, outer);
	assert_int_equal(ran_count, 4);
	assert_int_equal(ran[3], 100);
	coroutine_close(n.inner);
}

/* ---- Closing: suspended coroutines are deleted ---------------------------------- */

static void test_close_deletes_suspended_coroutines_in_id_order(void **state)
{
	struct schedule *S = coroutine_open();
	int starts = 0, i;
	(void)state;
	for (i = 0; i < 3; i++)
		coroutine_new(S, note_own_id, NULL);
	coroutine_new(S, count_starts, &starts); /* 3: never started */
	coroutine_resume(S, 2);
	coroutine_resume(S, 0);
	coroutine_resume(S, 1);
	forget_cleanups();
	coroutine_close(S);
	assert_int_equal(ran_count, 3);
	assert_int_equal(ran[0], 0);
	assert_int_equal(ran[1], 1);
	assert_int_equal(ran[2], 2);
	assert_int_equal(starts, 0);
}

/* One coroutine waits on another thread, one here: close, here, deletes
 * the one here and frees the other without running it. */
struct resume_call {
	struct schedule *S;
	int id;
};

static void resume_there(void *arg)
{
	struct resume_call *c = (struct resume_call *)arg;
	coroutine_resume(c->S, c->id);
}

static void test_close_frees_coroutines_suspended_on_another_thread_without_running_them(void **state)
{
	struct schedule *S = coroutine_open();
	struct resume_call there;
	int here;
	(void)state;
	there.S = S;
	there.id = coroutine_new(S, note_own_id, NULL);
	here = coroutine_new(S, note_own_id, NULL);
	assert_true(run_thread(resume_there, &there));
	coroutine_resume(S, here);
	forget_cleanups();
	coroutine_close(S);
	assert_int_equal(ran_count, 1);
	assert_int_equal(ran[0], here);
}

/* The schedule moves to another thread, where a coroutine starts and
 * waits; closed back here, it ends the one that waits here all the same
 * (its mark says "suspended elsewhere", but elsewhere is here), and frees
 * the other without running it. */
static void test_close_ends_the_coroutines_of_its_thread_after_the_schedule_moved_away(void **state)
{
	struct schedule *S = coroutine_open();
	struct resume_call there;
	int here;
	(void)state;
	here = coroutine_new(S, note_own_id, NULL);
	there.S = S;
	there.id = coroutine_new(S, note_own_id, NULL);
	coroutine_resume(S, here);
	assert_true(run_thread(resume_there, &there)); /* the schedule moves there */
	forget_cleanups();
	coroutine_close(S);
	assert_int_equal(ran_count, 1);
	assert_int_equal(ran[0], here);
}

/* A cleanup that makes a coroutine while close unwinds: it never starts. */
static void make_one(struct schedule **S)
{
	coroutine_new(*S, count_starts, &ran_count);
}

static void make_one_when_deleted(struct schedule *S, void *ud)
{
	struct schedule *own CLEANUP(make_one) = S;
	(void)ud;
	coroutine_yield(S);
	own = NULL;
}

static void test_coroutines_made_while_close_unwinds_never_start(void **state)
{
	struct schedule *S = coroutine_open();
	int i;
	(void)state;
	for (i = 0; i < 16; i++) /* the slots are full: the new ones double them */
		coroutine_resume(S, coroutine_new(S, make_one_when_deleted, NULL));
	forget_cleanups();
	coroutine_close(S);
	assert_int_equal(ran_count, 0); /* count_starts would have counted */
}

/* ---- Misuse, each in a child process ----------------------------------------- */

static struct schedule *child_schedule;

static void delete_here(void *arg)
{
	(void)arg;
	coroutine_delete(child_schedule, 0);
}

static void delete_on_another_thread(void)
{
	child_schedule = coroutine_open();
	coroutine_resume(child_schedule, coroutine_new(child_schedule, yield_forever, NULL));
	run_thread(delete_here, NULL);
}

/* Coroutine 1 asks to delete 0, which waits on another thread. */
static void delete_coroutine_0(struct schedule *S, void *ud)
{
	(void)ud;
	coroutine_delete(S, 0);
}

static void resume_0_here(void *arg)
{
	(void)arg;
	coroutine_resume(child_schedule, 0);
}

static void delete_asked_inside_of_a_coroutine_suspended_on_another_thread(void)
{
	child_schedule = coroutine_open();
	coroutine_new(child_schedule, yield_forever, NULL);
	run_thread(resume_0_here, NULL);
	coroutine_resume(child_schedule, coroutine_new(child_schedule, delete_coroutine_0, NULL));
}

/* While coroutine 1 runs, another thread deletes 0. */
static void delete_from_another_thread(struct schedule *S, void *ud)
{
	(void)S, (void)ud;
	run_thread(delete_here, NULL);
}

static void delete_on_another_thread_while_a_coroutine_runs(void)
{
	child_schedule = coroutine_open();
	coroutine_resume(child_schedule, coroutine_new(child_schedule, yield_forever, NULL));
	coroutine_resume(child_schedule, coroutine_new(child_schedule, delete_from_another_thread, NULL));
}

static void delete_out_of_range(void)
{
	coroutine_delete(coroutine_open(), 16);
}

static void delete_in_no_schedule(void)
{
	coroutine_delete(NULL, 0);
}

static void resume_another(int *label)
{
	(void)label;
	coroutine_resume(child_schedule, 0);
}

static void wait_with_a_cleanup_that_resumes(struct schedule *S, void *ud)
{
	int label CLEANUP(resume_another) = 0;
	(void)ud;
	coroutine_yield(S);
	label = 1;
}

static void cleanup_that_resumes(void)
{
	child_schedule = coroutine_open();
	coroutine_resume(child_schedule, coroutine_new(child_schedule, yield_forever, NULL));
	coroutine_resume(child_schedule, coroutine_new(child_schedule, wait_with_a_cleanup_that_resumes, NULL));
	coroutine_delete(child_schedule, 1);
}

static const struct child_case child_cases[] = {
	{ "delete-on-another-thread", delete_on_another_thread },
	{ "delete-asked-inside-of-a-coroutine-suspended-on-another-thread",
	  delete_asked_inside_of_a_coroutine_suspended_on_another_thread },
	{ "delete-on-another-thread-while-a-coroutine-runs", delete_on_another_thread_while_a_coroutine_runs },
	{ "delete-out-of-range", delete_out_of_range },
	{ "delete-in-no-schedule", delete_in_no_schedule },
	{ "cleanup-that-resumes", cleanup_that_resumes },
	{ NULL, NULL }
};

static void test_delete_of_a_coroutine_suspended_on_another_thread_aborts(void **state)
{
	(void)state;
	assert_child_aborts_with(child_cases, delete_on_another_thread,
				 "coroutine_delete: coroutine 0 was suspended on another thread; delete it on that thread");
}

static void test_delete_asked_inside_of_a_coroutine_suspended_on_another_thread_aborts(void **state)
{
	(void)state;
	assert_child_aborts_with(child_cases, delete_asked_inside_of_a_coroutine_suspended_on_another_thread,
				 "coroutine_delete: coroutine 0 was suspended on another thread; delete it on that thread");
}

static void test_delete_on_another_thread_while_a_coroutine_runs_aborts(void **state)
{
	(void)state;
	assert_child_aborts_with(child_cases, delete_on_another_thread_while_a_coroutine_runs,
				 "coroutine_delete: called on another thread while coroutine 1 runs");
}

static void test_delete_with_id_out_of_range_aborts(void **state)
{
	(void)state;
	assert_child_aborts_with(child_cases, delete_out_of_range, "coroutine_delete: id 16 is out of range [0, 16)");
}

static void test_delete_in_a_null_schedule_aborts(void **state)
{
	(void)state;
	assert_child_aborts_with(child_cases, delete_in_no_schedule, "coroutine_delete: the schedule is NULL");
}

static void test_cleanup_that_resumes_during_a_delete_aborts(void **state)
{
	(void)state;
	assert_child_aborts_with(child_cases, cleanup_that_resumes,
				 "coroutine_resume: called from inside coroutine 1, which is being deleted; "
				 "only the main program may resume");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		schedule_test(test_delete_runs_cleanups_innermost_first_once),
		schedule_test(test_delete_empties_the_slot),
		schedule_test(test_delete_frees_a_coroutine_that_never_started),
		schedule_test(test_delete_leaves_an_empty_slot_as_it_is),
		schedule_test(test_coroutine_running_in_a_cleanup_is_the_deleted_coroutine),
		schedule_test(test_cleanup_that_waits_during_a_delete_leaves_its_coroutine_to_be_freed),
		schedule_test(test_delete_tells_a_coroutine_waiting_in_try_yield_it_is_ending),
		cmocka_unit_test(test_close_tells_coroutines_waiting_in_try_yield_they_are_ending),
		schedule_test(test_try_yield_that_waits_again_after_ending_is_unwound_there),
		schedule_test(test_script_that_deletes_another_still_finds_it_there),
		schedule_test(test_delete_asked_by_a_script_that_yields_is_done_before_the_resume_returns),
		schedule_test(test_delete_asked_by_a_script_that_returns_is_done_before_the_resume_returns),
		schedule_test(test_delete_asked_inside_frees_a_coroutine_that_never_started),
		schedule_test(test_deletes_asked_inside_are_done_in_id_order),
		schedule_test(test_delete_asked_twice_ends_the_coroutine_once),
		schedule_test(test_cleanup_that_deletes_its_own_coroutine_while_it_ends_changes_nothing),
		schedule_test(test_coroutine_that_deletes_itself_goes_on_and_is_unwound_at_its_yield),
		schedule_test(test_coroutine_that_deletes_itself_is_told_ending_at_its_try_yield),
		schedule_test(test_coroutine_that_deletes_itself_then_returns_ends_as_usual),
		schedule_test(test_ids_after_deletes_follow_the_original_rule),
		schedule_test(test_other_coroutines_keep_their_data_and_finish),
		schedule_test(test_delete_the_run_stacks_owner),
#ifdef TEST_COPY_AFTER_DELETE
		schedule_test(test_a_copy_made_after_deleting_the_run_stacks_owner_runs_on_its_own_bytes),
#endif
		schedule_test(test_delete_a_coroutine_whose_bytes_are_in_its_block),
		schedule_test(test_delete_a_deep_slice),
		schedule_test(test_delete_a_shallow_slice),
		schedule_test(test_a_coroutine_deletes_in_a_schedule_of_its_own),
		cmocka_unit_test(test_close_deletes_suspended_coroutines_in_id_order),
		cmocka_unit_test(test_close_frees_coroutines_suspended_on_another_thread_without_running_them),
		cmocka_unit_test(test_close_ends_the_coroutines_of_its_thread_after_the_schedule_moved_away),
		cmocka_unit_test(test_coroutines_made_while_close_unwinds_never_start),
		cmocka_unit_test(test_delete_of_a_coroutine_suspended_on_another_thread_aborts),
		cmocka_unit_test(test_delete_asked_inside_of_a_coroutine_suspended_on_another_thread_aborts),
		cmocka_unit_test(test_delete_on_another_thread_while_a_coroutine_runs_aborts),
		cmocka_unit_test(test_delete_with_id_out_of_range_aborts),
		cmocka_unit_test(test_delete_in_a_null_schedule_aborts),
		cmocka_unit_test(test_cleanup_that_resumes_during_a_delete_aborts),
	};
	if (argc == 3 && strcmp(argv[1], "--child") == 0)
		return run_named_case(child_cases, argv[2]);
	return run_suite(tests);
}
