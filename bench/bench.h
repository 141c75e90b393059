/*
 * bench.h - what the benchmarks share (bench.cpp, peer.c, bench_lua.c):
 * the clock, the heap in use, keeping a buffer live, stopping on a wrong
 * result, and the quantiles of a sample.  Define BENCH_NAME first: the
 * program's name in its error lines.
 */
#ifndef BENCH_H
#define BENCH_H

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/*
 * The CPU time of this thread, not the wall clock: on a machine shared with
 * other work, the time spent waiting for a core is not the code's.  (Both
 * are the same on a quiet machine; the variants never sleep or wait.)
 */
static inline double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* What malloc has handed out, headers included. */
static inline size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

/* Makes the compiler believe that *p is read and written here, so that p's
 * buffer stays in memory, live, and the work done on it is not optimised
 * away. */
static inline void touch(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

static inline void expect(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "%s: %s\n", BENCH_NAME, what);
		exit(1);
	}
}

static inline int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Sorts v[0..n) in place, once, for quantile. */
static inline void sort_sample(double *v, size_t n)
{
	qsort(v, n, sizeof *v, compare_doubles);
}

/* The q-quantile (0 <= q <= 1) of sorted s[0..n), by nearest rank: 0.5 is
 * the median, 0 the least, 1 the greatest. */
static inline double quantile(const double *s, size_t n, double q)
{
	return s[(size_t)(q * (double)(n - 1) + 0.5)];
}

#endif
