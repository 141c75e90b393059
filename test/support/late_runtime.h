/*
 * late_runtime.h - what test_late_runtime.c, a C program, finds in the C++
 * library it loads once it runs (late_runtime_plugin.cpp).
 */
#ifndef LATE_RUNTIME_H
#define LATE_RUNTIME_H

#include "coroutine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a coroutine or main throws and catches, and what `throw;` rethrew
 * in its handler after the coroutines switched. */
struct handler {
	const char *throws;
	char rethrown[32];
};

/* Adds a coroutine that throws h->throws, catches it, yields inside the
 * handler and, resumed, notes in h->rethrown what `throw;` rethrows. */
typedef int (*new_handler_func)(struct schedule *S, struct handler *h);
/* Main (the caller) throws h->throws, catches it, resumes id inside the
 * handler, then notes in h->rethrown what `throw;` rethrows. */
typedef void (*resume_in_handler_func)(struct schedule *S, int id, struct handler *h);

/* What a coroutine finds in its runtime at its start: whether an exception
 * is being handled (std::current_exception), and how many are unwinding
 * (std::uncaught_exceptions).  A new coroutine must find neither. */
struct exceptions_seen {
	int handling;
	int unwinding;
};

/* Adds a coroutine that notes in *seen what it finds at its start. */
typedef int (*new_noter_func)(struct schedule *S, struct exceptions_seen *seen);
/* Adds a coroutine that throws, yields while the exception unwinds through
 * it (in a destructor), then, resumed, catches it and finishes. */
typedef int (*new_unwinder_func)(struct schedule *S);
/* Adds a coroutine that yields, handling no exception, then, resumed, notes
 * in seen[its id] what it finds (a copy of it, in its own). */
typedef int (*new_waiter_func)(struct schedule *S, struct exceptions_seen *seen);

/* Adds a coroutine that waits with an object that counts its destructions
 * in seen[0] (coroutine_delete's unwinding); with catch_all, inside a try
 * whose catch (...) counts in seen[1] the times it was entered, then
 * rethrows. */
typedef int (*new_counted_waiter_func)(struct schedule *S, int seen[2], int catch_all);

#ifdef __cplusplus
}
#endif

#endif
