/*
 * test_clone.c - coroutine_clone.  A copy waits exactly where its original
 * waits, with its own copy of the original's stack and registers, and the
 * two go on independently from there: each sees its own locals change
 * (their values: a suspended coroutine's locals have no address to
 * compare), a copy of a copy too, of the run stack's owner and of a
 * coroutine whose bytes wait in its block, of deep slices (several KiB)
 * and shallow ones (the assembly switch's quick path), and a copy goes on
 * after its original is gone.  A copy of a coroutine that never ran starts
 * the same function with the same ud.  A copy rounds as its original did
 * when it was copied (ucontext keeps the FP state behind a pointer into the
 * context).  Ids are those coroutine_new would give; a coroutine may copy
 * another; a backtracking search clones at every choice, thousands of
 * times, and finds what a plain recursive search finds.  Misuse stops with
 * its line, in a child process.
 *
 * The coroutines that are copied keep their locals in registers and in
 * their frames' spills, and never take a local's address: under
 * AddressSanitizer with detect_stack_use_after_return=1 such a local lives
 * in ASan's fake stack, off the run stack, and a copy is refused (the last
 * tests).  Out of memory: test_alloc.c.  C++ exceptions:
 * test_clone_exceptions.cpp.
 *
 * Built with -DTEST_PLAIN it needs no CMocka (plain_suite.h): so it runs
 * where CMocka does not (riscv64, musl, Windows under wine, WebAssembly).
 */
#ifdef TEST_PLAIN
#include "plain_suite.h"
#else
#include "support.h"
#endif
#include "child.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__wasm__)
#define HAS_CHILDREN_AND_THREADS 0 /* see driver.c */
#define HAS_ROUNDING_MODES 0       /* WebAssembly rounds to nearest only */
#else
#define HAS_CHILDREN_AND_THREADS 1
#define HAS_ROUNDING_MODES 1
#include <fenv.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* A test that cannot check anything here says why and ends: CMocka counts
 * it skipped; without CMocka it passes, as driver.c's checks do. */
#ifdef TEST_PLAIN
#define skip_because(why) do { printf("     %s\n", why); return; } while (0)
#else
#define skip_because(why) do { print_message("%s\n", why); skip(); } while (0)
#endif

enum { MAX_IDS = 64 };

/* ---- A copy of a coroutine that never ran ---------------------------------- */

struct starts {
	int runs;
	int id[4];
	void *ud[4];
};

static void note_start(struct schedule *S, void *ud)
{
	struct starts *s = (struct starts *)ud;
	s->id[s->runs] = coroutine_running(S);
	s->ud[s->runs++] = ud;
}

static void test_copy_of_a_new_coroutine_starts_the_same_function_with_the_same_ud(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	struct starts s;
	int id, copy;
	memset(&s, 0, sizeof s);
	id = coroutine_new(S, note_start, &s);
	copy = coroutine_clone(S, id);
	assert_int_equal(copy, 1);
	assert_int_equal(coroutine_status(S, copy), COROUTINE_READY);
	assert_int_equal(coroutine_stack_size(S, copy), 0);
	coroutine_resume(S, copy);
	assert_int_equal(s.runs, 1);
	assert_int_equal(s.id[0], copy);
	assert_true(s.ud[0] == &s);
	assert_int_equal(coroutine_status(S, copy), COROUTINE_DEAD);
	assert_int_equal(coroutine_status(S, id), COROUTINE_READY);
	coroutine_resume(S, id);
	assert_int_equal(s.runs, 2);
	assert_int_equal(s.id[1], id);
	assert_true(s.ud[1] == &s);
}

/* ---- Copies that go on independently ---------------------------------------- */

/* What main tells each coroutine (its step, 0 to finish), and what each
 * reports after each resume: its count.  A coroutine asks for its id after
 * every yield: a copy's is not its original's. */
struct counters {
	long step[MAX_IDS];
	long count[MAX_IDS];
	int finished[MAX_IDS];
};

/* Adds its step to a count kept in a local at each resume, until its step is 0. */
static void count(struct schedule *S, void *ud)
{
	struct counters *c = (struct counters *)ud;
	long n = 0;
	int id;
	while (id = coroutine_running(S), c->step[id] != 0) {
		n += c->step[id];
		c->count[id] = n;
		coroutine_yield(S);
	}
	c->finished[id] = 1;
}

static void resume_with_step(struct schedule *S, struct counters *c, int id, long step)
{
	c->step[id] = step;
	coroutine_resume(S, id);
}

/* n coroutines ids[] whose counts are count[] now go on, resumed in turn
 * with step[] each, ROUNDS times; then each is made to finish.  Whether
 * each counted its own (0), else the first that did not, plus 1. */
