/*
 * A deliberate bug that the checked build (COROUTINE_CHECKED=1) must stop,
 * naming the right coroutine: main reads coroutine 0's local after
 * coroutine CHECKED_WINDOWS, the next to share its window (see
 * test/support/checked_windows.h), has run there.  The window then holds
 * that one's bytes, but only coroutine 0's saved slice reaches as deep as
 * the local: the line names coroutine 0, not the last to run.
 */
#include "checked_windows.h"
#include "stale_pointer.h"

int main(void)
{
	struct handout h = { NULL, 0 };
	int i;
	end_at_a_fault();
	struct schedule *S = coroutine_open();
	int deep = coroutine_new(S, hand_out_deep_local, &h);
	for (i = 1; i < CHECKED_WINDOWS; i++)
		coroutine_new(S, wait_once, NULL); /* never run: no slice */
	int shallow = coroutine_new(S, wait_once, NULL);
	coroutine_resume(S, deep);
	coroutine_resume(S, shallow);
	fprintf(stderr, "expect: coroutine %d, schedule 0x%llx, slice %ld bytes\n", deep,
		(unsigned long long)(uintptr_t)S, coroutine_stack_size(S, deep));
	fflush(stderr);
	printf("%d\n", *h.local);
	coroutine_close(S);
	return 0;
}
