/* engine.cpp - an engine's loop in C++, for the debugger commands' tests
 * (test/debug/engine_test.sh).  Schedule world has ACTORS coroutines, each
 * waiting a few calls deep in think (id % 4 of them) with a local hit in
 * its entry, actor, and a guard whose destructor runs when the actor is
 * deleted: actor 3 is, before the stop (the destructor calls
 * stop_in_destructor), and its slot stays empty.  A second thread runs
 * schedule side: its coroutine 0 waits with side_local, its coroutine 1
 * is blocked (parked) while main calls stop_here.  Each prints what it
 * computed when resumed: a debugger that left a byte or a register of
 * either thread changed changes the output. */
#include "coroutine.h"
#include <malloc.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>

#define NOINLINE __attribute__((noinline))
#define ACTORS 50

extern "C" {
/* Where the debugger stops: main, once everything waits. */
NOINLINE void stop_here(int step)
{
	__asm__ volatile("" : : "r"(step) : "memory");
}

/* Where a deleted actor's guard stops. */
NOINLINE void stop_in_destructor(int id)
{
	__asm__ volatile("" : : "r"(id) : "memory");
}

/* For the debugger to call: a call the commands must not let run. */
int bumps;
NOINLINE int bump(void)
{
	return ++bumps;
}
}

static int destroyed; /* the ids of the guards destroyed, added up */

struct guard {
	int id;
	~guard()
	{
		stop_in_destructor(id);
		destroyed += id;
	}
};

/* Yields at the bottom of depth calls. */
NOINLINE static int think(struct schedule *S, int depth)
{
	volatile int level = depth;
	if (depth == 0) {
		coroutine_yield(S);
		return 1;
	}
	return think(S, depth - 1) + level;
}

static long hits;

static void actor(struct schedule *S, void *ud)
{
	int id = (int)(intptr_t)ud;
	guard g = { id };
	volatile int hit = id * 3;
	hit += think(S, id % 4);
	hits += hit;
}

/* Globals, so that the debugger names them from any frame. */
struct schedule *world, *side;
static sem_t parked, released;

static void side_waiter(struct schedule *S, void *ud)
{
	volatile int side_local = *(int *)ud;
	coroutine_yield(S);
	*(int *)ud = side_local + 1;
}

static void parker(struct schedule *S, void *ud)
{
	(void)S, (void)ud;
	sem_post(&parked);
	sem_wait(&released);
	__asm__ volatile("" ::: "memory"); /* not a tail call: parker stays its entry */
}

static void *worker(void *arg)
{
	side = coroutine_open();
	coroutine_resume(side, coroutine_new(side, side_waiter, arg));
	coroutine_resume(side, coroutine_new(side, parker, NULL)); /* until main releases it */
	coroutine_resume(side, 0);
	coroutine_close(side);
	return NULL;
}

int main(void)
{
	int kept = 41;
	pthread_t thread;
	mallopt(M_ARENA_MAX, 1); /* the second thread's own arena would add 64 MiB to the core file */
	sem_init(&parked, 0, 0);
	sem_init(&released, 0, 0);
	world = coroutine_open();
	for (int i = 0; i < ACTORS; i++)
		coroutine_resume(world, coroutine_new(world, actor, (void *)(intptr_t)i));
	coroutine_delete(world, 3);
	if (pthread_create(&thread, NULL, worker, &kept) != 0)
		return 1;
	sem_wait(&parked);
	stop_here(1);
	sem_post(&released);
	pthread_join(thread, NULL);
	for (int id = coroutine_next(world, -1); id != -1; id = coroutine_next(world, id))
		coroutine_resume(world, id);
	coroutine_close(world);
	printf("engine: hits %ld, destroyed %d, bumps %d, side %d\n", hits, destroyed, bumps, kept);
	return 0;
}
