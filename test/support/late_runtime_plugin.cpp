/*
 * late_runtime_plugin.cpp - a C++ library that test_late_runtime.c loads
 * with dlopen, and with it the C++ runtime, which the program did not have
 * when it started.  It calls the library's functions that the program
 * exports (the program links the library and exports its symbols; on
 * Windows this library links against the program's import library).
 */
#include "late_runtime.h"

#include <stdexcept>
#include <string.h>

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

extern "C" __attribute__((visibility("default"))) int new_handler(struct schedule *S, struct handler *h)
{
	return coroutine_new(S, yield_in_handler, h);
}

extern "C" __attribute__((visibility("default"))) void resume_in_handler(struct schedule *S, int id, struct handler *h)
{
	try {
		throw std::runtime_error(h->throws);
	} catch (...) {
		coroutine_resume(S, id);
		note_rethrown(h);
	}
}
