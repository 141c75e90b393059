/*
 * A deliberate bug that `make valgrind` expects memcheck to report: a
 * coroutine branches on a local it never initialised, after its stack was
 * copied out, overwritten by another coroutine and copied back.  The copies
 * carry memcheck's "undefined" marks along with the bytes, and the library
 * must not mark its run stack or slices defined, or this would go unseen.
 */
#include <stdlib.h>

#include "coroutine.h"

static void branch_after_resume(struct schedule *S, void *ud)
{
	volatile int never_set[4];
	(void)ud;
	coroutine_yield(S);
	/* The branch calls a function, so that it stays a jump at any -O. */
	if (never_set[1] == 42)
		abort();
}

int main(void)
{
	struct schedule *S = coroutine_open();
	int first = coroutine_new(S, branch_after_resume, NULL);
	int second = coroutine_new(S, branch_after_resume, NULL);
	coroutine_resume(S, first);
	coroutine_resume(S, second); /* first's bytes leave the run stack */
	coroutine_resume(S, first);  /* and come back */
	coroutine_close(S);
	return 0;
}
