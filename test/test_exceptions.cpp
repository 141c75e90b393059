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
 * Built with -DTEST_PLAIN it needs no CMocka (test/plain_suite.h): so it
 * runs where CMocka does not (riscv64).
 */
#ifdef TEST_PLAIN
#include "plain_suite.h"
#else
#include "support.h"
#endif

#include <exception>
#include <stdexcept>
#include <string>

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
	assert_string_equal(rethrown.c_str(), "main's");
	assert_string_equal(co.rethrown.c_str(), "coroutine's");
}

/* What `throw;` would rethrow here, or "(none)" when no exception is being
 * handled (where `throw;` would call std::terminate). */
static std::string rethrow_current_if_any(void)
{
	return std::current_exception() ? rethrow_current() : "(none)";
}

static void catch_its_own(struct schedule *S, void *ud)
{
	(void)S, (void)ud;
	try {
		throw std::runtime_error("coroutine's");
	} catch (...) {
	}
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		schedule_test(test_coroutines_yielding_in_handlers_rethrow_their_own),
		schedule_test(test_main_handler_around_a_resume_rethrows_mains),
		schedule_test(test_main_handler_rethrows_mains_after_a_coroutine_finished),
		schedule_test(test_coroutine_started_in_mains_handler_has_no_exception),
		schedule_test(test_uncaught_exceptions_are_counted_per_coroutine),
	};
	return run_suite(tests);
}
