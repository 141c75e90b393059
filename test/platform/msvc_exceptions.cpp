/*
 * msvc_exceptions.cpp - C++ exceptions inside coroutines on Microsoft's
 * C++ ABI (built by make windows-msvc-test with clang for
 * x86_64-pc-windows-msvc and run under wine): the checks of
 * test_exceptions.cpp, without CMocka and without a C++ standard library
 * (none is built for that target here), so what the library provides is
 * reached through the runtime's own exports:
 *
 *   - a throw inside a coroutine is caught there, before and after a yield;
 *   - `throw;` in a handler that yielded rethrows the coroutine's own
 *     exception, whoever caught what meanwhile, main's included;
 *   - a coroutine started inside main's handler handles no exception;
 *   - the count of uncaught exceptions (std::uncaught_exceptions()) in a
 *     destructor that yields during unwinding is the coroutine's own;
 *   - an exception_ptr taken in a coroutine's handler after a yield holds
 *     the coroutine's exception, and main rethrows it;
 *   - an exception that escapes a coroutine ends the program: main's
 *     handler around the resume never sees it;
 *   - the runtime's per-thread values themselves (the exception being
 *     handled, its context, the count of throws in flight) are each
 *     side's own across yields;
 *   - coroutine_delete runs the destructors on a suspended coroutine's
 *     frames, innermost first, inside a handler too, where main's
 *     exception stays main's; its unwinding enters no catch (...) (an
 *     unwinding on this ABI runs destructors only), not even one that
 *     would swallow it; a destructor that waits leaves the coroutine to
 *     be freed, and one that deletes other coroutines (an entity's
 *     children) has them ended before the delete returns; a wait below a
 *     noexcept function is unwound up to it, and one in a destructor that
 *     a throw runs is freed, nothing run again; coroutine_close deletes
 *     the suspended coroutines.
 *
 * It ends with the line "N passed, N failed" and exits non-zero on any
 * failure.
 */
#include "coroutine.h"
#include "plain.h"

#include <string.h>
#include <windows.h>

/* std::uncaught_exceptions() is this vcruntime function. */
extern "C" int __cdecl __uncaught_exceptions(void);

/* Where vcruntime keeps the thread's exception state (as coroutine.cpp
 * declares them). */
extern "C" void **__cdecl __current_exception(void);
extern "C" void **__cdecl __current_exception_context(void);
extern "C" int *__cdecl __processing_throw(void);

/* ---- std::exception_ptr, as msvcp140 implements it ---------------------- */

/* Two pointers, like the standard library's (a shared pointer). */
struct exception_ptr {
	void *p[2];
};

struct exception_ptr_functions {
	void (*create)(exception_ptr *);
	void (*destroy)(exception_ptr *);
	void (*current)(exception_ptr *);
	void (*rethrow)(const exception_ptr *);
};

static exception_ptr_functions ep;

static const char *find_exception_ptr_functions(void)
{
	HMODULE msvcp = LoadLibraryA("msvcp140.dll");
	if (msvcp == NULL)
		return "msvcp140.dll not found";
	ep.create = (void (*)(exception_ptr *))GetProcAddress(msvcp, "?__ExceptionPtrCreate@@YAXPEAX@Z");
	ep.destroy = (void (*)(exception_ptr *))GetProcAddress(msvcp, "?__ExceptionPtrDestroy@@YAXPEAX@Z");
	ep.current = (void (*)(exception_ptr *))GetProcAddress(msvcp, "?__ExceptionPtrCurrentException@@YAXPEAX@Z");
	ep.rethrow = (void (*)(const exception_ptr *))GetProcAddress(msvcp, "?__ExceptionPtrRethrow@@YAXPEBX@Z");
	if (!ep.create || !ep.destroy || !ep.current || !ep.rethrow)
		return "msvcp140.dll lacks the exception_ptr functions";
	return NULL;
}

static bool is_null(const exception_ptr *e)
{
	return e->p[0] == NULL && e->p[1] == NULL;
}

/* ---- A throw caught in its coroutine -------------------------------------- */

struct caught {
	int before_yield; /* what the catch caught, 0 if none */
	int after_yield;
};

