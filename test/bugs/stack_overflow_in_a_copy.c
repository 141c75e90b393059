/*
 * A deliberate bug that `make sanitize` expects ASan to report: a copy
 * (coroutine_clone) overflows a local array it was copied with, after
 * another coroutine used the run stack.  The copy gets its own copy of the
 * redzones its original saved with its bytes, so ASan still sees it.
 *
 * The array's address is taken: with detect_stack_use_after_return, ASan
 * would keep it in its fake stack, off the run stack, and coroutine_clone
 * refuses a copy that would share it.  So the coroutine runs with the
 * option off: its frames are on the run stack.
 */
#include "coroutine.h"

#include <stddef.h>

/* ASan's runtime option, read by each instrumented function at its entry. */
extern int __asan_option_detect_stack_use_after_return;

static volatile int sink;

static void overflow_after_yield(struct schedule *S, void *ud)
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

static void yield_once(struct schedule *S, void *ud)
{
	(void)ud;
	coroutine_yield(S);
}

int main(void)
{
	struct schedule *S = coroutine_open();
	int past_end = 8, original, copy;
	__asan_option_detect_stack_use_after_return = 0;
	original = coroutine_new(S, overflow_after_yield, &past_end);
	coroutine_resume(S, original);
	copy = coroutine_clone(S, original);
	coroutine_resume(S, coroutine_new(S, yield_once, NULL)); /* the run stack changes hands */
	coroutine_resume(S, copy); /* overflows */
	coroutine_close(S);
	return 0;
}
