/*
 * test_delete_no_unwinder.c - coroutine_delete and coroutine_close in a C
 * program that links no unwinder (built without -fexceptions, linked with
 * the C driver): a coroutine waiting in coroutine_yield is freed where it
 * lies, as the original frees one, none of its cleanups run; one waiting
 * in coroutine_try_yield is told COROUTINE_ENDING, returns, and its
 * cleanups run as at any return.  The run stack's bytes of a coroutine
 * freed so are nobody's: the next coroutine, which malloc may well place
 * in the freed block, starts afresh.  (With an unwinder: test_delete.c.)
 *
 * Linked with the C++ driver (make sanitize), or where the C library
 * brings one (armv7's EHABI), the program has an unwinder: the test that
 * says it has none skips, and the others check what they check with it.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>

#include "support.h"

#define CLEANUP(f) __attribute__((cleanup(f), unused)) /* read by f alone */

/* The cleanups that ran: their labels, in order. */
static int ran[8];
static int ran_count;

static void note_cleanup(int *label)
{
	if (ran_count < (int)(sizeof ran / sizeof ran[0]))
		ran[ran_count] = *label;
	ran_count++;
}

/* Waits in coroutine_yield, a cleanup in its frame. */
static void wait_with_a_cleanup(struct schedule *S, void *ud)
{
	int label CLEANUP(note_cleanup) = 1;
	(void)ud;
	for (;;)
		coroutine_yield(S);
}

/* Waits in coroutine_try_yield until told anything but 0; returns then. */
static void wait_until_told(struct schedule *S, void *ud)
{
	int label CLEANUP(note_cleanup) = 2;
	int *told = (int *)ud;
	while ((*told = coroutine_try_yield(S)) == 0)
		continue;
}

/* Counts its starts, yields once, and returns. */
static void count_starts_and_yield(struct schedule *S, void *ud)
{
	++*(int *)ud;
	coroutine_yield(S);
}

static void test_program_links_no_unwinder(void **state)
{
	(void)state;
	if (dlsym(RTLD_DEFAULT, "_Unwind_ForcedUnwind") != NULL) {
		fprintf(stderr, "this program has an unwinder (linked with the C++ driver?)\n");
		skip();
	}
}

static void test_delete_frees_a_waiting_coroutine_running_none_of_its_cleanups(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int id = coroutine_new(S, wait_with_a_cleanup, NULL);
	coroutine_resume(S, id);
	ran_count = 0;
	coroutine_delete(S, id);
	assert_int_equal(ran_count, 0);
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
	assert_int_equal(coroutine_next(S, -1), -1);
}

/* The freed coroutine was the run stack's owner: the next one, in its
 * slot and maybe its block, must start, not be taken for it. */
static void test_coroutine_made_after_deleting_the_run_stacks_owner_starts(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int starts = 0, id = coroutine_new(S, wait_with_a_cleanup, NULL), next;
	coroutine_resume(S, id);
	coroutine_delete(S, id);
	next = coroutine_new(S, count_starts_and_yield, &starts);
	coroutine_resume(S, next);
	assert_int_equal(starts, 1);
	assert_int_equal(coroutine_status(S, next), COROUTINE_SUSPEND);
	coroutine_resume(S, next);
	assert_int_equal(coroutine_status(S, next), COROUTINE_DEAD);
}

static void test_delete_tells_a_coroutine_waiting_in_try_yield_it_is_ending(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int told = -2, id = coroutine_new(S, wait_until_told, &told);
	coroutine_resume(S, id);
	ran_count = 0;
	coroutine_delete(S, id);
	assert_int_equal(told, COROUTINE_ENDING);
	assert_int_equal(ran_count, 1);
	assert_int_equal(ran[0], 2);
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
}

/* Close ends each in id order: the one in try_yield returns, the other is
 * freed. */
static void test_close_tells_try_yield_and_frees_the_rest(void **state)
{
	struct schedule *S = coroutine_open();
	int told = -2;
	(void)state;
	coroutine_resume(S, coroutine_new(S, wait_with_a_cleanup, NULL));
	coroutine_resume(S, coroutine_new(S, wait_until_told, &told));
	ran_count = 0;
	coroutine_close(S);
	assert_int_equal(told, COROUTINE_ENDING);
	assert_int_equal(ran_count, 1);
	assert_int_equal(ran[0], 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_program_links_no_unwinder),
		schedule_test(test_delete_frees_a_waiting_coroutine_running_none_of_its_cleanups),
		schedule_test(test_coroutine_made_after_deleting_the_run_stacks_owner_starts),
		schedule_test(test_delete_tells_a_coroutine_waiting_in_try_yield_it_is_ending),
		cmocka_unit_test(test_close_tells_try_yield_and_frees_the_rest),
	};
	return run_suite(tests);
}