static void throw_and_catch_twice(struct schedule *S, void *ud)
{
	caught *c = (caught *)ud;
	try {
		throw 1;
	} catch (int e) {
		c->before_yield = e;
	}
	coroutine_yield(S);
	try {
		throw 2;
	} catch (int e) {
		c->after_yield = e;
	}
}

static const char *throw_is_caught_in_the_coroutine(void)
{
	caught c = { 0, 0 };
	struct schedule *S = coroutine_open();
	int id = coroutine_new(S, throw_and_catch_twice, &c);
	coroutine_resume(S, id);
	coroutine_resume(S, id);
	coroutine_close(S);
	if (c.before_yield != 1)
		return "a throw before any yield was not caught by the coroutine's handler";
	if (c.after_yield != 2)
		return "a throw after a yield was not caught by the coroutine's handler";
	return NULL;
}

/* ---- Rethrowing from a handler that yielded ------------------------------- */

/* What `throw;` rethrows here: the int being handled. */
static int rethrow_current(void)
{
	try {
		throw;
	} catch (int e) {
		return e;
	}
	return -1;
}

struct handler {
	int throws;   /* what it throws and catches */
	int rethrown; /* what `throw;` rethrew after its yield */
};

static void yield_in_handler(struct schedule *S, void *ud)
{
	handler *h = (handler *)ud;
	try {
		throw h->throws;
	} catch (...) {
		coroutine_yield(S);
		h->rethrown = rethrow_current();
	}
}

static const char *coroutines_yielding_in_handlers_rethrow_their_own(void)
{
	handler a = { 1, 0 }, b = { 2, 0 };
	struct schedule *S = coroutine_open();
	int ia = coroutine_new(S, yield_in_handler, &a);
	int ib = coroutine_new(S, yield_in_handler, &b);
	coroutine_resume(S, ia); /* a yields inside its handler */
	coroutine_resume(S, ib); /* so does b */
	coroutine_resume(S, ia);
	coroutine_resume(S, ib);
	coroutine_close(S);
	if (a.rethrown != 1 || b.rethrown != 2)
		return "a coroutine's `throw;` rethrew another's exception";
	return NULL;
}

static const char *main_handler_around_a_resume_rethrows_mains(void)
{
	handler co = { 2, 0 };
	int rethrown = 0;
	struct schedule *S = coroutine_open();
	int id = coroutine_new(S, yield_in_handler, &co);
	try {
		throw 1;
	} catch (...) {
		coroutine_resume(S, id); /* it catches its own and yields there */
		rethrown = rethrow_current();
	}
	coroutine_resume(S, id);
	coroutine_close(S);
	if (rethrown != 1)
		return "main's `throw;` rethrew the coroutine's exception";
	if (co.rethrown != 2)
		return "the coroutine's `throw;` rethrew main's exception";
	return NULL;
}

/* A coroutine started inside main's handler is not inside it. */
static void note_current_exception(struct schedule *S, void *ud)
{
	(void)S;
	exception_ptr e;
	ep.create(&e);
	ep.current(&e);
	*(bool *)ud = !is_null(&e);
	ep.destroy(&e);
}

static const char *coroutine_started_in_mains_handler_has_no_exception(void)
{
	bool has_exception = true;
	struct schedule *S = coroutine_open();
	int id = coroutine_new(S, note_current_exception, &has_exception);
	try {
		throw 1;
	} catch (...) {
		coroutine_resume(S, id);
	}
	coroutine_close(S);
	return has_exception ? "a coroutine started in main's handler sees main's exception" : NULL;
}

/* ---- std::uncaught_exceptions() during unwinding --------------------------- */

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
		u->before_yield = __uncaught_exceptions();
		coroutine_yield(S);
		u->after_yield = __uncaught_exceptions();
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
	*(int *)ud = __uncaught_exceptions();
}

static const char *uncaught_exceptions_are_counted_per_coroutine(void)
{
	unwinding u = { -1, -1 };
	int other = -1, in_main;
	struct schedule *S = coroutine_open();
	int id = coroutine_new(S, unwind_through_a_yield, &u);
	coroutine_resume(S, id); /* it yields while unwinding */
	in_main = __uncaught_exceptions();
	coroutine_resume(S, coroutine_new(S, count_uncaught, &other));
	coroutine_resume(S, id);
	int dead = coroutine_status(S, id) == COROUTINE_DEAD;
	coroutine_close(S);
	if (in_main != 0 || other != 0)
		return "main or another coroutine counts the yielding coroutine's uncaught exception";
	if (u.before_yield != 1 || u.after_yield != 1)
		return "the unwinding coroutine's count changed across its yield";
	if (!dead || __uncaught_exceptions() != 0)
		return "the unwinding coroutine did not finish cleanly";
	return NULL;
}

