/*
 * test_api.c - the public API, function by function: what a schedule looks
 * like when opened, the status a coroutine goes through, coroutine_new from
 * inside a coroutine, closing with live coroutines, and several schedules
 * used side by side or one inside the other.
 */
#include "support.h"

/* ---- Bodies ------------------------------------------------------------- */

/* Counts its runs in *ud and yields twice before returning. */
static void yield_twice(struct schedule *S, void *ud)
{
	int *steps = ud;
	++*steps;
	coroutine_yield(S);
	++*steps;
	coroutine_yield(S);
	++*steps;
}

/* What a coroutine saw of itself while it ran. */
struct self_view {
	int running;
	int status;
};

static void look_at_self(struct schedule *S, void *ud)
{
	struct self_view *view = ud;
	view->running = coroutine_running(S);
	view->status = coroutine_status(S, view->running);
}

static void count_run(struct schedule *S, void *ud)
{
	(void)S;
	++*(int *)ud;
}

/* ---- coroutine_open ------------------------------------------------------ */

static void test_open_has_16_empty_slots(void **state)
{
	struct schedule *S = *state;
	int id;
	assert_non_null(S);
	for (id = 0; id < 16; id++)
		assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
}

static void test_open_runs_main(void **state)
{
	struct schedule *S = *state;
	assert_int_equal(coroutine_running(S), -1);
}

/* ---- Status transitions -------------------------------------------------- */

static void test_new_coroutine_is_ready(void **state)
{
	struct schedule *S = *state;
	int steps = 0;
	int id = coroutine_new(S, yield_twice, &steps);
	assert_int_equal(id, 0);
	assert_int_equal(coroutine_status(S, id), COROUTINE_READY);
	assert_int_equal(steps, 0);
}

static void test_running_coroutine_sees_itself_running(void **state)
{
	struct schedule *S = *state;
	struct self_view view = { -2, -2 };
	int id = coroutine_new(S, look_at_self, &view);
	coroutine_resume(S, id);
	assert_int_equal(view.running, id);
	assert_int_equal(view.status, COROUTINE_RUNNING);
}

static void test_yield_suspends_and_returns_to_main(void **state)
{
	struct schedule *S = *state;
	int steps = 0;
	int id = coroutine_new(S, yield_twice, &steps);
	coroutine_resume(S, id);
	assert_int_equal(steps, 1);
	assert_int_equal(coroutine_status(S, id), COROUTINE_SUSPEND);
	assert_int_equal(coroutine_running(S), -1);
}

static void test_resume_continues_after_yield(void **state)
{
	struct schedule *S = *state;
	int steps = 0;
	int id = coroutine_new(S, yield_twice, &steps);
	coroutine_resume(S, id);
	coroutine_resume(S, id);
	assert_int_equal(steps, 2);
	assert_int_equal(coroutine_status(S, id), COROUTINE_SUSPEND);
}

static void test_finished_coroutine_leaves_slot_empty(void **state)
{
	struct schedule *S = *state;
	int steps = 0;
	int id = coroutine_new(S, yield_twice, &steps);
	coroutine_resume(S, id);
	coroutine_resume(S, id);
	coroutine_resume(S, id);
	assert_int_equal(steps, 3);
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
	assert_int_equal(coroutine_running(S), -1);
}

static void test_resume_of_empty_slot_returns_at_once(void **state)
{
	struct schedule *S = *state;
	int runs = 0;
	int id = coroutine_new(S, count_run, &runs);
	coroutine_resume(S, id);
	coroutine_resume(S, id);
	coroutine_resume(S, 15);
	assert_int_equal(runs, 1);
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
}

struct args_seen {
	struct schedule *S;
	void *ud;
};

static void record_args(struct schedule *S, void *ud)
{
	struct args_seen *seen = ud;
	seen->S = S;
	seen->ud = ud;
}

static void test_func_gets_schedule_and_ud(void **state)
{
	struct schedule *S = *state;
	struct args_seen seen = { NULL, NULL };
	coroutine_resume(S, coroutine_new(S, record_args, &seen));
	assert_ptr_equal(seen.S, S);
	assert_ptr_equal(seen.ud, &seen);
}

/* ---- coroutine_new from inside a coroutine ----------------------------- */

struct spawner {
	int child;      /* the id coroutine_new returned inside */
	int child_runs; /* incremented by the child */
	int status_seen;
};

static void spawn_one(struct schedule *S, void *ud)
{
	struct spawner *sp = ud;
	sp->child = coroutine_new(S, count_run, &sp->child_runs);
	sp->status_seen = coroutine_status(S, sp->child);
}

