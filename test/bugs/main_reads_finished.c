/*
 * A deliberate bug that the checked build (COROUTINE_CHECKED=1) must stop:
 * main reads a local of a coroutine that has finished, through the pointer
 * the coroutine handed it.  Nobody's bytes lie there now.
 */
#include "stale_pointer.h"

static void store_address(volatile int **to, volatile int *address)
{
	*to = address;
}

/* Through a pointer the compiler cannot follow, so that gcc's own check of
 * dangling pointers does not stop the build first. */
static void (*volatile store)(volatile int **, volatile int *) = store_address;

static void hand_out_and_finish(struct schedule *S, void *ud)
{
	volatile int value = 42;
	(void)S;
	store((volatile int **)ud, &value);
}

int main(void)
{
	volatile int *local = NULL;
	end_at_a_fault();
	struct schedule *S = coroutine_open();
	coroutine_resume(S, coroutine_new(S, hand_out_and_finish, (void *)&local));
	printf("%d\n", *local);
	coroutine_close(S);
	return 0;
}
