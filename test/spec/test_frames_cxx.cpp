/*
 * test_frames_cxx.cpp - the link from a coroutine's start to its resumer
 * (see test_frames.c) is for looking only: no unwinding crosses it, or
 * main's frames would be unwound from under the run stack.  An exception
 * that leaves a coroutine's function reaches none of main's handlers: the
 * program stops with a line naming the coroutine, then std::terminate.
 * coroutine_delete's unwinding ends at the coroutine's start and runs no
 * destructor of main's; a backtrace taken by a destructor it runs leads to
 * the caller of coroutine_delete.  Any other forced unwinding that reaches
 * the start (a thread's exit) stops the program with a line.
 *
 * C++, linked with the C++ driver; exported functions (-rdynamic), so that
 * dladdr names them.
 */
#include "support.h"
#include "resumers.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>

/* ---- An exception that leaves a coroutine's function ------------------------ */

#define TERMINATED 42 /* the child's status when std::terminate ran */

[[noreturn]] static void exit_terminated(void)
{
	std::_Exit(TERMINATED);
}

extern "C" void throw_out(struct schedule *, void *)
{
	throw std::runtime_error("out");
}

/* The child: coroutine 1 throws out of its function, inside main's try. */
static void let_an_exception_out(void *)
{
	std::set_terminate(exit_terminated);
	struct schedule *S = coroutine_open();
	coroutine_new(S, throw_out, NULL);
	try {
		coroutine_resume(S, coroutine_new(S, throw_out, NULL));
	} catch (...) {
		std::fputs("main's handler caught it\n", stderr);
	}
	std::_Exit(0);
}

static void test_an_exception_out_of_a_coroutine_stops_with_a_line_naming_it(void **)
{
	struct child_result r = run_in_child(let_an_exception_out, NULL);
	assert_true(WIFEXITED(r.status));
	assert_int_equal(WEXITSTATUS(r.status), TERMINATED);
#if LINKED
	assert_string_equal(r.err, "coroutine_resume: an exception escaped coroutine 1's function; "
				   "no handler beyond a coroutine's start may catch it\n");
#else
	assert_string_equal(r.err, "");
#endif
}

/* ---- coroutine_delete's unwinding ------------------------------------------- */

static int mains_destroyed, coroutines_destroyed, deleters_seen;

struct counted {
	int *count;
	~counted() { ++*count; }
};

extern "C" __attribute__((noinline)) void backtrace_sees_deleter(void)
{
	void *pcs[64];
	int n = backtrace(pcs, 64);
	for (int i = 0; i < n; i++) {
		Dl_info info;
		if (dladdr((char *)pcs[i] - 1, &info) && info.dli_sname != NULL &&
		    std::strcmp(info.dli_sname, "delete_from_here") == 0)
			deleters_seen++;
	}
}

struct looking_back {
	~looking_back()
	{
		backtrace_sees_deleter();
		coroutines_destroyed++;
	}
};

extern "C" void holds_objects(struct schedule *S, void *)
{
	looking_back object;
	coroutine_yield(S);
	coroutine_yield(S);
}

/* main's frame around the delete, with an object of its own. */
extern "C" __attribute__((noinline)) void delete_from_here(struct schedule *S, int id)
{
	counted mine = { &mains_destroyed };
	coroutine_delete(S, id);
	assert_int_equal(mains_destroyed, 0);
	assert_int_equal(coroutines_destroyed, 1);
}

static void test_delete_unwinds_to_the_coroutines_start_and_no_further(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int id = coroutine_new(S, holds_objects, NULL);
	mains_destroyed = coroutines_destroyed = deleters_seen = 0;
	coroutine_resume(S, id);
	delete_from_here(S, id);
	assert_int_equal(mains_destroyed, 1);
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
	assert_int_equal(deleters_seen, LINKED ? 1 : 0);
}

/* ---- Another forced unwinding: a thread's exit --------------------------- */

#if LINKED /* where the link is, a thread that exits inside a coroutine is stopped */
extern "C" void exits_its_thread(struct schedule *, void *)
{
	pthread_exit(NULL);
}

static void *thread_with_a_schedule(void *)
{
	struct schedule *S = coroutine_open();
	coroutine_resume(S, coroutine_new(S, exits_its_thread, NULL));
	return NULL;
}

static void exit_a_thread_inside_a_coroutine(void *)
{
	pthread_t thread;
	if (pthread_create(&thread, NULL, thread_with_a_schedule, NULL) == 0)
		pthread_join(thread, NULL);
}
#endif

static void test_a_threads_exit_inside_a_coroutine_stops_with_a_line(void **)
{
#if LINKED
	struct child_result r = run_in_child(exit_a_thread_inside_a_coroutine, NULL);
	assert_aborted_with(&r, "coroutine_resume: an unwinding that is not coroutine_delete's (a thread's "
				"cancellation or exit?) reached coroutine 0's start; main's frames cannot be unwound "
				"from a coroutine");
#else
	skip();
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_an_exception_out_of_a_coroutine_stops_with_a_line_naming_it),
		schedule_test(test_delete_unwinds_to_the_coroutines_start_and_no_further),
		cmocka_unit_test(test_a_threads_exit_inside_a_coroutine_stops_with_a_line),
	};
	return run_suite(tests);
}
