/*
 * test_misuse.c - every misuse the library detects prints one line naming
 * the function and the fault on stderr and dies of SIGABRT.  Each case runs
 * in a forked child.  The suite also runs against a library built with
 * -DNDEBUG (build/ndebug), which proves that the checks are not asserts.
 */
#include "support.h"

/* ---- Ids out of range ---------------------------------------------------- */

static void resume_1000(void *arg)
{
	(void)arg;
	coroutine_resume(coroutine_open(), 1000);
}

static void test_resume_with_id_out_of_range_aborts(void **state)
{
	struct child_result r = run_in_child(resume_1000, NULL);
	(void)state;
	assert_aborted_with(&r, "coroutine_resume: id 1000 is out of range [0, 16)");
}

static void resume_negative(void *arg)
{
	(void)arg;
	coroutine_resume(coroutine_open(), -1);
}

static void test_resume_with_negative_id_aborts(void **state)
{
	struct child_result r = run_in_child(resume_negative, NULL);
	(void)state;
	assert_aborted_with(&r, "coroutine_resume: id -1 is out of range [0, 16)");
}

/* The first id past the end: an off-by-one in the check would let it by. */
static void resume_16(void *arg)
{
	(void)arg;
	coroutine_resume(coroutine_open(), 16);
}

static void test_resume_with_id_equal_to_cap_aborts(void **state)
{
	struct child_result r = run_in_child(resume_16, NULL);
	(void)state;
	assert_aborted_with(&r, "coroutine_resume: id 16 is out of range [0, 16)");
}

static void status_5000(void *arg)
{
	(void)arg;
	coroutine_status(coroutine_open(), 5000);
}

static void test_status_with_id_out_of_range_aborts(void **state)
{
	struct child_result r = run_in_child(status_5000, NULL);
	(void)state;
	assert_aborted_with(&r, "coroutine_status: id 5000 is out of range [0, 16)");
}

/* The first id past the end: an off-by-one in the check would let it by. */
static void status_16(void *arg)
{
	(void)arg;
	coroutine_status(coroutine_open(), 16);
}

static void test_status_with_id_equal_to_cap_aborts(void **state)
{
	struct child_result r = run_in_child(status_16, NULL);
	(void)state;
	assert_aborted_with(&r, "coroutine_status: id 16 is out of range [0, 16)");
}

static void status_negative(void *arg)
{
	(void)arg;
	coroutine_status(coroutine_open(), -7);
}

static void test_status_with_negative_id_aborts(void **state)
{
	struct child_result r = run_in_child(status_negative, NULL);
	(void)state;
	assert_aborted_with(&r, "coroutine_status: id -7 is out of range [0, 16)");
}

/* ---- Calls from the wrong side ------------------------------------------ */

static void ignore(struct schedule *S, void *ud)
{
	(void)S, (void)ud;
}

/* Runs *body as coroutine 3 of a fresh schedule: 3 rather than 0, so that
 * a message naming the coroutine cannot be right by chance. */
static void run_as_coroutine(void *body)
{
	struct schedule *S = coroutine_open();
	int id;
	for (id = 0; id < 3; id++)
		coroutine_new(S, ignore, NULL);
	coroutine_resume(S, coroutine_new(S, *(coroutine_func *)body, NULL));
}

static struct child_result run_as_coroutine_in_child(coroutine_func body)
{
	return run_in_child(run_as_coroutine, &body);
}

static void resume_self(struct schedule *S, void *ud)
{
	(void)ud;
	coroutine_resume(S, coroutine_running(S));
}

static void test_resume_from_inside_a_coroutine_aborts(void **state)
{
	struct child_result r = run_as_coroutine_in_child(resume_self);
	(void)state;
	assert_aborted_with(&r, "coroutine_resume: called from inside coroutine 3; "
				"only the main program may resume");
}

static void close_own_schedule(struct schedule *S, void *ud)
{
	(void)ud;
	coroutine_close(S);
}

static void test_close_from_inside_a_coroutine_aborts(void **state)
{
	struct child_result r = run_as_coroutine_in_child(close_own_schedule);
	(void)state;
	assert_aborted_with(&r, "coroutine_close: called from inside coroutine 3; "
				"close the schedule from the main program");
}

static void yield_from_main(void *arg)
{
	(void)arg;
	coroutine_yield(coroutine_open());
}

static void test_yield_from_outside_any_coroutine_aborts(void **state)
{
	struct child_result r = run_in_child(yield_from_main, NULL);
	(void)state;
	assert_aborted_with(&r, "coroutine_yield: called from outside any coroutine");
}

static void try_yield_from_main(void *arg)
{
	(void)arg;
	coroutine_try_yield(coroutine_open());
}

static void test_try_yield_from_outside_any_coroutine_aborts(void **state)
{
	struct child_result r = run_in_child(try_yield_from_main, NULL);
	(void)state;
	assert_aborted_with(&r, "coroutine_try_yield: called from outside any coroutine");
}

/* A yield after the coroutine finished is a yield from main again. */
static void yield_after_coroutine_finished(void *arg)
{
	struct schedule *S = coroutine_open();
	(void)arg;
	coroutine_new(S, ignore, NULL);
	coroutine_resume(S, 0);
	coroutine_yield(S);
}

static void test_yield_after_the_coroutine_finished_aborts(void **state)
{
	struct child_result r = run_in_child(yield_after_coroutine_finished, NULL);
	(void)state;
	assert_aborted_with(&r, "coroutine_yield: called from outside any coroutine");
}

