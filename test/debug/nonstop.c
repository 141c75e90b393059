/* nonstop.c - for test/debug/gdb_nonstop.sh: a second thread resumes
 * coroutine 1 of schedule shared again and again, and each time it runs it
 * fills an array on the run stack and checks it, over and over, while main
 * stops in stop_here (gdb in non-stop mode stops that thread only) with
 * coroutine 0 suspended on the same run stack.  A debugger that put
 * coroutine 0's frames in place then would overwrite coroutine 1's: main
 * prints how many times it found its array changed. */
#include "coroutine.h"
#include <pthread.h>
#include <stdio.h>

#define NOINLINE __attribute__((noinline))

struct schedule *shared;
static int started, stopping;
static long changed;

/* Where the debugger stops: main, while the worker runs. */
NOINLINE void stop_here(void)
{
	__asm__ volatile("" ::: "memory");
}

static void waiter(struct schedule *S, void *ud)
{
	volatile int kept = *(int *)ud;
	coroutine_yield(S);
	*(int *)ud = kept + 1;
}

static void busy(struct schedule *S, void *ud)
{
	volatile unsigned words[256];
	(void)ud;
	for (unsigned turn = 0;; turn++) {
		for (unsigned i = 0; i < 256; i++)
			words[i] = i * 2654435761u + turn;
		__atomic_store_n(&started, 1, __ATOMIC_RELEASE);
		for (int pass = 0; pass < 200; pass++)
			for (unsigned i = 0; i < 256; i++)
				if (words[i] != i * 2654435761u + turn)
					changed++, words[i] = i * 2654435761u + turn;
		coroutine_yield(S);
	}
}

static void *worker(void *arg)
{
	int *kept = (int *)arg;
	shared = coroutine_open();
	coroutine_resume(shared, coroutine_new(shared, waiter, kept));
	int id = coroutine_new(shared, busy, NULL);
	while (!__atomic_load_n(&stopping, __ATOMIC_ACQUIRE))
		coroutine_resume(shared, id);
	coroutine_resume(shared, 0); /* the waiter finishes */
	coroutine_close(shared);
	return NULL;
}

int main(void)
{
	int kept = 41;
	pthread_t thread;
	if (pthread_create(&thread, NULL, worker, &kept) != 0)
		return 1;
	while (!__atomic_load_n(&started, __ATOMIC_ACQUIRE))
		;
	stop_here();
	__atomic_store_n(&stopping, 1, __ATOMIC_RELEASE);
	pthread_join(thread, NULL);
	printf("nonstop: the waiter kept %d; the busy coroutine found its array changed %ld times\n", kept, changed);
	return 0;
}
