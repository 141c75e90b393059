/*
 * test_clone_exceptions.cpp - coroutine_clone and C++ exceptions.  A copy
 * would share the exception its original is handling (the runtime's
 * object, which the first of the two handlers to end would free) or the
 * one unwinding through its frames: cloning a coroutine that yielded
 * inside a catch handler, or in a destructor that unwinding runs, aborts
 * with its line.  Once its handler has ended a coroutine may be cloned
 * (main may be inside a handler of its own meanwhile), and the copy throws
 * and catches on its own, through the frames it was copied with (and on
 * Windows with the run stack's bounds and the exception list that its
 * context carries).
 *
 * Nothing of the C++ standard library, so that it also builds for
 * Microsoft's ABI here (make windows-msvc-test), where none is built.
 * Built with -DTEST_PLAIN it needs no CMocka (test/support/plain_suite.h):
 * so it runs under wine and on riscv64.
 */
#ifdef TEST_PLAIN
#include "plain_suite.h"
#else
#include "support.h"
#endif
#include "child.h"

#include <string.h>

enum { MAX_IDS = 16 };

/* What main gives each coroutine to throw, and what each caught. */
struct catches {
	int value[MAX_IDS];
	int caught[MAX_IDS];
};

/* A frame below the catching one: the throw unwinds through copied frames. */
__attribute__((noinline)) static void throw_from_below(int value)
{
	throw value;
}

/* Waits inside a try block (not a handler), then throws and catches its value. */
static void wait_in_a_try_block(struct schedule *S, void *ud)
{
	catches *c = (catches *)ud;
	try {
		coroutine_yield(S);
		throw_from_below(c->value[coroutine_running(S)]);
	} catch (int e) {
		c->caught[coroutine_running(S)] = e;
	}
}

static void resume_throwing(struct schedule *S, catches *c, int id, int value)
{
	c->value[id] = value;
	coroutine_resume(S, id);
}

static void test_copy_waiting_in_a_try_block_catches_its_own(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	catches c;
	memset(&c, 0, sizeof c);
	int original = coroutine_new(S, wait_in_a_try_block, &c);
	coroutine_resume(S, original);
	int copy = coroutine_clone(S, original);
	int copy_of_copy = coroutine_clone(S, copy);
	resume_throwing(S, &c, copy, 200);
	resume_throwing(S, &c, original, 100);
	resume_throwing(S, &c, copy_of_copy, 300);
	assert_int_equal(c.caught[original], 100);
	assert_int_equal(c.caught[copy], 200);
	assert_int_equal(c.caught[copy_of_copy], 300);
	assert_int_equal(coroutine_next(S, -1), -1);
}

/* Catches an exception and ends its handler, then waits: nothing in flight. */
static void catch_then_wait(struct schedule *S, void *ud)
{
	catches *c = (catches *)ud;
	int before = 0;
	try {
		throw_from_below(1);
	} catch (int e) {
		before = e;
	}
	coroutine_yield(S);
	try {
		throw_from_below(c->value[coroutine_running(S)] + before);
	} catch (int e) {
		c->caught[coroutine_running(S)] = e;
	}
}

/* Main is inside a handler of its own: what counts is the coroutine's. */
static void test_main_inside_its_handler_copies_a_coroutine_whose_handler_ended(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	catches c;
	memset(&c, 0, sizeof c);
	int original = coroutine_new(S, catch_then_wait, &c), copy = -1;
	coroutine_resume(S, original);
	try {
		throw_from_below(-1);
	} catch (int) {
		copy = coroutine_clone(S, original);
		resume_throwing(S, &c, copy, 20);
	}
	resume_throwing(S, &c, original, 10);
	assert_int_equal(c.caught[original], 11);
	assert_int_equal(c.caught[copy], 21);
}

/* ---- Refused: in a catch handler, or while an exception unwinds ------------- */

/* Each of these yields with an exception, returns what it caught, and its
 * caller yields again without (and then adds its value to it).  Out of
 * line: the object whose destructor yields has its address taken, so ASan
 * may keep it in its fake stack, and the frame that holds it must be gone
 * by the copy. */
