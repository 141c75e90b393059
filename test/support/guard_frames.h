/*
 * guard_frames.h - frames that run past the end of the run stack, for the
 * tests of the guard region below it (test_guard.c, driver.c).  Each
 * touches only its lowest byte, the way a large local array written at
 * index 0 does: a guard smaller than the frame would let it jump over.
 */
#ifndef TEST_GUARD_FRAMES_H
#define TEST_GUARD_FRAMES_H

enum {
	RUN_STACK = 1024 * 1024, /* the library's default COROUTINE_STACK_SIZE */
};

/* Just past the run stack: its lowest byte lies 64 KiB into the guard. */
__attribute__((noinline)) static char frame_just_past_the_run_stack(void)
{
	volatile char frame[RUN_STACK + 64 * 1024];
	/* The array's address escapes: the compiler must give it all its bytes. */
	__asm__ volatile("" : : "r"(frame) : "memory");
	frame[0] = 1;
	return frame[0];
}

/* About twice the run stack: its lowest byte lies 64 KiB above the
 * guard's end. */
__attribute__((noinline)) static char frame_of_twice_the_run_stack(void)
{
	volatile char frame[2 * RUN_STACK - 64 * 1024];
	/* The array's address escapes: the compiler must give it all its bytes. */
	__asm__ volatile("" : : "r"(frame) : "memory");
	frame[0] = 1;
	return frame[0];
}

#endif
