/*
 * A deliberate bug that `make sanitize` expects ASan to report: after a
 * resume (the coroutine's stack copied back onto the run stack), the
 * coroutine calls a function that writes one element past a local array.
 * The run stack's shadow must still be live for ASan to see it.
 */
#include "coroutine.h"

static volatile int sink;

static __attribute__((noinline)) void write_past_local(int index)
{
	int local[8] = { 0 };
	/* Through a pointer the compiler cannot follow, so that UBSan's bounds
	 * check does not report the overflow before ASan. */
	int *volatile p = local;
	p[index] = 1;
	sink = local[index % 8];
}

static void overflow_after_resume(struct schedule *S, void *ud)
{
	volatile int past_end = *(const int *)ud;
	coroutine_yield(S);
	write_past_local(past_end);
}

int main(void)
{
	struct schedule *S = coroutine_open();
	int past_end = 8;
	int id = coroutine_new(S, overflow_after_resume, &past_end);
	coroutine_resume(S, id);
	coroutine_resume(S, id);
	coroutine_close(S);
	return 0;
}
