/*
 * driver.c - the suite's core checks for targets that have no CMocka (the
 * Windows build under wine, riscv64 under qemu-user) or no fork: random
 * programs checked against the reference model (see model.h), and slices
 * from a few bytes to most of the run stack checked byte for byte after
 * every switch; values held in callee-saved registers and the rounding
 * mode, on each side of a switch.
 *
 *     driver [RUNS]    (RUNS random programs, 60 unless given)
 *
 * It ends with the line "N passed, N failed" and exits non-zero on any
 * failure.
 */
#include "model.h"
#include "coroutine.h"
#include "plain.h"

#include <fenv.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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

/* WebAssembly rounds to nearest, and only so: no mode for a switch to lose. */
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
#endif

int main(int argc, char **argv)
{
	unsigned long runs = argc > 1 ? strtoul(argv[1], NULL, 0) : 60;
	report("random programs agree with the model", random_programs(runs));
	report("deep slices survive every switch", deep_slices());
	report("callee-saved values survive every switch", callee_saved_values());
#if HAS_ROUNDING_MODES
	report("each side keeps its rounding mode", rounding_modes());
#endif
	return finish();
}
