/*
 * peer.c - the library beside libaco, its best-known shared-stack peer,
 * both running the same coroutine bodies, from a C program.
 *
 * libaco (github.com/hnes/libaco) is not part of this repository: the
 * Makefile builds its aco.c and acosw.S from a checkout the user names
 * (make bench LIBACO=DIR), in its default configuration, which keeps the
 * x87 control word and MXCSR per coroutine as this library does.  Without
 * it (BENCH_HAVE_ACO 0) only this library's rows run.
 *
 * The two differ in shape.  This library copies a coroutine's live slice
 * out at every yield and back at the resume that finds another owner on
 * the run stack; libaco copies lazily, at the resume that takes the shared
 * stack over, so that one coroutine resumed alone never copies.  Each
 * body below keeps a buffer of n bytes live across every yield (its
 * address escapes, so it lives on the stack), written the same way for
 * both:
 *
 *   4 co round trip  = resumes of 4 coroutines in turn, each yielding back;
 *                      every resume finds another owner: a copy each way
 *   1 co round trip  = resumes of 1 coroutine (libaco copies nothing)
 *   4 co, n KiB held = the 4 co round trip with a body that holds 1, 4
 *                      or 64 KiB: where the copies are most of the cost
 *   dirty flags      = the same, after an FP division left a sticky flag
 *                      in main's MXCSR, which its coroutine's has clear:
 *                      libaco's switch loads the saved MXCSR whole, so its
 *                      every switch changes the flags; this library's
 *                      loads nothing when the control bits agree (see
 *                      asm_switch.S).  Every other variant starts clean.
 *   create+run+free  = a new coroutine run once through a body that
 *                      returns (libaco's ends with aco_exit), then freed
 *   heap/suspended   = heap bytes per suspended coroutine, 100,000 of them
 *                      (mallinfo2's uordblks + hblkhd: what malloc handed
 *                      out, with its headers and rounding)
 *
 * Every variant is measured REPEATS times, the variants interleaved (in the
 * opposite order every other repeat); each ratio is this library's time over
 * libaco's in the same repeat, reported as the median of those ratios with
 * their interquartile range.  The project's goal (asm backend) stands beside
 * each: no slower than libaco, no more heap.
 *
 * Built twice by the Makefile: as a C program linked with the C driver
 * (peer: no C++ runtime, so coroutine.cpp looks for a late one when a
 * coroutine starts) and as a C++ program (peer-cxx, which links the C++
 * runtime and uses it once): create+run+free from both.
 *
 * Usage:  peer [CSV]              run everything, print the table, append to CSV
 *         peer once NAME COUNT    run variant NAME once (libaco's: aco_NAME),
 *                                 COUNT operations, and print its figure
 *                                 (bench-ir.sh runs this under callgrind)
 */
#include "coroutine.h"
#define BENCH_NAME "peer"
#include "bench.h"
#if BENCH_HAVE_ACO
#include "aco.h"
#endif

#include <fenv.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef BENCH_BACKEND
#define BENCH_BACKEND "unknown"
#endif
#ifndef BENCH_HAVE_ACO
#define BENCH_HAVE_ACO 0
#endif
#ifdef __cplusplus
#define BENCH_HOST "C++"
#else
#define BENCH_HOST "C"
#endif

#define REPEATS 61
#define SAMPLE_NS 2e6          /* calibrate each sample to >= 2 ms */
#define SUSPENDED 100000L      /* coroutines for the heap figure */
#define RUN_STACK (1024 * 1024) /* libaco's shared stack: this library's size */

/* ---- Helpers -------------------------------------------------------------- */

/* MXCSR's sticky flags as a variant starts: clear, or one set in main
 * (1/3 is inexact), which the coroutines, saved clean, do not have. */
static void start_flags(int dirty)
{
	volatile double one = 1.0, three = 3.0, third;
	feclearexcept(FE_ALL_EXCEPT);
	if (dirty) {
		third = one / three;
		(void)third;
		expect(fetestexcept(FE_INEXACT) != 0, "the division left MXCSR clean");
	}
}

/* ---- The bodies: n bytes live across every yield, for each library -------- */

#define OURS_BODY(n)                                                  \
	static void ours_hold##n(struct schedule *S, void *ud)        \
	{                                                             \
		char held[n];                                         \
		(void)ud;                                             \
		memset(held, 1, sizeof held);                         \
		for (;;) {                                            \
			touch(held);                                  \
			coroutine_yield(S);                           \
		}                                                     \
	}
OURS_BODY(48)
OURS_BODY(1024)
OURS_BODY(4096)
OURS_BODY(65536)

static void ours_return(struct schedule *S, void *ud)
{
	(void)S, (void)ud;
}

