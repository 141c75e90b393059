/*
 * test_exceptions.cpp - C++ exceptions being handled belong to the code
 * that handles them: main and each coroutine have their own, across every
 * switch.  What `throw;` rethrows in a catch handler, and what
 * std::uncaught_exceptions() counts during unwinding, do not change
 * because another coroutine (or main) caught or threw meanwhile.
 *
 * The C++ runtime keeps that state per thread; the library swaps it at
 * every switch (see eh_state in coroutine.cpp).  This program is C++, linked
 * with the C++ driver, unlike the other tests.
 *
 * Also: a throw inside a coroutine is caught there, before and after a
 * yield; a std::exception_ptr carries an exception from one coroutine to
 * another and to main; and an exception that escapes a coroutine's
 * function ends the program in std::terminate.
 *
 * Built with -DTEST_PLAIN it needs no CMocka (test/support/plain_suite.h): so it
 * runs under wine (make windows-test) and where CMocka does not (riscv64).
 */
#ifdef TEST_PLAIN
#include "plain_suite.h"
#include "child.h" /* run_thread */
#else
#include "support.h"
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <exception>
#include <stdexcept>
#include <string>

/* ---- Throwing and catching inside a coroutine --------------------------- */

struct two_catches {
	std::string before_yield; /* what each catch caught */
	std::string after_yield;
};

static std::string throw_and_catch(const char *message)
{
	try {
		throw std::runtime_error(message);
	} catch (const std::exception &e) {
		return e.what();
	}
}

static void catch_around_a_yield(struct schedule *S, void *ud)
{
	two_catches *c = (two_catches *)ud;
	c->before_yield = throw_and_catch("before");
	coroutine_yield(S);
	c->after_yield = throw_and_catch("after");
}

static void test_throw_is_caught_in_its_coroutine_before_and_after_a_yield(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	two_catches c;
	int id = coroutine_new(S, catch_around_a_yield, &c);
	coroutine_resume(S, id);
	assert_string_equal(c.before_yield.c_str(), "before");
	coroutine_resume(S, id);
	assert_string_equal(c.after_yield.c_str(), "after");
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
}

/* ---- Rethrowing from a handler that yielded ---------------------------- */

struct handler {
	const char *throws;    /* what it throws and catches */
	std::string rethrown;  /* what `throw;` rethrew after its yield */
};

/* What `throw;` rethrows here: the message of the exception being handled. */
static std::string rethrow_current(void)
{
	try {
		throw;
	} catch (const std::exception &e) {
		return e.what();
	}
}

static void yield_in_handler(struct schedule *S, void *ud)
{
	handler *h = (handler *)ud;
	try {
		throw std::runtime_error(h->throws);
	} catch (...) {
		coroutine_yield(S);
		coroutine_yield(S);
		h->rethrown = rethrow_current();
	}
}

static void test_coroutines_yielding_in_handlers_rethrow_their_own(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	handler a = { "first", "" }, b = { "second", "" };
	(void)state;
	int ia = coroutine_new(S, yield_in_handler, &a);
	int ib = coroutine_new(S, yield_in_handler, &b);
	coroutine_resume(S, ia); /* a yields inside its handler */
	coroutine_resume(S, ib); /* so does b */
	coroutine_resume(S, ia); /* each yields there once more */
	coroutine_resume(S, ib);
	coroutine_resume(S, ia);
	coroutine_resume(S, ib);
	assert_string_equal(a.rethrown.c_str(), "first");
	assert_string_equal(b.rethrown.c_str(), "second");
}

static void test_main_handler_around_a_resume_rethrows_mains(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	handler co = { "coroutine's", "" };
	std::string rethrown;
	int id = coroutine_new(S, yield_in_handler, &co);
	try {
		throw std::runtime_error("main's");
	} catch (...) {
		coroutine_resume(S, id); /* it catches its own and yields there */
		rethrown = rethrow_current();
	}
	coroutine_resume(S, id);
	coroutine_resume(S, id);
	assert_string_equal(rethrown.c_str(), "main's");
	assert_string_equal(co.rethrown.c_str(), "coroutine's");
}

/*
 * A yield that fails for want of memory (coroutine_try_yield) gives the
 * coroutine its own exceptions back: inside its handler it still rethrows
 * its own, not main's.  The library's realloc fails on demand where the
 * program is linked with -Wl,--wrap=realloc against the static library
 * (make test); elsewhere the test is skipped.
 */
