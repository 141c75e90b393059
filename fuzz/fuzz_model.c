/*
 * fuzz_model.c - libFuzzer target: every input is a program of new /
 * resume / status / running / yield (see test/support/model.h), run against the
 * library and the reference model.  A disagreement aborts with its
 * description; memory errors are ASan's to report.  `make fuzz SECONDS=60`.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The interpreter is compiled in, as in test/spec/test_model.c. */
#include "model.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *why = model_run(data, size);
	if (why != NULL) {
		fprintf(stderr, "library and model disagree: %s\n", why);
		abort();
	}
	return 0;
}
