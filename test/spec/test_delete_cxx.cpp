/*
 * test_delete_cxx.cpp - coroutine_delete from C++: the destructors of the
 * objects on a deleted coroutine's frames run, innermost first, once, as
 * when a thread is cancelled; the coroutine runs them with its own
 * exceptions being handled, not main's; a catch (...) is entered, and
 * rethrows the unwinding or ends the coroutine at the end of its handler;
 * a frame that an exception may not leave (a noexcept function, a
 * destructor run by a throw's unwinding) and a destructor that waits end
 * it there, what was unwound before staying done, and close goes on to
 * the others; a destructor that deletes other coroutines (an entity's
 * children) has them ended, once each, before main's delete or close goes
 * on; ids then follow the original's rule; a destructor that resumes
 * stops the program with one line; coroutine_close deletes the suspended
 * coroutines, in id order.  (From C, with cleanup attributes:
 * test_delete.c; built without exceptions: test_delete_no_exceptions.cpp.)
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

#include <cstdio>
#include <cstring>
#include <cxxabi.h>
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

/* Notes its name when destroyed, and owns nothing: for the frames that a
 * delete frees without unwinding them. */
struct mark {
	const char *name;
	~mark() { destroyed.push_back(name); }
};

static std::string destroyed_in_order(void)
{
	std::string all;
	for (size_t i = 0; i < destroyed.size(); i++)
		all += (i ? " " : "") + destroyed[i];
	return all;
}

static void yield_forever(struct schedule *S, void *ud)
{
	(void)ud;
	for (;;)
		coroutine_yield(S);
}

/* Resumes f's new coroutine to its first wait, then deletes it there: what
 * the delete destroyed, and " (not freed)" if its slot is not empty then. */
static std::string delete_at_first_wait(struct schedule *S, coroutine_func f)
{
	int id = coroutine_new(S, f, NULL);
	coroutine_resume(S, id);
	destroyed.clear();
	coroutine_delete(S, id);
	return destroyed_in_order() + (coroutine_status(S, id) == COROUTINE_DEAD ? "" : " (not freed)");
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
	assert_string_equal(delete_at_first_wait((struct schedule *)*state, three_frames).c_str(),
			    "inner-b inner-a middle outer");
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
	assert_string_equal(delete_at_first_wait((struct schedule *)*state, rethrow_from_catch_all).c_str(),
			    "inside the try catch (...) outside the try");
}

/* A catch (...) that does not rethrow: the coroutine ends at the end of the
 * handler, the handler's objects destroyed; the frames the unwinding had
 * not reached are freed as the original frees them. */
static void swallow_the_unwinding(struct schedule *S, void *ud)
{
	(void)ud;
	mark outside = { "outside the try" };
	try {
		mark inside = { "inside the try" };
		coroutine_yield(S);
	} catch (...) {
		mark in_handler = { "in the handler" };
		destroyed.push_back("catch (...)");
	}
	destroyed.push_back("after the handler");
}

static void test_catch_all_that_swallows_ends_the_coroutine_at_the_end_of_its_handler(void **state)
{
	assert_string_equal(delete_at_first_wait((struct schedule *)*state, swallow_the_unwinding).c_str(),
			    "inside the try catch (...) in the handler");
}

/*
 * The idiom of code that a thread cancellation unwinds: catch the
 * unwinding by its type and rethrow it, and swallow what else comes.
 * With the Itanium C++ ABI's unwinder a delete's unwinding is an
 * abi::__forced_unwind, and goes on.  MinGW's unwinds with Windows'
 * RtlUnwindEx, as an exception of no type: catch (...) takes it, and the
 * coroutine ends there as at any swallowing catch (...).  (docs/api.md
 * says what to write instead: catch (...) { ...; throw; }.)
 */
/* The reference catch (abi::__forced_unwind &) binds has no object behind
 * it (the unwinding is no C++ exception), which UBSan reports, as for a
 * thread's cancellation: not checked here. */
__attribute__((no_sanitize("null"))) static void rethrow_forced_unwind_swallow_the_rest(struct schedule *S, void *ud)
{
	(void)ud;
	mark outside = { "outside the try" };
	try {
		mark inside = { "inside the try" };
		coroutine_yield(S);
	} catch (abi::__forced_unwind &) {
		destroyed.push_back("catch (abi::__forced_unwind &)");
		throw;
	} catch (...) {
		destroyed.push_back("catch (...)");
	}
	destroyed.push_back("after the handler");
}

