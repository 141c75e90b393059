/*
 * test_delete_cxx.cpp - coroutine_delete from C++: the destructors of the
 * objects on a deleted coroutine's frames run, innermost first, once, as
 * when a thread is cancelled; the coroutine runs them with its own
 * exceptions being handled, not main's; a catch (...) is entered and must
 * rethrow; a destructor that yields or resumes, or a catch (...) that
 * swallows the unwinding, stops the program with one line; and
 * coroutine_close deletes the suspended coroutines, in id order.  (From C,
 * with cleanup attributes: test_delete.c.)
 *
 * Built with -DTEST_PLAIN it needs no CMocka (test/support/plain_suite.h):
 * so it runs under wine with MinGW's libgcc (make windows-test) and where
 * CMocka does not (riscv64).  The cases that must stop the program run in
 * a child process (child.h), this program run again with "--child NAME"
 * where there is no fork.
 */
#ifdef TEST_PLAIN
#include "plain_suite.h"
#include "child.h"
#else
#include "support.h"
#endif

#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#define NOINLINE __attribute__((noinline))
#if defined(__has_feature)
#define ASAN_BY_FEATURE __has_feature(address_sanitizer) /* clang's */
#else
#define ASAN_BY_FEATURE 0
#endif

/* ---- Objects that note their destruction ------------------------------------ */

/* The names of the objects destroyed, in the order they were. */
static std::vector<std::string> destroyed;

/* Owns a heap string (a leak checker sees one that is never destroyed),
 * and notes its name when destroyed: a second destruction is noted too. */
struct noted {
	std::string name;
	explicit noted(const char *n) : name(n) {}
	~noted() { destroyed.push_back(name); }
};

static std::string destroyed_in_order(void)
{
	std::string all;
	for (size_t i = 0; i < destroyed.size(); i++)
		all += (i ? " " : "") + destroyed[i];
	return all;
}

/* ---- Several frames --------------------------------------------------------- */

NOINLINE static void inner_frame(struct schedule *S)
{
	noted a("inner-a"), b("inner-b");
	coroutine_yield(S);
	destroyed.push_back("inner resumed");
}

NOINLINE static void middle_frame(struct schedule *S)
{
	noted a("middle");
	std::string held(200, 'm'); /* on the heap: leaks unless destroyed */
	inner_frame(S);
	destroyed.push_back("middle resumed" + held);
}

static void three_frames(struct schedule *S, void *ud)
{
	(void)ud;
	noted a("outer");
	middle_frame(S);
}

static void test_delete_runs_destructors_innermost_first_once(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int id = coroutine_new(S, three_frames, NULL);
	coroutine_resume(S, id);
	destroyed.clear();
	coroutine_delete(S, id);
	assert_string_equal(destroyed_in_order().c_str(), "inner-b inner-a middle outer");
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
}

/* ---- What a destructor run by a delete sees ----------------------------------- */

struct sees_running {
	struct schedule *S;
	int *running, *status;
	~sees_running()
	{
		*running = coroutine_running(S);
		*status = coroutine_status(S, *running);
	}
};

struct seen {
	int running, status;
};

static void wait_seeing_running(struct schedule *S, void *ud)
{
	seen *s = (seen *)ud;
	sees_running r = { S, &s->running, &s->status };
	coroutine_yield(S);
}

static void test_destructor_run_by_a_delete_sees_its_coroutine_running(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	seen s = { -2, -2 };
	int other = coroutine_new(S, three_frames, NULL);
	int id = coroutine_new(S, wait_seeing_running, &s);
	coroutine_resume(S, other);
	coroutine_resume(S, id);
	coroutine_delete(S, id);
	assert_int_equal(s.running, id);
	assert_int_equal(s.status, COROUTINE_RUNNING);
	assert_int_equal(coroutine_running(S), -1);
	destroyed.clear();
}

/* ---- Exceptions being handled ---------------------------------------------- */

/* What `throw;` rethrows here: the message of the exception being handled. */
static std::string rethrow_current(void)
{
	try {
		throw;
	} catch (const std::exception &e) {
		return e.what();
	}
}

/* An exception whose live copies are counted. */
static int live_exceptions;

struct counted : std::runtime_error {
	explicit counted(const char *what) : std::runtime_error(what) { live_exceptions++; }
	counted(const counted &other) : std::runtime_error(other) { live_exceptions++; }
	~counted() { live_exceptions--; }
};

/* Notes, when destroyed, what `throw;` would rethrow there. */
struct notes_the_exception {
	std::string *rethrown;
	~notes_the_exception() { *rethrown = rethrow_current(); }
};

static void wait_in_a_handler(struct schedule *S, void *ud)
{
	try {
		throw counted("coroutine's");
	} catch (const counted &) {
		notes_the_exception n = { (std::string *)ud };
		coroutine_yield(S);
	}
}

