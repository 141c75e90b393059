/*
 * test_delete.c - coroutine_delete, and what coroutine_close does with
 * suspended coroutines, seen from C: a deleted coroutine's cleanup
 * attributes run, innermost first, once; its slot is emptied and ids are
 * then handed out as the original hands them out; the other coroutines
 * are untouched; misuse stops with one line.  C++ destructors, and what a
 * catch (...) sees, are test_delete_cxx.cpp's.
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

/* Waits in coroutine_try_yield, which the unwinding starts from too. */
static void try_yield_with_a_cleanup(struct schedule *S, void *ud)
{
	int label CLEANUP(note_cleanup) = 9;
	(void)ud;
	while (coroutine_try_yield(S) != 0)
		continue;
	label = -9;
}

static void test_delete_of_a_coroutine_waiting_in_try_yield_runs_its_cleanups(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int id = coroutine_new(S, try_yield_with_a_cleanup, NULL);
	coroutine_resume(S, id);
	forget_cleanups();
	coroutine_delete(S, id);
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

/* ---- Ids after a delete: the original's rule -------------------------------- */

/*
 * A model of the original's ids: when all cap slots are taken the slots
 * double and the id is the old cap; otherwise it is the first empty slot
 * scanning (nco + i) % cap.  A delete empties a slot, as a coroutine that
 * finishes does.  Random news, resumes (each coroutine finishes after a
 * number of yields of its own) and deletes, of suspended and never-started
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
	m->used[id] = 0;
	m->nco--;
}

/* Yields as many times as *ud says, then returns. */
static void yield_a_while(struct schedule *S, void *ud)
{
	int n = *(int *)ud;
	while (n-- > 0)
		coroutine_yield(S);
}

static void test_ids_after_deletes_follow_the_original_rule(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	static struct model m;
	static int yields[MODEL_SLOTS];
	uint32_t seed = 12345;
	int step, live_ids = 0;
	int wrong_id_at = -1, wrong_status_at = -1; /* the first step that disagreed */
	memset(&m, 0, sizeof m);
	m.cap = 16;
	for (step = 0; step < 4000; step++) {
		unsigned what = random_number(&seed, 10);
		int id = (int)random_number(&seed, (unsigned)m.cap);
		if (what < 4 && m.nco < 100) {
			int got, want = model_new(&m);
			yields[want] = (int)random_number(&seed, 4);
			m.yields_left[want] = yields[want] + 1;
			got = coroutine_new(S, yield_a_while, &yields[want]);
			if (got != want && wrong_id_at < 0)
				wrong_id_at = step;
			live_ids++;
		} else if (what < 7 && m.used[id]) {
			coroutine_resume(S, id);
			if (--m.yields_left[id] == 0)
				model_free(&m, id);
		} else if (m.used[id]) {
			coroutine_delete(S, id);
			model_free(&m, id);
		}
		if (m.used[id] != (coroutine_status(S, id) != COROUTINE_DEAD) && wrong_status_at < 0)
			wrong_status_at = step;
	}
	assert_int_equal(wrong_id_at, -1);
	assert_int_equal(wrong_status_at, -1);
	assert_true(live_ids > 1000);
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

static void delete_the_other(struct schedule *S, void *ud)
{
	(void)ud;
	coroutine_delete(S, 1);
}

static void delete_from_inside_a_coroutine(void)
{
	struct schedule *S = coroutine_open();
	coroutine_new(S, delete_the_other, NULL);
	coroutine_new(S, yield_forever, NULL);
	coroutine_resume(S, 1);
	coroutine_resume(S, 0);
}

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

static void delete_out_of_range(void)
{
	coroutine_delete(coroutine_open(), 16);
}

static void delete_in_no_schedule(void)
{
	coroutine_delete(NULL, 0);
}

static void yield_again(int *label)
{
	(void)label;
	coroutine_yield(child_schedule);
}

static void wait_with_a_cleanup_that_yields(struct schedule *S, void *ud)
{
	int label CLEANUP(yield_again) = 0;
	(void)ud;
	coroutine_yield(S);
	label = 1;
}

static void cleanup_that_yields(void)
{
	child_schedule = coroutine_open();
	coroutine_resume(child_schedule, coroutine_new(child_schedule, wait_with_a_cleanup_that_yields, NULL));
	coroutine_delete(child_schedule, 0);
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
	{ "delete-from-inside-a-coroutine", delete_from_inside_a_coroutine },
	{ "delete-on-another-thread", delete_on_another_thread },
	{ "delete-out-of-range", delete_out_of_range },
	{ "delete-in-no-schedule", delete_in_no_schedule },
	{ "cleanup-that-yields", cleanup_that_yields },
	{ "cleanup-that-resumes", cleanup_that_resumes },
	{ NULL, NULL }
};

static void test_delete_from_inside_a_coroutine_aborts(void **state)
{
	(void)state;
	assert_child_aborts_with(child_cases, delete_from_inside_a_coroutine,
				 "coroutine_delete: called from inside coroutine 0; only the main program may delete");
}

static void test_delete_of_a_coroutine_suspended_on_another_thread_aborts(void **state)
{
	(void)state;
	assert_child_aborts_with(child_cases, delete_on_another_thread,
				 "coroutine_delete: coroutine 0 was suspended on another thread; delete it on that thread");
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

static void test_cleanup_that_yields_during_a_delete_aborts(void **state)
{
	(void)state;
	assert_child_aborts_with(child_cases, cleanup_that_yields,
				 "coroutine_delete: coroutine 0 yielded while it was being unwound (from a destructor?)");
}

static void test_cleanup_that_resumes_during_a_delete_aborts(void **state)
{
	(void)state;
	assert_child_aborts_with(child_cases, cleanup_that_resumes,
				 "coroutine_resume: called from inside coroutine 1, which coroutine_delete is unwinding; "
				 "only the main program may resume");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		schedule_test(test_delete_runs_cleanups_innermost_first_once),
		schedule_test(test_delete_empties_the_slot),
		schedule_test(test_delete_frees_a_coroutine_that_never_started),
		schedule_test(test_delete_leaves_an_empty_slot_as_it_is),
		schedule_test(test_delete_of_a_coroutine_waiting_in_try_yield_runs_its_cleanups),
		schedule_test(test_coroutine_running_in_a_cleanup_is_the_deleted_coroutine),
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
		cmocka_unit_test(test_coroutines_made_while_close_unwinds_never_start),
		cmocka_unit_test(test_delete_from_inside_a_coroutine_aborts),
		cmocka_unit_test(test_delete_of_a_coroutine_suspended_on_another_thread_aborts),
		cmocka_unit_test(test_delete_with_id_out_of_range_aborts),
		cmocka_unit_test(test_delete_in_a_null_schedule_aborts),
		cmocka_unit_test(test_cleanup_that_yields_during_a_delete_aborts),
		cmocka_unit_test(test_cleanup_that_resumes_during_a_delete_aborts),
	};
	if (argc == 3 && strcmp(argv[1], "--child") == 0)
		return run_named_case(child_cases, argv[2]);
	return run_suite(tests);
}