/* ---- exception_ptr across coroutines ---------------------------------------- */

/* Takes an exception_ptr to its own exception in its handler, after a yield. */
static void capture_after_yield(struct schedule *S, void *ud)
{
	try {
		throw 2;
	} catch (int) {
		coroutine_yield(S);
		ep.current((exception_ptr *)ud);
	}
}

static const char *exception_ptr_crosses_coroutines(void)
{
	exception_ptr e;
	int rethrown = 0;
	ep.create(&e);
	struct schedule *S = coroutine_open();
	int id = coroutine_new(S, capture_after_yield, &e);
	coroutine_resume(S, id);
	try {
		throw 1; /* main handles another exception while it is suspended */
	} catch (int) {
		coroutine_resume(S, id);
	}
	coroutine_close(S);
	if (is_null(&e))
		return "the coroutine's exception_ptr is null";
	try {
		ep.rethrow(&e);
	} catch (int v) {
		rethrown = v;
	}
	ep.destroy(&e);
	return rethrown == 2 ? NULL : "the coroutine's exception_ptr holds another exception";
}

/* ---- The runtime's per-thread values, read directly ------------------------- */

/*
 * The checks above see the state's effects, which can come out right with
 * part of it left behind: under wine they pass with the context of the
 * exception being handled never saved.  So the three values the library
 * swaps are read here themselves, on each side (main in its handler, a
 * coroutine in its handler, one unwinding) before the others run and after.
 */
struct eh_values {
	void *exception;      /* *__current_exception() */
	void *context;        /* *__current_exception_context() */
	int processing_throw; /* *__processing_throw() */
};

static eh_values eh_now(void)
{
	eh_values v = { *__current_exception(), *__current_exception_context(), *__processing_throw() };
	return v;
}

/* Which of the values differ between a and b, or NULL. */
static const char *changed_value(const eh_values &a, const eh_values &b)
{
	if (a.exception != b.exception)
		return "exception";
	if (a.context != b.context)
		return "exception context";
	if (a.processing_throw != b.processing_throw)
		return "count of throws in flight";
	return NULL;
}

/* A side's values before it let the others run, and after. */
struct kept {
	eh_values before;
	eh_values after;
};

/* Yields inside its handler: an exception and its context are set. */
static void hold_values_in_handler(struct schedule *S, void *ud)
{
	kept *k = (kept *)ud;
	try {
		throw 1;
	} catch (int) {
		k->before = eh_now();
		coroutine_yield(S);
		k->after = eh_now();
	}
}

/* Yields from a destructor while its throw unwinds: one throw in flight. */
struct holds_values_when_destroyed {
	struct schedule *S;
	kept *k;
	~holds_values_when_destroyed()
	{
		k->before = eh_now();
		coroutine_yield(S);
		k->after = eh_now();
	}
};

static void hold_values_while_unwinding(struct schedule *S, void *ud)
{
	try {
		holds_values_when_destroyed h = { S, (kept *)ud };
		throw 2;
	} catch (int) {
	}
}

static const char *exception_values_stay_with_each_side(void)
{
	kept handling, unwinding, mains;
	memset(&handling, 0, sizeof handling);
	memset(&unwinding, 0, sizeof unwinding);
	memset(&mains, 0, sizeof mains);
	struct schedule *S = coroutine_open();
	int ih = coroutine_new(S, hold_values_in_handler, &handling);
	int iu = coroutine_new(S, hold_values_while_unwinding, &unwinding);
	try {
		throw 0;
	} catch (int) {
		mains.before = eh_now();
		coroutine_resume(S, ih); /* each yields with its values set */
		coroutine_resume(S, iu);
		try {
			throw 3; /* main throws and catches another meanwhile */
		} catch (int) {
		}
		coroutine_resume(S, ih);
		coroutine_resume(S, iu);
		mains.after = eh_now();
	}
	coroutine_close(S);
	if (handling.before.exception == NULL || handling.before.context == NULL ||
	    unwinding.before.processing_throw == 0)
		return "the runtime set no exception, context or throw in flight: nothing to tell apart";
	static const char *const side[] = { "main's", "a coroutine's in its handler", "a coroutine's while unwinding" };
	const kept *sides[] = { &mains, &handling, &unwinding };
	static char why[128];
	for (int i = 0; i < 3; i++) {
		const char *what = changed_value(sides[i]->before, sides[i]->after);
		if (what != NULL) {
			snprintf(why, sizeof why, "%s %s changed while the others ran", side[i], what);
			return why;
		}
	}
	return NULL;
}

