/*
 * checked_windows.h - the checked build's windows (docs/checking.md), as
 * its bug programs expect them: each coroutine runs in a window of its
 * own, a run stack above a guard of its own, and a new coroutine takes the
 * next window in turn.  So with up to CHECKED_WINDOWS coroutines each has
 * one alone; beyond, coroutine id shares its window with the ids that
 * differ from it by a multiple of CHECKED_WINDOWS, and the line about a
 * local there names all of those whose saved slices reach it.
 */
#ifndef TEST_CHECKED_WINDOWS_H
#define TEST_CHECKED_WINDOWS_H

#include <stdint.h>
#include <stdio.h>

#if UINTPTR_MAX > 0xffffffffu && !defined(_WIN32)
#define CHECKED_WINDOWS 64
#else
#define CHECKED_WINDOWS 16 /* 32-bit address spaces, and Windows */
#endif

/* How the line lists the coroutines of culprit's window among the first
 * coroutines (ids 0 to coroutines - 1), all of whose slices reach the
 * local: the first four by id, then a count of the others, "52, 116, 180,
 * 244 or 11 others", "13, 77 or 141", "13" alone.  Returns how many. */
static inline int ids_sharing_window(char *text, size_t size, int coroutines, int culprit)
{
	int first = culprit % CHECKED_WINDOWS, n = 0, k;
	size_t at = 0;
	while (first + n * CHECKED_WINDOWS < coroutines)
		n++;
	text[0] = '\0';
	for (k = 0; k < n && k < 4 && at < size; k++)
		at += (size_t)snprintf(text + at, size - at, "%s%d", k == 0 ? "" : k + 1 == n ? " or " : ", ",
				       first + k * CHECKED_WINDOWS);
	if (n > 4 && at < size)
		snprintf(text + at, size - at, " or %d other%s", n - 4, n == 5 ? "" : "s");
	return n;
}

#endif