__attribute__((noinline)) static int yield_in_a_handler_and_return(struct schedule *S)
{
	try {
		throw_from_below(1);
	} catch (int e) {
		coroutine_yield(S);
		return e;
	}
	return 0;
}

/* Yields when it is destroyed: while an exception unwinds through it. */
struct yields_when_destroyed {
	struct schedule *S;
	~yields_when_destroyed() { coroutine_yield(S); }
};

__attribute__((noinline)) static int yield_while_unwinding_and_return(struct schedule *S)
{
	try {
		yields_when_destroyed y = { S };
		throw_from_below(2);
	} catch (int e) {
		return e;
	}
	return 0;
}

static void yield_in_a_handler(struct schedule *S, void *ud)
{
	catches *c = (catches *)ud;
	int caught = yield_in_a_handler_and_return(S);
	coroutine_yield(S);
	c->caught[coroutine_running(S)] = caught + c->value[coroutine_running(S)];
}

static void yield_while_unwinding(struct schedule *S, void *ud)
{
	catches *c = (catches *)ud;
	int caught = yield_while_unwinding_and_return(S);
	coroutine_yield(S);
	c->caught[coroutine_running(S)] = caught + c->value[coroutine_running(S)];
}

static void clone_the_first_that_yields(coroutine_func func)
{
	static catches c;
	struct schedule *S = coroutine_open();
	int id = coroutine_new(S, func, &c);
	coroutine_resume(S, id);
	coroutine_clone(S, id);
}

static void clone_in_a_handler(void)
{
	clone_the_first_that_yields(yield_in_a_handler);
}

static void clone_while_unwinding(void)
{
	clone_the_first_that_yields(yield_while_unwinding);
}

static const struct child_case child_cases[] = {
	{ "clone-in-a-handler", clone_in_a_handler },
	{ "clone-while-unwinding", clone_while_unwinding },
	{ NULL, NULL }
};

#define REFUSED "coroutine_clone: coroutine 0 yielded inside a catch handler or while an exception " \
		"unwound its frames; its copy would share that exception"

static void test_clone_of_a_coroutine_in_a_catch_handler_aborts(void **state)
{
	(void)state;
	assert_child_aborts_with(child_cases, clone_in_a_handler, REFUSED);
}

static void test_clone_of_a_coroutine_that_an_exception_unwinds_aborts(void **state)
{
	(void)state;
	assert_child_aborts_with(child_cases, clone_while_unwinding, REFUSED);
}

/* Out of the handler, or once the unwinding is over, the same coroutines
 * may be cloned. */
static void test_the_same_coroutines_may_be_cloned_once_done_with_the_exception(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	catches c;
	memset(&c, 0, sizeof c);
	int a = coroutine_new(S, yield_in_a_handler, &c);
	int b = coroutine_new(S, yield_while_unwinding, &c);
	coroutine_resume(S, a); /* in its handler */
	coroutine_resume(S, b); /* unwinding */
	coroutine_resume(S, a);
	coroutine_resume(S, b);
	int copy_a = coroutine_clone(S, a), copy_b = coroutine_clone(S, b);
	resume_throwing(S, &c, copy_a, 100);
	resume_throwing(S, &c, a, 10);
	resume_throwing(S, &c, b, 20);
	resume_throwing(S, &c, copy_b, 200);
	assert_int_equal(c.caught[a], 11);
	assert_int_equal(c.caught[copy_a], 101);
	assert_int_equal(c.caught[b], 22);
	assert_int_equal(c.caught[copy_b], 202);
	assert_int_equal(coroutine_next(S, -1), -1);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--child") == 0)
		return run_named_case(child_cases, argv[2]);
	const struct CMUnitTest tests[] = {
		schedule_test(test_copy_waiting_in_a_try_block_catches_its_own),
		schedule_test(test_main_inside_its_handler_copies_a_coroutine_whose_handler_ended),
		schedule_test(test_clone_of_a_coroutine_in_a_catch_handler_aborts),
		schedule_test(test_clone_of_a_coroutine_that_an_exception_unwinds_aborts),
		schedule_test(test_the_same_coroutines_may_be_cloned_once_done_with_the_exception),
	};
	return run_suite(tests);
}