enum { ROUNDS = 4 };
static int counts_go_on_independently(struct schedule *S, struct counters *c, const int *ids, const long *step, int n)
{
	long expected[8];
	int i, round;
	for (i = 0; i < n; i++)
		expected[i] = c->count[ids[i]];
	for (round = 0; round < ROUNDS; round++) {
		for (i = 0; i < n; i++) {
			resume_with_step(S, c, ids[i], step[i]);
			expected[i] += step[i];
			if (c->count[ids[i]] != expected[i] || coroutine_status(S, ids[i]) != COROUTINE_SUSPEND)
				return i + 1;
		}
	}
	for (i = 0; i < n; i++) {
		resume_with_step(S, c, ids[i], 0);
		if (!c->finished[ids[i]] || coroutine_status(S, ids[i]) != COROUTINE_DEAD)
			return i + 1;
	}
	return 0;
}

/* A suspended coroutine counting by 1, its count 2. */
static int counting_coroutine(struct schedule *S, struct counters *c)
{
	int id = coroutine_new(S, count, c);
	resume_with_step(S, c, id, 1);
	resume_with_step(S, c, id, 1);
	return id;
}

/* The original was the last to run: its bytes are on the run stack. */
static void test_copy_of_the_run_stacks_owner_goes_on_independently(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	struct counters c;
	int ids[2];
	long steps[2] = { 1, 100 };
	memset(&c, 0, sizeof c);
	ids[0] = counting_coroutine(S, &c);
	ids[1] = coroutine_clone(S, ids[0]);
	assert_int_equal(ids[1], 1);
	assert_int_equal(coroutine_status(S, ids[1]), COROUTINE_SUSPEND);
	assert_int_equal(coroutine_stack_size(S, ids[1]), coroutine_stack_size(S, ids[0]));
	c.count[ids[1]] = c.count[ids[0]]; /* what it reports until it runs */
	assert_int_equal(counts_go_on_independently(S, &c, ids, steps, 2), 0);
	assert_int_equal(c.count[ids[0]], 2 + ROUNDS * 1);
	assert_int_equal(c.count[ids[1]], 2 + ROUNDS * 100);
}

/* The same, the copy resumed first. */
static void test_copy_of_the_run_stacks_owner_goes_on_first(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	struct counters c;
	int ids[2];
	long steps[2] = { 100, 1 };
	memset(&c, 0, sizeof c);
	ids[1] = counting_coroutine(S, &c);
	ids[0] = coroutine_clone(S, ids[1]);
	c.count[ids[0]] = c.count[ids[1]];
	assert_int_equal(counts_go_on_independently(S, &c, ids, steps, 2), 0);
	assert_int_equal(c.count[ids[0]], 2 + ROUNDS * 100);
	assert_int_equal(c.count[ids[1]], 2 + ROUNDS * 1);
}

/* Another coroutine ran since the original yielded: its bytes wait in its block. */
static void test_copy_of_a_coroutine_whose_bytes_wait_in_its_block_goes_on_independently(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	struct counters c;
	int ids[3];
	long steps[3] = { 1, 100, 10000 };
	memset(&c, 0, sizeof c);
	ids[0] = counting_coroutine(S, &c);
	ids[2] = counting_coroutine(S, &c); /* the run stack's owner now */
	ids[1] = coroutine_clone(S, ids[0]);
	c.count[ids[1]] = c.count[ids[0]];
	assert_int_equal(counts_go_on_independently(S, &c, ids, steps, 3), 0);
	assert_int_equal(c.count[ids[0]], 2 + ROUNDS * 1);
	assert_int_equal(c.count[ids[1]], 2 + ROUNDS * 100);
	assert_int_equal(c.count[ids[2]], 2 + ROUNDS * 10000);
}

/* A copy that ran is copied in turn; a copy that never ran too. */
static void test_copy_of_a_copy_goes_on_independently(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	struct counters c;
	int ids[4];
	long steps[4] = { 1, 100, 10000, 1000000 };
	memset(&c, 0, sizeof c);
	ids[0] = counting_coroutine(S, &c);
	ids[1] = coroutine_clone(S, ids[0]);
	resume_with_step(S, &c, ids[1], 100); /* 102 */
	ids[2] = coroutine_clone(S, ids[1]);
	ids[3] = coroutine_clone(S, ids[2]);
	c.count[ids[2]] = c.count[ids[3]] = c.count[ids[1]];
	assert_int_equal(counts_go_on_independently(S, &c, ids, steps, 4), 0);
	assert_int_equal(c.count[ids[0]], 2 + ROUNDS * 1);
	assert_int_equal(c.count[ids[1]], 102 + ROUNDS * 100);
	assert_int_equal(c.count[ids[2]], 102 + ROUNDS * 10000);
	assert_int_equal(c.count[ids[3]], 102 + ROUNDS * 1000000);
}