/*
 * Coroutine 3 of S1 resumes coroutine 0 of S2, which yields S1: S1 does have
 * a running coroutine, but the caller's stack is S2's run stack, not S1's.
 * Whether S2's run stack lies above or below S1's depends on the order the
 * two were opened in (mmap goes top-down on Linux), so both orders are
 * tried: one needs the check's lower bound, the other its upper bound.
 */
static int yield_may_fail; /* which yield yield_outer calls */

static void yield_outer(struct schedule *S2, void *S1)
{
	(void)S2;
	if (yield_may_fail)
		coroutine_try_yield((struct schedule *)S1);
	else
		coroutine_yield((struct schedule *)S1);
}

static void resume_in_other_schedule(struct schedule *S1, void *S2)
{
	coroutine_new(S2, yield_outer, S1);
	coroutine_resume(S2, 0);
}

/* Opens S1 and S2 in the given order, then runs resume_in_other_schedule
 * as coroutine 3 of S1. */
static void yield_across_schedules(void *s1_first)
{
	struct schedule *S1, *S2;
	int id;
	if (*(int *)s1_first) {
		S1 = coroutine_open();
		S2 = coroutine_open();
	} else {
		S2 = coroutine_open();
		S1 = coroutine_open();
	}
	for (id = 0; id < 3; id++)
		coroutine_new(S1, ignore, NULL);
	coroutine_resume(S1, coroutine_new(S1, resume_in_other_schedule, S2));
}

static void test_yield_on_a_later_schedules_run_stack_aborts(void **state)
{
	int s1_first = 1;
	struct child_result r = run_in_child(yield_across_schedules, &s1_first);
	(void)state;
	assert_aborted_with_prefix(&r, "coroutine_yield: the caller is not on this schedule's run stack");
}

static void test_try_yield_on_another_schedules_run_stack_aborts(void **state)
{
	int s1_first = 1;
	struct child_result r;
	(void)state;
	yield_may_fail = 1;
	r = run_in_child(yield_across_schedules, &s1_first);
	yield_may_fail = 0;
	assert_aborted_with_prefix(&r, "coroutine_try_yield: the caller is not on this schedule's run stack");
}

static void test_yield_on_an_earlier_schedules_run_stack_aborts(void **state)
{
	int s1_first = 0;
	struct child_result r = run_in_child(yield_across_schedules, &s1_first);
	(void)state;
	assert_aborted_with_prefix(&r, "coroutine_yield: the caller is not on this schedule's run stack");
}

/* ---- NULL arguments ------------------------------------------------------ */

static void new_with_null_func(void *arg)
{
	(void)arg;
	coroutine_new(coroutine_open(), NULL, NULL);
}

static void test_new_with_null_func_aborts(void **state)
{
	struct child_result r = run_in_child(new_with_null_func, NULL);
	(void)state;
	assert_aborted_with(&r, "coroutine_new: func is NULL");
}

static void new_on_null(void *arg)
{
	(void)arg;
	coroutine_new(NULL, ignore, NULL);
}

static void resume_on_null(void *arg)
{
	(void)arg;
	coroutine_resume(NULL, 0);
}

static void status_on_null(void *arg)
{
	(void)arg;
	coroutine_status(NULL, 0);
}

static void running_on_null(void *arg)
{
	(void)arg;
	coroutine_running(NULL);
}

static void yield_on_null(void *arg)
{
	(void)arg;
	coroutine_yield(NULL);
}

static void try_yield_on_null(void *arg)
{
	(void)arg;
	coroutine_try_yield(NULL);
}

static void test_null_schedule_aborts_in_every_function(void **state)
{
	static const struct {
		void (*call)(void *);
		const char *message;
	} cases[] = {
		{ new_on_null, "coroutine_new: the schedule is NULL" },
		{ resume_on_null, "coroutine_resume: the schedule is NULL" },
		{ status_on_null, "coroutine_status: the schedule is NULL" },
		{ running_on_null, "coroutine_running: the schedule is NULL" },
		{ yield_on_null, "coroutine_yield: the schedule is NULL" },
		{ try_yield_on_null, "coroutine_try_yield: the schedule is NULL" },
	};
	size_t i;
	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct child_result r = run_in_child(cases[i].call, NULL);
		assert_aborted_with(&r, cases[i].message);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resume_with_id_out_of_range_aborts),
		cmocka_unit_test(test_resume_with_negative_id_aborts),
		cmocka_unit_test(test_resume_with_id_equal_to_cap_aborts),
		cmocka_unit_test(test_status_with_id_out_of_range_aborts),
		cmocka_unit_test(test_status_with_id_equal_to_cap_aborts),
		cmocka_unit_test(test_status_with_negative_id_aborts),
		cmocka_unit_test(test_resume_from_inside_a_coroutine_aborts),
		cmocka_unit_test(test_close_from_inside_a_coroutine_aborts),
		cmocka_unit_test(test_yield_from_outside_any_coroutine_aborts),
		cmocka_unit_test(test_try_yield_from_outside_any_coroutine_aborts),
		cmocka_unit_test(test_yield_after_the_coroutine_finished_aborts),
		cmocka_unit_test(test_yield_on_a_later_schedules_run_stack_aborts),
		cmocka_unit_test(test_yield_on_an_earlier_schedules_run_stack_aborts),
		cmocka_unit_test(test_try_yield_on_another_schedules_run_stack_aborts),
		cmocka_unit_test(test_new_with_null_func_aborts),
		cmocka_unit_test(test_null_schedule_aborts_in_every_function),
	};
	return run_suite(tests);
}
