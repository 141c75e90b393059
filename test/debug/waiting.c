/* waiting.c - coroutines waiting at several depths, for debug/coroutine-gdb.py's
 * tests (test/debug/gdb_test.sh): at the call of stop_here, coroutine 3 of
 * game runs, resumed by coroutine 0 of a third schedule, outer (which so
 * runs too, its frames in game's main context); 0 waits three calls deep,
 * 1 has never started, 2 waits in its own function, 4 waits below a large
 * local array, 5 with a slice of exactly SHALLOW_SLICE (96) bytes where the
 * build allows it, 6 in the same function as 0 but started in another; on
 * a second schedule, coroutine 0 waits and still owns its run stack.  Each
 * checks its locals when resumed, and main prints what they computed: a
 * debugger that left a byte or a register changed changes the output. */
#include "coroutine.h"
#include <stdio.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

/* Where the debugger stops: called from inside coroutine 3. */
NOINLINE void stop_here(int step)
{
	__asm__ volatile("" : : "r"(step) : "memory");
}

/* For the debugger to call: its frame covers 4 KiB below the caller's. */
NOINLINE int probe(int seed)
{
	volatile char bytes[4096];
	int sum = 0;
	for (unsigned i = 0; i < sizeof bytes; i++)
		bytes[i] = (char)(seed + i);
	for (unsigned i = 0; i < sizeof bytes; i++)
		sum += bytes[i];
	return sum;
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

/* Waits in descend too: only its entry tells it from deep_walker. */
static void door(struct schedule *S, void *ud)
{
	int total = descend(S, 1, *(int *)ud);
	printf("door: %d\n", total);
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

/* Keeps an array across the stop, deep enough in the run stack that a
 * function called among a smaller coroutine's frames would write over it. */
static void runner(struct schedule *S, void *ud)
{
	volatile int around[64];
	int step = *(int *)ud, sum = 0;
	for (int i = 0; i < 64; i++)
		around[i] = step * i;
	stop_here(step);
	coroutine_yield(S);
	for (int i = 0; i < 64; i++)
		sum += around[i];
	printf("runner: %d %d\n", step, sum);
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

/* Yields below pad bytes of its own (a VLA: 16 more per try), so that main
 * can find the pad that makes its slice exactly 96 bytes: the largest the
 * asm backend keeps at the start of the block (SHALLOW_SLICE). */
struct exact { int pad, value, result; };

static void exact_waiter(struct schedule *S, void *ud)
{
	struct exact *e = (struct exact *)ud;
	volatile char pad[e->pad + 1];
	volatile int exact_local = e->value;
	pad[e->pad] = 1;
	coroutine_yield(S);
	e->result = exact_local + pad[e->pad];
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
struct schedule *game, *other, *outer;

/* Resumes game's coroutine 3, which stops: a coroutine of one schedule as
 * another's main. */
static void outer_resumer(struct schedule *S, void *ud)
{
	volatile int outer_local = *(int *)ud;
	(void)S;
	coroutine_resume(game, 3);
	printf("outer_resumer: %d\n", outer_local);
}

int main(void)
{
	int seeds[] = { 7, 11, 13, 17, 19, 23, 29, 31, 37 };
	struct exact exact = { 0, 29, 0 };
	other = coroutine_open();
	game = coroutine_open();
	outer = coroutine_open();
	struct schedule *S = game;
	coroutine_new(S, deep_walker, &seeds[0]);
	coroutine_new(S, never_started, &seeds[1]);
	coroutine_new(S, shallow_waiter, &seeds[2]);
	coroutine_new(S, runner, &seeds[3]);
	coroutine_new(S, array_keeper, &seeds[4]);
	coroutine_new(other, other_schedule_waiter, &seeds[5]);
	coroutine_new(outer, outer_resumer, &seeds[8]);
	coroutine_resume(other, 0);
	coroutine_resume(S, 0);
	coroutine_resume(S, 2);
	coroutine_resume(S, 4);
	/* Coroutine 5: the first pad whose slice is 96 bytes or more. */
	for (;; exact.pad += 16) {
		int id = coroutine_new(S, exact_waiter, &exact);
		coroutine_resume(S, id);
		if (coroutine_stack_size(S, id) >= 96)
			break;
		coroutine_resume(S, id); /* it finishes: its slot is free again */
	}
	coroutine_resume(S, coroutine_new(S, door, &seeds[6]));
	coroutine_resume(outer, 0); /* resumes 3, which stops in stop_here */
	run_until_dead(S);
	run_until_dead(other);
	run_until_dead(outer);
	coroutine_close(S);
	coroutine_close(other);
	coroutine_close(outer);
	printf("exact_waiter: %d\n", exact.result);
	printf("main: done\n");
	return 0;
}
