/*
 * plain.h - how the test programs that run without CMocka (driver.c,
 * win_stack.c) report: a line per check, then the closing line
 * "N passed, N failed", and a non-zero exit on any failure.  Each line is
 * flushed at once: test/support/run.sh counts them, also when a check
 * crashes the program.
 */
#ifndef TEST_PLAIN_H
#define TEST_PLAIN_H

#include <stdio.h>

static int passed, failed;

/* why is NULL when the check held, else what went wrong. */
static void report(const char *name, const char *why)
{
	if (why == NULL) {
		passed++;
		printf("ok   %s\n", name);
	} else {
		failed++;
		printf("FAIL %s: %s\n", name, why);
	}
	fflush(stdout);
}

/* The closing line; main returns what it returns. */
static int finish(void)
{
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}

#endif
