/*
 * A deliberate bug that the checked build (COROUTINE_CHECKED=1) must stop:
 * main writes to a suspended coroutine's local through the pointer the
 * coroutine handed it at its start.
 */
#include "stale_pointer.h"

int main(void)
{
	end_at_a_fault();
	struct schedule *S = coroutine_open();
	volatile int *local = stale_pointer(S, 0);
	*local = 7;
	coroutine_close(S);
	return 0;
}
