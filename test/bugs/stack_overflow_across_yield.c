/*
 * A deliberate bug that `make sanitize` expects ASan to report: a coroutine
 * overflows a local array that lived across its yield, after another
 * coroutine used the run stack.  The library keeps the redzones of a
 * suspended coroutine's frames along with its bytes, so ASan still sees it.
 */
#include "coroutine.h"

static volatile int sink;

static void overflow_across_yield(struct schedule *S, void *ud)
{
	int local[8] = { 0 };
	/* Through a pointer the compiler cannot follow, so that UBSan's bounds
	 * check does not report the overflow before ASan. */
	int *volatile p = local;
	volatile int past_end = *(const int *)ud;
	coroutine_yield(S);
	p[past_end] = 1;
	sink = local[0];
}

int main(void)
{
	struct schedule *S = coroutine_open();
	int past_end = 8;
	int first = coroutine_new(S, overflow_across_yield, &past_end);
	int second = coroutine_new(S, overflow_across_yield, &past_end);
	coroutine_resume(S, first);
	coroutine_resume(S, second); /* first's bytes leave the run stack */
	coroutine_resume(S, first);  /* and come back */
	coroutine_close(S);
	return 0;
}