static void test_new_from_inside_runs_later(void **state)
{
	struct schedule *S = *state;
	struct spawner sp = { -1, 0, -1 };
	int parent = coroutine_new(S, spawn_one, &sp);
	coroutine_resume(S, parent);
	assert_int_equal(sp.child, 1);
	assert_int_equal(sp.status_seen, COROUTINE_READY);
	assert_int_equal(sp.child_runs, 0);
	coroutine_resume(S, sp.child);
	assert_int_equal(sp.child_runs, 1);
	assert_int_equal(coroutine_status(S, sp.child), COROUTINE_DEAD);
}

/*
 * The running coroutine creates enough coroutines to double the slot array
 * twice.  Its own slot moves with the array; it must go on running, see
 * itself running and yield and finish normally.
 */
enum { SPAWNED = 40 };

struct grower {
	int ids[SPAWNED];
	int runs;
	int self_status_after_growth;
	long checksum;
};

static void spawn_many(struct schedule *S, void *ud)
{
	struct grower *g = ud;
	long sum = 0;
	int i;
	for (i = 0; i < SPAWNED; i++) {
		g->ids[i] = coroutine_new(S, count_run, &g->runs);
		sum += g->ids[i];
	}
	g->self_status_after_growth = coroutine_status(S, coroutine_running(S));
	coroutine_yield(S);
	g->checksum = sum;
}

static void test_new_grows_slots_while_a_coroutine_runs(void **state)
{
	struct schedule *S = *state;
	struct grower g = { { 0 }, 0, -1, 0 };
	int parent = coroutine_new(S, spawn_many, &g);
	int i;
	coroutine_resume(S, parent);
	assert_int_equal(g.self_status_after_growth, COROUTINE_RUNNING);
	assert_int_equal(coroutine_status(S, parent), COROUTINE_SUSPEND);
	for (i = 0; i < SPAWNED; i++) {
		assert_int_equal(g.ids[i], i + 1);
		coroutine_resume(S, g.ids[i]);
	}
	assert_int_equal(g.runs, SPAWNED);
	coroutine_resume(S, parent);
	assert_int_equal(g.checksum, SPAWNED * (SPAWNED + 1) / 2);
	assert_int_equal(coroutine_status(S, parent), COROUTINE_DEAD);
	assert_int_equal(coroutine_status(S, 63), COROUTINE_DEAD);
}

/* ---- coroutine_close ------------------------------------------------------ */

static void test_close_accepts_suspended_coroutines(void **state)
{
	struct schedule *S = coroutine_open();
	int steps[3] = { 0, 0, 0 };
	int i;
	(void)state;
	for (i = 0; i < 3; i++) {
		coroutine_new(S, yield_twice, &steps[i]);
		coroutine_resume(S, i);
	}
	coroutine_close(S);
	/* Their functions were not run to the end. */
	for (i = 0; i < 3; i++)
		assert_int_equal(steps[i], 1);
}

static void test_close_accepts_never_started_coroutines(void **state)
{
	struct schedule *S = coroutine_open();
	int runs = 0;
	int i;
	(void)state;
	for (i = 0; i < 20; i++)
		coroutine_new(S, count_run, &runs);
	coroutine_close(S);
	assert_int_equal(runs, 0);
}

