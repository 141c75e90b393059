/*
 * bench.cpp - how fast and how small the library is, next to the floors
 * that bound it.
 *
 * One binary per backend (it links build/<backend>/libcoroutine.a).  Every
 * variant below is measured REPEATS times, the variants interleaved within
 * each repeat (in the opposite order every other repeat), so that a noisy
 * moment of the machine spreads over all of them.  Each time is the median
 * with the min-max of its repeats.  Each ratio to a floor is taken within
 * each repeat (the variant's time over its floor's in the same repeat) and
 * reported as the median of those per-repeat ratios with their interquartile
 * range: a slow spell of the machine slows a variant and its floor alike,
 * so it moves the ratio of one repeat far less than either time.
 *
 *   round trip       = one coroutine_resume plus the coroutine's yield;
 *                      floor: a Boost.Context fcontext round trip (the cost
 *                      of the switch alone), when libboost-context-dev is there
 *   ..., 48 B held   = the same with a body that keeps 48 bytes live across
 *                      every yield, as a game entity keeps its state (the
 *                      body bench/peer.c runs beside libaco)
 *   N bytes held     = round trip of 4 coroutines that each hold N bytes of
 *                      live stack; floor: fcontext + two memcpy(N)
 *   dirty flags      = 1 coroutine after an FP division left a sticky flag in
 *                      main's MXCSR; floor: the clean round trip
 *   own rounding     = 1 coroutine that rounds toward zero (fesetround in it)
 *                      while main rounds to nearest, so that every switch
 *                      changes the FP control registers; floor: the clean
 *                      round trip
 *   ..., FP reload   = on x86, the same three (clean, dirty flags, own
 *                      rounding) with a second copy of the library whose
 *                      switch reloads the saved x87 control word and the
 *                      whole saved MXCSR at every switch, with no compare
 *                      (sticky flags then travel with the context, as with
 *                      swapcontext); the Makefile builds it from
 *                      asm_switch.S with ASM_SWITCH_FP_RELOAD=1 and renames
 *                      its symbols alt_...  Floor: the same case with the
 *                      library itself, so that a ratio above 1 means the
 *                      library's switch is the faster
 *   ..., checked     = the 1 co round trip with a checked copy of the
 *                      library (COROUTINE_CHECKED=1: the run stack made
 *                      inaccessible at every return to main, accessible at
 *                      every resume, two system calls), every symbol renamed
 *                      checked_...; floor: the plain round trip.  For
 *                      debugging builds only
 *   create+run+free  = coroutine_new + one resume of a body that returns;
 *                      floor: a malloc/free pair + the clean round trip
 *   heap/suspended   = heap bytes per suspended shallow coroutine, 100,000
 *                      of them; measured as the delta of mallinfo2()'s
 *                      uordblks + hblkhd, i.e. the chunks malloc handed out,
 *                      its per-block header and rounding included
 *   new, fragmented  = coroutine_new into 1M slots whose lower half is empty
 *                      and upper half alive (where the original's scan from
 *                      nco walks half the array); floor: coroutine_new into a
 *                      fresh schedule
 *
 * What a clone and a delete cost (the coroutines hold N bytes, a body that
 * yields until it is told to return), each timed alone (see in_batches):
 *   new + first yield= coroutine_new and the resume that runs the new
 *                      coroutine to its first yield: what a clone saves
 *   clone, N held    = coroutine_clone of a suspended coroutine; floor: new +
 *                      first yield of the same body (goal, 48 B: at most 1)
 *   fork+_exit+waitpid = a branch per process, what a program without
 *                      clones does: the CPU time of the fork, the child's
 *                      _exit and the wait, in a small process (see
 *                      fork_per_branch); floor: the clone of 48 B (goal: at
 *                      least 1,000, the clone that many times cheaper)
 *   replay: new + k resumes = the other way to reach a coroutine's k-th
 *                      yield again: make it anew and resume it k times (its
 *                      body does nothing in between); floor: the clone
 *   resume to its end = a suspended coroutine resumed to return, freed
 *   delete, ...      = coroutine_delete of a suspended coroutine (a forced
 *                      unwind from its yield) with only plain values on its
 *                      frames, or with an object whose destructor runs;
 *                      floor: the same resumed to its end.  And of a
 *                      coroutine that never started (no unwinding)
 *   B/snapshot       = heap bytes per clone, 10,000 of them (mallinfo2, as
 *                      heap/suspended); floor: the clone's slice
 *                      (coroutine_stack_size), so that the ratio column shows
 *                      the library's bytes beside the slice
 *
 * The project's performance goals (asm backend only) stand beside their
 * floors: a ratio to the floor (at most, or at least for fork), or bytes
 * for the heap figure.
 *
 * Usage:  bench [CSV]           run everything, print the table, append to CSV
 *         bench once NAME COUNT run variant NAME once, COUNT operations, and
 *                               print its figure (bench-ir.sh runs this
 *                               under callgrind)
 *         bench check           run every variant once, a few operations,
 *                               so that what each checks is checked (make
 *                               test runs this; no figure is judged)
 */
#include "coroutine.h"
#define BENCH_NAME "bench"
#include "bench.h"

#include <alloca.h>
#include <fenv.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

/* The cost rows count only their operation, between two toggles of
 * callgrind's collection (a few instructions, when not under callgrind). */
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define COUNT_TOGGLE() CALLGRIND_TOGGLE_COLLECT
#endif
#endif
#ifndef COUNT_TOGGLE
#define COUNT_TOGGLE() ((void)0)
#endif

