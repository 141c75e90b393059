/*
 * test_child.c - the child-case runner of child.h, which the misuse tests
 * (test_clone, test_delete, driver, ...) trust to tell how a child ended:
 * a case that aborts, faults or comes back is told as such, whatever
 * handlers the test program set; what a child wrote is its own, without
 * the lines tools add; aborted_with takes exactly the line asked for; a
 * case that is not in the table runs no other.
 *
 * Without CMocka (plain.h), so that it runs wherever those tests run:
 * natively, under qemu-user, under wine.
 *
 *     test_child                 the checks
 *     test_child --child NAME    one case (see child.h)
 */
#include "child.h"
#include "plain.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE "the case's line"

/* ---- The cases, each run in a child ------------------------------------------ */

static void writes_its_line_and_aborts(void)
{
	fputs(LINE "\n", stderr);
	abort();
}

/* What qemu-user and ASan write on a child's stderr, then the case's line. */
static void aborts_after_the_tools_lines(void)
{
	fputs("qemu: uncaught target signal 11 (Segmentation fault) - core dumped\n"
	      "==1234==WARNING: ASan doesn't fully support makecontext/swapcontext functions"
	      " and may produce false positives in some cases!\n",
	      stderr);
	writes_its_line_and_aborts();
}

static void writes_through_a_bad_pointer(void)
{
	volatile uintptr_t nowhere = 16; /* below every mapping; not NULL, which UBSan checks */
	*(volatile int *)nowhere = 1;
}

static void comes_back(void)
{
}

/* Not in the table (a body of its own, so that no linker folds it into another). */
static void not_in_the_table(void)
{
	fputs("not_in_the_table ran\n", stderr);
}

/* The case that aborts with LINE last: a case not in the table must not run it. */
static const struct child_case child_cases[] = {
	{ "aborts-after-the-tools-lines", aborts_after_the_tools_lines },
	{ "writes-through-a-bad-pointer", writes_through_a_bad_pointer },
	{ "comes-back", comes_back },
	{ "writes-its-line-and-aborts", writes_its_line_and_aborts },
	{ NULL, NULL }
};

/* ---- The test program's own handlers, which a child must not keep ------------ */

/* As cmocka's and the sanitizers' do, it goes on instead of dying of the signal. */
static void handler_of_the_program(int sig)
{
	(void)sig;
	fputs("the test program's own handler ran\n", stderr);
	_Exit(1);
}

static void set_handlers_of_the_program(void)
{
	signal(SIGABRT, handler_of_the_program);
	signal(SIGSEGV, handler_of_the_program);
#ifdef SIGBUS
	signal(SIGBUS, handler_of_the_program);
#endif
}

/* ---- The checks ------------------------------------------------------------------- */

static const char *ended(const struct child *c, enum child_end end, int status, const char *err)
{
	static char why[1200];
	if (c->end == end && (status < 0 || c->status == status) && (err == NULL || strcmp(c->err, err) == 0))
		return NULL;
	snprintf(why, sizeof why, "the child ended with end %d, status %d, stderr \"%s\"", (int)c->end, c->status,
		 c->err);
	return why;
}

int main(int argc, char **argv)
{
	struct child aborted;
	if (argc == 3 && strcmp(argv[1], "--child") == 0)
		return run_named_case(child_cases, argv[2]);
	set_handlers_of_the_program();

	aborted = run_case(child_cases, writes_its_line_and_aborts);
	report("a case that aborts is told as aborted, with its line, whatever handlers the program set",
	       aborted_with(&aborted, LINE));
	report("a longer line than the one asked for is not taken for it",
	       aborted_with(&aborted, "the case's") != NULL ? NULL : "aborted_with took \"" LINE "\" for \"the case's\"");
	{
		struct child c = run_case(child_cases, aborts_after_the_tools_lines);
		report("the lines qemu-user and ASan add to a child's stderr are left out", aborted_with(&c, LINE));
	}
	{
		struct child c = run_case(child_cases, writes_through_a_bad_pointer);
		report("a case that faults is told as faulted, whatever handlers the program set",
		       ended(&c, CHILD_FAULTED, -1, NULL));
	}
	{
		struct child c = run_case(child_cases, comes_back);
		report("a case that comes back exits with a code of its own, not 0 (a crash under wine)",
		       c.status == 0 ? ended(&c, CHILD_OTHER, 0, NULL) : ended(&c, CHILD_EXITED, CHILD_CASE_RETURNED, ""));
	}
	{
		struct child c = run_child(child_cases, "no-such-case");
		report("a name that is not in the table runs no case", ended(&c, CHILD_EXITED, 2, "no case named no-such-case\n"));
	}
	report("a function that is not in the table runs no case",
	       find_case(child_cases, not_in_the_table) == NULL &&
			       child_aborts_with(child_cases, not_in_the_table, LINE) != NULL
		       ? NULL
		       : "it ran another case of the table");
	return finish();
}
