/*
 * driver.c - the suite's core checks for targets that have no CMocka (the
 * Windows build under wine, riscv64 under qemu-user) or no fork: random
 * programs checked against the reference model (see model.h), and slices
 * from a few bytes to most of the run stack checked byte for byte after
 * every switch.
 *
 *     driver [RUNS]    (RUNS random programs, 60 unless given)
 *
 * It ends with the line "N passed, N failed" and exits non-zero on any
 * failure.
 */
#include "model.h"
#include "coroutine.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define PROGRAM_BYTES 6000 /* a few hundred switches each, as test_model.c */

static int passed, failed;

static void report(const char *name, const char *why)
{
	if (why == NULL) {
		passed++;
		printf("ok   %s\n", name);
	} else {
		failed++;
		printf("FAIL %s: %s\n", name, why);
	}
}

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

int main(int argc, char **argv)
{
	unsigned long runs = argc > 1 ? strtoul(argv[1], NULL, 0) : 60;
	report("random programs agree with the model", random_programs(runs));
	report("deep slices survive every switch", deep_slices());
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
