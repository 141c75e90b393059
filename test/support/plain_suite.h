/*
 * plain_suite.h - the part of CMocka that a test file uses, over plain.h,
 * for targets that have no CMocka (MinGW-w64 under wine): the same file
 * builds with either.  Include it instead of support.h.
 *
 * Each test gets a fresh schedule in *state, as schedule_test gives it
 * with CMocka.  A failed assertion reports its line and returns from the
 * test function, so assertions belong in test functions only (not in the
 * functions that coroutines run).  The suite ends with plain.h's line
 * "N passed, N failed" and a non-zero exit on any failure.
 */
#ifndef TEST_PLAIN_SUITE_H
#define TEST_PLAIN_SUITE_H

#include "coroutine.h"
#include "plain.h"

#include <stdio.h>
#include <string.h>

struct CMUnitTest {
	const char *name;
	void (*test)(void **state);
};

#define schedule_test(f) { #f, f }
/* The test has a schedule too, and may ignore it. */
#define cmocka_unit_test(f) schedule_test(f)

/* What the running test's first failed assertion said, or NULL. */
static const char *plain_failure;

static inline void plain_fail(int line, const char *what)
{
	static char why[256];
	snprintf(why, sizeof why, "line %d: %s", line, what);
	plain_failure = why;
}

#define plain_check(holds, what) \
	do { \
		if (!(holds)) { \
			plain_fail(__LINE__, what); \
			return; \
		} \
	} while (0)

/* A test fails here where CMocka would skip it: what it checks must hold
 * on the targets that build it without CMocka. */
#define skip() plain_check(0, "would be skipped")
#define fail_msg(...) \
	do { \
		static char plain_message[256]; \
		snprintf(plain_message, sizeof plain_message, __VA_ARGS__); \
		plain_check(0, plain_message); \
	} while (0)

#define assert_true(c) plain_check((c), #c)
#define assert_false(c) plain_check(!(c), "!(" #c ")")
#define assert_int_equal(a, b) plain_check((long long)(a) == (long long)(b), #a " == " #b)
#define assert_string_equal(a, b) plain_check(strcmp((a), (b)) == 0, #a " equals " #b)

/* A case of a program's table (child.h) wrote exactly line in a child, then
 * aborted; else the test fails, saying what the child did. */
#define assert_child_aborts_with(cases, run, line) \
	do { \
		const char *why_ = child_aborts_with(cases, run, line); \
		plain_check(why_ == NULL, why_); \
	} while (0)

static inline int run_plain_suite(const struct CMUnitTest *tests, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++) {
		struct schedule *S = coroutine_open();
		void *state = S;
		plain_failure = S == NULL ? "coroutine_open failed" : NULL;
		if (S != NULL) {
			tests[i].test(&state);
			coroutine_close(S);
		}
		report(tests[i].name, plain_failure);
	}
	return finish();
}

#define run_suite(tests) run_plain_suite(tests, sizeof tests / sizeof tests[0])

#endif
