/*
 * test_stack_size.c - coroutine_stack_size, the first addition to the
 * original API: how many bytes of run stack a coroutine held at its last
 * yield, i.e. what was copied out to its heap buffer.
 */
#include "support.h"

/* ---- Bodies ------------------------------------------------------------- */

/* The sizes of yield_shallow_then_deep's slices. */
struct sizes {
	long shallow;       /* after its first yield, seen from main */
	long while_running; /* seen from itself, resumed after that yield */
	long deep;          /* after its second yield, seen from main */
};

static void yield_once(struct schedule *S, void *ud)
{
	(void)ud;
	coroutine_yield(S);
}

#define DEEP_FRAME 4096

/*
 * Yields with a DEEP_FRAME-byte array live in this frame, so the slice saved
 * at that yield holds the whole array.  noinline: the array must be in a
 * frame of its own (the caller may still reach it by a tail call, which is
 * why the test does not expect the caller's frame on top of it).
 */
__attribute__((noinline)) static void yield_deep(struct schedule *S)
{
	char frame[DEEP_FRAME];
	memset(frame, 1, sizeof frame);
	/* The array's address escapes: the compiler must keep all of it. */
	__asm__ volatile("" : : "r"(frame) : "memory");
	coroutine_yield(S);
	assert_int_equal(frame[0] + frame[DEEP_FRAME - 1], 2);
}

static void yield_shallow_then_deep(struct schedule *S, void *ud)
{
	struct sizes *sizes = ud;
	coroutine_yield(S);
	sizes->while_running = coroutine_stack_size(S, coroutine_running(S));
	yield_deep(S);
}

/* ---- Tests --------------------------------------------------------------- */

static void test_stack_size_is_0_before_the_first_yield(void **state)
{
	struct schedule *S = coroutine_open();
	int id = coroutine_new(S, yield_once, NULL);
	(void)state;
	assert_int_equal(coroutine_stack_size(S, id), 0);
	coroutine_close(S);
}

static void test_stack_size_is_0_for_an_empty_slot(void **state)
{
	struct schedule *S = coroutine_open();
	(void)state;
	assert_int_equal(coroutine_stack_size(S, 15), 0);
	coroutine_close(S);
}

static void test_stack_size_counts_the_bytes_saved_at_yield(void **state)
{
	struct schedule *S = coroutine_open();
	int id = coroutine_new(S, yield_once, NULL);
	long size;
	(void)state;
	coroutine_resume(S, id);
	size = coroutine_stack_size(S, id);
	/* At least the yielding frames' return addresses, and far less than
	 * the run stack: a handful of small frames. */
	assert_true(size >= (long)(4 * sizeof(void *)));
	assert_true(size < 64 * 1024);
	coroutine_close(S);
}

/* Resumes yield_shallow_then_deep twice, noting its sizes as seen from main. */
static struct sizes watch_shallow_then_deep(void)
{
	struct schedule *S = coroutine_open();
	struct sizes sizes = { -1, -1, -1 };
	int id = coroutine_new(S, yield_shallow_then_deep, &sizes);
	coroutine_resume(S, id);
	sizes.shallow = coroutine_stack_size(S, id);
	coroutine_resume(S, id);
	sizes.deep = coroutine_stack_size(S, id);
	coroutine_close(S);
	return sizes;
}

static void test_stack_size_grows_with_a_deeper_yield(void **state)
{
	struct sizes sizes = watch_shallow_then_deep();
	(void)state;
	assert_true(sizes.deep > sizes.shallow);
	assert_true(sizes.deep >= DEEP_FRAME);
}

static void test_stack_size_while_running_is_that_of_the_last_yield(void **state)
{
	struct sizes sizes = watch_shallow_then_deep();
	(void)state;
	assert_int_equal(sizes.while_running, sizes.shallow);
}

/*
 * The size is that of the last slice, not of the buffer that holds it
 * (which only grows): shallow, deep, then shallow again from the same
 * frame gives the first size again.
 */
static void yield_shallow_deep_shallow(struct schedule *S, void *ud)
{
	int *resumes = ud; /* counted after each yield: no yield is a tail call */
	coroutine_yield(S);
	++*resumes;
	yield_deep(S);
	++*resumes;
	coroutine_yield(S);
	++*resumes;
}

static void test_stack_size_shrinks_back_after_a_deeper_yield(void **state)
{
	struct schedule *S = coroutine_open();
	int resumes = 0;
	int id = coroutine_new(S, yield_shallow_deep_shallow, &resumes);
	long size[3];
	int i;
	(void)state;
	for (i = 0; i < 3; i++) {
		coroutine_resume(S, id);
		size[i] = coroutine_stack_size(S, id);
	}
	assert_int_equal(resumes, 2);
	assert_true(size[1] > size[0]);
	assert_int_equal(size[2], size[0]);
	coroutine_close(S);
}

static void test_stack_size_is_0_once_the_coroutine_has_ended(void **state)
{
	struct schedule *S = coroutine_open();
	int id = coroutine_new(S, yield_once, NULL);
	(void)state;
	coroutine_resume(S, id);
	coroutine_resume(S, id);
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
	assert_int_equal(coroutine_stack_size(S, id), 0);
	coroutine_close(S);
}

/* ---- Misuse -------------------------------------------------------------- */

static void ask_for_id(void *arg)
{
	struct schedule *S = coroutine_open();
	coroutine_stack_size(S, *(int *)arg);
}

static void ask_null_schedule(void *arg)
{
	(void)arg;
	coroutine_stack_size(NULL, 0);
}

static void test_stack_size_of_id_past_the_slots_aborts(void **state)
{
	int id = 16;
	struct child_result r = run_in_child(ask_for_id, &id);
	(void)state;
	assert_aborted_with(&r, "coroutine_stack_size: id 16 is out of range [0, 16)");
}

static void test_stack_size_of_negative_id_aborts(void **state)
{
	int id = -1;
	struct child_result r = run_in_child(ask_for_id, &id);
	(void)state;
	assert_aborted_with(&r, "coroutine_stack_size: id -1 is out of range [0, 16)");
}

static void test_stack_size_of_null_schedule_aborts(void **state)
{
	struct child_result r = run_in_child(ask_null_schedule, NULL);
	(void)state;
	assert_aborted_with(&r, "coroutine_stack_size: the schedule is NULL");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stack_size_is_0_before_the_first_yield),
		cmocka_unit_test(test_stack_size_is_0_for_an_empty_slot),
		cmocka_unit_test(test_stack_size_counts_the_bytes_saved_at_yield),
		cmocka_unit_test(test_stack_size_grows_with_a_deeper_yield),
		cmocka_unit_test(test_stack_size_while_running_is_that_of_the_last_yield),
		cmocka_unit_test(test_stack_size_shrinks_back_after_a_deeper_yield),
		cmocka_unit_test(test_stack_size_is_0_once_the_coroutine_has_ended),
		cmocka_unit_test(test_stack_size_of_id_past_the_slots_aborts),
		cmocka_unit_test(test_stack_size_of_negative_id_aborts),
		cmocka_unit_test(test_stack_size_of_null_schedule_aborts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