/* Nothing of the copy is its original's: the original finishes and is
 * freed, and the copy goes on. */
static void test_copy_goes_on_after_its_original_is_gone(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	struct counters c;
	int ids[1];
	long steps[1] = { 100 };
	int original;
	memset(&c, 0, sizeof c);
	original = counting_coroutine(S, &c);
	ids[0] = coroutine_clone(S, original);
	resume_with_step(S, &c, original, 0);
	assert_int_equal(coroutine_status(S, original), COROUTINE_DEAD);
	counting_coroutine(S, &c); /* in memory its block may have had */
	c.count[ids[0]] = 2;
	assert_int_equal(counts_go_on_independently(S, &c, ids, steps, 1), 0);
	assert_int_equal(c.count[ids[0]], 2 + ROUNDS * 100);
}

/* The same coroutine with a slice of a few blocks: on the assembly switch,
 * one its quick paths save and put back (see SHALLOW_SLICE), copied from
 * the start of its block where a deep one is placed by its address. */
static void test_copies_of_a_shallow_slice_go_on_independently(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	struct counters c;
	int ids[6], i;
	long steps[6] = { 1, 2, 3, 4, 5, 6 };
	memset(&c, 0, sizeof c);
	ids[0] = counting_coroutine(S, &c);
	for (i = 1; i < 6; i++) {
		ids[i] = coroutine_clone(S, ids[i - 1]);
		c.count[ids[i]] = 2;
	}
	assert_int_equal(coroutine_status(S, ids[5]), COROUTINE_SUSPEND);
	assert_int_equal(counts_go_on_independently(S, &c, ids, steps, 6), 0);
	for (i = 0; i < 6; i++)
		assert_int_equal(c.count[ids[i]], 2 + ROUNDS * steps[i]);
}

/* ---- A deep slice -------------------------------------------------------------- */

/* A descent of DEPTH calls, each keeping a value in its frame, waits at the
 * bottom and adds its input at each resume; each level checks its value on
 * the way back up.  Some KiB of slice, on the deep path (see saved_deep_slice). */
enum { DEPTH = 200, BOTTOM_YIELDS = 3, DEEP_COPIES = 4 };

struct deep {
	long seed;
	long input[MAX_IDS];
	long total[MAX_IDS];
	long result[MAX_IDS];
	int wrong[MAX_IDS]; /* levels whose value had changed */
};

static long descend(struct schedule *S, struct deep *d, int level);
/* Called through a volatile pointer: no compiler turns the descent into a loop. */
static long (*volatile next_level)(struct schedule *, struct deep *, int) = descend;

static long wait_at_the_bottom(struct schedule *S, struct deep *d)
{
	long total = 0;
	int i;
	for (i = 0; i < BOTTOM_YIELDS; i++) {
		coroutine_yield(S);
		total += d->input[coroutine_running(S)];
		d->total[coroutine_running(S)] = total;
	}
	return total;
}

/* d->seed is read again after the call (which might have changed it, as far
 * as the compiler knows), so mine is kept across it, in this frame. */
static long descend(struct schedule *S, struct deep *d, int level)
{
	long mine = d->seed * level + 1;
	long below = level < DEPTH ? next_level(S, d, level + 1) : wait_at_the_bottom(S, d);
	if (mine != d->seed * level + 1)
		d->wrong[coroutine_running(S)]++;
	return below + mine;
}

static void go_deep(struct schedule *S, void *ud)
{
	struct deep *d = (struct deep *)ud;
	long result = descend(S, d, 0);
	d->result[coroutine_running(S)] = result;
}

