/*
 * bench_wasm.c - the WebAssembly twin of bench.cpp, run under node by
 * `make bench-wasm`: the library's fiber backend beside its floor,
 * Emscripten's own fiber round trip (the cost of the switch alone: two
 * Asyncify unwinds and two rewinds, and the JavaScript between them).
 *
 *   round trip       = one coroutine_resume plus the coroutine's yield
 *   create+run+free  = coroutine_new + one resume of a body that returns
 *   fiber round trip = emscripten_fiber_swap to a fiber and back (the floor)
 *
 * Each variant runs REPEATS times, interleaved; each figure is the median
 * of its repeats in ns per operation, with the min and max beside it.
 */
#include "coroutine.h"

#include <emscripten/fiber.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define REPEATS 7
#define ROUND_TRIPS 200000
#define CREATED 100000
#define FIBER_STACK (64 * 1024)
#define FIBER_ASYNCIFY 4096

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ---- The library ---------------------------------------------------------- */

static void yield_forever(struct schedule *S, void *ud)
{
	(void)ud;
	for (;;)
		coroutine_yield(S);
}

static double round_trip(void)
{
	struct schedule *S = coroutine_open();
	int id = coroutine_new(S, yield_forever, NULL);
	coroutine_resume(S, id); /* started: the loop below times yields only */
	double start = now_ns();
	for (int i = 0; i < ROUND_TRIPS; i++)
		coroutine_resume(S, id);
	double ns = (now_ns() - start) / ROUND_TRIPS;
	coroutine_close(S);
	return ns;
}

static void return_at_once(struct schedule *S, void *ud)
{
	(void)S, (void)ud;
}

static double create_run_free(void)
{
	struct schedule *S = coroutine_open();
	double start = now_ns();
	for (int i = 0; i < CREATED; i++)
		coroutine_resume(S, coroutine_new(S, return_at_once, NULL));
	double ns = (now_ns() - start) / CREATED;
	coroutine_close(S);
	return ns;
}

/* ---- The floor: Emscripten's fibers alone --------------------------------- */

static emscripten_fiber_t main_fiber, other_fiber;
static size_t fiber_unwound; /* bytes the other fiber's swap unwinds */

static void swap_back_forever(void *ud)
{
	(void)ud;
	for (;;)
		emscripten_fiber_swap(&other_fiber, &main_fiber);
}

static double fiber_round_trip(void)
{
	static char main_asyncify[FIBER_ASYNCIFY], other_asyncify[FIBER_ASYNCIFY];
	char *stack = (char *)aligned_alloc(16, FIBER_STACK);
	emscripten_fiber_init_from_current_context(&main_fiber, main_asyncify, sizeof main_asyncify);
	emscripten_fiber_init(&other_fiber, swap_back_forever, NULL, stack, FIBER_STACK,
			      other_asyncify, sizeof other_asyncify);
	emscripten_fiber_swap(&main_fiber, &other_fiber);
	double start = now_ns();
	for (int i = 0; i < ROUND_TRIPS; i++)
		emscripten_fiber_swap(&main_fiber, &other_fiber);
	double ns = (now_ns() - start) / ROUND_TRIPS;
	fiber_unwound = (size_t)((char *)other_fiber.asyncify_data.stack_ptr - other_asyncify);
	/* The fiber stays suspended for good: its stack must outlive it. */
	return ns;
}

/* ---- The table ------------------------------------------------------------- */

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct variant {
	const char *name;
	double (*run)(void);
	double ns[REPEATS];
};

int main(void)
{
	struct variant v[] = {
		{ "round trip", round_trip, { 0 } },
		{ "create+run+free", create_run_free, { 0 } },
		{ "fiber round trip (floor)", fiber_round_trip, { 0 } },
	};
	const int n = (int)(sizeof v / sizeof v[0]);
	for (int r = 0; r < REPEATS; r++)
		for (int i = 0; i < n; i++)
			v[i].ns[r] = v[i].run();
	printf("%-26s %10s %10s %10s\n", "ns per operation", "median", "min", "max");
	for (int i = 0; i < n; i++) {
		qsort(v[i].ns, REPEATS, sizeof v[i].ns[0], by_value);
		printf("%-26s %10.1f %10.1f %10.1f\n", v[i].name, v[i].ns[REPEATS / 2], v[i].ns[0],
		       v[i].ns[REPEATS - 1]);
	}
	printf("round trip / fiber round trip: %.2f\n", v[0].ns[REPEATS / 2] / v[2].ns[REPEATS / 2]);
	printf("the floor's asyncify buffers: %d bytes, %zu of them unwound per swap\n", FIBER_ASYNCIFY,
	       fiber_unwound);
	return 0;
}
