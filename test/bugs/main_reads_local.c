/*
 * A deliberate bug that the checked build (COROUTINE_CHECKED=1) must stop:
 * main reads a suspended coroutine's local through the pointer the
 * coroutine handed it after a resume.  Unchecked, it prints 42 and exits 0.
 */
#include "stale_pointer.h"

int main(void)
{
	end_at_a_fault();
	struct schedule *S = coroutine_open();
	volatile int *local = stale_pointer(S, 1);
	printf("%d\n", *local);
	coroutine_close(S);
	return 0;
}
