/*
 * test_guard.c - the guard region below the run stack stops a coroutine
 * whose frame runs past the run stack's end, however it touches its frame:
 * SIGSEGV at the guard, never a write into the memory below.
 *
 * A frame touches only some of its bytes; the frames here touch only their
 * lowest, the way a large local array written at index 0 does.  Without
 * -fstack-clash-protection the guard stops any frame of up to the run
 * stack's size plus the guard's (1 MiB + 1 MiB); the frames of
 * clash_frames.c, compiled with that flag, touch every page on the way
 * down and are stopped whatever their size.
 *
 * Each case runs in a forked child, with a "neighbour" block allocated after
 * coroutine_open: the child exits 0 only if the frame did not fault, after
 * checking whether the neighbour was overwritten.  So a child that exits 0,
 * or 1, is a guard that failed.
 */
#include "support.h"

#include "clash_frames.h"
#include "guard_frames.h"

enum {
	NEIGHBOUR = 8 * 1024 * 1024,
	NEIGHBOUR_SEED = 42,
};

static void call_frame(struct schedule *S, void *frame)
{
	(void)S;
	(*(char (**)(void))frame)();
}

/* Runs *frame in a coroutine, with a block allocated after the schedule
 * (on Linux, mmap puts it right below the run stack and its guard). */
static void run_frame_beside_a_neighbour(void *frame)
{
	struct schedule *S = coroutine_open();
	unsigned char *neighbour = malloc(NEIGHBOUR);
	if (S == NULL || neighbour == NULL)
		_exit(2);
	fill_random(neighbour, NEIGHBOUR, NEIGHBOUR_SEED);
	coroutine_resume(S, coroutine_new(S, call_frame, frame));
	_exit(holds_random(neighbour, NEIGHBOUR, NEIGHBOUR_SEED) ? 0 : 1);
}

static void assert_frame_dies_at_the_guard(char (*frame)(void))
{
	struct child_result r = run_in_child(run_frame_beside_a_neighbour, &frame);
	assert_killed_by(&r, SIGSEGV);
}

static void test_frame_just_past_the_run_stack_dies_at_the_guard(void **state)
{
	(void)state;
	assert_frame_dies_at_the_guard(frame_just_past_the_run_stack);
}

static void test_frame_of_twice_the_run_stack_dies_at_the_guard(void **state)
{
	(void)state;
	assert_frame_dies_at_the_guard(frame_of_twice_the_run_stack);
}

static void test_8_mib_frame_built_with_stack_clash_protection_dies(void **state)
{
	(void)state;
	assert_frame_dies_at_the_guard(clash_protected_8_mib_frame);
}

static void test_64_mib_frame_built_with_stack_clash_protection_dies(void **state)
{
	(void)state;
	assert_frame_dies_at_the_guard(clash_protected_64_mib_frame);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_just_past_the_run_stack_dies_at_the_guard),
		cmocka_unit_test(test_frame_of_twice_the_run_stack_dies_at_the_guard),
		cmocka_unit_test(test_8_mib_frame_built_with_stack_clash_protection_dies),
		cmocka_unit_test(test_64_mib_frame_built_with_stack_clash_protection_dies),
	};
	return run_suite(tests);
}