#if !defined(_WIN32)
static void test_catch_of_forced_unwind_that_rethrows_lets_the_unwinding_go_on(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	assert_string_equal(delete_at_first_wait(S, rethrow_forced_unwind_swallow_the_rest).c_str(),
			    "inside the try catch (abi::__forced_unwind &) outside the try");
}
#else
static void test_on_mingw_the_unwinding_is_no_forced_unwind_and_catch_all_ends_the_coroutine(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	assert_string_equal(delete_at_first_wait(S, rethrow_forced_unwind_swallow_the_rest).c_str(),
			    "inside the try catch (...)");
}
#endif

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

/* Closes a schedule where f's coroutine, 1, waits between two others, 0 and
 * 2, which note their ids when destroyed: what the close destroyed. */
static std::string close_between_two_others(coroutine_func f)
{
	struct schedule *S = coroutine_open();
	coroutine_new(S, note_own_id_when_destroyed, NULL);
	coroutine_new(S, f, NULL);
	coroutine_new(S, note_own_id_when_destroyed, NULL);
	for (int id = 0; id < 3; id++)
		coroutine_resume(S, id);
	destroyed.clear();
	coroutine_close(S);
	return destroyed_in_order();
}

static void test_close_goes_on_after_a_catch_all_that_swallows(void **state)
{
	(void)state;
	assert_string_equal(close_between_two_others(swallow_the_unwinding).c_str(),
			    "0 inside the try catch (...) in the handler 2");
}

/* ---- Where the unwinding cannot go on ---------------------------------------- */

/* A frame that an exception may not leave: the unwinding of the frames
 * below it is done, and the coroutine ends there (std::terminate, which
 * the library answers while a delete unwinds). */
NOINLINE static void wait_below_a_noexcept_frame(struct schedule *S)
{
	mark below = { "below the noexcept frame" };
	coroutine_yield(S);
	destroyed.push_back("came back");
}

NOINLINE static void noexcept_frame(struct schedule *S) noexcept
{
	wait_below_a_noexcept_frame(S);
	destroyed.push_back("came back");
}

static void wait_in_a_noexcept_function(struct schedule *S, void *ud)
{
	(void)ud;
	mark above = { "above the noexcept frame" };
	noexcept_frame(S);
}

static void test_noexcept_function_ends_its_coroutine_where_the_unwinding_reaches_it(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	assert_string_equal(delete_at_first_wait(S, wait_in_a_noexcept_function).c_str(),
			    "below the noexcept frame");
}

static void test_close_goes_on_after_a_coroutine_waiting_in_a_noexcept_function(void **state)
{
	(void)state;
	assert_string_equal(close_between_two_others(wait_in_a_noexcept_function).c_str(),
			    "0 below the noexcept frame 2");
}

/* The library's terminate handler is there only while a delete unwinds. */
static void programs_terminate_handler(void)
{
	abort();
}

static void test_programs_terminate_handler_is_back_after_a_delete_ended_at_terminate(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	std::terminate_handler before = std::set_terminate(programs_terminate_handler);
	delete_at_first_wait(S, wait_in_a_noexcept_function);
	bool back = std::get_terminate() == programs_terminate_handler;
	std::set_terminate(before);
	assert_true(back);
}

/* A destructor that waits, while a delete unwinds or a throw does: the
 * coroutine is freed there. */
struct waits_when_destroyed {
	struct schedule *S;
	~waits_when_destroyed()
	{
		destroyed.push_back("destructor waits");
		coroutine_yield(S);
		destroyed.push_back("destructor came back");
	}
};

static void wait_with_a_destructor_that_waits(struct schedule *S, void *ud)
{
	(void)ud;
	mark outside = { "outside" };
	waits_when_destroyed w = { S };
	mark inside = { "inside" };
	coroutine_yield(S);
}

/* The run stack's bytes are nobody's then: a new coroutine, which malloc
 * may well place where the freed one was, starts afresh. */
static void test_destructor_that_waits_during_a_delete_leaves_its_coroutine_to_be_freed(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	assert_string_equal(delete_at_first_wait(S, wait_with_a_destructor_that_waits).c_str(),
			    "inside destructor waits");
	int next = coroutine_new(S, three_frames, NULL);
	coroutine_resume(S, next);
	assert_int_equal(coroutine_status(S, next), COROUTINE_SUSPEND);
	destroyed.clear();
	coroutine_delete(S, next);
	assert_string_equal(destroyed_in_order().c_str(), "inner-b inner-a middle outer");
}

static void test_close_goes_on_after_a_destructor_that_waits(void **state)
{
	(void)state;
	assert_string_equal(close_between_two_others(wait_with_a_destructor_that_waits).c_str(),
			    "0 inside destructor waits 2");
}

/* Waits in a destructor that a throw's unwinding runs: the delete ends the
 * coroutine there.  The exception being thrown is never freed: its
 * address is kept, so that the leak checkers count it as reachable. */
static const void *volatile thrown_and_never_freed[4];
static int thrown_count;