#if !defined(TEST_PLAIN) && defined(__GLIBC__)
extern "C" void *__real_realloc(void *p, size_t size) __attribute__((weak));
static int realloc_fails, realloc_wrapped;

extern "C" void *__wrap_realloc(void *p, size_t size)
{
	realloc_wrapped = 1;
	return realloc_fails ? NULL : __real_realloc(p, size);
}

struct attempt_in_handler {
	int result;
	std::string rethrown;
};

static void try_yield_in_handler(struct schedule *S, void *ud)
{
	attempt_in_handler *a = (attempt_in_handler *)ud;
	try {
		throw std::runtime_error("coroutine's");
	} catch (...) {
		volatile char held[2048]; /* a slice larger than a new coroutine's room */
		std::memset((char *)held, 1, sizeof held);
		realloc_fails = 1;
		a->result = coroutine_try_yield(S);
		realloc_fails = 0;
		a->rethrown = rethrow_current() + (held[0] == 1 ? "" : " (its stack changed)");
	}
}

static void test_failed_try_yield_keeps_the_coroutines_exceptions(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	attempt_in_handler a = { 9, "" };
	std::string rethrown;
	int id = coroutine_new(S, try_yield_in_handler, &a);
	try {
		throw std::runtime_error("main's");
	} catch (...) {
		coroutine_resume(S, id); /* its attempt fails, and it finishes */
		rethrown = rethrow_current();
	}
	if (!realloc_wrapped) { /* the library's realloc is not the program's to fail */
		coroutine_delete(S, id); /* it waits, and its end writes to a */
		skip();
	}
	assert_int_equal(a.result, -1);
	assert_string_equal(a.rethrown.c_str(), "coroutine's");
	assert_string_equal(rethrown.c_str(), "main's");
}
#endif

static void catch_its_own(struct schedule *S, void *ud)
{
	(void)S, (void)ud;
	try {
		throw std::runtime_error("coroutine's");
	} catch (...) {
	}
}

/* What `throw;` would rethrow here, or "(none)" when no exception is being
 * handled (where `throw;` would call std::terminate). */
static std::string rethrow_current_if_any(void)
{
	return std::current_exception() ? rethrow_current() : "(none)";
}

/*
 * And never touches the state of the thread it moved from: while a
 * coroutine runs on the second thread, the first, inside its own handler,
 * still rethrows its own.
 */
struct cross_check {
	struct schedule *S;
	std::atomic<int> stage; /* 1: the coroutine runs; 2: the first thread looked */
	std::string seen_by_first;
};

static void wait_for_stage(std::atomic<int> *stage, int n)
{
	while (stage->load() != n)
		let_other_threads_run();
}

static void run_until_looked_at(struct schedule *S, void *ud)
{
	cross_check *c = (cross_check *)ud;
	(void)S;
	c->stage = 1;
	wait_for_stage(&c->stage, 2);
}

static void drive_on_second_thread(void *arg)
{
	cross_check *c = (cross_check *)arg;
	coroutine_resume(c->S, coroutine_new(c->S, run_until_looked_at, c));
}

static void test_schedule_moved_to_another_thread_leaves_the_first_threads_exceptions(void **state)
{
	cross_check c;
	struct thread second;
	c.S = (struct schedule *)*state;
	c.stage = 0;
	coroutine_resume(c.S, coroutine_new(c.S, catch_its_own, NULL)); /* used here first */
	try {
		throw std::runtime_error("first thread's");
	} catch (...) {
		assert_true(start_thread(&second, drive_on_second_thread, &c));
		wait_for_stage(&c.stage, 1);
		c.seen_by_first = rethrow_current_if_any();
		c.stage = 2;
		join_thread(&second);
	}
	assert_string_equal(c.seen_by_first.c_str(), "first thread's");
}


/*
 * The runtime's state is per thread: a schedule that moves to another
 * thread swaps that thread's, not the one it was opened on.
 */
struct handlers_elsewhere {
	struct schedule *S;
	handler a, b;
	std::string main_rethrown;
};

static void handlers_on_this_thread(void *arg)
{
	handlers_elsewhere *t = (handlers_elsewhere *)arg;
	struct schedule *S = t->S;
	int ia = coroutine_new(S, yield_in_handler, &t->a);
	int ib = coroutine_new(S, yield_in_handler, &t->b);
	coroutine_resume(S, ia); /* the schedule moves here */
	coroutine_resume(S, ib);
	try {
		throw std::runtime_error("main's");
	} catch (...) {
		coroutine_resume(S, ia);
		t->main_rethrown = rethrow_current();
	}
	coroutine_resume(S, ib);
	coroutine_resume(S, ia);
	coroutine_resume(S, ib);
}

