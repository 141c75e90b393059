/*
 * A deliberate bug that the checked build (COROUTINE_CHECKED=1) must stop
 * with one line that a user can read, however many coroutines it names:
 * an engine's entities (1,000, or as many as the argument says) all wait
 * in the same function, so the saved slice of each reaches the local that
 * one of them handed main.  The line names the first few and counts the
 * others.
 */
#include "stale_pointer.h"

#include <stdlib.h>

int main(int argc, char **argv)
{
	int entities = argc > 1 ? atoi(argv[1]) : 1000, i;
	struct handout *h = (struct handout *)calloc((size_t)entities, sizeof *h);
	end_at_a_fault();
	struct schedule *S = coroutine_open();
	for (i = 0; i < entities; i++)
		coroutine_resume(S, coroutine_new(S, hand_out_deep_local, &h[i]));
	/* The ids as the line lists them: "0, 1, 2, 3 or 996 others", "0 or 1". */
	fprintf(stderr, "expect: coroutines 0");
	for (i = 1; i < entities && i < 4; i++)
		fprintf(stderr, i + 1 < entities && (i < 3 || entities > 4) ? ", %d" : " or %d", i);
	if (entities > 4)
		fprintf(stderr, " or %d other%s", entities - 4, entities == 5 ? "" : "s");
	fprintf(stderr, " of %d, schedule 0x%llx, slice %ld bytes\n", entities,
		(unsigned long long)(uintptr_t)S, coroutine_stack_size(S, entities / 2));
	fflush(stderr);
	printf("%d\n", *h[entities / 2].local);
	coroutine_close(S);
	free(h);
	return 0;
}
