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

/* ---- The run stack costs no commit charge -------------------------------- */

/*
 * Linux accounts the writable private memory a process maps against the
 * RAM and swap it could need, and refuses a mapping beyond them (or, in
 * the heuristic mode, one obviously beyond them): a run stack near INT_MAX
 * would need 2 GiB of them before a byte is touched.  Mapped with
 * MAP_NORESERVE, it costs only what its coroutines touch.  /proc/self/smaps
 * flags such a mapping "nr".
 */
struct smaps_flags {
	int found;      /* whether the mapping's VmFlags line was found */
	char line[256]; /* that line */
};

static void find_vm_flags(const void *addr, struct smaps_flags *f)
{
	FILE *smaps = fopen("/proc/self/smaps", "r");
	char line[256];
	int inside = 0;
	f->found = 0;
	if (smaps == NULL)
		return;
	while (!f->found && fgets(line, sizeof line, smaps) != NULL) {
		unsigned long start, end;
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2)
			inside = start <= (unsigned long)addr && (unsigned long)addr < end;
		else if (inside && strncmp(line, "VmFlags:", 8) == 0)
			f->found = 1, memcpy(f->line, line, sizeof line);
	}
	fclose(smaps);
}

/* Finds the flags of the mapping its own stack is in: the run stack.  The
 * frame's address, not a local's, which ASan may move to the heap (see
 * test_stack.c). */
static void note_run_stack_flags(struct schedule *S, void *ud)
{
	(void)S;
	find_vm_flags(__builtin_frame_address(0), ud);
}

static void test_run_stack_reserves_no_swap(void **state)
{
	struct schedule *S = coroutine_open();
	struct smaps_flags f;
	(void)state;
	coroutine_resume(S, coroutine_new(S, note_run_stack_flags, &f));
	coroutine_close(S);
	if (!f.found) {
		fprintf(stderr, "no VmFlags in /proc/self/smaps for the run stack\n");
		skip();
	}
	if (strstr(f.line, " nr") == NULL)
		fail_msg("the run stack reserves swap: %s", f.line);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_just_past_the_run_stack_dies_at_the_guard),
		cmocka_unit_test(test_frame_of_twice_the_run_stack_dies_at_the_guard),
		cmocka_unit_test(test_8_mib_frame_built_with_stack_clash_protection_dies),
		cmocka_unit_test(test_64_mib_frame_built_with_stack_clash_protection_dies),
		cmocka_unit_test(test_run_stack_reserves_no_swap),
	};
	return run_suite(tests);
}