static void test_schedule_moved_to_another_thread_swaps_that_threads_exceptions(void **state)
{
	handlers_elsewhere t = { (struct schedule *)*state, { "first", "" }, { "second", "" }, "" };
	coroutine_resume(t.S, coroutine_new(t.S, catch_its_own, NULL)); /* used here first */
	assert_true(run_thread(handlers_on_this_thread, &t));
	assert_string_equal(t.main_rethrown.c_str(), "main's");
	assert_string_equal(t.a.rethrown.c_str(), "first");
	assert_string_equal(t.b.rethrown.c_str(), "second");
}

/* The coroutine finishes, rather than yields, inside main's handler. */
static void test_main_handler_rethrows_mains_after_a_coroutine_finished(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	std::string rethrown;
	int id = coroutine_new(S, catch_its_own, nullptr);
	try {
		throw std::runtime_error("main's");
	} catch (...) {
		coroutine_resume(S, id);
		rethrown = rethrow_current_if_any();
	}
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
	assert_string_equal(rethrown.c_str(), "main's");
}

/* A coroutine started inside main's handler is not inside it. */
static void note_current_exception(struct schedule *S, void *ud)
{
	(void)S;
	*(bool *)ud = std::current_exception() != nullptr;
}

static void test_coroutine_started_in_mains_handler_has_no_exception(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	bool has_exception = true;
	int id = coroutine_new(S, note_current_exception, &has_exception);
	try {
		throw std::runtime_error("main's");
	} catch (...) {
		coroutine_resume(S, id);
	}
	assert_false(has_exception);
}

/* ---- std::uncaught_exceptions() during unwinding ------------------------ */

struct unwinding {
	int before_yield; /* std::uncaught_exceptions() in the destructor */
	int after_yield;
};

/* Yields from its destructor, which runs while an exception unwinds. */
struct yields_when_destroyed {
	struct schedule *S;
	unwinding *u;
	~yields_when_destroyed()
	{
		u->before_yield = std::uncaught_exceptions();
		coroutine_yield(S);
		u->after_yield = std::uncaught_exceptions();
	}
};

static void unwind_through_a_yield(struct schedule *S, void *ud)
{
	try {
		yields_when_destroyed y = { S, (unwinding *)ud };
		throw 1;
	} catch (int) {
	}
}

static void count_uncaught(struct schedule *S, void *ud)
{
	(void)S;
	*(int *)ud = std::uncaught_exceptions();
}

static void test_uncaught_exceptions_are_counted_per_coroutine(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	unwinding u = { -1, -1 };
	int other = -1;
	int id = coroutine_new(S, unwind_through_a_yield, &u);
	coroutine_resume(S, id); /* it yields while unwinding */
	assert_int_equal(std::uncaught_exceptions(), 0);
	coroutine_resume(S, coroutine_new(S, count_uncaught, &other));
	assert_int_equal(other, 0);
	coroutine_resume(S, id);
	assert_int_equal(u.before_yield, 1);
	assert_int_equal(u.after_yield, 1);
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
	assert_int_equal(std::uncaught_exceptions(), 0);
}

/* ---- std::exception_ptr across coroutines ------------------------------- */

struct passing {
	std::exception_ptr caught; /* what the thrower caught */
	std::string received;      /* what the receiver caught, rethrowing it */
};

static void catch_and_keep(struct schedule *S, void *ud)
{
	passing *p = (passing *)ud;
	try {
		throw std::runtime_error("passed on");
	} catch (...) {
		p->caught = std::current_exception();
	}
	coroutine_yield(S);
}

static std::string what_it_rethrows(std::exception_ptr e)
{
	try {
		std::rethrow_exception(e);
	} catch (const std::exception &caught) {
		return caught.what();
	}
	return "nothing";
}

static void rethrow_the_kept_one(struct schedule *S, void *ud)
{
	passing *p = (passing *)ud;
	(void)S;
	p->received = what_it_rethrows(p->caught);
}

static void test_exception_ptr_carries_an_exception_between_coroutines(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	passing p;
	int thrower = coroutine_new(S, catch_and_keep, &p);
	coroutine_resume(S, thrower); /* it yields holding its exception_ptr */
	coroutine_resume(S, coroutine_new(S, rethrow_the_kept_one, &p));
	assert_string_equal(p.received.c_str(), "passed on");
	coroutine_resume(S, thrower); /* the thrower returns: the exception outlives it */
	assert_int_equal(coroutine_status(S, thrower), COROUTINE_DEAD);
	assert_string_equal(what_it_rethrows(p.caught).c_str(), "passed on");
	assert_true(std::current_exception() == nullptr);
}

