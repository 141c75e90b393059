/*
 * resumers.c - a coroutine resumed from two places, for gdb's bt
 * (frames_gdb.sh): stopped in stop_here, inside the coroutine, the
 * backtrace must go on from the coroutine's start into resume_from_a the
 * first time, into resume_from_b and resume_from_deeper the second.
 */
#include "resumers.h"
#include <stdio.h>

static volatile int stops;

/* Where gdb stops, inside the coroutine. */
__attribute__((noinline)) void stop_here(int n)
{
	stops += n;
}

static void work(struct schedule *S, void *ud)
{
	(void)ud;
	stop_here(1);
	coroutine_yield(S);
	stop_here(2);
	resumes--; /* not a jump to stop_here: this frame stays */
}

int main(void)
{
	struct schedule *S = coroutine_open();
	int id = coroutine_new(S, work, NULL);
	resume_from_a(S, id);
	resume_from_deeper(S, id);
	coroutine_close(S);
	printf("stops %d, resumes %d\n", stops, resumes);
	return 0;
}
