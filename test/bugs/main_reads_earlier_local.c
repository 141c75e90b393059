/*
 * A deliberate bug that the checked build (COROUTINE_CHECKED=1) must stop,
 * naming the right coroutine: main reads coroutine 0's local after
 * coroutine 1 has run.  The run stack then holds coroutine 1's bytes, but
 * only coroutine 0's saved slice reaches as deep as the local: the line
 * names coroutine 0, not the last to run.
 */
#include "stale_pointer.h"

int main(void)
{
	struct handout h = { NULL, 0 };
	end_at_a_fault();
	struct schedule *S = coroutine_open();
	int deep = coroutine_new(S, hand_out_deep_local, &h);
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
