/*
 * clash_frames.c - compiled with -fstack-clash-protection (see the
 * Makefile): the compiler touches every page of a large frame from the top
 * down as it allocates it, so the first touch below the run stack lands in
 * the guard, however large the frame.  Each frame writes only its lowest
 * byte, which without the flag would land tens of MiB below the guard.
 */
#include "clash_frames.h"

char clash_protected_8_mib_frame(void)
{
	volatile char frame[8 * 1024 * 1024];
	/* The array's address escapes: the compiler must give it all its bytes. */
	__asm__ volatile("" : : "r"(frame) : "memory");
	frame[0] = 1;
	return frame[0];
}

char clash_protected_64_mib_frame(void)
{
	volatile char frame[64 * 1024 * 1024];
	/* The array's address escapes: the compiler must give it all its bytes. */
	__asm__ volatile("" : : "r"(frame) : "memory");
	frame[0] = 1;
	return frame[0];
}