#if BENCH_HAVE_ACO
#define ACO_BODY(n)                                                   \
	static void aco_hold##n(void)                                 \
	{                                                             \
		char held[n];                                         \
		memset(held, 1, sizeof held);                         \
		for (;;) {                                            \
			touch(held);                                  \
			aco_yield();                                  \
		}                                                     \
	}
ACO_BODY(48)
ACO_BODY(1024)
ACO_BODY(4096)
ACO_BODY(65536)

/* A libaco coroutine must not return: it ends with aco_exit. */
static void aco_return(void)
{
	aco_exit();
}
#endif

/* ---- This library's variants: each returns the ns taken by count operations */

/* Round trips through ncos coroutines resumed in turn, started before the
 * clock starts. */
static double ours_trips(int ncos, coroutine_func body, int dirty, long count)
{
	struct schedule *S;
	int i, id = 0;
	long k;
	double start, elapsed;
	start_flags(0);
	S = coroutine_open();
	expect(S != NULL, "coroutine_open failed");
	for (i = 0; i < ncos; i++)
		coroutine_resume(S, coroutine_new(S, body, NULL));
	start_flags(dirty);
	/* One loop for every variant, not a copy specialised for ncos. */
	__asm__("" : "+r"(ncos));
	start = now_ns();
	for (k = 0; k < count; k++) {
		coroutine_resume(S, id);
		if (++id == ncos)
			id = 0;
	}
	elapsed = now_ns() - start;
	coroutine_close(S);
	return elapsed;
}

static double ours_rt4(long count) { return ours_trips(4, ours_hold48, 0, count); }
static double ours_rt1(long count) { return ours_trips(1, ours_hold48, 0, count); }
static double ours_dirty(long count) { return ours_trips(1, ours_hold48, 1, count); }
static double ours_hold1k(long count) { return ours_trips(4, ours_hold1024, 0, count); }
static double ours_hold4k(long count) { return ours_trips(4, ours_hold4096, 0, count); }
static double ours_hold64k(long count) { return ours_trips(4, ours_hold65536, 0, count); }

static double ours_create(long count)
{
	struct schedule *S;
	long k;
	double start, elapsed;
	start_flags(0);
	S = coroutine_open();
	expect(S != NULL, "coroutine_open failed");
	start = now_ns();
	for (k = 0; k < count; k++)
		coroutine_resume(S, coroutine_new(S, ours_return, NULL));
	elapsed = now_ns() - start;
	coroutine_close(S);
	return elapsed;
}

/* Not a time: heap bytes per suspended coroutine (count is ignored). */
static double ours_heap(long count)
{
	struct schedule *S = coroutine_open();
	size_t before;
	long k;
	double per;
	(void)count;
	expect(S != NULL, "coroutine_open failed");
	before = heap_in_use();
	for (k = 0; k < SUSPENDED; k++) {
		int id = coroutine_new(S, ours_hold48, NULL);
		expect(id >= 0, "coroutine_new failed");
		coroutine_resume(S, id);
	}
	per = (double)(heap_in_use() - before) / SUSPENDED;
	coroutine_close(S);
	return per;
}

/* ---- libaco's ------------------------------------------------------------- */

#if BENCH_HAVE_ACO
static aco_t *aco_main(void)
{
	static aco_t *main_co;
	start_flags(0);
	if (main_co == NULL) {
		aco_thread_init(NULL); /* notes the FP state new coroutines get */
		main_co = aco_create(NULL, NULL, 0, NULL, NULL);
	}
	return main_co;
}

static double aco_trips(int ncos, aco_cofuncp_t body, int dirty, long count)
{
	aco_t *main_co = aco_main(), *co[4];
	aco_share_stack_t *stack = aco_share_stack_new(RUN_STACK);
	int i, id = 0;
	long k;
	double start, elapsed;
	for (i = 0; i < ncos; i++) {
		co[i] = aco_create(main_co, stack, 0, body, NULL);
		aco_resume(co[i]);
	}
	start_flags(dirty);
	__asm__("" : "+r"(ncos));
	start = now_ns();
	for (k = 0; k < count; k++) {
		aco_resume(co[id]);
		if (++id == ncos)
			id = 0;
	}
	elapsed = now_ns() - start;
	for (i = 0; i < ncos; i++)
		aco_destroy(co[i]);
	aco_share_stack_destroy(stack);
	return elapsed;
}