/* ---- Deleting a coroutine -------------------------------------------------- */

/* The names of the objects destroyed, one letter each, in order. */
static char destroyed[16];

struct noted {
	char name;
	~noted()
	{
		size_t n = strlen(destroyed);
		if (n + 1 < sizeof destroyed)
			destroyed[n] = name;
	}
};

static __declspec(noinline) void inner_frame(struct schedule *S)
{
	noted a = { 'a' }, b = { 'b' };
	coroutine_yield(S);
}

static __declspec(noinline) void middle_frame(struct schedule *S)
{
	noted m = { 'm' };
	inner_frame(S);
}

static void three_frames(struct schedule *S, void *ud)
{
	(void)ud;
	noted o = { 'o' };
	middle_frame(S);
}

static void count_starts(struct schedule *S, void *ud)
{
	(void)S;
	++*(int *)ud;
}

/* Runs f's coroutine, alone in a new schedule, to its first wait and
 * deletes it there, then starts another: NULL if the slot was emptied and
 * the other started, else what went wrong.  destroyed holds what the
 * delete destroyed. */
static const char *delete_at_first_wait(coroutine_func f)
{
	int starts = 0;
	struct schedule *S = coroutine_open();
	int id = coroutine_new(S, f, NULL);
	coroutine_resume(S, id);
	memset(destroyed, 0, sizeof destroyed);
	coroutine_delete(S, id);
	int status = coroutine_status(S, id);
	coroutine_resume(S, coroutine_new(S, count_starts, &starts));
	coroutine_close(S);
	if (status != COROUTINE_DEAD)
		return "the deleted coroutine's slot was not emptied";
	return starts == 1 ? NULL : "the next coroutine did not start";
}

static const char *delete_runs_destructors_innermost_first(void)
{
	const char *why = delete_at_first_wait(three_frames);
	if (why == NULL && strcmp(destroyed, "bamo") != 0)
		return "the destructors did not run once each, innermost first";
	return why;
}

/* Waits in its handler.  (Under wine, vcruntime does not run the
 * destructors of the objects of a catch block that a foreign unwinding
 * leaves: none is made there.) */
static void wait_in_a_handler(struct schedule *S, void *ud)
{
	(void)ud;
	noted outside = { 'o' };
	try {
		throw 2;
	} catch (...) {
		coroutine_yield(S);
	}
}

static const char *delete_in_a_handler_keeps_mains_exception(void)
{
	int seen_by_main = 0;
	struct schedule *S = coroutine_open();
	int id = coroutine_new(S, wait_in_a_handler, NULL);
	coroutine_resume(S, id);
	memset(destroyed, 0, sizeof destroyed);
	try {
		throw 1;
	} catch (...) {
		coroutine_delete(S, id);
		seen_by_main = rethrow_current();
	}
	int status = coroutine_status(S, id);
	coroutine_close(S);
	if (status != COROUTINE_DEAD || strcmp(destroyed, "o") != 0)
		return "the coroutine was not deleted, its destructor run";
	return seen_by_main == 1 ? NULL : "main's `throw;` did not rethrow main's exception after the delete";
}

/* A catch (...) around the wait that rethrows, or that would swallow the
 * unwinding (as code written for a thread's cancellation swallows what is
 * not abi::__forced_unwind): it is entered in neither case, and the
 * unwinding goes on to the end. */
static bool handler_rethrows;

static void catch_all_around_a_yield(struct schedule *S, void *ud)
{
	(void)ud;
	noted outside = { 'o' };
	try {
		noted inside = { 'i' };
		coroutine_yield(S);
	} catch (...) {
		noted in_handler = { 'h' };
		if (handler_rethrows)
			throw;
	}
}

