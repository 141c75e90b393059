/*
 * test_delete_no_exceptions.cpp - coroutine_delete and coroutine_close
 * for C++ built with -fno-exceptions (see mk/test.mk), in a program that
 * has an unwinder, as one that uses the C++ standard library has: the
 * forced unwinding walks its frames and runs nothing there, so a
 * coroutine waiting in coroutine_yield is freed with none of its
 * destructors run; one waiting in coroutine_try_yield is told
 * COROUTINE_ENDING, returns, and its destructors run as at any return.
 * The objects on the frames own nothing, so that those never destroyed
 * leak nothing.  (With exceptions: test_delete_cxx.cpp; a C program with
 * no unwinder: test_delete_no_unwinder.c.)
 */
#include <dlfcn.h>

#include "support.h"

#include <string>

#define NOINLINE __attribute__((noinline))

/* The names of the objects destroyed, in order, separated by spaces: a
 * std::string, which makes this program use the C++ runtime. */
static std::string destroyed;

static void forget_destroyed(void)
{
	destroyed.clear();
}

struct mark {
	const char *name;
	~mark() { destroyed += (destroyed.empty() ? "" : " ") + std::string(name); }
};

/* A patrol that waits a tick at a time in coroutine_try_yield, and ends
 * when told: told is what the last wait answered. */
static int told;

NOINLINE static int wait_a_tick(struct schedule *S)
{
	mark waiting = { "waiting" };
	return told = coroutine_try_yield(S);
}

static void patrol(struct schedule *S, void *ud)
{
	(void)ud;
	mark self = { "patrol" };
	while (wait_a_tick(S) != COROUTINE_ENDING)
		continue;
}

/* The same in coroutine_yield, which nothing here can tell. */
NOINLINE static void wait_a_tick_in_yield(struct schedule *S)
{
	mark waiting = { "waiting" };
	coroutine_yield(S);
}

static void patrol_in_yield(struct schedule *S, void *ud)
{
	(void)ud;
	mark self = { "patrol" };
	for (;;)
		wait_a_tick_in_yield(S);
}

/* Told it is ending, it waits once more. */
static void wait_again_when_told(struct schedule *S, void *ud)
{
	(void)ud;
	mark self = { "waits again" };
	while (wait_a_tick(S) != COROUTINE_ENDING)
		continue;
	coroutine_yield(S);
}

static void count_starts(struct schedule *S, void *ud)
{
	(void)S;
	++*(int *)ud;
}

/* The unwinder comes with the C++ runtime (libgcc_s with libstdc++). */
static void test_program_has_an_unwinder(void **state)
{
	(void)state;
	assert_true(dlsym(RTLD_DEFAULT, "_Unwind_ForcedUnwind") != NULL);
}

static void test_delete_tells_try_yield_it_is_ending_and_its_destructors_run_as_it_returns(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int id = coroutine_new(S, patrol, NULL);
	coroutine_resume(S, id);
	coroutine_resume(S, id);
	forget_destroyed();
	coroutine_delete(S, id);
	assert_int_equal(told, COROUTINE_ENDING);
	assert_string_equal(destroyed.c_str(), "waiting patrol");
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
}

static void test_close_tells_try_yield_it_is_ending_and_its_destructors_run_as_it_returns(void **state)
{
	struct schedule *S = coroutine_open();
	(void)state;
	coroutine_resume(S, coroutine_new(S, patrol, NULL));
	coroutine_resume(S, coroutine_new(S, patrol, NULL));
	forget_destroyed();
	coroutine_close(S);
	assert_string_equal(destroyed.c_str(), "waiting patrol waiting patrol");
}

static void test_delete_at_a_yield_destroys_nothing_and_frees_the_coroutine(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int starts = 0, id = coroutine_new(S, patrol_in_yield, NULL), next;
	coroutine_resume(S, id);
	forget_destroyed();
	coroutine_delete(S, id);
	assert_string_equal(destroyed.c_str(), "");
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
	next = coroutine_new(S, count_starts, &starts);
	coroutine_resume(S, next);
	assert_int_equal(starts, 1);
}

static void test_try_yield_that_waits_again_after_ending_destroys_nothing_more(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int id = coroutine_new(S, wait_again_when_told, NULL);
	coroutine_resume(S, id);
	forget_destroyed();
	told = -2;
	coroutine_delete(S, id);
	assert_int_equal(told, COROUTINE_ENDING);
	assert_string_equal(destroyed.c_str(), "waiting");
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_program_has_an_unwinder),
		schedule_test(test_delete_tells_try_yield_it_is_ending_and_its_destructors_run_as_it_returns),
		cmocka_unit_test(test_close_tells_try_yield_it_is_ending_and_its_destructors_run_as_it_returns),
		schedule_test(test_delete_at_a_yield_destroys_nothing_and_frees_the_coroutine),
		schedule_test(test_try_yield_that_waits_again_after_ending_destroys_nothing_more),
	};
	return run_suite(tests);
}
