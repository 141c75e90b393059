/*
 * test_model.c - random programs of new / resume / status / running / yield,
 * checked step by step against a reference model (see model.h).
 *
 * The seeds are fixed, so a failure is reproducible.  To explore:
 *     MODEL_SEED=12345 MODEL_RUNS=1000 build/ucontext/test_model
 * runs the programs of seeds 12345 .. 13344.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

/*
 * The interpreter is compiled into each program that runs it (this test and
 * fuzz/fuzz_model.c): one copy of the source, and every test stays a single
 * file for the Makefile's rules.
 */
#include "model.c"

#define PROGRAM_BYTES 6000 /* a few hundred switches each */

static unsigned long env_or(const char *name, unsigned long fallback)
{
	const char *s = getenv(name);
	return s != NULL && *s != '\0' ? strtoul(s, NULL, 0) : fallback;
}

static void check_seed(unsigned long seed)
{
	static unsigned char program[PROGRAM_BYTES];
	model_random_program(program, sizeof program, seed);
	const char *why = model_run(program, sizeof program);
	if (why != NULL)
		fail_msg("seed %lu (MODEL_SEED=%lu MODEL_RUNS=1): %s", seed, seed, why);
}

static void test_random_programs_agree_with_model(void **state)
{
	(void)state;
	unsigned long first = env_or("MODEL_SEED", 1);
	unsigned long runs = env_or("MODEL_RUNS", 60);
	for (unsigned long seed = first; seed - first < runs; seed++)
		check_seed(seed);
}

/* Programs cut short stop anywhere: in main or inside a coroutine. */
static void test_truncated_programs_agree_with_model(void **state)
{
	(void)state;
	static unsigned char program[PROGRAM_BYTES];
	model_random_program(program, sizeof program, 7);
	for (size_t size = 0; size < 400; size++) {
		const char *why = model_run(program, size);
		if (why != NULL)
			fail_msg("seed 7 cut to %zu bytes: %s", size, why);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_programs_agree_with_model),
		cmocka_unit_test(test_truncated_programs_agree_with_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