static const char *delete_enters_no_catch_all(bool rethrows)
{
	handler_rethrows = rethrows;
	const char *why = delete_at_first_wait(catch_all_around_a_yield);
	if (why == NULL && strcmp(destroyed, "io") != 0)
		return "not the destructors inside then outside the try, and no handler";
	return why;
}

/* A destructor that waits during the unwinding: the coroutine is freed
 * there, the objects outside it never destroyed. */
struct waits_when_destroyed {
	struct schedule *S;
	~waits_when_destroyed()
	{
		size_t n = strlen(destroyed);
		destroyed[n] = 'w';
		coroutine_yield(S);
		destroyed[n + 1] = 'b';
	}
};

static void wait_with_a_destructor_that_waits(struct schedule *S, void *ud)
{
	(void)ud;
	noted outside = { 'o' };
	waits_when_destroyed w = { S };
	noted inside = { 'i' };
	coroutine_yield(S);
}

static const char *destructor_that_waits_leaves_its_coroutine_to_be_freed(void)
{
	const char *why = delete_at_first_wait(wait_with_a_destructor_that_waits);
	if (why == NULL && strcmp(destroyed, "iw") != 0)
		return "not the destructor inside, then the one that waits, alone";
	return why;
}

/* A wait below a noexcept function: the delete unwinds the frames below
 * it, and the coroutine ends there (std::terminate, which the library
 * handles while it unwinds); the frames above are not unwound. */
static __declspec(noinline) void wait_below(struct schedule *S)
{
	noted below = { 'b' };
	coroutine_yield(S);
}

static __declspec(noinline) void call_without_exceptions(struct schedule *S) noexcept
{
	wait_below(S);
}

static void wait_below_a_noexcept_function(struct schedule *S, void *ud)
{
	(void)ud;
	noted above = { 'a' };
	call_without_exceptions(S);
}

static const char *delete_below_a_noexcept_function_ends_it_there(void)
{
	const char *why = delete_at_first_wait(wait_below_a_noexcept_function);
	if (why == NULL && strcmp(destroyed, "b") != 0)
		return "not the frame below the noexcept function alone";
	return why;
}

/* A destructor that a throw's unwinding runs, and that waits: vcruntime
 * runs it inside its unwinding, and a delete that unwound through that
 * would run it again; the coroutine is freed as it lies, nothing run. */
static void wait_in_a_destructor_run_by_a_throw(struct schedule *S, void *ud)
{
	(void)ud;
	noted outside = { 'o' };
	try {
		noted inside = { 'i' };
		waits_when_destroyed w = { S };
		throw 4;
	} catch (...) {
		noted in_handler = { 'h' };
	}
}

static const char *destructor_run_by_a_throw_that_waits_is_not_run_again(void)
{
	const char *why = delete_at_first_wait(wait_in_a_destructor_run_by_a_throw);
	if (why == NULL && destroyed[0] != '\0')
		return "the delete ran code of a coroutine waiting inside a throw's unwinding";
	return why;
}

/* An entity whose destructor deletes its children, coroutines 1 and 2:
 * they are ended, after it, before the delete returns. */
struct children {
	struct schedule *S;
	~children()
	{
		coroutine_delete(S, 1);
		coroutine_delete(S, 2);
	}
};

static void wait_noting_own_id(struct schedule *S, void *ud);

static void parent_entity(struct schedule *S, void *ud)
{
	(void)ud;
	noted self = { 'p' };
	children c = { S };
	coroutine_new(S, wait_noting_own_id, NULL);
	coroutine_new(S, wait_noting_own_id, NULL);
	coroutine_yield(S);
}

static const char *destructor_that_deletes_children_has_them_ended(void)
{
	struct schedule *S = coroutine_open();
	coroutine_resume(S, coroutine_new(S, parent_entity, NULL)); /* 0, which makes 1 and 2 */
	coroutine_resume(S, 1);
	coroutine_resume(S, 2);
	memset(destroyed, 0, sizeof destroyed);
	coroutine_delete(S, 0);
	int left = coroutine_next(S, -1);
	coroutine_close(S);
	if (strcmp(destroyed, "p12") != 0)
		return "not the parent, then its children, once each";
	return left == -1 ? NULL : "a coroutine of the family is left";
}