static void test_copies_of_a_deep_slice_go_on_independently(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	static struct deep d;
	int ids[DEEP_COPIES + 1], i, k;
	long levels = 0;
	memset(&d, 0, sizeof d);
	d.seed = 7919;
	ids[0] = coroutine_new(S, go_deep, &d);
	coroutine_resume(S, ids[0]); /* waits at the bottom */
#if !defined(__wasm__) /* where frames may stay in wasm locals */
	assert_true(coroutine_stack_size(S, ids[0]) > 2048);
#endif
	/* Copies of the owner, of copies that never ran, in blocks at other
	 * addresses: the slice lies at another offset in each. */
	for (i = 1; i <= DEEP_COPIES; i++)
		ids[i] = coroutine_clone(S, ids[i / 2]);
	for (i = 0; i <= DEEP_COPIES; i++) {
		assert_int_equal(ids[i], i);
		assert_int_equal(coroutine_stack_size(S, ids[i]), coroutine_stack_size(S, ids[0]));
		d.input[ids[i]] = i == 0 ? 1 : 1000 * i;
	}
	for (k = 1; k <= BOTTOM_YIELDS; k++) {
		for (i = DEEP_COPIES; i >= 0; i--) {
			coroutine_resume(S, ids[i]);
			assert_int_equal(d.total[ids[i]], k * d.input[ids[i]]);
		}
	}
	for (k = 0; k <= DEPTH; k++)
		levels += d.seed * k + 1;
	for (i = 0; i <= DEEP_COPIES; i++) {
		assert_int_equal(coroutine_status(S, ids[i]), COROUTINE_DEAD);
		assert_int_equal(d.wrong[ids[i]], 0);
		assert_int_equal(d.result[ids[i]], BOTTOM_YIELDS * d.input[ids[i]] + levels);
	}
}

/* ---- The rounding mode ------------------------------------------------------- */

#if HAS_ROUNDING_MODES
enum { KEEP = -1, STOP = -2 };

struct rounding {
	int set[MAX_IDS];        /* the mode a coroutine sets at its next resume, KEEP or STOP */
	int mode[MAX_IDS];       /* fegetround() after its latest resume */
	double third[MAX_IDS];   /* 1/3, rounded then (SSE, FPCR...) */
	long double third_l[MAX_IDS]; /* the same in long double (x87 on x86) */
};

static volatile double one = 1.0, three = 3.0;

/* The divisions happen here, under the current mode: volatile operands
 * keep them from being folded, volatile results from being moved across
 * the calls around (fesetround, a switch).  Not inlined: the volatile
 * locals, which ASan may keep in its fake stack, go with the frame. */
__attribute__((noinline)) static void note_rounding(struct rounding *r, int id)
{
	volatile double third = one / three;
	volatile long double third_l = (long double)one / three;
	r->mode[id] = fegetround();
	r->third[id] = third;
	r->third_l[id] = third_l;
}

static void set_rounding_and_yield(struct schedule *S, void *ud)
{
	struct rounding *r = (struct rounding *)ud;
	int id;
	while (id = coroutine_running(S), r->set[id] != STOP) {
		if (r->set[id] != KEEP)
			fesetround(r->set[id]);
		note_rounding(r, id);
		coroutine_yield(S);
	}
}

/* Whether coroutine id rounds as main does under mode. */
static int rounds_as(const struct rounding *r, int id, int mode)
{
	struct rounding m;
	int saved = fegetround();
	fesetround(mode);
	note_rounding(&m, 0);
	fesetround(saved);
	return r->mode[id] == mode && r->third[id] == m.third[0] && r->third_l[id] == m.third_l[0];
}

static int modes_round_differently(void)
{
	struct rounding r;
	fesetround(FE_UPWARD);
	note_rounding(&r, 0);
	fesetround(FE_DOWNWARD);
	note_rounding(&r, 1);
	fesetround(FE_TONEAREST);
	return r.third[0] != r.third[1] && r.third_l[0] != r.third_l[1];
}

static void resume_setting(struct schedule *S, struct rounding *r, int id, int set)
{
	r->set[id] = set;
	coroutine_resume(S, id);
}

/* The original rounds upward when it is copied, then downward: the copy
 * rounds upward, in double and long double, and main to nearest. */
static void test_copy_keeps_the_rounding_mode_its_original_had(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	static struct rounding r;
	int original, copy;
	if (!modes_round_differently())
		skip_because("rounding modes have no effect here (valgrind's CPU); nothing to test");
	memset(&r, 0, sizeof r);
	original = coroutine_new(S, set_rounding_and_yield, &r);
	resume_setting(S, &r, original, FE_UPWARD);
	copy = coroutine_clone(S, original);
	resume_setting(S, &r, original, FE_DOWNWARD);
	assert_true(rounds_as(&r, original, FE_DOWNWARD));
	resume_setting(S, &r, copy, KEEP);
	assert_true(rounds_as(&r, copy, FE_UPWARD));
	resume_setting(S, &r, original, KEEP);
	assert_true(rounds_as(&r, original, FE_DOWNWARD));
	resume_setting(S, &r, original, STOP);
	resume_setting(S, &r, copy, KEEP); /* its original gone */
	assert_true(rounds_as(&r, copy, FE_UPWARD));
	resume_setting(S, &r, copy, STOP);
	assert_int_equal(fegetround(), FE_TONEAREST);
}
#endif

