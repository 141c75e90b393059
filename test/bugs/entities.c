/*
 * A deliberate bug that the checked build (COROUTINE_CHECKED=1) must stop
 * with one line that a user can read: an engine's entities all wait in
 * the same function, and main reads the local that one of them, the
 * culprit, handed it.  Each entity runs in a window of its own
 * (test/support/checked_windows.h): with up to CHECKED_WINDOWS entities,
 * the line names the culprit alone; beyond, the saved slice of every
 * entity of its window reaches the local, and the line names the first
 * four of those and counts the others.
 *
 *     entities [ENTITIES [CULPRIT]]   1,000 entities, the culprit 500 by default
 *     entities sharing N              N entities to a window, the culprit 13
 */
#include "checked_windows.h"
#include "stale_pointer.h"

#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	int sharing = argc > 2 && strcmp(argv[1], "sharing") == 0;
	int entities = sharing ? atoi(argv[2]) * CHECKED_WINDOWS : argc > 1 ? atoi(argv[1]) : 1000;
	int culprit = sharing ? 13 : argc > 2 ? atoi(argv[2]) : entities / 2, in_window, i;
	struct handout *h = (struct handout *)calloc((size_t)entities, sizeof *h);
	char ids[128];
	end_at_a_fault();
	struct schedule *S = coroutine_open();
	for (i = 0; i < entities; i++)
		coroutine_resume(S, coroutine_new(S, hand_out_deep_local, &h[i]));
	in_window = ids_sharing_window(ids, sizeof ids, entities, culprit);
	if (in_window == 1)
		fprintf(stderr, "expect: coroutine %s", ids);
	else
		fprintf(stderr, "expect: coroutines %s of %d", ids, in_window);
	fprintf(stderr, ", schedule 0x%llx, slice %ld bytes\n", (unsigned long long)(uintptr_t)S,
		coroutine_stack_size(S, culprit));
	fflush(stderr);
	printf("%d\n", *h[culprit].local);
	coroutine_close(S);
	free(h);
	return 0;
}