/* The address space the process has mapped, from /proc/self/statm (Linux). */
static size_t mapped_bytes(void)
{
	FILE *statm = fopen("/proc/self/statm", "r");
	unsigned long pages = 0;
	assert_non_null(statm);
	assert_int_equal(fscanf(statm, "%lu", &pages), 1);
	fclose(statm);
	return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

/*
 * Everything open and the coroutines took is given back: the run stack and
 * its guard, and what a checker keeps per suspended coroutine (ASan's fake
 * stack, with detect_stack_use_after_return=1: megabytes each).  Run many
 * times, a leak of either would be tens of MiB; the slack is for the
 * allocator's own growth.
 */
static void test_close_gives_back_the_address_space(void **state)
{
	enum { ROUNDS = 64, SUSPENDED = 4, SLACK = 16 * 1024 * 1024 };
	size_t before;
	int round, id, steps = 0;
	(void)state;
	coroutine_close(coroutine_open()); /* the allocator's first growth */
	before = mapped_bytes();
	for (round = 0; round < ROUNDS; round++) {
		struct schedule *S = coroutine_open();
		for (id = 0; id < SUSPENDED; id++)
			coroutine_resume(S, coroutine_new(S, yield_twice, &steps));
		coroutine_close(S);
	}
	assert_int_equal(steps, ROUNDS * SUSPENDED);
	assert_true(mapped_bytes() < before + SLACK);
}

static void test_close_ignores_null(void **state)
{
	(void)state;
	coroutine_close(NULL);
}

/* ---- Several schedules ------------------------------------------------- */

/* Writes 1, 2, 3, ... into the log it is given, yielding after each. */
struct log {
	int entries[8];
	int n;
};

static void log_three(struct schedule *S, void *ud)
{
	struct log *log = ud;
	int local = 100 * (coroutine_running(S) + 1);
	int i;
	for (i = 1; i <= 3; i++) {
		log->entries[log->n++] = local + i;
		coroutine_yield(S);
	}
}

static void test_two_schedules_interleave(void **state)
{
	struct schedule *S1 = coroutine_open();
	struct schedule *S2 = coroutine_open();
	struct log log = { { 0 }, 0 };
	static const int expected[] = { 101, 201, 102, 202, 103, 203 };
	int decoy_steps = 0;
	int round;
	(void)state;
	coroutine_new(S1, log_three, &log);
	/* Slot 0 of S2 is taken so that the two loggers have different ids. */
	coroutine_new(S2, yield_twice, &decoy_steps);
	coroutine_new(S2, log_three, &log);
	for (round = 0; round < 4; round++) {
		coroutine_resume(S1, 0);
		coroutine_resume(S2, 1);
	}
	assert_int_equal(log.n, 6);
	assert_memory_equal(log.entries, expected, sizeof expected);
	assert_int_equal(coroutine_status(S1, 0), COROUTINE_DEAD);
	assert_int_equal(coroutine_status(S2, 1), COROUTINE_DEAD);
	assert_int_equal(coroutine_status(S2, 0), COROUTINE_READY);
	coroutine_close(S1);
	coroutine_close(S2);
}

/* A coroutine of one schedule acts as the main program of another. */
struct nested {
	struct schedule *inner;
	struct log log;
	int outer_running_seen;
};

static void drive_inner(struct schedule *S, void *ud)
{
	struct nested *n = ud;
	int guard = 0x5eed;
	coroutine_resume(n->inner, 0);
	n->outer_running_seen = coroutine_running(S);
	coroutine_yield(S);
	coroutine_resume(n->inner, 0);
	coroutine_resume(n->inner, 0);
	n->log.entries[n->log.n++] = guard;
}

static void test_coroutine_may_resume_another_schedule(void **state)
{
	struct schedule *outer = coroutine_open();
	struct nested n;
	static const int expected[] = { 101, 102, 103, 0x5eed };
	(void)state;
	memset(&n, 0, sizeof n);
	n.inner = coroutine_open();
	coroutine_new(n.inner, log_three, &n.log);
	coroutine_new(outer, drive_inner, &n);
	coroutine_resume(outer, 0);
	assert_int_equal(n.outer_running_seen, 0);
	assert_int_equal(coroutine_status(n.inner, 0), COROUTINE_SUSPEND);
	coroutine_resume(outer, 0);
	assert_int_equal(coroutine_status(outer, 0), COROUTINE_DEAD);
	assert_int_equal(n.log.n, 4);
	assert_memory_equal(n.log.entries, expected, sizeof expected);
	coroutine_close(n.inner);
	coroutine_close(outer);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		schedule_test(test_open_has_16_empty_slots),
		schedule_test(test_open_runs_main),
		schedule_test(test_new_coroutine_is_ready),
		schedule_test(test_running_coroutine_sees_itself_running),
		schedule_test(test_yield_suspends_and_returns_to_main),
		schedule_test(test_resume_continues_after_yield),
		schedule_test(test_finished_coroutine_leaves_slot_empty),
		schedule_test(test_resume_of_empty_slot_returns_at_once),
		schedule_test(test_func_gets_schedule_and_ud),
		schedule_test(test_new_from_inside_runs_later),
		schedule_test(test_new_grows_slots_while_a_coroutine_runs),
		cmocka_unit_test(test_close_accepts_suspended_coroutines),
		cmocka_unit_test(test_close_accepts_never_started_coroutines),
		cmocka_unit_test(test_close_gives_back_the_address_space),
		cmocka_unit_test(test_close_ignores_null),
		cmocka_unit_test(test_two_schedules_interleave),
		cmocka_unit_test(test_coroutine_may_resume_another_schedule),
	};
	return run_suite(tests);
}
