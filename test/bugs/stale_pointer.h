/*
 * What the checked build's bug programs share: two coroutines, the second
 * of which breaks the shared-stack rule by handing main a pointer to its
 * local and yielding.  Before main uses the pointer, the program prints the
 * schedule and the slice that the report must name (test/bugs/expect_checked.sh
 * compares them with the report).
 */
#include "coroutine.h"

#include <stdint.h>
#include <stdio.h>
#if defined(_WIN32)
#include <windows.h>
#endif

static void wait_once(struct schedule *S, void *ud)
{
	(void)ud;
	coroutine_yield(S);
}

/* Hands main the address of its local, which means nothing once it yields. */
static void hand_out_local(struct schedule *S, void *ud)
{
	volatile int value = 42;
	*(volatile int **)ud = &value;
	coroutine_yield(S);
}

#if defined(_WIN32)
static LONG WINAPI exit_at_a_fault(EXCEPTION_POINTERS *e)
{
	if (e->ExceptionRecord->ExceptionCode == EXCEPTION_ACCESS_VIOLATION)
		TerminateProcess(GetCurrentProcess(), EXCEPTION_ACCESS_VIOLATION);
	return EXCEPTION_CONTINUE_SEARCH;
}
#endif

/* On Windows, a fault is to end the process with its exception code, after
 * the checked build's handler (added at the first open, first in line) has
 * seen it: wine's debugger would end it with any code, 0 too. */
static inline void end_at_a_fault(void)
{
#if defined(_WIN32)
	SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX);
	AddVectoredExceptionHandler(1, exit_at_a_fault);
#endif
}

/* Coroutine 0 runs and yields, then coroutine 1 hands out its local and
 * yields: its bytes are on the run stack, and main holds the pointer. */
static volatile int *stale_pointer(struct schedule *S)
{
	volatile int *local = NULL;
	int first = coroutine_new(S, wait_once, NULL);
	int second = coroutine_new(S, hand_out_local, (void *)&local);
	coroutine_resume(S, first);
	coroutine_resume(S, second);
	fprintf(stderr, "expect: coroutine %d, schedule 0x%llx, slice %ld bytes\n", second,
		(unsigned long long)(uintptr_t)S, coroutine_stack_size(S, second));
	fflush(stderr);
	return local;
}
