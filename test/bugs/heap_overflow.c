/*
 * A deliberate bug that `make sanitize` expects ASan to report: a coroutine
 * writes one byte past a heap buffer, after it has been suspended and
 * resumed (its stack copied out and back).
 */
#include <stdlib.h>

#include "coroutine.h"

static void overflow_after_resume(struct schedule *S, void *ud)
{
	/* Volatile, so that the compiler neither drops the store (the buffer is
	 * freed right after) nor sees the overflow coming (gcc's UBSan would
	 * then report it before ASan). */
	volatile char *volatile buffer = (volatile char *)malloc(16);
	volatile size_t end = 16;
	coroutine_yield(S);
	buffer[end] = *(const char *)ud;
	free((void *)buffer);
}

int main(void)
{
	struct schedule *S = coroutine_open();
	char byte = 1;
	int id = coroutine_new(S, overflow_after_resume, &byte);
	coroutine_resume(S, id);
	coroutine_resume(S, id);
	coroutine_close(S);
	return 0;
}
