/*
 * driver.c - the suite's core checks for targets that have no CMocka (the
 * Windows build under wine, riscv64 under qemu-user) or no fork: random
 * programs checked against the reference model (see model.h), and slices
 * from a few bytes to most of the run stack checked byte for byte after
 * every switch; the walk over the slots in use (coroutine_next); values
 * held in callee-saved registers and the rounding mode, on each side of a
 * switch, and the mode a new coroutine starts with.
 *
 *     driver [RUNS]    (RUNS random programs, 60 unless given)
 *     driver --child NAME   (one of the cases that end the program: see
 *                            child.h; for Windows, which has no fork)
 *
 * It ends with the line "N passed, N failed" and exits non-zero on any
 * failure.
 *
 * Also the sticky flags and stack alignment, and what test_guard.c and
 * test_threads.c check with CMocka: the guard below the run stack faults,
 * a coroutine suspended on one thread is refused on another, and schedules
 * move between threads and run on several at once.
 *
 * The guard, thread and refusal checks run in child processes (see
 * child.h) or threads, which WebAssembly without -pthread has neither of:
 * there the guard is plain memory anyway (see test/platform/wasm_faults.c), and a
 * program has one thread.
 */
#if defined(__wasm__)
#define HAS_CHILDREN_AND_THREADS 0
#else
#define HAS_CHILDREN_AND_THREADS 1
#endif

#include "model.h"
#include "child.h"
#include "coroutine.h"
#if HAS_CHILDREN_AND_THREADS
#include "guard_frames.h"
#endif
#include "plain.h"

#include <fenv.h>
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <xmmintrin.h> /* flush-to-zero, which <fenv.h> does not reach */
#endif

#define PROGRAM_BYTES 6000 /* a few hundred switches each, as test_model.c */


/* ---- Random programs against the model --------------------------------- */

static const char *random_programs(unsigned long runs)
{
	static unsigned char program[PROGRAM_BYTES];
	static char why[512];
	for (unsigned long seed = 1; seed <= runs; seed++) {
		model_random_program(program, sizeof program, seed);
		const char *failure = model_run(program, sizeof program);
		if (failure != NULL) {
			snprintf(why, sizeof why, "seed %lu: %s", seed, failure);
			return why;
		}
	}
	return NULL;
}

/* ---- Deep slices --------------------------------------------------------- */

/* Sizes of the local array each coroutine holds across its yields: from a
 * few bytes to most of the 1 MiB run stack. */
static const size_t slice_sizes[] = { 8, 1000, 64 * 1024, 512 * 1024, 900 * 1024 };
#define HOLDERS (sizeof slice_sizes / sizeof slice_sizes[0])
#define YIELDS 4

struct holder {
	size_t size;
	uint32_t seed;
	int corrupt; /* switches after which the array had changed */
};

