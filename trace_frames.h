/*
 * The frames of a saved slice, found from outside the library
 * (trace_frames.cpp), for the demo's --trace (trace.cpp).
 */
#ifndef TRACE_FRAMES_H
#define TRACE_FRAMES_H

#include "coroutine.h"

#define MAX_FRAMES 12
#define NAME_LEN 96

struct frame {
	char name[NAME_LEN]; /* as gdb names it; inlined calls after a comma */
	long size;           /* its bytes in the slice */
	int saved;           /* registers it saved for its caller, the return
				address not counted on x86 (-1: not known) */
};

/* 1 where the frames of a slice can be found (Linux with glibc on x86_64,
 * i686, aarch64, built with libbacktrace: not TRACE_NO_FRAMES), 0 elsewhere. */
extern const int frames_known;

/* Before a program makes its coroutines on S: where S's run stack is. */
void start_frames(struct schedule *S);

/* The run stack's size and its guard's, in bytes: the guard measured where
 * frames are found, else as coroutine.h gives it. */
void run_stack_sizes(long *size, long *guard);

/* Just after a yield, back in main: the frames of the slice of size bytes
 * at the top of the run stack, top first, into frames[MAX_FRAMES].  Returns
 * how many (0: none found). */
int find_frames(long size, struct frame *frames);

/* Just after a yield, back in main: a fingerprint of the slice of size
 * bytes at the top of the run stack (32-bit FNV-1a of its bytes), the
 * bytes its heap copy now holds.  0 where the run stack is not found. */
unsigned long slice_fingerprint(long size);

/* How far below the run stack's top address lies: a local of a
 * coroutine's at top-N gives N; 0 where it is not on the run stack, or the
 * run stack is not found. */
long below_top(const volatile void *address);

/* Just after a yield, back in main: the int at top-at, if it lies in the
 * slice of size bytes at the top of the run stack (the bytes its heap copy
 * now holds).  Returns 0 where it does not, or the run stack is not found. */
int slice_int(long size, long at, int *value);

#endif