/* ---- Ids, and copies made by a coroutine ----------------------------------- */

/* 16 counting coroutines, of which 2 and 14 then finish: 14 live. */
static void sixteen_with_two_gaps(struct schedule *S, struct counters *c)
{
	int id;
	for (id = 0; id < 16; id++)
		resume_with_step(S, c, coroutine_new(S, count, c), 1);
	resume_with_step(S, c, 2, 0);
	resume_with_step(S, c, 14, 0);
}

/* The first empty slot at or after the count of live coroutines, wrapping
 * around, then a new slot when all are taken, as coroutine_new. */
static void test_copies_take_the_ids_coroutine_new_would_give(void **state)
{
	struct schedule *S = (struct schedule *)*state, *T = coroutine_open();
	static struct counters c, d;
	int i;
	memset(&c, 0, sizeof c);
	memset(&d, 0, sizeof d);
	sixteen_with_two_gaps(S, &c);
	sixteen_with_two_gaps(T, &d);
	for (i = 0; i < 3; i++) {
		int copy = coroutine_clone(S, 5), made = coroutine_new(T, count, &d);
		assert_int_equal(copy, made);
		assert_int_equal(copy, i == 0 ? 14 : i == 1 ? 2 : 16);
	}
	coroutine_close(T);
	/* The copies count on from where 5 was. */
	resume_with_step(S, &c, 16, 100);
	assert_int_equal(c.count[16], 101);
}

struct cloner {
	int original;
	int copy;
};

static void clone_and_finish(struct schedule *S, void *ud)
{
	struct cloner *k = (struct cloner *)ud;
	k->copy = coroutine_clone(S, k->original);
}

static void test_a_coroutine_may_copy_another(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	struct counters c;
	struct cloner k;
	int ids[2];
	long steps[2] = { 1, 100 };
	memset(&c, 0, sizeof c);
	k.original = ids[0] = counting_coroutine(S, &c);
	k.copy = -1;
	coroutine_resume(S, coroutine_new(S, clone_and_finish, &k));
	ids[1] = k.copy;
	assert_int_equal(ids[1], 2);
	c.count[ids[1]] = 2;
	assert_int_equal(counts_go_on_independently(S, &c, ids, steps, 2), 0);
	assert_int_equal(c.count[ids[1]], 2 + ROUNDS * 100);
}

/* ---- A backtracking search in direct style ---------------------------------- */

/* Eight queens: choose(n) gives one of 0 .. n-1, and each of them, in a
 * coroutine of its own: main clones the caller once per other alternative.
 * The board is a local of the coroutine, a column per row in 4 bits. */
enum { QUEENS = 8, MOST_SOLUTIONS = 100, SEARCH_IDS = 256 };

struct search {
	int asked;                /* how many alternatives the last choose asked for */
	int answer[SEARCH_IDS];   /* what choose returns in coroutine id */
	uint32_t solution[MOST_SOLUTIONS];
	int found;
};

static int choose(struct schedule *S, struct search *s, int n)
{
	s->asked = n;
	coroutine_yield(S);
	return s->answer[coroutine_running(S)];
}

/* Whether a queen at (row, col) is attacked by those of rows 0 .. row-1. */
static int attacked(uint32_t board, int row, int col)
{
	int r;
	for (r = 0; r < row; r++) {
		int c = (int)(board >> (4 * r)) & 15;
		if (c == col || c - col == row - r || col - c == row - r)
			return 1;
	}
	return 0;
}

static void add_solution(struct search *s, uint32_t board)
{
	if (s->found < MOST_SOLUTIONS)
		s->solution[s->found] = board;
	s->found++;
}

static void place_queens(struct schedule *S, void *ud)
{
	struct search *s = (struct search *)ud;
	uint32_t board = 0;
	int row;
	for (row = 0; row < QUEENS; row++) {
		int col = choose(S, s, QUEENS);
		if (attacked(board, row, col))
			return; /* this branch fails */
		board |= (uint32_t)col << (4 * row);
	}
	add_solution(s, board);
}

/* Main's part: the coroutine that chose is answered 0, and a copy of it
 * each other alternative.  The copies made, or -1 if an id was too large. */
