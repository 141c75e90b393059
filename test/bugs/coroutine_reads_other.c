/*
 * A deliberate bug that a checked build must stop: a coroutine reads (or,
 * given "write", writes) a local of another, suspended, coroutine, through
 * the pointer that one handed out.  Unchecked, it prints 42 and exits 0.
 *
 * On one schedule, the two are coroutines 0 and 1, which a checked build
 * runs in windows of their own (test/support/checked_windows.h): the one
 * that hands it out is suspended, its window out of reach, and the read
 * faults.  A checked build under ASan stops it with ASan's report first,
 * as it keeps such a local in a fake stack and poisons it.  Given
 * "elsewhere", the one that uses it is a coroutine of a second schedule,
 * whose run stacks are all out of reach.
 */
#include "stale_pointer.h"

#include <string.h>

struct use {
	volatile int *local;
	int write;
};

/* A few frames down, hands out the address of its local, and yields. */
static void hand_out_deep(struct schedule *S, struct use *h, int depth)
{
	volatile int value = 42;
	volatile char frame[64]; /* room on the run stack, nothing else */
	frame[depth] = (char)depth;
	(void)frame;
	if (depth > 0) {
		hand_out_deep(S, h, depth - 1);
		return;
	}
	h->local = &value;
	coroutine_yield(S);
}

static void hands_out(struct schedule *S, void *ud)
{
	hand_out_deep(S, (struct use *)ud, 4);
}

/* Waits for the pointer, then uses it, at the top of its own stack. */
static void uses_it(struct schedule *S, void *ud)
{
	struct use *h = (struct use *)ud;
	coroutine_yield(S);
	if (h->write)
		*h->local = 7;
	else
		printf("%d\n", *h->local);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "read";
	struct use h = { NULL, strcmp(mode, "write") == 0 };
	end_at_a_fault();
	struct schedule *S = coroutine_open();
	struct schedule *T = strcmp(mode, "elsewhere") == 0 ? coroutine_open() : S;
	int user = coroutine_new(T, uses_it, &h);
	int owner = coroutine_new(S, hands_out, &h);
	coroutine_resume(T, user);
	coroutine_resume(S, owner);
	fprintf(stderr, "expect: coroutine %d, schedule 0x%llx, slice %ld bytes, by coroutine %d", owner,
		(unsigned long long)(uintptr_t)S, coroutine_stack_size(S, owner), user);
	if (T != S)
		fprintf(stderr, " (schedule 0x%llx)", (unsigned long long)(uintptr_t)T);
	fprintf(stderr, "\n");
	fflush(stderr);
	coroutine_resume(T, user);
	if (T != S)
		coroutine_close(T);
	coroutine_close(S);
	return 0;
}