static double aco_rt4(long count) { return aco_trips(4, aco_hold48, 0, count); }
static double aco_rt1(long count) { return aco_trips(1, aco_hold48, 0, count); }
static double aco_dirty(long count) { return aco_trips(1, aco_hold48, 1, count); }
static double aco_hold1k(long count) { return aco_trips(4, aco_hold1024, 0, count); }
static double aco_hold4k(long count) { return aco_trips(4, aco_hold4096, 0, count); }
static double aco_hold64k(long count) { return aco_trips(4, aco_hold65536, 0, count); }

static double aco_create_run_free(long count)
{
	aco_t *main_co = aco_main();
	aco_share_stack_t *stack = aco_share_stack_new(RUN_STACK);
	long k;
	double start, elapsed;
	start = now_ns();
	for (k = 0; k < count; k++) {
		aco_t *co = aco_create(main_co, stack, 0, aco_return, NULL);
		aco_resume(co);
		aco_destroy(co);
	}
	elapsed = now_ns() - start;
	aco_share_stack_destroy(stack);
	return elapsed;
}

static double aco_heap(long count)
{
	aco_t *main_co = aco_main();
	aco_share_stack_t *stack = aco_share_stack_new(RUN_STACK);
	aco_t **co = (aco_t **)malloc(SUSPENDED * sizeof *co);
	size_t before;
	long k;
	double per;
	(void)count;
	expect(co != NULL, "out of memory");
	before = heap_in_use();
	for (k = 0; k < SUSPENDED; k++) {
		co[k] = aco_create(main_co, stack, 0, aco_hold48, NULL);
		aco_resume(co[k]);
	}
	per = (double)(heap_in_use() - before) / SUSPENDED;
	for (k = 0; k < SUSPENDED; k++)
		aco_destroy(co[k]);
	free(co);
	aco_share_stack_destroy(stack);
	return per;
}
#endif

/* ---- The table ------------------------------------------------------------- */

struct variant {
	const char *name;        /* for `peer once NAME` and the CSV */
	const char *label;
	int held;                /* bytes its body keeps live (the CSV's n) */
	double (*ours)(long count);
	double (*aco)(long count);  /* NULL without libaco */
	int is_time;             /* 0: bytes, measured once */
	long count;
	double ours_samples[REPEATS], aco_samples[REPEATS];
};

#if BENCH_HAVE_ACO
#define ACO(f) f
#else
#define ACO(f) NULL
#endif

static struct variant variants[] = {
	{ "rt4", "4 co round trip, 48 B held", 48, ours_rt4, ACO(aco_rt4), 1, 0, {0}, {0} },
	{ "rt1", "1 co round trip, 48 B held", 48, ours_rt1, ACO(aco_rt1), 1, 0, {0}, {0} },
	{ "dirty", "1 co, dirty flags in main", 48, ours_dirty, ACO(aco_dirty), 1, 0, {0}, {0} },
	{ "hold1024", "4 co, 1 KiB held", 1024, ours_hold1k, ACO(aco_hold1k), 1, 0, {0}, {0} },
	{ "hold4096", "4 co, 4 KiB held", 4096, ours_hold4k, ACO(aco_hold4k), 1, 0, {0}, {0} },
	{ "hold65536", "4 co, 64 KiB held", 65536, ours_hold64k, ACO(aco_hold64k), 1, 0, {0}, {0} },
	{ "create", "create+run+free", 0, ours_create, ACO(aco_create_run_free), 1, 0, {0}, {0} },
	{ "heap", "heap B/suspended, 48 B held", 48, ours_heap, ACO(aco_heap), 0, 1, {0}, {0} },
};
#define NVARIANTS (sizeof variants / sizeof variants[0])

static double sample(double (*run)(long), const struct variant *v)
{
	double r = run(v->count);
	return v->is_time ? r / (double)v->count : r;
}

/* Doubles the count until one sample of either library takes SAMPLE_NS. */
static void calibrate(struct variant *v)
{
	if (!v->is_time)
		return;
	v->count = 1;
	while (v->ours(v->count) < SAMPLE_NS && (v->aco == NULL || v->aco(v->count) < SAMPLE_NS))
		v->count *= 2;
}

/* A library's samples, sorted (s), as the table shows them. */
static void print_figure(const double *s, int is_time, char *buf, size_t size)
{
	if (is_time)
		snprintf(buf, size, "%.1f [%.1f-%.1f]", quantile(s, REPEATS, 0.5), s[0], s[REPEATS - 1]);
	else
		snprintf(buf, size, "%.1f", quantile(s, REPEATS, 0.5));
}

