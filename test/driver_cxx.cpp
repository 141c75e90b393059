/*
 * driver_cxx.cpp - test_exceptions.cpp's checks without CMocka, for the
 * targets that have none (riscv64, Windows): C++ exceptions being handled
 * belong to the code that handles them, main and each coroutine, across
 * every switch.  What `throw;` rethrows in a catch handler, and what
 * std::uncaught_exceptions() counts during unwinding, do not change
 * because another coroutine (or main) caught or threw meanwhile, or
 * finished.
 *
 * It ends with the line "N passed, N failed" and exits non-zero on any
 * failure.
 */
#include "coroutine.h"
#include "plain.h"

#include <exception>
#include <stdexcept>
#include <string>

/* Each check gets a fresh schedule; why it failed, or NULL. */
typedef const char *check(struct schedule *S);

static void report_check(const char *name, check *c)
{
	struct schedule *S = coroutine_open();
	report(name, S == NULL ? "coroutine_open returned NULL" : c(S));
	coroutine_close(S);
}

/* ---- Rethrowing from a handler ---------------------------------------------- */

/* What `throw;` rethrows here, or "(none)" when no exception is being
 * handled (where `throw;` would call std::terminate). */
static std::string rethrow_current(void)
{
	if (!std::current_exception())
		return "(none)";
	try {
		throw;
	} catch (const std::exception &e) {
		return e.what();
	}
}

struct handler {
	const char *throws;   /* what it throws and catches */
	std::string rethrown; /* what `throw;` rethrew after its yield */
};

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

static const char *coroutines_yielding_in_handlers_rethrow_their_own(struct schedule *S)
{
	handler a = { "first", "" }, b = { "second", "" };
	int ia = coroutine_new(S, yield_in_handler, &a);
	int ib = coroutine_new(S, yield_in_handler, &b);
	coroutine_resume(S, ia); /* a yields inside its handler */
	coroutine_resume(S, ib); /* so does b */
	coroutine_resume(S, ia);
	coroutine_resume(S, ib);
	return a.rethrown == "first" && b.rethrown == "second" ? NULL : "a coroutine rethrew another's";
}

static const char *main_handler_around_a_resume_rethrows_mains(struct schedule *S)
{
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
	if (rethrown != "main's")
		return "main rethrew another exception than its own";
	return co.rethrown == "coroutine's" ? NULL : "the coroutine rethrew another exception than its own";
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
static const char *main_handler_rethrows_mains_after_a_coroutine_finished(struct schedule *S)
{
	std::string rethrown;
	int id = coroutine_new(S, catch_its_own, NULL);
	try {
		throw std::runtime_error("main's");
	} catch (...) {
		coroutine_resume(S, id);
		rethrown = rethrow_current();
	}
	if (coroutine_status(S, id) != COROUTINE_DEAD)
		return "the coroutine did not finish";
	return rethrown == "main's" ? NULL : "main's exception was lost";
}

/* A coroutine started inside main's handler is not inside it. */
static void note_current_exception(struct schedule *S, void *ud)
{
	(void)S;
	*(bool *)ud = std::current_exception() != nullptr;
}

static const char *coroutine_started_in_mains_handler_has_no_exception(struct schedule *S)
{
	bool has_exception = true;
	int id = coroutine_new(S, note_current_exception, &has_exception);
	try {
		throw std::runtime_error("main's");
	} catch (...) {
		coroutine_resume(S, id);
	}
	return has_exception ? "the coroutine saw main's exception" : NULL;
}

/* ---- std::uncaught_exceptions() during unwinding ---------------------------- */

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

static const char *uncaught_exceptions_are_counted_per_coroutine(struct schedule *S)
{
	unwinding u = { -1, -1 };
	int other = -1;
	int id = coroutine_new(S, unwind_through_a_yield, &u);
	coroutine_resume(S, id); /* it yields while unwinding */
	int in_main = std::uncaught_exceptions();
	coroutine_resume(S, coroutine_new(S, count_uncaught, &other));
	coroutine_resume(S, id);
	if (in_main != 0 || other != 0)
		return "main or another coroutine counted the unwinding coroutine's exception";
	if (u.before_yield != 1 || u.after_yield != 1)
		return "the unwinding coroutine lost count of its exception across its yield";
	if (coroutine_status(S, id) != COROUTINE_DEAD || std::uncaught_exceptions() != 0)
		return "the unwinding coroutine did not finish cleanly";
	return NULL;
}

int main(void)
{
	report_check("coroutines yielding in handlers rethrow their own",
		     coroutines_yielding_in_handlers_rethrow_their_own);
	report_check("main's handler around a resume rethrows main's", main_handler_around_a_resume_rethrows_mains);
	report_check("main's handler rethrows main's after a coroutine finished",
		     main_handler_rethrows_mains_after_a_coroutine_finished);
	report_check("a coroutine started in main's handler has no exception",
		     coroutine_started_in_mains_handler_has_no_exception);
	report_check("uncaught exceptions are counted per coroutine", uncaught_exceptions_are_counted_per_coroutine);
	return finish();
}
