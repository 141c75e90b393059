/*
 * late_runtime_plugin.cpp - a C++ library that test_late_runtime.c loads
 * with dlopen, and with it the C++ runtime, which the program did not have
 * when it started.  It calls the library's functions that the program
 * exports (the program links the library and exports its symbols; on
 * Windows this library links against the program's import library).
 */
#include "late_runtime.h"

#include <exception>
#include <stdexcept>
#include <string.h>

#define EXPORTED extern "C" __attribute__((visibility("default")))

/* What `throw;` rethrows here: the message of the exception being handled. */
static void note_rethrown(struct handler *h)
{
	try {
		throw;
	} catch (const std::exception &e) {
		strncpy(h->rethrown, e.what(), sizeof h->rethrown - 1);
	}
}

static void yield_in_handler(struct schedule *S, void *ud)
{
	struct handler *h = (struct handler *)ud;
	try {
		throw std::runtime_error(h->throws);
	} catch (...) {
		coroutine_yield(S);
		note_rethrown(h);
	}
}

EXPORTED int new_handler(struct schedule *S, struct handler *h)
{
	return coroutine_new(S, yield_in_handler, h);
}

EXPORTED void resume_in_handler(struct schedule *S, int id, struct handler *h)
{
	try {
		throw std::runtime_error(h->throws);
	} catch (...) {
		coroutine_resume(S, id);
		note_rethrown(h);
	}
}

/* How many exceptions are unwinding (std::uncaught_exceptions is C++17,
 * clang++'s default is C++14). */
static int unwinding_now(void)
{
#if __cplusplus >= 201703L
	return std::uncaught_exceptions();
#else
	return std::uncaught_exception() ? 1 : 0;
#endif
}

static void note_exceptions_at_start(struct schedule *S, void *ud)
{
	struct exceptions_seen *seen = (struct exceptions_seen *)ud;
	(void)S;
	seen->handling = std::current_exception() != nullptr;
	seen->unwinding = unwinding_now();
}

EXPORTED int new_noter(struct schedule *S, struct exceptions_seen *seen)
{
	return coroutine_new(S, note_exceptions_at_start, seen);
}

static void wait_then_note_exceptions(struct schedule *S, void *ud)
{
	coroutine_yield(S);
	note_exceptions_at_start(S, (struct exceptions_seen *)ud + coroutine_running(S));
}

EXPORTED int new_waiter(struct schedule *S, struct exceptions_seen *seen)
{
	return coroutine_new(S, wait_then_note_exceptions, seen);
}

/* Yields when it is destroyed: while an exception unwinds through it. */
struct yield_when_destroyed {
	struct schedule *S;
	~yield_when_destroyed() { coroutine_yield(S); }
};

static void yield_while_unwinding(struct schedule *S, void *ud)
{
	(void)ud;
	try {
		yield_when_destroyed y = { S };
		throw std::runtime_error("unwinding");
	} catch (...) {
	}
}

EXPORTED int new_unwinder(struct schedule *S)
{
	return coroutine_new(S, yield_while_unwinding, NULL);
}

struct counts_destruction {
	int *count;
	~counts_destruction() { ++*count; }
};

static void wait_in_a_try(struct schedule *S, void *ud)
{
	int *seen = (int *)ud;
	counts_destruction c = { &seen[0] };
	try {
		coroutine_yield(S);
	} catch (...) {
		seen[1]++;
		throw;
	}
}

static void wait(struct schedule *S, void *ud)
{
	counts_destruction c = { &((int *)ud)[0] };
	coroutine_yield(S);
}

EXPORTED int new_counted_waiter(struct schedule *S, int seen[2], int catch_all)
{
	return coroutine_new(S, catch_all ? wait_in_a_try : wait, seen);
}
