/* clones.c - coroutines and their clones (coroutine_clone), for the
 * debugger commands' tests (test/debug/clones_test.sh).  At the call of
 * stop_here, game's coroutine 7 runs; 0 waits in explorer, and 1 is its
 * clone: both were resumed once after the clone, and each added its own id
 * to its path (10 and 11); 2 is a clone of 1 made after that (path 11);
 * 3 waits four calls deep in descend, started in deep_walker, and 4 is its
 * clone, the same frames with the same locals; 5 has never started and 6
 * is its clone.  Each prints what it computed when resumed: a debugger
 * that left a byte or a register changed changes the output. */
#include "coroutine.h"
#include <stdio.h>

#define NOINLINE __attribute__((noinline))

/* Where the debugger stops: called from inside coroutine 7. */
NOINLINE void stop_here(int step)
{
	__asm__ volatile("" : : "r"(step) : "memory");
}

/* Adds the id of the copy that runs to path at each resume. */
static void explorer(struct schedule *S, void *ud)
{
	volatile int path = *(int *)ud;
	for (int i = 0; i < 2; i++) {
		coroutine_yield(S);
		path = path * 10 + coroutine_running(S);
	}
	printf("explorer %d: %d\n", coroutine_running(S), path);
}

/* Yields at the bottom of depth calls, each with a local of its own. */
NOINLINE int descend(struct schedule *S, int depth, int seed)
{
	volatile int mine = seed * 10 + depth;
	int below;
	if (depth == 0) {
		coroutine_yield(S);
		below = coroutine_running(S);
	} else {
		below = descend(S, depth - 1, seed + 1);
	}
	return mine + below;
}

static void deep_walker(struct schedule *S, void *ud)
{
	int total = descend(S, 3, *(int *)ud);
	printf("deep_walker %d: %d\n", coroutine_running(S), total);
}

static void never_started(struct schedule *S, void *ud)
{
	printf("never_started %d: %d\n", coroutine_running(S), *(int *)ud);
}

static void runner(struct schedule *S, void *ud)
{
	stop_here(*(int *)ud);
	coroutine_yield(S);
	printf("runner %d: done\n", coroutine_running(S));
}

/* A global, so that the debugger names it from any frame. */
struct schedule *game;

static int clone_of(int id)
{
	int copy = coroutine_clone(game, id);
	if (copy < 0) {
		printf("coroutine_clone: out of memory\n");
		return 0;
	}
	return 1;
}

int main(void)
{
	int seeds[] = { 1, 7, 41, 5 };
	game = coroutine_open();
	coroutine_new(game, explorer, &seeds[0]);     /* 0 */
	coroutine_resume(game, 0);
	if (!clone_of(0))                             /* 1 */
		return 1;
	coroutine_resume(game, 0);
	coroutine_resume(game, 1);
	if (!clone_of(1))                             /* 2 */
		return 1;
	coroutine_new(game, deep_walker, &seeds[1]);  /* 3 */
	coroutine_resume(game, 3);
	if (!clone_of(3))                             /* 4 */
		return 1;
	coroutine_new(game, never_started, &seeds[2]); /* 5 */
	if (!clone_of(5))                             /* 6 */
		return 1;
	coroutine_new(game, runner, &seeds[3]);       /* 7 */
	coroutine_resume(game, 7);                    /* stops in stop_here */
	for (int more = 1; more;) {
		more = 0;
		for (int id = coroutine_next(game, -1); id >= 0; id = coroutine_next(game, id)) {
			coroutine_resume(game, id);
			more = 1;
		}
	}
	coroutine_close(game);
	printf("main: done\n");
	return 0;
}