static long explore(struct schedule *S, struct search *s)
{
	int pending[SEARCH_IDS], n = 0;
	long copies = 0;
	pending[n++] = coroutine_new(S, place_queens, s);
	while (n > 0) {
		int id = pending[--n], k;
		s->asked = 0;
		coroutine_resume(S, id);
		if (coroutine_status(S, id) == COROUTINE_DEAD)
			continue;
		for (k = s->asked - 1; k > 0; k--) {
			int copy = coroutine_clone(S, id);
			if (copy < 0 || copy >= SEARCH_IDS || n >= SEARCH_IDS - 1)
				return -1;
			s->answer[copy] = k;
			pending[n++] = copy;
			copies++;
		}
		s->answer[id] = 0;
		pending[n++] = id;
	}
	return copies;
}

/* The same search, plainly recursive; nodes counts its calls that choose. */
static void search_recursively(struct search *s, uint32_t board, int row, long *nodes)
{
	int col;
	if (row == QUEENS) {
		add_solution(s, board);
		return;
	}
	++*nodes;
	for (col = 0; col < QUEENS; col++)
		if (!attacked(board, row, col))
			search_recursively(s, board | (uint32_t)col << (4 * row), row + 1, nodes);
}

static int by_value(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

static void test_backtracking_by_cloning_finds_what_recursion_finds(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	static struct search cloned, plain;
	long nodes = 0, copies;
	int i;
	memset(&cloned, 0, sizeof cloned);
	memset(&plain, 0, sizeof plain);
	search_recursively(&plain, 0, 0, &nodes);
	copies = explore(S, &cloned);
	assert_int_equal(plain.found, 92);
	assert_int_equal(cloned.found, plain.found);
	/* Every choice made every copy: thousands of them. */
	assert_int_equal(copies, nodes * (QUEENS - 1));
	assert_true(copies > 10000);
	qsort(cloned.solution, (size_t)cloned.found, sizeof cloned.solution[0], by_value);
	qsort(plain.solution, (size_t)plain.found, sizeof plain.solution[0], by_value);
	for (i = 0; i < plain.found; i++)
		assert_int_equal(cloned.solution[i], plain.solution[i]);
	assert_int_equal(coroutine_next(S, -1), -1); /* every copy finished */
}

/* ---- Out of memory, where this program can make malloc fail ------------------
 *
 * test_alloc.c fails every allocation of a copy in turn, on glibc.  On
 * WebAssembly, where it does not run, a copy also needs a block for its
 * wasm frames: built with -DWRAPPED_MALLOC and linked with
 * -Wl,--wrap=malloc,--wrap=free (make wasm-test), this program fails the
 * library's mallocs on demand and counts the blocks.
 */
#ifdef WRAPPED_MALLOC
void *__real_malloc(size_t size);
void __real_free(void *p);

static int mallocs_before_failure = -1; /* -1: never fail */
static int live_blocks;

void *__wrap_malloc(size_t size)
{
	void *p = NULL;
	if (mallocs_before_failure < 0 || mallocs_before_failure-- > 0)
		p = __real_malloc(size);
	live_blocks += p != NULL;
	return p;
}

void __wrap_free(void *p)
{
	live_blocks -= p != NULL;
	__real_free(p);
}

static void test_clone_returns_minus_one_at_every_malloc_that_fails(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	struct counters c;
	int ids[2], n, failures = 0, before;
	long steps[2] = { 1, 100 };
	memset(&c, 0, sizeof c);
	ids[0] = counting_coroutine(S, &c);
	coroutine_resume(S, counting_coroutine(S, &c)); /* 0's bytes wait in its block */
	before = live_blocks;
	for (n = 0;; n++) {
		mallocs_before_failure = n;
		ids[1] = coroutine_clone(S, ids[0]);
		mallocs_before_failure = -1;
		if (ids[1] != -1)
			break;
		failures++;
		assert_int_equal(live_blocks, before);
		assert_int_equal(coroutine_status(S, 2), COROUTINE_DEAD);
	}
	assert_int_equal(failures, 2); /* its block, its wasm frames */
	assert_int_equal(ids[1], 2);
	c.count[ids[1]] = 2;
	assert_int_equal(counts_go_on_independently(S, &c, ids, steps, 2), 0);
}
#endif

/* ---- Under AddressSanitizer: locals in its fake stacks ----------------------- */

#if UNDER_ASAN
/* ASan's runtime option, which instrumented functions read at their entry
 * (ASAN_OPTIONS=detect_stack_use_after_return=...). */
extern int __asan_option_detect_stack_use_after_return;

static int *volatile escaped; /* where a local's address goes */

/* Its local's address is taken: with the option, ASan keeps it off the
 * run stack.  It adds its step to the local through the pointer. */
static void hold_a_local_by_address(struct schedule *S, void *ud)
{
	struct counters *c = (struct counters *)ud;
	int local = 7, *at = &local;
	escaped = at;
	coroutine_yield(S);
	*at += (int)c->step[coroutine_running(S)];
	c->count[coroutine_running(S)] = local;
}

/* Without fake stacks such a local is on the run stack: copied, its own. */
static void test_copy_with_a_local_by_address_on_the_run_stack(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	struct counters c;
	int saved = __asan_option_detect_stack_use_after_return, original, copy;
	memset(&c, 0, sizeof c);
	__asan_option_detect_stack_use_after_return = 0;
	original = coroutine_new(S, hold_a_local_by_address, &c);
	coroutine_resume(S, original);
	__asan_option_detect_stack_use_after_return = saved;
	copy = coroutine_clone(S, original);
	resume_with_step(S, &c, copy, 100);
	resume_with_step(S, &c, original, 1);
	assert_int_equal(c.count[copy], 107);
	assert_int_equal(c.count[original], 8);
}
#endif

/* ---- Misuse, each in a child process -------------------------------------------- */

#if HAS_CHILDREN_AND_THREADS
static struct counters child_counters;

static void clone_with_a_null_schedule(void)
{
	coroutine_clone(NULL, 0);
}

static void clone_id_16(void)
{
	coroutine_clone(coroutine_open(), 16);
}

static void clone_id_minus_one(void)
{
	coroutine_clone(coroutine_open(), -1);
}

static void clone_an_empty_slot(void)
{
	struct schedule *S = coroutine_open();
	counting_coroutine(S, &child_counters);
	coroutine_clone(S, 5);
}

static void clone_itself(struct schedule *S, void *ud)
{
	(void)ud;
	coroutine_clone(S, coroutine_running(S));
}

static void clone_the_running_coroutine(void)
{
	struct schedule *S = coroutine_open();
	counting_coroutine(S, &child_counters);
	coroutine_resume(S, coroutine_new(S, clone_itself, NULL));
}

static void clone_coroutine_0(void *S)
{
	coroutine_clone((struct schedule *)S, 0);
}

/* Coroutine 0 suspended here, the schedule too: cloned on another thread. */
static void clone_on_another_thread(void)
{
	struct schedule *S = coroutine_open();
	counting_coroutine(S, &child_counters);
	run_thread(clone_coroutine_0, S);
}

/* There a new coroutine yields (the schedule moves there), then 0, which
 * was suspended here, is cloned there. */
static void move_here_then_clone_coroutine_0(void *S)
{
	counting_coroutine((struct schedule *)S, &child_counters);
	clone_coroutine_0(S);
}

static void clone_after_the_schedule_moved_to_another_thread(void)
{
	struct schedule *S = coroutine_open();
	counting_coroutine(S, &child_counters);
	run_thread(move_here_then_clone_coroutine_0, S);
}

#if UNDER_ASAN
static void clone_with_locals_in_fake_stacks(void)
{
	struct schedule *S = coroutine_open();
	int id = coroutine_new(S, hold_a_local_by_address, &child_counters);
	coroutine_resume(S, id);
	coroutine_clone(S, id);
}
#endif

static const struct child_case child_cases[] = {
	{ "clone-with-a-null-schedule", clone_with_a_null_schedule },
	{ "clone-id-16", clone_id_16 },
	{ "clone-id-minus-one", clone_id_minus_one },
	{ "clone-an-empty-slot", clone_an_empty_slot },
	{ "clone-the-running-coroutine", clone_the_running_coroutine },
	{ "clone-on-another-thread", clone_on_another_thread },
	{ "clone-after-the-schedule-moved", clone_after_the_schedule_moved_to_another_thread },
#if UNDER_ASAN
	{ "clone-with-locals-in-fake-stacks", clone_with_locals_in_fake_stacks },
#endif
	{ NULL, NULL }
};

static void test_clone_with_a_null_schedule_aborts(void **state)
{
	(void)state;
	assert_child_aborts_with(child_cases, clone_with_a_null_schedule, "coroutine_clone: the schedule is NULL");
}

static void test_clone_with_an_id_out_of_range_aborts(void **state)
{
	(void)state;
	assert_child_aborts_with(child_cases, clone_id_16, "coroutine_clone: id 16 is out of range [0, 16)");
	assert_child_aborts_with(child_cases, clone_id_minus_one, "coroutine_clone: id -1 is out of range [0, 16)");
}

static void test_clone_of_an_empty_slot_aborts(void **state)
{
	(void)state;
	assert_child_aborts_with(child_cases, clone_an_empty_slot,
				 "coroutine_clone: slot 5 is empty; there is no coroutine to copy");
}

static void test_clone_of_the_running_coroutine_aborts(void **state)
{
	(void)state;
	assert_child_aborts_with(child_cases, clone_the_running_coroutine,
				 "coroutine_clone: coroutine 1 is running; "
				 "only a suspended or a new coroutine can be copied");
}

static void test_clone_of_a_coroutine_suspended_on_another_thread_aborts(void **state)
{
	(void)state;
	assert_child_aborts_with(child_cases, clone_on_another_thread,
				 "coroutine_clone: coroutine 0 was suspended on another thread; "
				 "clone it on that thread");
	assert_child_aborts_with(child_cases, clone_after_the_schedule_moved_to_another_thread,
				 "coroutine_clone: coroutine 0 was suspended on another thread; "
				 "clone it on that thread");
}

/* Back on the thread where it was suspended, after the schedule moved to
 * another: the copy is suspended here too, and goes on here. */
struct moved {
	struct schedule *S;
	struct counters *c;
};

static void start_one_there(void *arg)
{
	struct moved *m = (struct moved *)arg;
	counting_coroutine(m->S, m->c);
}

static void test_clone_on_the_thread_of_its_suspension_after_the_schedule_moved(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	static struct counters c;
	struct moved m;
	int ids[2];
	long steps[2] = { 1, 100 };
	memset(&c, 0, sizeof c);
	m.S = S;
	m.c = &c;
	ids[0] = counting_coroutine(S, &c);
	assert_true(run_thread(start_one_there, &m)); /* 1, suspended there */
	ids[1] = coroutine_clone(S, ids[0]);
	assert_int_equal(ids[1], 2);
	c.count[ids[1]] = 2;
	assert_int_equal(counts_go_on_independently(S, &c, ids, steps, 2), 0);
	assert_int_equal(c.count[ids[1]], 2 + ROUNDS * 100);
}

#if UNDER_ASAN
static void test_clone_with_locals_in_asans_fake_stack_aborts(void **state)
{
	(void)state;
	if (!__asan_option_detect_stack_use_after_return)
		skip_because("ASan keeps no fake stacks (detect_stack_use_after_return=0); nothing to test");
	assert_child_aborts_with(child_cases, clone_with_locals_in_fake_stacks,
				 "coroutine_clone: coroutine 0 keeps locals in AddressSanitizer's fake stack, "
				 "which its copy would share (ASAN_OPTIONS=detect_stack_use_after_return=0 "
				 "keeps them on the run stack)");
}
#endif
#endif /* HAS_CHILDREN_AND_THREADS */

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		schedule_test(test_copy_of_a_new_coroutine_starts_the_same_function_with_the_same_ud),
		schedule_test(test_copy_of_the_run_stacks_owner_goes_on_independently),
		schedule_test(test_copy_of_the_run_stacks_owner_goes_on_first),
		schedule_test(test_copy_of_a_coroutine_whose_bytes_wait_in_its_block_goes_on_independently),
		schedule_test(test_copy_of_a_copy_goes_on_independently),
		schedule_test(test_copy_goes_on_after_its_original_is_gone),
		schedule_test(test_copies_of_a_shallow_slice_go_on_independently),
		schedule_test(test_copies_of_a_deep_slice_go_on_independently),
#if HAS_ROUNDING_MODES
		schedule_test(test_copy_keeps_the_rounding_mode_its_original_had),
#endif
		schedule_test(test_copies_take_the_ids_coroutine_new_would_give),
		schedule_test(test_a_coroutine_may_copy_another),
		schedule_test(test_backtracking_by_cloning_finds_what_recursion_finds),
#ifdef WRAPPED_MALLOC
		schedule_test(test_clone_returns_minus_one_at_every_malloc_that_fails),
#endif
#if UNDER_ASAN
		schedule_test(test_copy_with_a_local_by_address_on_the_run_stack),
#endif
#if HAS_CHILDREN_AND_THREADS
		schedule_test(test_clone_with_a_null_schedule_aborts),
		schedule_test(test_clone_with_an_id_out_of_range_aborts),
		schedule_test(test_clone_of_an_empty_slot_aborts),
		schedule_test(test_clone_of_the_running_coroutine_aborts),
		schedule_test(test_clone_of_a_coroutine_suspended_on_another_thread_aborts),
		schedule_test(test_clone_on_the_thread_of_its_suspension_after_the_schedule_moved),
#if UNDER_ASAN
		schedule_test(test_clone_with_locals_in_asans_fake_stack_aborts),
#endif
#endif
	};
#if HAS_CHILDREN_AND_THREADS
	if (argc == 3 && strcmp(argv[1], "--child") == 0)
		return run_named_case(child_cases, argv[2]);
#endif
	(void)argc, (void)argv;
	return run_suite(tests);
}
