/*
 * test_threads.c - schedules share no state: two threads, each driving its
 * own schedule at the same time, both see their coroutines' data intact.
 */
#include "support.h"

#include <pthread.h>

enum {
	THREADS = 2,
	COROUTINES = 8,
	ROUNDS = 2000,
	LOCAL_BYTES = 512,
};

struct worker {
	struct schedule *S;
	uint64_t seed;  /* differs from thread to thread */
	int corrupt;    /* locals found changed after a yield */
	int wrong_id;   /* times coroutine_running did not name the caller */
	int rounds_run;
};

/* Refills a local with fresh random bytes before every yield, and checks
 * it after. */
static void keep_local_data(struct schedule *S, void *ud)
{
	struct worker *w = ud;
	int self = coroutine_running(S);
	uint64_t seed = w->seed + (uint64_t)self * ROUNDS;
	unsigned char local[LOCAL_BYTES];
	int round;
	for (round = 0; round < ROUNDS; round++, seed++) {
		fill_random(local, sizeof local, seed);
		coroutine_yield(S);
		w->corrupt += !holds_random(local, sizeof local, seed);
		w->wrong_id += coroutine_running(S) != self;
		w->rounds_run++;
	}
}

static void *drive_schedule(void *arg)
{
	struct worker *w = arg;
	int id, round;
	w->S = coroutine_open();
	for (id = 0; id < COROUTINES; id++)
		coroutine_new(w->S, keep_local_data, w);
	for (round = 0; round <= ROUNDS; round++) {
		for (id = 0; id < COROUTINES; id++)
			coroutine_resume(w->S, id);
	}
	coroutine_close(w->S);
	return NULL;
}

static void test_threads_drive_their_own_schedules(void **state)
{
	pthread_t threads[THREADS];
	struct worker workers[THREADS];
	int i;
	(void)state;
	for (i = 0; i < THREADS; i++) {
		workers[i].seed = (uint64_t)(i + 1) << 32;
		workers[i].corrupt = 0;
		workers[i].wrong_id = 0;
		workers[i].rounds_run = 0;
		assert_int_equal(pthread_create(&threads[i], NULL, drive_schedule, &workers[i]), 0);
	}
	for (i = 0; i < THREADS; i++)
		assert_int_equal(pthread_join(threads[i], NULL), 0);
	for (i = 0; i < THREADS; i++) {
		assert_int_equal(workers[i].corrupt, 0);
		assert_int_equal(workers[i].wrong_id, 0);
		assert_int_equal(workers[i].rounds_run, COROUTINES * ROUNDS);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads_drive_their_own_schedules),
	};
	return run_suite(tests);
}
