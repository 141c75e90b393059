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

static inline void wait_once(struct schedule *S, void *ud)
{
	(void)ud;
	coroutine_yield(S);
}

/* What main gives the coroutine that breaks the rule: where to put the
 * address of its local, and whether to yield once first. */
struct handout {
	volatile int *local;
	int yield_first;
};

/* Hands main the address of its local, which means nothing once it yields. */
static inline void hand_out_local(struct schedule *S, void *ud)
{
	struct handout *h = (struct handout *)ud;
	volatile int value = 42;
	if (h->yield_first)
		coroutine_yield(S);
	h->local = &value;
	coroutine_yield(S);
}

/* Where a frame's address escapes to: the compiler must keep all of it. */
static volatile char *volatile frame_seen;

/* The same, its local below a frame of 1 KiB: deeper than wait_once's
 * whole slice (and as deep as every other coroutine's of this function),
 * so that no other slice reaches it.  Called through a pointer, so that it
 * has a frame of its own. */
__attribute__((noinline, unused)) static void hand_out_below(struct schedule *S, struct handout *h)
{
	void (*volatile hand_out)(struct schedule *, void *) = hand_out_local;
	volatile char frame[1024];
	frame[0] = 1;
	frame_seen = frame;
	hand_out(S, h);
	frame[1] = frame[0]; /* no tail call: this frame stays above the other */
}

static inline void hand_out_deep_local(struct schedule *S, void *ud)
{
	hand_out_below(S, (struct handout *)ud);
}

#if defined(_WIN32)
static inline LONG WINAPI exit_at_a_fault(EXCEPTION_POINTERS *e)
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

/* Coroutine 0 runs and yields; coroutine 1 hands out its local (deeper
 * than coroutine 0's slice reaches) at its start, or (after_resume) starts
 * and yields, and, its bytes put back on the run stack at its next resume,
 * hands out its local then; it yields: its bytes are on the run stack, and
 * main holds the pointer.  (The ways back to main after a start and after
 * a resume are different code.)  by: who will use it, if not main
 * ("another thread"). */
static inline volatile int *stale_pointer_for(struct schedule *S, int after_resume, const char *by)
{
	struct handout h = { NULL, after_resume };
	int first = coroutine_new(S, wait_once, NULL);
	int second = coroutine_new(S, hand_out_deep_local, &h);
	if (after_resume)
		coroutine_resume(S, second);
	coroutine_resume(S, first);
	coroutine_resume(S, second);
	fprintf(stderr, "expect: coroutine %d, schedule 0x%llx, slice %ld bytes%s%s\n", second,
		(unsigned long long)(uintptr_t)S, coroutine_stack_size(S, second), by ? ", by " : "", by ? by : "");
	fflush(stderr);
	return h.local;
}

static inline volatile int *stale_pointer(struct schedule *S, int after_resume)
{
	return stale_pointer_for(S, after_resume, NULL);
}
