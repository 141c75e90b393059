/* waiting.c - coroutines waiting at several depths, for debug/coroutine-gdb.py's
 * tests (test/debug/gdb_test.sh): at the call of stop_here, coroutine 3 runs;
 * 0 waits three calls deep, 1 has never started, 2 waits in its own
 * function, 4 waits below a large local array; on a second schedule,
 * coroutine 0 waits and still owns its run stack.  Each checks its locals
 * when resumed, and main prints what they computed: a debugger that left a
 * byte or a register changed changes the output. */
#include "coroutine.h"
#include <stdio.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

/* Where the debugger stops: called from inside coroutine 3. */
NOINLINE void stop_here(int step)
{
	__asm__ volatile("" : : "r"(step) : "memory");
}

/* Yields at the bottom of depth calls, each with a local of its own. */
NOINLINE int descend(struct schedule *S, int depth, int seed)
{
	volatile int mine = seed * 10 + depth;
	int below;
	if (depth == 0) {
		coroutine_yield(S);
		below = 1;
	} else {
		below = descend(S, depth - 1, seed + 1);
	}
	return mine + below;
}

static void deep_walker(struct schedule *S, void *ud)
{
	int total = descend(S, 3, *(int *)ud);
	printf("deep_walker: %d\n", total);
}

static void never_started(struct schedule *S, void *ud)
{
	(void)S, (void)ud;
	printf("never_started: ran\n");
}

static void shallow_waiter(struct schedule *S, void *ud)
{
	int n = *(int *)ud;
	coroutine_yield(S);
	printf("shallow_waiter: %d\n", n + 1);
}

static void runner(struct schedule *S, void *ud)
{
	int step = *(int *)ud;
	stop_here(step);
	coroutine_yield(S);
	printf("runner: %d\n", step);
}

/* Waits below a local array, so that its slice is deep (more than the few
 * bytes a quick yield copies) and lies unaligned in its block. */
NOINLINE unsigned sum_after_yield(struct schedule *S, int seed)
{
	volatile unsigned char block[333];
	unsigned sum = 0;
	for (unsigned i = 0; i < sizeof block; i++)
		block[i] = (unsigned char)(seed + i);
	coroutine_yield(S);
	for (unsigned i = 0; i < sizeof block; i++)
		sum += block[i];
	return sum;
}

static void array_keeper(struct schedule *S, void *ud)
{
	printf("array_keeper: %u\n", sum_after_yield(S, *(int *)ud));
}

static void other_schedule_waiter(struct schedule *S, void *ud)
{
	volatile double x = *(int *)ud * 1.5;
	coroutine_yield(S);
	printf("other_schedule_waiter: %g\n", x);
}

static void run_until_dead(struct schedule *S)
{
	for (int more = 1; more;) {
		more = 0;
		for (int id = coroutine_next(S, -1); id >= 0; id = coroutine_next(S, id)) {
			coroutine_resume(S, id);
			more = 1;
		}
	}
}

/* Globals, so that the debugger names them from any frame. */
struct schedule *game, *other;

int main(void)
{
	int seeds[] = { 7, 11, 13, 17, 19, 23 };
	other = coroutine_open();
	game = coroutine_open();
	struct schedule *S = game;
	coroutine_new(S, deep_walker, &seeds[0]);
	coroutine_new(S, never_started, &seeds[1]);
	coroutine_new(S, shallow_waiter, &seeds[2]);
	coroutine_new(S, runner, &seeds[3]);
	coroutine_new(S, array_keeper, &seeds[4]);
	coroutine_new(other, other_schedule_waiter, &seeds[5]);
	coroutine_resume(other, 0);
	coroutine_resume(S, 0);
	coroutine_resume(S, 2);
	coroutine_resume(S, 4);
	coroutine_resume(S, 3); /* stops in stop_here */
	run_until_dead(S);
	run_until_dead(other);
	coroutine_close(S);
	coroutine_close(other);
	printf("main: done\n");
	return 0;
}