static void report(FILE *csv)
{
	size_t i;
	int k;
	printf("this library (%s backend) beside %s, from a %s program, %d repeats; "
	       "times in ns: median [min-max]; ratio: median of the per-repeat ratios [interquartile range]\n",
	       BENCH_BACKEND, BENCH_HAVE_ACO ? "libaco" : "nothing (no LIBACO)", BENCH_HOST, REPEATS);
	printf("%-28s %24s %24s   %-19s   %s\n", "variant", "this library", "libaco", "ratio", "goal");
	for (i = 0; i < NVARIANTS; i++) {
		struct variant *v = &variants[i];
		char ours[64], aco[64] = "-", ratio[64] = "-", goal[32] = "-";
		double r[REPEATS], med = 0, q1 = 0, q3 = 0;
		/* The ratios first, each of one repeat: then the samples sorted. */
		for (k = 0; v->aco != NULL && k < REPEATS; k++)
			r[k] = v->ours_samples[k] / v->aco_samples[k];
		sort_sample(v->ours_samples, REPEATS);
		print_figure(v->ours_samples, v->is_time, ours, sizeof ours);
		if (v->aco != NULL) {
			sort_sample(v->aco_samples, REPEATS);
			print_figure(v->aco_samples, v->is_time, aco, sizeof aco);
			sort_sample(r, REPEATS);
			med = quantile(r, REPEATS, 0.5), q1 = quantile(r, REPEATS, 0.25), q3 = quantile(r, REPEATS, 0.75);
			snprintf(ratio, sizeof ratio, "%.2f [%.2f-%.2f]", med, q1, q3);
			if (strcmp(BENCH_BACKEND, "asm") == 0)
				snprintf(goal, sizeof goal, "<= 1.00 %s", med <= 1.0 ? "met" : "MISSED");
		}
		printf("%-28s %24s %24s   %-19s   %s\n", v->label, ours, aco, ratio, goal);
		if (csv != NULL)
			fprintf(csv, "%s/%s,peer_%s,%d,%s,%.2f,%.2f,%.2f,%s,%.2f,%.3f,%.3f,%.3f\n", BENCH_BACKEND,
				BENCH_HOST, v->name, v->held, v->is_time ? "ns" : "bytes",
				quantile(v->ours_samples, REPEATS, 0.5), v->ours_samples[0],
				v->ours_samples[REPEATS - 1], v->aco != NULL ? "libaco" : "-",
				v->aco != NULL ? quantile(v->aco_samples, REPEATS, 0.5) : 0.0, med, q1, q3);
	}
}

/* A C++ host uses its runtime, as a C++ program does, so that it is linked. */
static void use_cxx_runtime(void)
{
#ifdef __cplusplus
	try {
		throw 1;
	} catch (int) {
	}
#endif
}

static int run_once(const char *name, long count)
{
	size_t i;
	int aco = strncmp(name, "aco_", 4) == 0;
	for (i = 0; i < NVARIANTS; i++) {
		struct variant *v = &variants[i];
		double (*run)(long) = aco ? v->aco : v->ours;
		if (strcmp(v->name, aco ? name + 4 : name) != 0 || run == NULL)
			continue;
		v->count = count;
		printf("%s: %.1f %s\n", name, sample(run, v), v->is_time ? "ns" : "bytes");
		return 0;
	}
	fprintf(stderr, "peer: no such variant: %s\n", name);
	return 1;
}

int main(int argc, char **argv)
{
	FILE *csv = NULL;
	size_t i;
	int r;
	use_cxx_runtime();
	if (argc == 4 && strcmp(argv[1], "once") == 0)
		return run_once(argv[2], atol(argv[3]));
	if (argc > 2) {
		fprintf(stderr, "usage: peer [CSV] | peer once NAME COUNT\n");
		return 2;
	}
	if (argc == 2) {
		csv = fopen(argv[1], "a");
		expect(csv != NULL, "cannot open the CSV file");
	}
	fprintf(stderr, "peer %s (%s host): calibrating", BENCH_BACKEND, BENCH_HOST);
	for (i = 0; i < NVARIANTS; i++)
		calibrate(&variants[i]);
	for (r = 0; r < REPEATS; r++) {
		if (r % 10 == 0)
			fprintf(stderr, " %d", r + 1);
		/* Every other repeat backwards, each variant's two libraries in
		 * turn: a drift of the machine's speed favours neither. */
		for (i = 0; i < NVARIANTS; i++) {
			struct variant *v = &variants[r % 2 ? NVARIANTS - 1 - i : i];
			if (v->aco != NULL && r % 2)
				v->aco_samples[r] = sample(v->aco, v);
			v->ours_samples[r] = sample(v->ours, v);
			if (v->aco != NULL && r % 2 == 0)
				v->aco_samples[r] = sample(v->aco, v);
		}
	}
	fprintf(stderr, "\n");
	report(csv);
	if (csv != NULL)
		fclose(csv);
	return 0;
}