#ifndef BENCH_BACKEND
#define BENCH_BACKEND "unknown"
#endif
#ifndef BENCH_HAVE_FCONTEXT
#define BENCH_HAVE_FCONTEXT 0
#endif
#ifndef BENCH_HAVE_ALT
#define BENCH_HAVE_ALT 0
#endif
/* The other FP switch is another switch on x86 only. */
#if BENCH_HAVE_ALT && (defined(__x86_64__) || defined(__i386__))
#define BENCH_FP_ALT 1
#else
#define BENCH_FP_ALT 0
#endif
#ifndef BENCH_HAVE_CHECKED
#define BENCH_HAVE_CHECKED 0
#endif
#if BENCH_HAVE_FCONTEXT
#include <boost/context/detail/fcontext.hpp>
#endif

static const int REPEATS = 21;
static const double SAMPLE_NS = 5e6;     /* calibrate each sample to >= 5 ms */
static const long SUSPENDED = 100000;    /* coroutines for the heap figure */
static const int FRAGMENTED_SLOTS = 1 << 20;
static const int SNAPSHOTS = 10000;      /* clones for the bytes per snapshot */

/* ---- The library, and its renamed copies (FP reload, checked) ----------- */

/* The calls the round trips make, as a type: chosen at compile time, so
 * that the library's calls are direct calls, as in any program. */
struct library {
	static struct schedule *open(void) { return coroutine_open(); }
	static void close(struct schedule *S) { coroutine_close(S); }
	static int create(struct schedule *S, coroutine_func f, void *ud) { return coroutine_new(S, f, ud); }
	static void resume(struct schedule *S, int id) { coroutine_resume(S, id); }
	static void yield(struct schedule *S) { coroutine_yield(S); }
};

/* A copy of the library whose every symbol the build renamed prefix_...
 * (mk/bench.mk), as a type like library. */