/* ---- An exception that escapes a coroutine --------------------------- */

/*
 * A coroutine's function must not let an exception out.  If one does, the
 * unwinder finds no handler: the unwind chain ends at the top of the run
 * stack, never in the resumer.  With the Itanium ABI's unwinder the C++
 * runtime then calls std::terminate, as for an exception that escapes a
 * thread's function.  On Windows the exception is unhandled: what would
 * call the unhandled-exception filter (and through it std::terminate) is
 * the thread's start, beyond the end of the chain, so the process ends at
 * once with the exception's code as its exit status.  It runs in a child
 * process, which this program starts with the argument "escape".
 */
#define ESCAPE_ARGUMENT "escape"
#define TERMINATED 42 /* the child's status when std::terminate ran */
#define RETURNED 43   /* and when the resume came back */

static void throw_out_of_the_coroutine(struct schedule *S, void *ud)
{
	(void)S;
	(void)ud;
	throw std::runtime_error("escaped");
}

[[noreturn]] static void exit_terminated(void)
{
	std::_Exit(TERMINATED);
}

/* The child's part: it never returns. */
[[noreturn]] static void let_an_exception_escape(void)
{
	std::set_terminate(exit_terminated);
	struct schedule *S = coroutine_open();
	try {
		coroutine_resume(S, coroutine_new(S, throw_out_of_the_coroutine, NULL));
	} catch (...) {
		std::fputs("the resumer caught an exception that escaped a coroutine\n", stderr);
	}
	std::_Exit(RETURNED);
}

#if defined(_WIN32)
#include <process.h>
#include <windows.h>

/* The exception codes of a C++ throw: g++'s (libgcc's unwind-seh.c) and
 * the Microsoft C++ ABI's. */
#define GCC_EXCEPTION_CODE 0x20474343
#define MSVC_EXCEPTION_CODE 0xE06D7363

static bool ended_as_promised(unsigned long status)
{
	return status == GCC_EXCEPTION_CODE || status == MSVC_EXCEPTION_CODE;
}

/* The exit status of this program run with the argument "escape". */
static unsigned long status_of_escape_in_child(void)
{
	char self[MAX_PATH];
	if (GetModuleFileNameA(NULL, self, sizeof self) == 0)
		return RETURNED;
	return (unsigned long)_spawnl(_P_WAIT, self, "child", ESCAPE_ARGUMENT, (char *)NULL);
}
#else
#include <sys/wait.h>
#include <unistd.h>

static bool ended_as_promised(unsigned long status)
{
	return status == TERMINATED;
}

static unsigned long status_of_escape_in_child(void)
{
	int status;
	std::fflush(NULL); /* or the child would print the output buffered here again */
	pid_t pid = fork();
	if (pid == 0)
		let_an_exception_escape();
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return RETURNED;
	return (unsigned long)WEXITSTATUS(status);
}
#endif

static void test_exception_escaping_a_coroutine_ends_the_program(void **state)
{
	(void)state;
	unsigned long status = status_of_escape_in_child();
	assert_true(ended_as_promised(status));
}

int main(int argc, char **argv)
{
	if (argc == 2 && std::strcmp(argv[1], ESCAPE_ARGUMENT) == 0)
		let_an_exception_escape();
	const struct CMUnitTest tests[] = {
		schedule_test(test_throw_is_caught_in_its_coroutine_before_and_after_a_yield),
		schedule_test(test_coroutines_yielding_in_handlers_rethrow_their_own),
		schedule_test(test_main_handler_around_a_resume_rethrows_mains),
#if !defined(TEST_PLAIN) && defined(__GLIBC__)
		schedule_test(test_failed_try_yield_keeps_the_coroutines_exceptions),
#endif
		schedule_test(test_schedule_moved_to_another_thread_swaps_that_threads_exceptions),
		schedule_test(test_schedule_moved_to_another_thread_leaves_the_first_threads_exceptions),
		schedule_test(test_main_handler_rethrows_mains_after_a_coroutine_finished),
		schedule_test(test_coroutine_started_in_mains_handler_has_no_exception),
		schedule_test(test_uncaught_exceptions_are_counted_per_coroutine),
		schedule_test(test_exception_ptr_carries_an_exception_between_coroutines),
		schedule_test(test_exception_escaping_a_coroutine_ends_the_program),
	};
	return run_suite(tests);
}