struct thrown {
	thrown() { thrown_and_never_freed[thrown_count++ % 4] = this; }
};

static void wait_in_a_destructor_run_by_a_throw(struct schedule *S, void *ud)
{
	(void)ud;
	mark outside = { "outside the try" };
	try {
		mark thrown_past = { "thrown past" };
		waits_when_destroyed w = { S };
		throw thrown();
	} catch (const thrown &) {
		destroyed.push_back("caught");
	}
	destroyed.push_back("after the try");
}

static void test_destructor_run_by_a_throw_that_waits_ends_its_coroutine_there(void **state)
{
	assert_string_equal(delete_at_first_wait((struct schedule *)*state, wait_in_a_destructor_run_by_a_throw).c_str(),
			    "");
}

static void test_close_goes_on_after_a_destructor_run_by_a_throw_that_waits(void **state)
{
	(void)state;
	assert_string_equal(close_between_two_others(wait_in_a_destructor_run_by_a_throw).c_str(), "0 2");
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

/* ---- Destructors that delete: an entity and its children ----------------------- */

/* What an entity owns besides its objects: its children, each a coroutine
 * of its own, which its destructor deletes. */
struct children {
	struct schedule *S;
	int ids[2];
	~children()
	{
		for (int id : ids)
			coroutine_delete(S, id);
		destroyed.push_back("the parent's children");
	}
};

static void child_entity(struct schedule *S, void *ud)
{
	noted self((const char *)ud);
	for (;;)
		coroutine_yield(S);
}

/* Spawns its two children, or is given them (ud), then waits. */
static void parent_entity(struct schedule *S, void *ud)
{
	noted self("parent");
	const int *given = (const int *)ud;
	children c = { S, { given ? given[0] : coroutine_new(S, child_entity, (void *)"child a"),
			    given ? given[1] : coroutine_new(S, child_entity, (void *)"child b") } };
	for (;;)
		coroutine_yield(S);
}

/* The parent, then its children, which it spawned: ids 0, then 1 and 2. */
static void spawn_a_family(struct schedule *S)
{
	coroutine_resume(S, coroutine_new(S, parent_entity, NULL));
	coroutine_resume(S, 1);
	coroutine_resume(S, 2);
	destroyed.clear();
}

static void test_destructor_that_deletes_children_has_them_ended_before_the_delete_returns(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	spawn_a_family(S);
	coroutine_delete(S, 0);
	assert_string_equal(destroyed_in_order().c_str(), "the parent's children parent child a child b");
	assert_int_equal(coroutine_next(S, -1), -1);
}

static void test_close_ends_the_children_a_destructor_deletes_once(void **state)
{
	struct schedule *S = coroutine_open();
	(void)state;
	spawn_a_family(S);
	coroutine_close(S);
	assert_string_equal(destroyed_in_order().c_str(), "the parent's children parent child a child b");
}

/* Children with lower ids than their parent's: close ends them first, and
 * the parent's destructor then deletes empty slots. */
static void test_close_ends_children_before_their_parent_once(void **state)
{
	struct schedule *S = coroutine_open();
	static const int kids[2] = { 0, 1 };
	(void)state;
	coroutine_resume(S, coroutine_new(S, child_entity, (void *)"child a"));
	coroutine_resume(S, coroutine_new(S, child_entity, (void *)"child b"));
	coroutine_resume(S, coroutine_new(S, parent_entity, (void *)kids));
	destroyed.clear();
	coroutine_close(S);
	assert_string_equal(destroyed_in_order().c_str(), "child a child b the parent's children parent");
}

/* ---- Ids after every way of ending: the original's rule ----------------------- */

static void delete_itself_and_wait(struct schedule *S, void *ud)
{
	(void)ud;
	noted self("itself");
	coroutine_delete(S, coroutine_running(S));
	coroutine_yield(S);
}

/* Four wait, at 0, 1, 2 and 6.  A coroutine in slot 4 ends, in each way in
 * turn: then the next one gets the first empty slot from 4 (the live count)
 * on, 4, as the original hands it out; counted out twice it would get 3,
 * not at all 5. */
static void test_ids_after_every_way_of_ending_follow_the_original_rule(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	static const coroutine_func ending[4] = { swallow_the_unwinding, wait_in_a_noexcept_function,
						  wait_with_a_destructor_that_waits, delete_itself_and_wait };
	std::string ids;
	for (int id = 0; id < 7; id++)
		coroutine_resume(S, coroutine_new(S, yield_forever, NULL));
	for (int id = 3; id < 6; id++)
		coroutine_delete(S, id);
	for (coroutine_func f : ending) {
		delete_at_first_wait(S, f); /* in slot 4 */
		int next = coroutine_new(S, yield_forever, NULL);
		ids += std::to_string(next) + " ";
		coroutine_delete(S, next);
	}
	assert_string_equal(ids.c_str(), "4 4 4 4 ");
	destroyed.clear();
}

/* ---- Misuse, and a terminate elsewhere, each in a child process --------------- */

static struct schedule *child_schedule;

/* A destructor that resumes: only main resumes. */
struct resumes_when_destroyed {
	~resumes_when_destroyed() { coroutine_resume(child_schedule, 0); }
};

static void wait_with_a_destructor_that_resumes(struct schedule *S, void *ud)
{
	(void)ud;
	resumes_when_destroyed r;
	coroutine_yield(S);
}

static void destructor_that_resumes(void)
{
	child_schedule = coroutine_open();
	coroutine_resume(child_schedule, coroutine_new(child_schedule, yield_forever, NULL));
	coroutine_resume(child_schedule, coroutine_new(child_schedule, wait_with_a_destructor_that_resumes, NULL));
	coroutine_delete(child_schedule, 1);
}

/* A terminate that is not the deleted coroutine's, while it unwinds: in a
 * coroutine of another schedule, which its destructor resumes. */
static void terminate_now(struct schedule *S, void *ud)
{
	(void)S, (void)ud;
	std::terminate();
}

struct terminates_elsewhere_when_destroyed {
	~terminates_elsewhere_when_destroyed()
	{
		struct schedule *other = coroutine_open();
		coroutine_resume(other, coroutine_new(other, terminate_now, NULL));
	}
};

static void wait_with_a_destructor_that_terminates_elsewhere(struct schedule *S, void *ud)
{
	(void)ud;
	terminates_elsewhere_when_destroyed t;
	coroutine_yield(S);
}

static void say_and_abort(void)
{
	fputs("the program's terminate handler\n", stderr);
	abort();
}

static void terminate_elsewhere_during_a_delete(void)
{
	std::set_terminate(say_and_abort);
	child_schedule = coroutine_open();
	int id = coroutine_new(child_schedule, wait_with_a_destructor_that_terminates_elsewhere, NULL);
	coroutine_resume(child_schedule, id);
	coroutine_delete(child_schedule, id);
}

static const struct child_case child_cases[] = {
	{ "destructor-that-resumes", destructor_that_resumes },
	{ "terminate-elsewhere-during-a-delete", terminate_elsewhere_during_a_delete },
	{ NULL, NULL }
};

static void test_destructor_that_resumes_during_a_delete_aborts(void **state)
{
	(void)state;
	assert_child_aborts_with(child_cases, destructor_that_resumes,
				 "coroutine_resume: called from inside coroutine 1, which is being deleted; "
				 "only the main program may resume");
}

static void test_terminate_elsewhere_during_a_delete_calls_the_programs_handler(void **state)
{
	(void)state;
	assert_child_aborts_with(child_cases, terminate_elsewhere_during_a_delete, "the program's terminate handler");
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
		schedule_test(test_catch_all_that_swallows_ends_the_coroutine_at_the_end_of_its_handler),
#if !defined(_WIN32)
		schedule_test(test_catch_of_forced_unwind_that_rethrows_lets_the_unwinding_go_on),
#else
		schedule_test(test_on_mingw_the_unwinding_is_no_forced_unwind_and_catch_all_ends_the_coroutine),
#endif
		schedule_test(test_close_deletes_suspended_coroutines_in_id_order),
		schedule_test(test_close_goes_on_after_a_catch_all_that_swallows),
		schedule_test(test_noexcept_function_ends_its_coroutine_where_the_unwinding_reaches_it),
		schedule_test(test_close_goes_on_after_a_coroutine_waiting_in_a_noexcept_function),
		schedule_test(test_programs_terminate_handler_is_back_after_a_delete_ended_at_terminate),
		schedule_test(test_destructor_that_waits_during_a_delete_leaves_its_coroutine_to_be_freed),
		schedule_test(test_close_goes_on_after_a_destructor_that_waits),
		schedule_test(test_destructor_run_by_a_throw_that_waits_ends_its_coroutine_there),
		schedule_test(test_close_goes_on_after_a_destructor_run_by_a_throw_that_waits),
		schedule_test(test_other_coroutines_keep_their_objects),
		schedule_test(test_delete_a_deep_slice),
		schedule_test(test_destructor_that_deletes_children_has_them_ended_before_the_delete_returns),
		schedule_test(test_close_ends_the_children_a_destructor_deletes_once),
		schedule_test(test_close_ends_children_before_their_parent_once),
		schedule_test(test_ids_after_every_way_of_ending_follow_the_original_rule),
		schedule_test(test_destructor_that_resumes_during_a_delete_aborts),
		schedule_test(test_terminate_elsewhere_during_a_delete_calls_the_programs_handler),
	};
	return run_suite(tests);
}