#define RENAMED_LIBRARY(type, prefix)                                                                   \
	extern "C" {                                                                                    \
	struct schedule *prefix##_coroutine_open(void);                                                 \
	void prefix##_coroutine_close(struct schedule *S);                                              \
	int prefix##_coroutine_new(struct schedule *S, coroutine_func func, void *ud);                  \
	void prefix##_coroutine_resume(struct schedule *S, int id);                                     \
	void prefix##_coroutine_yield(struct schedule *S);                                              \
	}                                                                                               \
	struct type {                                                                                   \
		static struct schedule *open(void) { return prefix##_coroutine_open(); }                \
		static void close(struct schedule *S) { prefix##_coroutine_close(S); }                  \
		static int create(struct schedule *S, coroutine_func f, void *ud) { return prefix##_coroutine_new(S, f, ud); } \
		static void resume(struct schedule *S, int id) { prefix##_coroutine_resume(S, id); }    \
		static void yield(struct schedule *S) { prefix##_coroutine_yield(S); }                  \
	}

#if BENCH_FP_ALT
RENAMED_LIBRARY(fp_reload_library, alt);
#endif
#if BENCH_HAVE_CHECKED
RENAMED_LIBRARY(checked_library, checked);
#endif

/* ---- Coroutine bodies --------------------------------------------------- */

template <class Lib>
static void yield_forever(struct schedule *S, void *)
{
	for (;;)
		Lib::yield(S);
}

/* Keeps *(size_t *)ud bytes of its own stack live across every yield. */
static void hold_stack(struct schedule *S, void *ud)
{
	size_t n = *(size_t *)ud;
	char *held = (char *)alloca(n);
	memset(held, 1, n);
	for (;;) {
		touch(held);
		library::yield(S);
	}
}

/* Keeps 48 bytes of its own stack live across every yield. */
static void hold_48_bytes(struct schedule *S, void *)
{
	char held[48];
	memset(held, 1, sizeof held);
	for (;;) {
		touch(held);
		library::yield(S);
	}
}

/* Rounds toward zero, which main does not: each switch changes the mode. */
template <class Lib>
static void round_toward_zero(struct schedule *S, void *)
{
	fesetround(FE_TOWARDZERO);
	yield_forever<Lib>(S, NULL);
}

static void return_at_once(struct schedule *, void *)
{
}

/* ---- The variants: each returns the ns taken by `count` operations ------ */

/*
 * Round trips through ncos coroutines resumed round-robin, each holding n
 * bytes of stack (none when n is 0).  The coroutines are started before the
 * clock starts: the first entry is create+run's business.
 */
template <class Lib>
static double round_trips(int ncos, size_t n, bool dirty_mxcsr, coroutine_func body, long count)
{
	feclearexcept(FE_ALL_EXCEPT);
	struct schedule *S = Lib::open();
	expect(S != NULL, "coroutine_open failed");
	for (int i = 0; i < ncos; i++) {
		int id = Lib::create(S, body, &n);
		expect(id == i, "coroutine_new returned an unexpected id");
		Lib::resume(S, id);
	}
	if (dirty_mxcsr) {
		/* 1/3 is inexact: the sticky PE flag stays set in main's MXCSR, while
		 * the coroutines saved theirs clean. */
		volatile double one = 1.0, three = 3.0;
		volatile double third = one / three;
		(void)third;
		expect(fetestexcept(FE_INEXACT), "the division left MXCSR clean");
	}
	/* The same loop for every variant: the compiler may not specialise a
	 * copy of it for a known number of coroutines. */
	__asm__("" : "+r"(ncos));
	int id = 0;
	double start = now_ns();
	for (long i = 0; i < count; i++) {
		Lib::resume(S, id);
		if (++id == ncos)
			id = 0;
	}
	double elapsed = now_ns() - start;
	Lib::close(S);
	feclearexcept(FE_ALL_EXCEPT);
	expect(fegetround() == FE_TONEAREST, "a coroutine's rounding mode leaked into main");
	return elapsed;
}

template <class Lib>
static double one_coroutine(long count, size_t) { return round_trips<Lib>(1, 0, false, yield_forever<Lib>, count); }
static double four_coroutines(long count, size_t) { return round_trips<library>(4, 0, false, yield_forever<library>, count); }
static double one_holding_48(long count, size_t) { return round_trips<library>(1, 0, false, hold_48_bytes, count); }
static double four_holding_48(long count, size_t) { return round_trips<library>(4, 0, false, hold_48_bytes, count); }
static double four_holding(long count, size_t n) { return round_trips<library>(4, n, false, hold_stack, count); }
template <class Lib>
static double dirty_flags(long count, size_t) { return round_trips<Lib>(1, 0, true, yield_forever<Lib>, count); }
template <class Lib>
static double own_rounding(long count, size_t) { return round_trips<Lib>(1, 0, false, round_toward_zero<Lib>, count); }

static double create_run_free(long count, size_t)
{
	struct schedule *S = coroutine_open();
	expect(S != NULL, "coroutine_open failed");
	double start = now_ns();
	for (long i = 0; i < count; i++)
		coroutine_resume(S, coroutine_new(S, return_at_once, NULL));
	double elapsed = now_ns() - start;
	coroutine_close(S);
	return elapsed;
}

/* Not a time: heap bytes per suspended coroutine (count is ignored). */
static double heap_per_suspended(long, size_t)
{
	struct schedule *S = coroutine_open();
	expect(S != NULL, "coroutine_open failed");
	size_t before = heap_in_use();
	for (long i = 0; i < SUSPENDED; i++) {
		int id = coroutine_new(S, yield_forever<library>, NULL);
		expect(id >= 0, "coroutine_new failed");
		coroutine_resume(S, id);
	}
	double per = (double)(heap_in_use() - before) / SUSPENDED;
	coroutine_close(S);
	return per;
}

/* count coroutine_new calls into S, timed; then ends them, untimed. */
static double timed_news(struct schedule *S, long count, bool check_ids)
{
	std::vector<int> ids((size_t)count);
	double start = now_ns();
	for (long i = 0; i < count; i++)
		ids[(size_t)i] = coroutine_new(S, return_at_once, NULL);
	double elapsed = now_ns() - start;
	for (long i = 0; i < count; i++) {
		/* In the fragmented schedule the original's scan from nco wraps
		 * past the live upper half to the lowest empty slot, every time. */
		expect(!check_ids || ids[(size_t)i] == i, "fragmented ids differ from the original's");
		coroutine_resume(S, ids[(size_t)i]);
	}
	return elapsed;
}

/* 1M slots: the lower half empty, the upper half alive (never started). */
static struct schedule *fragmented_schedule(void)
{
	static struct schedule *S;
	if (S != NULL)
		return S;
	S = coroutine_open();
	expect(S != NULL, "coroutine_open failed");
	for (int i = 0; i < FRAGMENTED_SLOTS; i++) {
		int id = coroutine_new(S, i < FRAGMENTED_SLOTS / 2 ? return_at_once : yield_forever<library>, NULL);
		expect(id == i, "coroutine_new returned an unexpected id");
	}
	for (int i = 0; i < FRAGMENTED_SLOTS / 2; i++)
		coroutine_resume(S, i);
	return S;
}

static double new_fragmented(long count, size_t)
{
	return timed_news(fragmented_schedule(), count, true);
}

static double new_fresh(long count, size_t)
{
	struct schedule *S = coroutine_open();
	expect(S != NULL, "coroutine_open failed");
	double elapsed = timed_news(S, count, false);
	coroutine_close(S);
	return elapsed;
}

/* ---- What a clone and a delete cost ------------------------------------------
 *
 * Each operation is timed in batches of `batch` on one schedule: what it
 * works on is made before the clock starts and what it leaves is ended
 * after the clock stops, so that the time is the operation's alone.  So is
 * the count: the operation runs between two toggles of callgrind's
 * collection, and bench-ir.sh runs these variants with collection off at
 * the start.
 */
static int batch = 1024; /* bench check makes it 4 */
static const int KEEP_FREED = 1 << 30; /* bytes of free heap malloc keeps */

/* Whether the bodies below return at their next resume rather than yield. */
static bool end_them;

/* Keeps N bytes of its own stack live across every yield, until end_them. */
template <size_t N>
static void hold_until_ended(struct schedule *S, void *)
{
	char held[N];
	memset(held, 1, sizeof held);
	do {
		touch(held);
		coroutine_yield(S);
	} while (!end_them);
}

static coroutine_func holding(size_t n)
{
	switch (n) {
	case 48: return hold_until_ended<48>;
	case 1024: return hold_until_ended<1024>;
	case 4096: return hold_until_ended<4096>;
	}
	expect(false, "no body holds that many bytes");
	return NULL;
}

/* 48 bytes on a coroutine's frame that a destructor must let go of: it
 * counts the objects destroyed. */
static long destroyed;
struct owned_48_bytes {
	char bytes[48];
	owned_48_bytes() { memset(bytes, 1, sizeof bytes); }
	~owned_48_bytes()
	{
		touch(bytes);
		++destroyed;
	}
};

static void hold_object_until_ended(struct schedule *S, void *)
{
	owned_48_bytes held;
	do {
		touch(held.bytes);
		coroutine_yield(S);
	} while (!end_them);
}

/*
 * ns taken by count operations, in batches: before(S, ids, n) untimed,
 * operate(S, ids, n) timed and counted, after(S, ids, n) untimed, where
 * ids has room for n ids.  malloc is told to keep what a batch frees: at
 * each batch's end glibc would give megabytes back to the kernel, and the
 * next batch would pay a page fault per page, which a program that makes
 * and ends snapshots in a steady state does not (it shows in the 1 and 4
 * KiB rows as several times the library's time).  It stays told for the
 * rest of the process: the rows before these in the table, which ran once
 * at the calibration without it, run with it in every repeat.
 */
template <class Before, class Operate, class After>
static double in_batches(long count, Before before, Operate operate, After after)
{
	expect(mallopt(M_TRIM_THRESHOLD, KEEP_FREED) == 1, "mallopt failed");
	struct schedule *S = coroutine_open();
	expect(S != NULL, "coroutine_open failed");
	std::vector<int> ids((size_t)batch);
	double elapsed = 0;
	for (long done = 0; done < count; done += batch) {
		int n = (int)std::min<long>(batch, count - done);
		before(S, ids.data(), n);
		double start = now_ns();
		COUNT_TOGGLE();
		operate(S, ids.data(), n);
		COUNT_TOGGLE();
		elapsed += now_ns() - start;
		after(S, ids.data(), n);
	}
	coroutine_close(S);
	return elapsed;
}

static void do_nothing(struct schedule *, int *, int)
{
}

/* n new coroutines of body, each run to its first yield. */
static void start_coroutines(struct schedule *S, coroutine_func body, int *ids, int n)
{
	for (int i = 0; i < n; i++) {
		ids[i] = coroutine_new(S, body, NULL);
		expect(ids[i] >= 0, "coroutine_new failed");
		coroutine_resume(S, ids[i]);
	}
}

/* The n coroutines of ids, suspended, resumed once more: they return. */
static void end_coroutines(struct schedule *S, int *ids, int n)
{
	end_them = true;
	for (int i = 0; i < n; i++)
		coroutine_resume(S, ids[i]);
	end_them = false;
	for (int i = 0; i < n; i++)
		expect(coroutine_status(S, ids[i]) == COROUTINE_DEAD, "a coroutine did not end");
}

/* coroutine_new and the first resume, which runs it to its first yield:
 * the coroutine that a clone saves making. */
static double new_to_first_yield(long count, size_t n)
{
	coroutine_func body = holding(n);
	return in_batches(count, do_nothing,
			  [body](struct schedule *S, int *ids, int k) { start_coroutines(S, body, ids, k); },
			  end_coroutines);
}

/* Copies of one suspended coroutine: the origin is made first, and ended
 * with its copies, each of which has its slice. */
static double clone_suspended(long count, size_t n)
{
	coroutine_func body = holding(n);
	int origin = -1;
	return in_batches(count, [&](struct schedule *S, int *, int) { start_coroutines(S, body, &origin, 1); },
			  [&](struct schedule *S, int *ids, int k) {
				  for (int i = 0; i < k; i++)
					  ids[i] = coroutine_clone(S, origin);
			  },
			  [&](struct schedule *S, int *ids, int k) {
				  for (int i = 0; i < k; i++)
					  expect(ids[i] >= 0 && coroutine_stack_size(S, ids[i]) == coroutine_stack_size(S, origin),
						 "a clone lacks its origin's slice");
				  end_coroutines(S, ids, k);
				  end_coroutines(S, &origin, 1);
			  });
}

/* What a program without clones does to reach a coroutine's k-th yield
 * again: a new one, replayed from its start by k resumes.  The least it
 * costs: the body does nothing between its yields. */
template <int K>
static double replay_to_yield(long count, size_t n)
{
	coroutine_func body = holding(n);
	return in_batches(count, do_nothing,
			  [body](struct schedule *S, int *ids, int k) {
				  for (int i = 0; i < k; i++) {
					  ids[i] = coroutine_new(S, body, NULL);
					  for (int j = 0; j < K; j++)
						  coroutine_resume(S, ids[i]);
				  }
			  },
			  end_coroutines);
}

/* Suspended coroutines of body, resumed to their end (end_them) or deleted:
 * the two ways to be rid of one.  Either way the owned objects on their
 * frames are destroyed. */
static double end_or_delete(long count, coroutine_func body, bool delete_them)
{
	bool owns = body == hold_object_until_ended;
	return in_batches(count,
			  [&](struct schedule *S, int *ids, int k) {
				  start_coroutines(S, body, ids, k);
				  destroyed = 0;
			  },
			  [&](struct schedule *S, int *ids, int k) {
				  end_them = !delete_them;
				  for (int i = 0; i < k; i++) {
					  if (delete_them)
						  coroutine_delete(S, ids[i]);
					  else
						  coroutine_resume(S, ids[i]);
				  }
				  end_them = false;
			  },
			  [&](struct schedule *S, int *ids, int k) {
				  for (int i = 0; i < k; i++)
					  expect(coroutine_status(S, ids[i]) == COROUTINE_DEAD, "a coroutine outlived its end");
				  expect(destroyed == (owns ? k : 0), "the objects on the frames were not destroyed once each");
			  });
}

static double end_plain(long count, size_t n) { return end_or_delete(count, holding(n), false); }
static double delete_plain(long count, size_t n) { return end_or_delete(count, holding(n), true); }
static double end_object(long count, size_t) { return end_or_delete(count, hold_object_until_ended, false); }
static double delete_object(long count, size_t) { return end_or_delete(count, hold_object_until_ended, true); }

/* Deleting coroutines that never started: there is nothing to unwind. */
static double delete_new(long count, size_t n)
{
	coroutine_func body = holding(n);
	return in_batches(count,
			  [body](struct schedule *S, int *ids, int k) {
				  for (int i = 0; i < k; i++)
					  ids[i] = coroutine_new(S, body, NULL);
			  },
			  [](struct schedule *S, int *ids, int k) {
				  for (int i = 0; i < k; i++)
					  coroutine_delete(S, ids[i]);
			  },
			  [](struct schedule *S, int *ids, int k) {
				  for (int i = 0; i < k; i++)
					  expect(coroutine_status(S, ids[i]) == COROUTINE_DEAD, "a deleted coroutine is there");
			  });
}

/* Not times: the bytes of a snapshot.  A clone's slice, as
 * coroutine_stack_size gives it (count is ignored), ... */
static double slice_of_clone(long, size_t n)
{
	struct schedule *S = coroutine_open();
	expect(S != NULL, "coroutine_open failed");
	int origin;
	start_coroutines(S, holding(n), &origin, 1);
	int copy = coroutine_clone(S, origin);
	expect(copy >= 0, "coroutine_clone failed");
	double size = (double)coroutine_stack_size(S, copy);
	end_coroutines(S, &copy, 1);
	end_coroutines(S, &origin, 1);
	coroutine_close(S);
	return size;
}

/* ... and the heap a clone takes, SNAPSHOTS of them: its slice and what
 * the library keeps beside it (the block of its struct and slice, malloc's
 * header and rounding, its slot in the doubling array of slots). */
static double heap_per_snapshot(long, size_t n)
{
	struct schedule *S = coroutine_open();
	expect(S != NULL, "coroutine_open failed");
	int origin;
	start_coroutines(S, holding(n), &origin, 1);
	std::vector<int> copies(SNAPSHOTS);
	size_t before = heap_in_use();
	for (int &copy : copies)
		expect((copy = coroutine_clone(S, origin)) >= 0, "coroutine_clone failed");
	double per = (double)(heap_in_use() - before) / SNAPSHOTS;
	end_coroutines(S, copies.data(), SNAPSHOTS);
	end_coroutines(S, &origin, 1);
	coroutine_close(S);
	return per;
}

/* ---- fork(): a branch per process, what a program without clones does ------
 *
 * The process forks; the child _exits at once, and the parent waits for
 * it.  The time is CPU time, as elsewhere, the child's included (the
 * parent's thread, plus its reaped children from getrusage).  A fork costs
 * more the more the process has mapped, and the bench maps about 100 MB
 * for its fragmented schedule: the forks are made by a twin of the bench
 * forked before anything else, which stays small.  So this is about the
 * least a fork costs; a child that writes to its memory pays for each page
 * it copies on top.
 */
static double children_cpu_ns(void)
{
	struct rusage ru;
	expect(getrusage(RUSAGE_CHILDREN, &ru) == 0, "getrusage failed");
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9
	       + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
}

static double forks_here(long count)
{
	double start = now_ns(), children = children_cpu_ns();
	for (long i = 0; i < count; i++) {
		pid_t pid = fork();
		expect(pid >= 0, "fork failed");
		if (pid == 0)
			_exit(0);
		int status;
		expect(waitpid(pid, &status, 0) == pid && WIFEXITED(status), "the forked child did not exit");
	}
	return now_ns() - start + children_cpu_ns() - children;
}

/* The twin: it reads a count, forks that many times, writes the ns back. */
static struct {
	pid_t pid;  /* 0: none, the forks are made here */
	int ask;    /* the counts go down this pipe, */
	int answer; /* the times come back up this one */
} fork_twin;

static void start_fork_twin(void)
{
	int ask[2], answer[2];
	expect(pipe(ask) == 0 && pipe(answer) == 0, "pipe failed");
	pid_t pid = fork();
	expect(pid >= 0, "fork failed");
	if (pid == 0) {
		close(ask[1]);
		close(answer[0]);
		long count;
		while (read(ask[0], &count, sizeof count) == (ssize_t)sizeof count) {
			double ns = forks_here(count);
			if (write(answer[1], &ns, sizeof ns) != (ssize_t)sizeof ns)
				break;
		}
		_exit(0);
	}
	close(ask[0]);
	close(answer[1]);
	fork_twin.pid = pid;
	fork_twin.ask = ask[1];
	fork_twin.answer = answer[0];
}

static void stop_fork_twin(void)
{
	if (fork_twin.pid == 0)
		return;
	close(fork_twin.ask); /* its read sees the end: it exits */
	close(fork_twin.answer);
	int status;
	expect(waitpid(fork_twin.pid, &status, 0) == fork_twin.pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "the fork twin failed");
	fork_twin.pid = 0;
}

static double fork_per_branch(long count, size_t)
{
	if (fork_twin.pid == 0)
		return forks_here(count);
	double ns = 0;
	expect(write(fork_twin.ask, &count, sizeof count) == (ssize_t)sizeof count
	       && read(fork_twin.answer, &ns, sizeof ns) == (ssize_t)sizeof ns, "the fork twin does not answer");
	return ns;
}

/* ---- The floors ------------------------------------------------------------ */

static double malloc_free(long count, size_t)
{
	double start = now_ns();
	for (long i = 0; i < count; i++) {
		void *p = malloc(128);
		touch(p);
		free(p);
	}
	return now_ns() - start;
}

/*
 * What the library's copies cost at the least: the yielding coroutine's n
 * bytes out to its buffer, the next one's n bytes back in from another (4
 * buffers, as 4 coroutines have).
 */
static double two_memcpys(long count, size_t n)
{
	char *stack = (char *)malloc(n);
	char *saved[4];
	for (int i = 0; i < 4; i++)
		saved[i] = (char *)calloc(1, n);
	memset(stack, 1, n);
	int k = 0;
	double start = now_ns();
	for (long i = 0; i < count; i++) {
		memcpy(saved[k], stack, n);
		k = (k + 1) & 3;
		memcpy(stack, saved[k], n);
		touch(stack);
	}
	double elapsed = now_ns() - start;
	for (int i = 0; i < 4; i++)
		free(saved[i]);
	free(stack);
	return elapsed;
}

#if BENCH_HAVE_FCONTEXT
namespace fctx = boost::context::detail;

static void fcontext_pong(fctx::transfer_t t)
{
	for (;;)
		t = fctx::jump_fcontext(t.fctx, NULL);
}

static double fcontext_round_trips(long count, size_t)
{
	const size_t size = 64 * 1024;
	char *stack = (char *)malloc(size);
	fctx::fcontext_t pong = fctx::make_fcontext(stack + size, size, fcontext_pong);
	pong = fctx::jump_fcontext(pong, NULL).fctx;
	double start = now_ns();
	for (long i = 0; i < count; i++)
		pong = fctx::jump_fcontext(pong, NULL).fctx;
	double elapsed = now_ns() - start;
	free(stack);
	return elapsed;
}
#endif

/* ---- The table ------------------------------------------------------------- */

enum {
	FLOOR = 1,    /* another variant's floor */
	BYTES = 2,    /* a figure in bytes, not a time */
	AT_LEAST = 4, /* the goal is a least ratio to the floor, not a most */
	LARGE = 8,    /* makes 100,000 coroutines or more: not in bench check */
};

struct variant {
	const char *name;       /* for `bench once NAME` and the CSV */
	const char *label;
	size_t n;               /* live stack bytes held, or 0 */
	double (*run)(long count, size_t n);
	long max_count;         /* calibration stops here */
	const char *floor[2];   /* names of the variants whose sum is the floor */
	double goal;            /* the asm backend's goal: at most this ratio to
	                         * the floor (at least, with AT_LEAST; bytes for
	                         * heap); 0 when none */
	unsigned flags;         /* FLOOR, BYTES, AT_LEAST */
	std::vector<double> samples; /* per operation */
	long count;
};

/* The N >= 1 KiB rows must stay within 1.3x of their floor, 64 KiB within
 * 1.0x; 256 is free. */
#define HOLDING(name, n, goal) \
	{name, "4 co, N bytes held", n, four_holding, 1L << 30, {"fcontext", "memcpy" #n}, goal, 0, {}, 0}, \
	{"memcpy" #n, "two memcpy(N)", n, two_memcpys, 1L << 30, {NULL, NULL}, 0, FLOOR, {}, 0}

static std::vector<variant> variants = {
#if BENCH_HAVE_FCONTEXT
	{"fcontext", "fcontext round trip", 0, fcontext_round_trips, 1L << 30, {NULL, NULL}, 0, FLOOR, {}, 0},
#endif
	{"malloc_free", "malloc/free pair", 0, malloc_free, 1L << 30, {NULL, NULL}, 0, FLOOR, {}, 0},
	{"new_fresh", "coroutine_new, fresh", 0, new_fresh, 1L << 18, {NULL, NULL}, 0, FLOOR, {}, 0},
	{"rt1", "1 co round trip", 0, one_coroutine<library>, 1L << 30, {"fcontext", NULL}, 1.3, 0, {}, 0},
	{"rt4", "4 co round trip", 0, four_coroutines, 1L << 30, {"fcontext", NULL}, 1.5, 0, {}, 0},
	{"rt1_48", "1 co, 48 B held", 48, one_holding_48, 1L << 30, {"fcontext", NULL}, 1.3, 0, {}, 0},
	{"rt4_48", "4 co, 48 B held", 48, four_holding_48, 1L << 30, {"fcontext", NULL}, 1.5, 0, {}, 0},
	HOLDING("stack256", 256, 0),
	HOLDING("stack1024", 1024, 1.3),
	HOLDING("stack4096", 4096, 1.3),
	HOLDING("stack16384", 16384, 1.3),
	HOLDING("stack65536", 65536, 1.0),
	{"dirty", "1 co, dirty flags in main", 0, dirty_flags<library>, 1L << 30, {"rt1", NULL}, 1.1, 0, {}, 0},
	{"rounding", "1 co, own rounding mode", 0, own_rounding<library>, 1L << 30, {"rt1", NULL}, 1.1, 0, {}, 0},
#if BENCH_FP_ALT
	{"rt1_reload", "1 co, FP reload", 0, one_coroutine<fp_reload_library>, 1L << 30, {"rt1", NULL}, 0, 0, {}, 0},
	{"dirty_reload", "dirty flags, FP reload", 0, dirty_flags<fp_reload_library>, 1L << 30, {"dirty", NULL}, 0, 0, {}, 0},
	{"rounding_reload", "own rounding, FP reload", 0, own_rounding<fp_reload_library>, 1L << 30, {"rounding", NULL}, 0, 0, {}, 0},
#endif
#if BENCH_HAVE_CHECKED
	{"rt1_checked", "1 co round trip, checked", 0, one_coroutine<checked_library>, 1L << 30, {"rt1", NULL}, 0, 0, {}, 0},
#endif
	{"create", "create+run+free", 0, create_run_free, 1L << 30, {"malloc_free", "rt1"}, 0, 0, {}, 0},
	{"heap", "heap B/suspended", 0, heap_per_suspended, 1, {NULL, NULL}, 200, BYTES | LARGE, {}, 0},
	{"new_frag", "coroutine_new, fragmented", 0, new_fragmented, 1L << 18, {"new_fresh", NULL}, 0, LARGE, {}, 0},
	/* The costs of a clone and a delete, beside what they save; and bytes
	 * per snapshot, its slice and the library's overhead (the ratio column). */
	{"first48", "new + first yield, 48 B", 48, new_to_first_yield, 1L << 30, {NULL, NULL}, 0, FLOOR, {}, 0},
	{"clone48", "clone, 48 B held", 48, clone_suspended, 1L << 30, {"first48", NULL}, 1.0, 0, {}, 0},
	{"first1024", "new + first yield, 1 KiB", 1024, new_to_first_yield, 1L << 30, {NULL, NULL}, 0, FLOOR, {}, 0},
	{"clone1024", "clone, 1 KiB held", 1024, clone_suspended, 1L << 30, {"first1024", NULL}, 0, 0, {}, 0},
	{"first4096", "new + first yield, 4 KiB", 4096, new_to_first_yield, 1L << 30, {NULL, NULL}, 0, FLOOR, {}, 0},
	{"clone4096", "clone, 4 KiB held", 4096, clone_suspended, 1L << 30, {"first4096", NULL}, 0, 0, {}, 0},
	{"fork", "fork+_exit+waitpid", 0, fork_per_branch, 1L << 20, {"clone48", NULL}, 1000, AT_LEAST, {}, 0},
	{"replay10", "replay: new + 10 resumes", 48, replay_to_yield<10>, 1L << 30, {"clone48", NULL}, 0, 0, {}, 0},
	{"replay100", "replay: new + 100 resumes", 48, replay_to_yield<100>, 1L << 30, {"clone48", NULL}, 0, 0, {}, 0},
	{"end_plain", "resume to its end", 48, end_plain, 1L << 30, {NULL, NULL}, 0, FLOOR, {}, 0},
	{"delete_plain", "delete, suspended", 48, delete_plain, 1L << 30, {"end_plain", NULL}, 0, 0, {}, 0},
	{"end_object", "resume to end, destructor", 48, end_object, 1L << 30, {NULL, NULL}, 0, FLOOR, {}, 0},
	{"delete_object", "delete, destructor", 48, delete_object, 1L << 30, {"end_object", NULL}, 0, 0, {}, 0},
	{"delete_new", "delete, never started", 48, delete_new, 1L << 30, {NULL, NULL}, 0, 0, {}, 0},
	{"slice48", "slice of a clone, 48 B", 48, slice_of_clone, 1, {NULL, NULL}, 0, FLOOR | BYTES, {}, 0},
	{"snapshot48", "B/snapshot, 48 B held", 48, heap_per_snapshot, 1, {"slice48", NULL}, 0, BYTES, {}, 0},
	{"slice1024", "slice of a clone, 1 KiB", 1024, slice_of_clone, 1, {NULL, NULL}, 0, FLOOR | BYTES, {}, 0},
	{"snapshot1024", "B/snapshot, 1 KiB held", 1024, heap_per_snapshot, 1, {"slice1024", NULL}, 0, BYTES, {}, 0},
	{"slice4096", "slice of a clone, 4 KiB", 4096, slice_of_clone, 1, {NULL, NULL}, 0, FLOOR | BYTES, {}, 0},
	{"snapshot4096", "B/snapshot, 4 KiB held", 4096, heap_per_snapshot, 1, {"slice4096", NULL}, 0, BYTES, {}, 0},
};

static variant *find(const char *name)
{
	for (variant &v : variants)
		if (strcmp(v.name, name) == 0)
			return &v;
	return NULL;
}

static bool is_time(const variant &v)
{
	return !(v.flags & BYTES);
}

/* Doubles the count until one sample takes SAMPLE_NS. */
static void calibrate(variant &v)
{
	v.count = 1;
	while (v.count < v.max_count && v.run(v.count, v.n) < SAMPLE_NS)
		v.count *= 2;
}

static void sample(variant &v)
{
	double r = v.run(v.count, v.n);
	v.samples.push_back(is_time(v) ? r / v.count : r);
}

/* The element at fraction q of sorted s (bench.h's quantile). */
static double quantile(const std::vector<double> &s, double q)
{
	return quantile(s.data(), s.size(), q);
}

static std::vector<double> sorted(std::vector<double> s)
{
	std::sort(s.begin(), s.end());
	return s;
}

/*
 * The ratio of v to its floor in each repeat (the floor's parts taken in the
 * same repeat), sorted; empty when v has no floor or a part of it was not
 * built.
 */
static std::vector<double> ratios(const variant &v)
{
	std::vector<double> r;
	if (v.floor[0] == NULL || !is_time(v))
		return r;
	for (size_t k = 0; k < v.samples.size(); k++) {
		double fl = 0;
		for (const char *name : v.floor) {
			if (name == NULL)
				continue;
			const variant *f = find(name);
			if (f == NULL)
				return std::vector<double>();
			fl += f->samples[k];
		}
		r.push_back(v.samples[k] / fl);
	}
	return sorted(r);
}

/* The floor's median time (the sum of its parts' medians), or -1. */
static double floor_median(const variant &v)
{
	if (v.floor[0] == NULL)
		return -1;
	double sum = 0;
	for (const char *name : v.floor) {
		if (name == NULL)
			continue;
		const variant *f = find(name);
		if (f == NULL)
			return -1;
		sum += quantile(sorted(f->samples), 0.5);
	}
	return sum;
}

static void floor_name(const variant &v, char *buf, size_t size)
{
	const char *second = v.floor[1] ? v.floor[1] : "";
	snprintf(buf, size, "%s%s%s", v.floor[0] ? v.floor[0] : "-", v.floor[1] ? "+" : "", second);
}

/* "<= 1.30 met", ">= 1000 met" or "<= 200 MISSED": the goal and whether
 * this run meets it, judged on value (the median ratio, or bytes for the
 * heap figure). */
static void goal_text(const variant &v, double value, char *buf, size_t size)
{
	bool is_ratio = is_time(v), at_least = v.flags & AT_LEAST;
	if (strcmp(BENCH_BACKEND, "asm") != 0 || v.goal <= 0 || value <= 0) {
		snprintf(buf, size, "-");
		return;
	}
	bool met = at_least ? value >= v.goal : value <= v.goal;
	snprintf(buf, size, is_ratio && v.goal < 100 ? "%s %.2f %s" : "%s %.0f %s", at_least ? ">=" : "<=", v.goal,
		 met ? "met" : "MISSED");
}

/* A ratio, with as many decimals as a reader needs. */
static void ratio_text(double ratio, char *buf, size_t size)
{
	snprintf(buf, size, ratio < 100 ? "%.2f" : "%.0f", ratio);
}

static void report(FILE *csv)
{
	printf("backend %s, %d repeats; times: median [min-max]; ratios: median of the per-repeat ratios "
	       "[interquartile range]; bytes: +what the library keeps beside the floor's slice%s\n", BENCH_BACKEND,
	       REPEATS, BENCH_HAVE_FCONTEXT ? "" : "; no fcontext floor (libboost-context-dev not found)");
	printf("%-26s %6s %26s   %-18s %9s %19s   %s\n", "variant", "N", "ns (or B)", "floor", "floor ns", "ratio",
	       "goal");
	for (const variant &v : variants) {
		std::vector<double> s = sorted(v.samples), r = ratios(v);
		double med = quantile(s, 0.5), fl = floor_median(v);
		double ratio = r.empty() ? 0 : quantile(r, 0.5);
		char name[64], range[64], spread[96], goal[32], q[3][24];
		floor_name(v, name, sizeof name);
		goal_text(v, is_time(v) ? ratio : med, goal, sizeof goal);
		snprintf(range, sizeof range, s.back() < 1e5 ? "%.1f [%.1f-%.1f]" : "%.0f [%.0f-%.0f]", med, s.front(),
			 s.back());
		printf("%-26s %6zu %26s   %-18s", v.label, v.n, range, name);
		if (!r.empty()) {
			ratio_text(ratio, q[0], sizeof q[0]);
			ratio_text(quantile(r, 0.25), q[1], sizeof q[1]);
			ratio_text(quantile(r, 0.75), q[2], sizeof q[2]);
			snprintf(spread, sizeof spread, "%s [%s-%s]", q[0], q[1], q[2]);
			printf(" %9.1f %19s", fl, spread);
		} else if (!is_time(v) && fl >= 0) { /* bytes beside bytes: the difference */
			snprintf(spread, sizeof spread, "+%.0f B", med - fl);
			printf(" %9.1f %19s", fl, spread);
		} else {
			printf(" %9s %19s", "-", "-");
		}
		printf("   %s\n", goal);
		if (csv)
			fprintf(csv, "%s,%s,%zu,%s,%.2f,%.2f,%.2f,%s,%.2f,%.3f,%.3f,%.3f\n", BENCH_BACKEND, v.name, v.n,
				is_time(v) ? "ns" : "bytes", med, s.front(), s.back(), name, fl > 0 ? fl : 0.0, ratio,
				r.empty() ? 0.0 : quantile(r, 0.25), r.empty() ? 0.0 : quantile(r, 0.75));
	}
}

/* What each variant checks as it runs (ids, the slices of the clones, the
 * destructors a delete runs, ...), checked with a few operations each, in
 * small batches: a line per variant, in plain.h's words, which make test
 * counts.  A failed check stops the program with its line.  The LARGE
 * ones take seconds with ucontext (a system call per switch). */
static int check_every_variant(void)
{
	int n = 0;
	batch = 4;
	for (variant &v : variants) {
		if (v.flags & LARGE)
			continue;
		v.count = std::min(v.max_count, 2L * batch + 3); /* two batches and a part */
		sample(v);
		printf("ok   bench (%s): %s\n", BENCH_BACKEND, v.name);
		n++;
	}
	printf("%d passed, 0 failed\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "check") == 0)
		return check_every_variant();
	if (argc == 4 && strcmp(argv[1], "once") == 0) {
		variant *v = find(argv[2]);
		expect(v != NULL, "no such variant");
		v->count = atol(argv[3]);
		sample(*v);
		printf("%s: %.1f %s\n", v->name, v->samples[0], is_time(*v) ? "ns" : "bytes");
		return 0;
	}
	if (argc > 2) {
		fprintf(stderr, "usage: bench [CSV] | bench once NAME COUNT | bench check\n");
		return 2;
	}
	/* Before anything else, while the process is small: see fork_per_branch. */
	start_fork_twin();
	FILE *csv = NULL;
	if (argc == 2) {
		csv = fopen(argv[1], "a");
		expect(csv != NULL, "cannot open the CSV file");
	}
	fprintf(stderr, "bench %s: calibrating", BENCH_BACKEND);
	for (variant &v : variants)
		calibrate(v);
	for (int r = 0; r < REPEATS; r++) {
		fprintf(stderr, " %d", r + 1);
		/* Every other repeat backwards: a drift of the machine's speed
		 * favours no variant over the ones it is compared with. */
		for (size_t i = 0; i < variants.size(); i++)
			sample(variants[r % 2 ? variants.size() - 1 - i : i]);
	}
	fprintf(stderr, "\n");
	stop_fork_twin();
	report(csv);
	if (csv)
		fclose(csv);
	return 0;
}
