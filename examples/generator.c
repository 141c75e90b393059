/*
 * generator.c - a producer and a consumer coroutine passing values through
 * a channel that the ud pointer leads to.  Written in C and linked with the
 * C compiler driver: the library needs no C++ runtime.
 *
 * The producer yields the prime numbers below 60 one by one; the consumer
 * adds them up.  Neither calls the other: main resumes them in turn, and
 * each one yields as soon as it cannot go on (the channel is full, or
 * empty).
 *
 * The channel lives in main's frame, not on the run stack.  By the
 * shared-stack rule it could not live in the producer's frame: while the
 * producer is suspended, its locals are not at their addresses.
 */
#include "coroutine.h"
#include <stdio.h>

struct channel {
	int value;
	int full;   /* value is waiting to be taken */
	int closed; /* the producer has no more values */
};

static void put(struct schedule *S, struct channel *ch, int value)
{
	while (ch->full)
		coroutine_yield(S);
	ch->value = value;
	ch->full = 1;
}

/* Sets *value and returns 1, or returns 0 once the channel is closed and empty. */
static int take(struct schedule *S, struct channel *ch, int *value)
{
	while (!ch->full && !ch->closed)
		coroutine_yield(S);
	if (!ch->full)
		return 0;
	*value = ch->value;
	ch->full = 0;
	return 1;
}

static int is_prime(int n)
{
	int d;
	for (d = 2; d * d <= n; d++) {
		if (n % d == 0)
			return 0;
	}
	return n >= 2;
}

static void producer(struct schedule *S, void *ud)
{
	struct channel *ch = ud;
	int n;
	for (n = 2; n < 60; n++) {
		if (is_prime(n)) {
			printf("producer: %d\n", n);
			put(S, ch, n);
		}
	}
	ch->closed = 1;
	printf("producer: no more\n");
}

static void consumer(struct schedule *S, void *ud)
{
	struct channel *ch = ud;
	int value, sum = 0, count = 0;
	while (take(S, ch, &value)) {
		sum += value;
		count++;
		printf("consumer: got %d, sum %d\n", value, sum);
	}
	printf("consumer: %d primes, sum %d\n", count, sum);
}

int main(void)
{
	struct schedule *S = coroutine_open();
	struct channel ch = { 0, 0, 0 };
	int produce = coroutine_new(S, producer, &ch);
	int consume = coroutine_new(S, consumer, &ch);
	int rounds = 0;
	/* Once a coroutine has ended its slot is empty, and resuming it returns
	 * at once: the loop need not check which one is still running. */
	while (coroutine_status(S, produce) || coroutine_status(S, consume)) {
		coroutine_resume(S, produce);
		coroutine_resume(S, consume);
		rounds++;
	}
	printf("main: both done after %d rounds\n", rounds);
	coroutine_close(S);
	return 0;
}