static void test_delete_in_a_handler_runs_with_the_coroutines_own_exception(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	std::string seen_by_destructor, seen_by_main;
	int id = coroutine_new(S, wait_in_a_handler, &seen_by_destructor);
	coroutine_resume(S, id); /* it waits in its handler */
	assert_int_equal(live_exceptions, 1);
	try {
		throw std::runtime_error("main's");
	} catch (...) {
		coroutine_delete(S, id);
		seen_by_main = rethrow_current();
	}
	assert_string_equal(seen_by_destructor.c_str(), "coroutine's");
	assert_string_equal(seen_by_main.c_str(), "main's");
	assert_int_equal(live_exceptions, 0); /* the handler ended: its exception is gone */
	assert_true(std::current_exception() == nullptr);
}

/* While main unwinds an exception of its own, a destructor of main's
 * deletes: the coroutine's destructors count no uncaught exception (its
 * own count), and main's exception goes on to main's handler. */
struct counts_uncaught {
	int *count;
	~counts_uncaught() { *count = std::uncaught_exceptions(); }
};

static void wait_counting_uncaught(struct schedule *S, void *ud)
{
	counts_uncaught c = { (int *)ud };
	coroutine_yield(S);
}

struct deletes_when_destroyed {
	struct schedule *S;
	int id;
	int *mains_uncaught;
	~deletes_when_destroyed()
	{
		coroutine_delete(S, id);
		*mains_uncaught = std::uncaught_exceptions();
	}
};

static void test_delete_while_main_unwinds_an_exception(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int coroutines_uncaught = -1, mains_uncaught = -1;
	std::string caught;
	int id = coroutine_new(S, wait_counting_uncaught, &coroutines_uncaught);
	coroutine_resume(S, id);
	try {
		deletes_when_destroyed d = { S, id, &mains_uncaught };
		throw std::runtime_error("main's");
	} catch (const std::exception &e) {
		caught = e.what();
	}
	assert_int_equal(coroutines_uncaught, 0);
	assert_int_equal(mains_uncaught, 1);
	assert_string_equal(caught.c_str(), "main's");
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
}

/* ---- catch (...) -------------------------------------------------------------- */

static void rethrow_from_catch_all(struct schedule *S, void *ud)
{
	(void)ud;
	noted outside("outside the try");
	try {
		noted inside("inside the try");
		coroutine_yield(S);
	} catch (...) {
		destroyed.push_back("catch (...)");
		throw;
	}
}

static void test_catch_all_that_rethrows_lets_the_unwinding_go_on(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int id = coroutine_new(S, rethrow_from_catch_all, NULL);
	coroutine_resume(S, id);
	destroyed.clear();
	coroutine_delete(S, id);
	assert_string_equal(destroyed_in_order().c_str(), "inside the try catch (...) outside the try");
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
}

/* ---- Closing -------------------------------------------------------------------- */

static void note_own_id_when_destroyed(struct schedule *S, void *ud)
{
	(void)ud;
	noted mine(std::to_string(coroutine_running(S)).c_str());
	coroutine_yield(S);
}

static void test_close_deletes_suspended_coroutines_in_id_order(void **state)
{
	struct schedule *S = coroutine_open();
	(void)state;
	for (int i = 0; i < 4; i++)
		coroutine_new(S, note_own_id_when_destroyed, NULL);
	coroutine_resume(S, 3);
	coroutine_resume(S, 1);
	coroutine_resume(S, 0); /* 2 never starts */
	destroyed.clear();
	coroutine_close(S);
	assert_string_equal(destroyed_in_order().c_str(), "0 1 3");
}

/* ---- The others, untouched ------------------------------------------------------ */

struct keeper {
	std::string text; /* what it holds on its frames, as it should be */
	bool intact;
};

/* Keeps a string and a vector of strings on its frame across two yields. */
static void keep_strings(struct schedule *S, void *ud)
{
	keeper *k = (keeper *)ud;
	std::string mine = k->text;
	std::vector<std::string> copies(3, mine);
	coroutine_yield(S);
	coroutine_yield(S);
	k->intact = mine == k->text && copies[2] == k->text;
}

static void test_other_coroutines_keep_their_objects(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	keeper k[3] = { { std::string(100, 'a'), false }, { std::string(3000, 'b'), false },
			{ std::string(50, 'c'), false } };
	int id[3];
	for (int i = 0; i < 3; i++)
		coroutine_resume(S, id[i] = coroutine_new(S, keep_strings, &k[i]));
	coroutine_delete(S, id[1]);
	coroutine_resume(S, id[0]);
	coroutine_resume(S, id[2]);
	coroutine_delete(S, id[2]); /* the owner */
	coroutine_resume(S, id[0]);
	assert_true(k[0].intact);
	assert_false(k[1].intact);
	assert_false(k[2].intact);
	assert_int_equal(coroutine_status(S, id[0]), COROUTINE_DEAD);
}

/* Where deep's array escapes to: clang keeps all of an array whose address
 * escapes, and splits one that does not into the bytes it uses. */
static volatile char *volatile bulk_seen;