static void wait_noting_own_id(struct schedule *S, void *ud)
{
	(void)ud;
	noted mine = { (char)('0' + coroutine_running(S)) };
	coroutine_yield(S);
}

static const char *close_deletes_suspended_coroutines_in_id_order(void)
{
	struct schedule *S = coroutine_open();
	for (int i = 0; i < 3; i++)
		coroutine_new(S, wait_noting_own_id, NULL);
	coroutine_resume(S, 2);
	coroutine_resume(S, 0); /* 1 never starts */
	memset(destroyed, 0, sizeof destroyed);
	coroutine_close(S);
	return strcmp(destroyed, "02") == 0 ? NULL : "close did not run the suspended coroutines' destructors in id order";
}

/* ---- An exception that escapes a coroutine ----------------------------------- */

static void throw_out(struct schedule *S, void *ud)
{
	(void)S, (void)ud;
	throw 3;
}

/* In a child process (this program with the argument "escape"): exits 0 if
 * main's handler caught the escaped exception, 1 if the resume returned. */
static int escape(void)
{
	struct schedule *S = coroutine_open();
	try {
		coroutine_resume(S, coroutine_new(S, throw_out, NULL));
	} catch (...) {
		return 0;
	}
	return 1;
}

static const char *escaping_exception_ends_the_program(void)
{
	char command[MAX_PATH + 16] = "\"";
	STARTUPINFOA si;
	PROCESS_INFORMATION pi;
	DWORD status = 0;
	memset(&si, 0, sizeof si);
	si.cb = sizeof si;
	GetModuleFileNameA(NULL, command + 1, MAX_PATH);
	strcat(command, "\" escape");
	/* The child's report of the unhandled exception goes nowhere. */
	SetErrorMode(SEM_NOGPFAULTERRORBOX);
	if (!CreateProcessA(NULL, command, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi))
		return "could not start the child";
	WaitForSingleObject(pi.hProcess, INFINITE);
	GetExitCodeProcess(pi.hProcess, &status);
	CloseHandle(pi.hThread);
	CloseHandle(pi.hProcess);
	if (status == 0)
		return "main's handler caught an exception thrown in a coroutine";
	if (status == 1)
		return "coroutine_resume returned after an exception escaped the coroutine";
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "escape") == 0)
		return escape();
	setvbuf(stdout, NULL, _IONBF, 0); /* a crash must not take the lines before it along */
	const char *missing = find_exception_ptr_functions();
	report("a throw is caught in its coroutine, before and after a yield", throw_is_caught_in_the_coroutine());
	report("coroutines yielding in handlers rethrow their own",
	       coroutines_yielding_in_handlers_rethrow_their_own());
	report("main's handler around a resume rethrows main's", main_handler_around_a_resume_rethrows_mains());
	report("a coroutine started in main's handler has no exception",
	       missing ? missing : coroutine_started_in_mains_handler_has_no_exception());
	report("uncaught exceptions are counted per coroutine", uncaught_exceptions_are_counted_per_coroutine());
	report("an exception_ptr crosses coroutines", missing ? missing : exception_ptr_crosses_coroutines());
	report("the runtime's exception values stay with each side", exception_values_stay_with_each_side());
	report("an exception escaping a coroutine ends the program", escaping_exception_ends_the_program());
	report("a delete runs the destructors, innermost first", delete_runs_destructors_innermost_first());
	report("a delete in a handler keeps main's exception main's", delete_in_a_handler_keeps_mains_exception());
	report("a delete enters no catch (...)", delete_enters_no_catch_all(true));
	report("a delete enters no catch (...) that would swallow it", delete_enters_no_catch_all(false));
	report("a destructor that waits leaves its coroutine to be freed",
	       destructor_that_waits_leaves_its_coroutine_to_be_freed());
	report("a delete below a noexcept function ends the coroutine there",
	       delete_below_a_noexcept_function_ends_it_there());
	report("a destructor run by a throw that waits is not run again",
	       destructor_run_by_a_throw_that_waits_is_not_run_again());
	report("a destructor that deletes children has them ended", destructor_that_deletes_children_has_them_ended());
	report("close deletes the suspended coroutines, in id order", close_deletes_suspended_coroutines_in_id_order());
	return finish();
}
