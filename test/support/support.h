/*
 * support.h - helpers shared by the test files.
 *
 * - run_suite(): runs the tests, and fails if the program ends before.
 * - schedule_test(): a cmocka test given a fresh schedule in *state.
 * - run_in_child(): runs a function in a forked child and reports how the
 *   child ended and what it wrote on stderr, so that a test can check that
 *   misuse aborts with the right message without killing the test runner.
 * - assert_child_aborts_with(): the same check for a case of a program's
 *   table (child.h), which also runs where there is no fork.
 * - A small deterministic PRNG, and fill/check of buffers with its output:
 *   a buffer filled from a seed can be verified later from the seed alone.
 *
 * (Reading a child's stderr without the tools' lines is child.h's.)
 *
 * Include it instead of cmocka.h: it includes cmocka.h after the standard
 * headers that cmocka.h needs, and coroutine.h.
 */
#ifndef TEST_SUPPORT_H
#define TEST_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" { /* cmocka.h does not say so itself */
#endif
#include <cmocka.h>
#ifdef __cplusplus
}
#endif

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "coroutine.h"

/* ---- Running the suite ---------------------------------------------------- */

/*
 * A broken library can end the runner early with exit status 0: a context
 * made by makecontext whose function returns makes glibc call exit(0), and
 * cmocka turns a SIGSEGV inside a coroutine into a longjmp out of it.  A
 * suite that ends before its last test must fail, not pass.
 */
static int suite_running;

static inline void fail_unfinished_suite(void)
{
	if (suite_running) {
		fputs("the test program ended before its last test\n", stderr);
		_exit(1);
	}
}

static inline int start_suite(void)
{
	suite_running = 1;
	return atexit(fail_unfinished_suite);
}

static inline int end_suite(int failures)
{
	suite_running = 0;
	return failures;
}

/* Use instead of cmocka_run_group_tests(tests, NULL, NULL). */
#define run_suite(tests) (start_suite(), end_suite(cmocka_run_group_tests(tests, NULL, NULL)))

/* ---- A fresh schedule for each test ------------------------------------ */

static inline int open_schedule(void **state)
{
	*state = coroutine_open();
	return *state == NULL;
}

static inline int close_schedule(void **state)
{
	coroutine_close((struct schedule *)*state);
	return 0;
}

/* A test that finds a fresh schedule in *state, closed after it. */
#define schedule_test(f) cmocka_unit_test_setup_teardown(f, open_schedule, close_schedule)

/* ---- Running a function in a child process --------------------------- */

struct child_result {
	int status;     /* as filled in by waitpid */
	char err[1024]; /* what the child wrote on stderr, NUL-terminated */
};

/* Runs body(arg) in a child with stderr captured.  A body that returns
 * makes the child exit with status 0. */
static inline struct child_result run_in_child(void (*body)(void *), void *arg)
{
	struct child_result r;
	int pipefd[2];
	pid_t pid;

	assert_int_equal(pipe(pipefd), 0);
	fflush(NULL); /* or the child would print our buffered output again */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		restore_default_signals();
		close(pipefd[0]);
		dup2(pipefd[1], STDERR_FILENO);
		body(arg);
		_exit(0);
	}
	close(pipefd[1]);
	read_all(pipefd[0], r.err, sizeof r.err);
	drop_tool_reports(r.err);
	close(pipefd[0]);
	assert_int_equal(waitpid(pid, &r.status, 0), pid);
	return r;
}

static inline void assert_killed_by(const struct child_result *r, int sig)
{
	assert_true(WIFSIGNALED(r->status));
	assert_int_equal(WTERMSIG(r->status), sig);
}

/* The child printed exactly this one line, then died of SIGABRT. */
static inline void assert_aborted_with(const struct child_result *r, const char *line)
{
	char expected[sizeof r->err];
	snprintf(expected, sizeof expected, "%s\n", line);
	assert_string_equal(r->err, expected);
	assert_killed_by(r, SIGABRT);
}

/* The child printed one line starting with prefix, then died of SIGABRT. */
static inline void assert_aborted_with_prefix(const struct child_result *r, const char *prefix)
{
	size_t len = strlen(r->err);
	assert_memory_equal(r->err, prefix, strlen(prefix));
	assert_true(len > 0 && r->err[len - 1] == '\n');
	assert_ptr_equal(strchr(r->err, '\n'), r->err + len - 1);
	assert_killed_by(r, SIGABRT);
}

/* A case of a program's table (child.h) wrote exactly line in a child, then
 * aborted; else the test fails, saying what the child did. */
#define assert_child_aborts_with(cases, run, line) \
	do { \
		const char *why_ = child_aborts_with(cases, run, line); \
		if (why_ != NULL) \
			fail_msg("%s", why_); \
	} while (0)

/* ---- Pseudo-random numbers (splitmix64) -------------------------------- */

static inline uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* A number in [0, n). */
static inline unsigned random_below(uint64_t *state, unsigned n)
{
	return (unsigned)(next_random(state) % n);
}

static inline void fill_random(unsigned char *buf, size_t n, uint64_t seed)
{
	size_t i;
	for (i = 0; i < n; i++)
		buf[i] = (unsigned char)next_random(&seed);
}

/* Whether buf still holds what fill_random(buf, n, seed) put there. */
static inline int holds_random(const unsigned char *buf, size_t n, uint64_t seed)
{
	size_t i;
	for (i = 0; i < n; i++) {
		if (buf[i] != (unsigned char)next_random(&seed))
			return 0;
	}
	return 1;
}

#endif