/* Frames of a few KiB each, an object on each. */
NOINLINE static void deep(struct schedule *S, int depth)
{
	volatile char bulk[2500];
	bulk_seen = bulk;
	noted here(std::to_string(depth).c_str());
	bulk[0] = (char)depth;
	if (depth > 0)
		deep(S, depth - 1);
	else
		coroutine_yield(S);
	bulk[1] = bulk[0];
}

static void five_deep_frames(struct schedule *S, void *ud)
{
	(void)ud;
	deep(S, 4);
}

static void test_delete_a_deep_slice(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int id = coroutine_new(S, five_deep_frames, NULL);
	coroutine_resume(S, id);
#if !defined(__SANITIZE_ADDRESS__) && !ASAN_BY_FEATURE /* ASan may keep the frames' arrays off the run stack */
	assert_true(coroutine_stack_size(S, id) > 12000);
#endif
	coroutine_resume(S, coroutine_new(S, three_frames, NULL)); /* the run stack changes hands */
	destroyed.clear();
	coroutine_delete(S, id);
	assert_string_equal(destroyed_in_order().c_str(), "0 1 2 3 4");
}

/* ---- Misuse, each in a child process ------------------------------------------- */

static struct schedule *child_schedule;

static void swallow_the_unwinding(struct schedule *S, void *ud)
{
	(void)ud;
	try {
		coroutine_yield(S);
	} catch (...) {
	}
}

static void catch_all_that_swallows(void)
{
	struct schedule *S = coroutine_open();
	coroutine_resume(S, coroutine_new(S, swallow_the_unwinding, NULL));
	coroutine_delete(S, 0);
}

struct yields_when_destroyed {
	~yields_when_destroyed() { coroutine_yield(child_schedule); }
};

static void wait_with_a_destructor_that_yields(struct schedule *S, void *ud)
{
	(void)ud;
	yields_when_destroyed y;
	coroutine_yield(S);
}

static void destructor_that_yields(void)
{
	child_schedule = coroutine_open();
	coroutine_resume(child_schedule, coroutine_new(child_schedule, wait_with_a_destructor_that_yields, NULL));
	coroutine_delete(child_schedule, 0);
}

struct resumes_when_destroyed {
	~resumes_when_destroyed() { coroutine_resume(child_schedule, 0); }
};

static void wait_with_a_destructor_that_resumes(struct schedule *S, void *ud)
{
	(void)ud;
	resumes_when_destroyed r;
	coroutine_yield(S);
}

static void yield_forever(struct schedule *S, void *ud)
{
	(void)ud;
	for (;;)
		coroutine_yield(S);
}

static void destructor_that_resumes(void)
{
	child_schedule = coroutine_open();
	coroutine_resume(child_schedule, coroutine_new(child_schedule, yield_forever, NULL));
	coroutine_resume(child_schedule, coroutine_new(child_schedule, wait_with_a_destructor_that_resumes, NULL));
	coroutine_delete(child_schedule, 1);
}

static const struct child_case child_cases[] = {
	{ "catch-all-that-swallows", catch_all_that_swallows },
	{ "destructor-that-yields", destructor_that_yields },
	{ "destructor-that-resumes", destructor_that_resumes },
	{ NULL, NULL }
};

static void test_catch_all_that_swallows_the_unwinding_aborts(void **state)
{
	(void)state;
	assert_child_aborts_with(child_cases, catch_all_that_swallows,
				 "coroutine_delete: coroutine 0 caught its unwinding in a catch (...) that did not rethrow it");
}

static void test_destructor_that_yields_during_a_delete_aborts(void **state)
{
	(void)state;
	assert_child_aborts_with(child_cases, destructor_that_yields,
				 "coroutine_delete: coroutine 0 yielded while it was being unwound (from a destructor?)");
}

static void test_destructor_that_resumes_during_a_delete_aborts(void **state)
{
	(void)state;
	assert_child_aborts_with(child_cases, destructor_that_resumes,
				 "coroutine_resume: called from inside coroutine 1, which coroutine_delete is unwinding; "
				 "only the main program may resume");
}

int main(int argc, char **argv)
{
	if (argc == 3 && std::strcmp(argv[1], "--child") == 0)
		return run_named_case(child_cases, argv[2]);
	const struct CMUnitTest tests[] = {
		schedule_test(test_delete_runs_destructors_innermost_first_once),
		schedule_test(test_destructor_run_by_a_delete_sees_its_coroutine_running),
		schedule_test(test_delete_in_a_handler_runs_with_the_coroutines_own_exception),
		schedule_test(test_delete_while_main_unwinds_an_exception),
		schedule_test(test_catch_all_that_rethrows_lets_the_unwinding_go_on),
		schedule_test(test_close_deletes_suspended_coroutines_in_id_order),
		schedule_test(test_other_coroutines_keep_their_objects),
		schedule_test(test_delete_a_deep_slice),
		schedule_test(test_catch_all_that_swallows_the_unwinding_aborts),
		schedule_test(test_destructor_that_yields_during_a_delete_aborts),
		schedule_test(test_destructor_that_resumes_during_a_delete_aborts),
	};
	return run_suite(tests);
}