static uint32_t next_byte_of(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static int holds_pattern(const unsigned char *data, size_t size, uint32_t seed)
{
	for (size_t i = 0; i < size; i++)
		if (data[i] != (unsigned char)next_byte_of(&seed))
			return 0;
	return 1;
}

/* Holds an array of h->size bytes on the run stack across YIELDS yields,
 * while the other holders run on the same stack in between. */
static void hold(struct schedule *S, void *ud)
{
	struct holder *h = (struct holder *)ud;
	unsigned char data[h->size];
	uint32_t x = h->seed;
	for (size_t i = 0; i < h->size; i++)
		data[i] = (unsigned char)next_byte_of(&x);
	for (int k = 0; k < YIELDS; k++) {
		coroutine_yield(S);
		if (!holds_pattern(data, h->size, h->seed))
			h->corrupt++;
	}
}

static const char *deep_slices(void)
{
	static char why[128];
	struct holder holders[HOLDERS];
	struct schedule *S = coroutine_open();
	if (S == NULL)
		return "coroutine_open returned NULL";
	for (size_t i = 0; i < HOLDERS; i++) {
		holders[i].size = slice_sizes[i];
		holders[i].seed = 2654435761u * (uint32_t)(i + 1);
		holders[i].corrupt = 0;
		coroutine_new(S, hold, &holders[i]);
	}
	/* Round-robin until all have returned: every resume copies a slice back
	 * over another holder's bytes. */
	for (int round = 0; round <= YIELDS; round++)
		for (int id = 0; id < (int)HOLDERS; id++)
			coroutine_resume(S, id);
	const char *result = NULL;
	for (size_t i = 0; i < HOLDERS && result == NULL; i++) {
		if (coroutine_status(S, (int)i) != COROUTINE_DEAD) {
			snprintf(why, sizeof why, "the holder of %zu bytes did not finish", holders[i].size);
			result = why;
		} else if (holders[i].corrupt) {
			snprintf(why, sizeof why, "the %zu bytes changed across %d of %d switches",
				 holders[i].size, holders[i].corrupt, YIELDS);
			result = why;
		}
	}
	coroutine_close(S);
	return result;
}

/* ---- Walking the slots (coroutine_next) ----------------------------------- */

static void end_at_once(struct schedule *S, void *ud)
{
	(void)S;
	(void)ud;
}

/* The first one to run makes one more coroutine; each yields once. */
static void make_one_then_yield(struct schedule *S, void *ud)
{
	int *made = (int *)ud;
	if (*made == -1)
		*made = coroutine_new(S, end_at_once, NULL);
	coroutine_yield(S);
}

/*
 * 8192 slots of which the kept ones (across 64-slot words, and from 128 to
 * 4160 across the 4096 slots of a word of the bitmap of words in use)
 * yield, and the others end, during the first
 * walk; the first kept one makes a coroutine, which takes id 8192 (all
 * slots are in use) and must be met by the same walk.  The second walk
 * gives exactly the kept ones.
 */
static const char *walks_slots(void)
{
	static const int keep[] = { 0, 63, 64, 127, 128, 4160, 8191 };
	enum { CAP = 8192, KEPT = sizeof keep / sizeof keep[0] };
	static char why[128];
	int made = -1, k = 0, walked = 0, met_made = 0, id, last = -1;
	struct schedule *S = coroutine_open();
	if (S == NULL)
		return "coroutine_open returned NULL";
	for (int i = 0; i < CAP; i++) {
		int kept = k < KEPT && keep[k] == i;
		coroutine_new(S, kept ? make_one_then_yield : end_at_once, &made);
		k += kept;
	}
	for (id = coroutine_next(S, -1); id != -1 && id > last; id = coroutine_next(S, id)) {
		walked++;
		met_made += id == made;
		coroutine_resume(S, id);
		last = id;
	}
	const char *result = NULL;
	if (id != -1 || walked != CAP + 1 || made != CAP || !met_made) {
		snprintf(why, sizeof why, "the first walk resumed %d of %d, then gave %d after %d; made %d, met %d",
			 walked, CAP + 1, id, last, made, met_made);
		result = why;
	}
	for (k = 0, id = coroutine_next(S, -1); result == NULL && k <= KEPT; k++, id = coroutine_next(S, id)) {
		if (id != (k < KEPT ? keep[k] : -1)) {
			snprintf(why, sizeof why, "the second walk gave %d where %d was kept", id,
				 k < KEPT ? keep[k] : -1);
			result = why;
		}
	}
	if (result == NULL && coroutine_next(S, 2 * CAP) != -1)
		result = "coroutine_next past the slots is not -1";
	coroutine_close(S);
	return result;
}

/* ---- Deleting coroutines --------------------------------------------------- */

/*
 * Three holders wait; the middle one is deleted, and a fourth that never
 * started: the other two keep their bytes and finish, and the next id is
 * the original's (the first empty slot from the count of live ones, 2).
 * This C program has no cleanups (no -fexceptions), and on most targets
 * links no unwinder: the deleted one is freed where it lies, or unwound
 * through frames with nothing to run (test_delete.c checks the cleanups).
 */
static const char *deleted_coroutines_are_gone(void)
{
	static const size_t sizes[] = { 1000, 64 * 1024, 8, 100 };
	struct holder holders[4];
	struct schedule *S = coroutine_open();
	if (S == NULL)
		return "coroutine_open returned NULL";
	for (int i = 0; i < 4; i++) {
		holders[i].size = sizes[i];
		holders[i].seed = 40503u * (uint32_t)(i + 1);
		holders[i].corrupt = 0;
		coroutine_new(S, hold, &holders[i]);
		if (i < 3)
			coroutine_resume(S, i);
	}
	coroutine_delete(S, 1);
	coroutine_delete(S, 3);
	int next = coroutine_new(S, end_at_once, NULL);
	for (int round = 0; round < YIELDS; round++) {
		coroutine_resume(S, 0);
		coroutine_resume(S, 2);
	}
	const char *result = NULL;
	if (coroutine_status(S, 1) != COROUTINE_DEAD || coroutine_status(S, 0) != COROUTINE_DEAD
	    || coroutine_status(S, 2) != COROUTINE_DEAD)
		result = "a deleted coroutine is still there, or another did not finish";
	else if (holders[0].corrupt || holders[2].corrupt)
		result = "the others' bytes changed";
	else if (next != 3)
		result = "the next id is not the original's";
	coroutine_close(S);
	return result;
}

/* ---- Values in callee-saved registers ------------------------------------ */

/* The values one side (main or a coroutine) holds across its switches. */
struct held {
	volatile long n[12];
	volatile double x[12];
};

static void fill_held(struct held *h, int who)
{
	for (int i = 0; i < 12; i++) {
		h->n[i] = 1000L * who + i;
		h->x[i] = 0.5 * who + i;
	}
}

/*
 * Calls call(arg) with 24 values live across the call, read from volatile
 * memory so that the compiler can neither fold nor recompute them: it
 * keeps what it can in callee-saved registers, which only the context
 * switch preserves (as in test_switch.c), and spills the rest.  Returns
 * whether all came back.
 */
static int values_survive(void (*call)(void *), void *arg, const struct held *h)
{
	long n0 = h->n[0], n1 = h->n[1], n2 = h->n[2], n3 = h->n[3], n4 = h->n[4], n5 = h->n[5];
	long n6 = h->n[6], n7 = h->n[7], n8 = h->n[8], n9 = h->n[9], n10 = h->n[10], n11 = h->n[11];
	double x0 = h->x[0], x1 = h->x[1], x2 = h->x[2], x3 = h->x[3], x4 = h->x[4], x5 = h->x[5];
	double x6 = h->x[6], x7 = h->x[7], x8 = h->x[8], x9 = h->x[9], x10 = h->x[10], x11 = h->x[11];
	call(arg);
	return n0 == h->n[0] && n1 == h->n[1] && n2 == h->n[2] && n3 == h->n[3] &&
	       n4 == h->n[4] && n5 == h->n[5] && n6 == h->n[6] && n7 == h->n[7] &&
	       n8 == h->n[8] && n9 == h->n[9] && n10 == h->n[10] && n11 == h->n[11] &&
	       x0 == h->x[0] && x1 == h->x[1] && x2 == h->x[2] && x3 == h->x[3] &&
	       x4 == h->x[4] && x5 == h->x[5] && x6 == h->x[6] && x7 == h->x[7] &&
	       x8 == h->x[8] && x9 == h->x[9] && x10 == h->x[10] && x11 == h->x[11];
}

struct keeper {
	struct held held;
	int lost; /* switches after which a value was wrong */
};

static void yield_call(void *S)
{
	coroutine_yield((struct schedule *)S);
}

static void keep_values(struct schedule *S, void *ud)
{
	struct keeper *k = (struct keeper *)ud;
	for (int i = 0; i < YIELDS; i++)
		if (!values_survive(yield_call, S, &k->held))
			k->lost++;
}

struct resume_args {
	struct schedule *S;
	int id;
};

static void resume_call(void *arg)
{
	struct resume_args *r = (struct resume_args *)arg;
	coroutine_resume(r->S, r->id);
}

/* Two coroutines and main, each holding its values across its switches. */
static const char *callee_saved_values(void)
{
	static char why[128];
	struct keeper keepers[3]; /* main's, then the coroutines' */
	struct resume_args r;
	r.S = coroutine_open();
	if (r.S == NULL)
		return "coroutine_open returned NULL";
	for (int i = 0; i < 3; i++) {
		fill_held(&keepers[i].held, i + 1);
		keepers[i].lost = 0;
		if (i > 0)
			coroutine_new(r.S, keep_values, &keepers[i]);
	}
	for (int round = 0; round <= YIELDS; round++)
		for (r.id = 0; r.id < 2; r.id++)
			if (!values_survive(resume_call, &r, &keepers[0].held))
				keepers[0].lost++;
	coroutine_close(r.S);
	for (int i = 0; i < 3; i++) {
		if (keepers[i].lost) {
			snprintf(why, sizeof why, "%s lost a value across %d switches",
				 i == 0 ? "main" : "a coroutine", keepers[i].lost);
			return why;
		}
	}
	return NULL;
}

/* ---- The rounding mode --------------------------------------------------- */

/* WebAssembly rounds to nearest, and only so, and keeps no exception
 * flags: no mode and no flag for a switch to lose. */
#if defined(__wasm__)
#define HAS_ROUNDING_MODES 0
#else
#define HAS_ROUNDING_MODES 1
#endif
#if HAS_ROUNDING_MODES

static volatile double one = 1.0, three = 3.0;

/* 1/3 and -1/3, rounded by the current mode: a different pair under each
 * of to-nearest, upward and downward.  Volatile results keep the divisions
 * from moving across the calls around them (fesetround, a switch). */
static void thirds_now(double q[2])
{
	volatile double a = one / three, b = -one / three;
	q[0] = a;
	q[1] = b;
}

struct rounder {
	int mode;
	double thirds[2]; /* thirds_now() under mode, measured in main */
	int wrong;        /* switches after which mode or rounding was not its own */
};

static int rounds_as(const struct rounder *r)
{
	double q[2];
	thirds_now(q);
	return fegetround() == r->mode && q[0] == r->thirds[0] && q[1] == r->thirds[1];
}

static void keep_rounding_mode(struct schedule *S, void *ud)
{
	struct rounder *r = (struct rounder *)ud;
	fesetround(r->mode);
	for (int i = 0; i < YIELDS; i++) {
		coroutine_yield(S);
		if (!rounds_as(r))
			r->wrong++;
	}
}

/* Two coroutines round upward and downward, main to nearest, interleaved. */
static const char *rounding_modes(void)
{
	static char why[128];
	struct rounder r[3] = { { FE_TONEAREST, { 0, 0 }, 0 }, { FE_UPWARD, { 0, 0 }, 0 },
				{ FE_DOWNWARD, { 0, 0 }, 0 } };
	struct schedule *S = coroutine_open();
	if (S == NULL)
		return "coroutine_open returned NULL";
	for (int i = 0; i < 3; i++) {
		fesetround(r[i].mode);
		thirds_now(r[i].thirds);
	}
	fesetround(FE_TONEAREST);
	coroutine_new(S, keep_rounding_mode, &r[1]);
	coroutine_new(S, keep_rounding_mode, &r[2]);
	for (int round = 0; round <= YIELDS; round++) {
		for (int id = 0; id < 2; id++) {
			coroutine_resume(S, id);
			if (!rounds_as(&r[0]))
				r[0].wrong++;
		}
	}
	coroutine_close(S);
	fesetround(FE_TONEAREST);
	for (int i = 0; i < 3; i++) {
		if (r[i].wrong) {
			snprintf(why, sizeof why, "%s rounding mode was not its own after %d switches",
				 i == 0 ? "main's" : "a coroutine's", r[i].wrong);
			return why;
		}
	}
	return NULL;
}

/* Records whether it rounds as main's rounder ud at its start. */
static void round_as_at_start(struct schedule *S, void *ud)
{
	(void)S;
	struct rounder *r = (struct rounder *)ud;
	if (!rounds_as(r))
		r->wrong++;
}

/*
 * A new coroutine rounds as main did when it started it.  Under each mode
 * in turn: a coroutine that took its mode from anywhere else (a context
 * left by an earlier coroutine, whose memory it may reuse) would round as
 * main under one mode at most.
 */
static const char *new_coroutine_starts_with_mains_mode(void)
{
	static char why[96];
	struct rounder r[3] = { { FE_UPWARD, { 0, 0 }, 0 }, { FE_DOWNWARD, { 0, 0 }, 0 },
				{ FE_TONEAREST, { 0, 0 }, 0 } };
	struct schedule *S = coroutine_open();
	if (S == NULL)
		return "coroutine_open returned NULL";
	for (int i = 0; i < 3; i++) {
		fesetround(r[i].mode);
		thirds_now(r[i].thirds);
		coroutine_resume(S, coroutine_new(S, round_as_at_start, &r[i]));
	}
	coroutine_close(S);
	fesetround(FE_TONEAREST);
	for (int i = 0; i < 3; i++) {
		if (r[i].wrong) {
			snprintf(why, sizeof why, "started while main rounded %s, it rounded otherwise",
				 i == 0 ? "upward" : i == 1 ? "downward" : "to nearest");
			return why;
		}
	}
	return NULL;
}

#if defined(__SSE2__)
/*
 * Flush-to-zero (MXCSR bit 15), which no <fenv.h> function sets: SSE
 * arithmetic then gives 0 where the result would be subnormal.  A new
 * coroutine flushes when main does, and not once main has stopped.
 */
static volatile double smallest_normal = DBL_MIN;

static int flushes_to_zero(void)
{
	volatile double half = smallest_normal / 2;
	return half == 0.0;
}

static void note_flush_to_zero(struct schedule *S, void *ud)
{
	(void)S;
	*(int *)ud = flushes_to_zero();
}

static const char *new_coroutine_starts_with_mains_flush_to_zero(void)
{
	unsigned int mains = _mm_getcsr();
	_MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
	int acts = flushes_to_zero();
	_mm_setcsr(mains);
	if (!acts)
		return NULL; /* no flush-to-zero here (valgrind's CPU): nothing to see */
	const char *why = NULL;
	struct schedule *S = coroutine_open();
	if (S == NULL)
		return "coroutine_open returned NULL";
	for (int on = 1; on >= 0 && why == NULL; on--) {
		_MM_SET_FLUSH_ZERO_MODE(on ? _MM_FLUSH_ZERO_ON : _MM_FLUSH_ZERO_OFF);
		int seen = -1;
		coroutine_resume(S, coroutine_new(S, note_flush_to_zero, &seen));
		if (seen != on)
			why = on ? "started while main flushed to zero, it did not"
				 : "started while main did not flush to zero, it did";
	}
	coroutine_close(S);
	_mm_setcsr(mains);
	return why;
}
#endif

/* ---- The sticky exception flags ----------------------------------------- */

/*
 * Where the backends differ (see test_fpu.c and README): the asm switch
 * carries the control bits only, so a flag a coroutine raised is then the
 * thread's, seen in main; swapcontext restores the whole FP environment,
 * flags too, so main does not see it.
 */
static volatile double zero = 0.0;

static void divide_by_zero(void)
{
	volatile double q = one / zero;
	(void)q;
}

/* Under another rounding mode than main's, so that the switch back does
 * reload the control register. */
static void raise_divbyzero_and_yield(struct schedule *S, void *ud)
{
	(void)ud;
	fesetround(FE_UPWARD);
	divide_by_zero();
	coroutine_yield(S);
}

static const char *sticky_flags(void)
{
	feclearexcept(FE_ALL_EXCEPT);
	divide_by_zero();
	int raised = fetestexcept(FE_DIVBYZERO) != 0;
	feclearexcept(FE_ALL_EXCEPT);
	if (!raised)
		return NULL; /* no sticky flags here (valgrind's CPU): nothing to see */
	struct schedule *S = coroutine_open();
	if (S == NULL)
		return "coroutine_open returned NULL";
	coroutine_resume(S, coroutine_new(S, raise_divbyzero_and_yield, NULL));
	int seen = fetestexcept(FE_DIVBYZERO) != 0;
	coroutine_close(S);
	feclearexcept(FE_ALL_EXCEPT);
	fesetround(FE_TONEAREST);
#if COROUTINE_ASM
	return seen ? NULL : "a flag raised in a coroutine did not stay with the thread";
#else
	return seen ? "a flag raised in a coroutine leaked into main" : NULL;
#endif
}
#endif /* HAS_ROUNDING_MODES */

/* ---- Stack alignment ------------------------------------------------------ */

/*
 * Every ABI's stack pointer is aligned at a call (16 bytes on all the
 * targets but armv7's 8), and compilers rely on it for over-aligned locals
 * instead of aligning them at run time.  So a local declared 16-byte
 * aligned is misaligned in a coroutine whose first frame was: SSE code
 * would fault, x87 code (plain i686) would not notice.  The address goes
 * through an asm statement, or the compiler would answer from alignas.
 */
static int misaligned;

static void note_alignment(void)
{
	_Alignas(16) volatile char local[16];
	uintptr_t address = (uintptr_t)local;
	__asm__("" : "+r"(address));
	local[0] = 0;
	misaligned += address % 16 != 0;
}

static void check_alignment_and_yield(struct schedule *S, void *ud)
{
	(void)ud;
	note_alignment();
	coroutine_yield(S);
	note_alignment();
}

static const char *aligned_locals(void)
{
	struct schedule *S = coroutine_open();
	if (S == NULL)
		return "coroutine_open returned NULL";
	misaligned = 0;
	int id = coroutine_new(S, check_alignment_and_yield, NULL);
	coroutine_resume(S, id);
	coroutine_resume(S, id);
	coroutine_close(S);
	return misaligned ? "a 16-byte aligned local of a coroutine was misaligned" : NULL;
}

#if HAS_CHILDREN_AND_THREADS

/* ---- The guard below the run stack ----------------------------------------- */

/* In a child (see child.h): the frame must fault, on the guard. */
static void run_in_a_coroutine(struct schedule *S, void *frame)
{
	(void)S;
	(*(char (**)(void))frame)();
}

static void run_frame(char (*frame)(void))
{
	struct schedule *S = coroutine_open();
	coroutine_resume(S, coroutine_new(S, run_in_a_coroutine, &frame));
}

static void run_frame_just_past_the_run_stack(void)
{
	run_frame(frame_just_past_the_run_stack);
}

static void run_frame_of_twice_the_run_stack(void)
{
	run_frame(frame_of_twice_the_run_stack);
}

static const char *faulted(const struct child *c)
{
	static char why[1200];
	if (c->end == CHILD_FAULTED)
		return NULL;
	snprintf(why, sizeof why, "the child did not fault (end %d, status %d), stderr: \"%s\"",
		 (int)c->end, c->status, c->err);
	return why;
}

/* ---- Schedules and threads (see test_threads.c) ------------------------------ */

static void ignore(struct schedule *S, void *ud)
{
	(void)S, (void)ud;
}

static void yield_twice(struct schedule *S, void *ud)
{
	int *yields = (int *)ud;
	(*yields)++;
	coroutine_yield(S);
	(*yields)++;
	coroutine_yield(S);
	(*yields)++;
}

struct resume_call {
	struct schedule *S;
	int id;
};

static void resume_here(void *arg)
{
	struct resume_call *c = (struct resume_call *)arg;
	coroutine_resume(c->S, c->id);
}

/* coroutine_resume(S, id) on a new thread, waited for; 0 if none started. */
static int resume_on_another_thread(struct schedule *S, int id)
{
	struct resume_call c = { S, id };
	return run_thread(resume_here, &c);
}

/* In children (see child.h): each must abort, refusing the resume. */
static void resume_suspended_on_another_thread(void)
{
	struct schedule *S = coroutine_open();
	int yields = 0;
	coroutine_new(S, ignore, NULL);
	coroutine_new(S, ignore, NULL);
	coroutine_resume(S, coroutine_new(S, yield_twice, &yields)); /* 2, here */
	resume_on_another_thread(S, 2);
}

static void resume_on_a_third_thread(void)
{
	struct schedule *S = coroutine_open();
	int yields = 0;
	coroutine_resume(S, coroutine_new(S, yield_twice, &yields)); /* 0, here */
	resume_on_another_thread(S, coroutine_new(S, ignore, NULL)); /* the schedule moves */
	resume_on_another_thread(S, 0);                              /* and moves again */
}

/* Coroutines 0 and 1 finish, 2 stays suspended past the count of live ones. */
static void resume_past_the_live_count_on_another_thread(void)
{
	struct schedule *S = coroutine_open();
	int yields = 0;
	coroutine_new(S, ignore, NULL);
	coroutine_new(S, ignore, NULL);
	coroutine_resume(S, coroutine_new(S, yield_twice, &yields));
	coroutine_resume(S, 0);
	coroutine_resume(S, 1);
	resume_on_another_thread(S, 2);
}

static const char *never_ran_starts_on_any_thread(void)
{
	struct schedule *S = coroutine_open();
	int yields = 0;
	int id = coroutine_new(S, yield_twice, &yields);
	int started = resume_on_another_thread(S, id);
	int status = coroutine_status(S, id);
	coroutine_close(S);
	if (!started)
		return "no thread could be started";
	return yields == 1 && status == COROUTINE_SUSPEND ? NULL : "it did not start and yield there";
}

/* a yields here, b starts and yields on another thread; a goes on here. */
static const char *each_suspended_coroutine_keeps_its_thread(void)
{
	struct schedule *S = coroutine_open();
	int here = 0, there = 0;
	int a = coroutine_new(S, yield_twice, &here);
	int b = coroutine_new(S, yield_twice, &there);
	coroutine_resume(S, a);
	int started = resume_on_another_thread(S, b);
	coroutine_resume(S, a);
	int b_status = coroutine_status(S, b);
	coroutine_close(S);
	if (!started)
		return "no thread could be started";
	return here == 2 && there == 1 && b_status == COROUTINE_SUSPEND ? NULL
	       : "a coroutine did not go on on its own thread";
}

/* Each coroutine runs to its end on one thread, the next on another. */
static void resume_three_times(void *arg)
{
	for (int i = 0; i < 3; i++)
		resume_here(arg);
}

static const char *schedule_without_suspended_coroutines_moves_freely(void)
{
	struct schedule *S = coroutine_open();
	int yields = 0, finished = 0;
	for (int thread = 0; thread < 3; thread++) {
		struct resume_call c = { S, coroutine_new(S, yield_twice, &yields) };
		if (!run_thread(resume_three_times, &c))
			break;
		finished += coroutine_status(S, c.id) == COROUTINE_DEAD;
	}
	coroutine_close(S);
	return finished == 3 && yields == 9 ? NULL : "a coroutine did not finish on its thread";
}

/* Two threads at once, each with a schedule of its own. */
enum { WORKER_COROUTINES = 4, WORKER_ROUNDS = 300 };

struct worker {
	uint32_t seed;
	int corrupt; /* rounds after which a coroutine's local had changed */
	int rounds;
};

static void keep_local_data(struct schedule *S, void *ud)
{
	struct worker *w = (struct worker *)ud;
	unsigned char local[256];
	for (int round = 0; round < WORKER_ROUNDS; round++) {
		uint32_t seed = w->seed + (uint32_t)(coroutine_running(S) * WORKER_ROUNDS + round);
		uint32_t x = seed;
		for (size_t i = 0; i < sizeof local; i++)
			local[i] = (unsigned char)next_byte_of(&x);
		coroutine_yield(S);
		w->corrupt += !holds_pattern(local, sizeof local, seed);
		w->rounds++;
	}
}

static void drive_own_schedule(void *arg)
{
	struct worker *w = (struct worker *)arg;
	struct schedule *S = coroutine_open();
	for (int id = 0; id < WORKER_COROUTINES; id++)
		coroutine_new(S, keep_local_data, w);
	for (int round = 0; round <= WORKER_ROUNDS; round++)
		for (int id = 0; id < WORKER_COROUTINES; id++)
			coroutine_resume(S, id);
	coroutine_close(S);
}

static const char *threads_drive_their_own_schedules(void)
{
	struct worker w[2] = { { 1u << 20, 0, 0 }, { 2u << 20, 0, 0 } };
	struct thread t[2];
	int started = 0;
	for (int i = 0; i < 2; i++)
		started += start_thread(&t[i], drive_own_schedule, &w[i]);
	for (int i = 0; i < started; i++)
		join_thread(&t[i]);
	if (started < 2)
		return "no thread could be started";
	for (int i = 0; i < 2; i++)
		if (w[i].corrupt || w[i].rounds != WORKER_COROUTINES * WORKER_ROUNDS)
			return "a coroutine's local changed, or rounds went missing";
	return NULL;
}

/* ---- The cases that end their program, each run in a child -------------------- */

static const struct child_case child_cases[] = {
	{ "frame-just-past-the-run-stack", run_frame_just_past_the_run_stack },
	{ "frame-of-twice-the-run-stack", run_frame_of_twice_the_run_stack },
	{ "resume-suspended-on-another-thread", resume_suspended_on_another_thread },
	{ "resume-on-a-third-thread", resume_on_a_third_thread },
	{ "resume-past-the-live-count-on-another-thread", resume_past_the_live_count_on_another_thread },
	{ NULL, NULL }
};

static void report_child_checks(void)
{
	struct child c;
	c = run_case(child_cases, run_frame_just_past_the_run_stack);
	report("a frame just past the run stack faults on the guard", faulted(&c));
	c = run_case(child_cases, run_frame_of_twice_the_run_stack);
	report("a frame of twice the run stack faults on the guard", faulted(&c));
	report("a coroutine is refused on another thread than its yield's",
	       child_aborts_with(child_cases, resume_suspended_on_another_thread,
				 "coroutine_resume: coroutine 2 was suspended on another thread; "
				 "resume it on that thread"));
	report("a coroutine stays refused when the schedule moves on to a third thread",
	       child_aborts_with(child_cases, resume_on_a_third_thread,
				 "coroutine_resume: coroutine 0 was suspended on another thread; "
				 "resume it on that thread"));
	report("a coroutine in a slot past the live count is refused on another thread",
	       child_aborts_with(child_cases, resume_past_the_live_count_on_another_thread,
				 "coroutine_resume: coroutine 2 was suspended on another thread; "
				 "resume it on that thread"));
}

#endif /* HAS_CHILDREN_AND_THREADS */

int main(int argc, char **argv)
{
#if HAS_CHILDREN_AND_THREADS
	if (argc == 3 && strcmp(argv[1], "--child") == 0)
		return run_named_case(child_cases, argv[2]);
#endif
	unsigned long runs = argc > 1 ? strtoul(argv[1], NULL, 0) : 60;
	report("random programs agree with the model", random_programs(runs));
	report("deep slices survive every switch", deep_slices());
	report("coroutine_next walks the slots in use", walks_slots());
	report("deleted coroutines are gone, the others untouched", deleted_coroutines_are_gone());
	report("callee-saved values survive every switch", callee_saved_values());
#if HAS_ROUNDING_MODES
	report("each side keeps its rounding mode", rounding_modes());
	report("a new coroutine starts with main's rounding mode", new_coroutine_starts_with_mains_mode());
#if defined(__SSE2__)
	report("a new coroutine starts with main's flush-to-zero", new_coroutine_starts_with_mains_flush_to_zero());
#endif
#if COROUTINE_ASM
	report("sticky flags stay with the thread", sticky_flags());
#else
	report("sticky flags switch with the coroutine", sticky_flags());
#endif
#endif
	report("16-byte aligned locals are aligned in a coroutine", aligned_locals());
#if HAS_CHILDREN_AND_THREADS
	report("a coroutine that never ran starts on any thread", never_ran_starts_on_any_thread());
	report("each suspended coroutine keeps its thread", each_suspended_coroutine_keeps_its_thread());
	report("a schedule without suspended coroutines moves freely",
	       schedule_without_suspended_coroutines_moves_freely());
	report("threads drive their own schedules at once", threads_drive_their_own_schedules());
	report_child_checks();
#endif
	return finish();
}
