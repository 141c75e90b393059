/*
 * test_threads.c - schedules share no state: two threads, each driving its
 * own schedule at the same time, both see their coroutines' data intact.
 * And the rule for moving a schedule between threads: a suspended coroutine
 * is resumed only on the thread it was suspended on (anything else aborts);
 * a coroutine that never ran starts on any thread, and a schedule with no
 * suspended coroutine moves freely.  Coroutines of one schedule suspended
 * on different threads each keep their own.
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


/* ---- Moving a schedule between threads ------------------------------- */

static void yield_twice(struct schedule *S, void *ud)
{
	int *yields = ud;
	(*yields)++;
	coroutine_yield(S);
	(*yields)++;
	coroutine_yield(S);
	(*yields)++;
}

struct resume_call {
	struct schedule *S;
	int id;
};

static void *resume_on_this_thread(void *arg)
{
	struct resume_call *c = arg;
	coroutine_resume(c->S, c->id);
	return NULL;
}

static void *resume_three_times(void *arg)
{
	int i;
	for (i = 0; i < 3; i++)
		resume_on_this_thread(arg);
	return NULL;
}

/* Runs coroutine_resume(S, id) on a new thread, and waits for it. */
static void resume_on_another_thread(struct schedule *S, int id)
{
	struct resume_call c;
	pthread_t thread;
	c.S = S;
	c.id = id;
	assert_int_equal(pthread_create(&thread, NULL, resume_on_this_thread, &c), 0);
	assert_int_equal(pthread_join(thread, NULL), 0);
}

static void ignore(struct schedule *S, void *ud)
{
	(void)S, (void)ud;
}

/* Coroutine 2 yields on this thread, then another thread resumes it. */
static void resume_suspended_on_another_thread(void *arg)
{
	struct schedule *S = coroutine_open();
	int yields = 0, id;
	(void)arg;
	coroutine_new(S, ignore, NULL);
	coroutine_new(S, ignore, NULL);
	id = coroutine_new(S, yield_twice, &yields);
	coroutine_resume(S, id);
	resume_on_another_thread(S, id);
}

static void test_resume_on_another_thread_than_the_yield_aborts(void **state)
{
	struct child_result r = run_in_child(resume_suspended_on_another_thread, NULL);
	(void)state;
	assert_aborted_with(&r, "coroutine_resume: coroutine 2 was suspended on another thread; "
				"resume it on that thread");
}

static void test_coroutine_that_never_ran_starts_on_any_thread(void **state)
{
	struct schedule *S = coroutine_open();
	int yields = 0;
	int id = coroutine_new(S, yield_twice, &yields);
	(void)state;
	resume_on_another_thread(S, id); /* it starts there, and yields there */
	assert_int_equal(yields, 1);
	assert_int_equal(coroutine_status(S, id), COROUTINE_SUSPEND);
	coroutine_close(S);
}

/*
 * Coroutine a yields on this thread, then coroutine b starts and yields on
 * another: the schedule has a coroutine suspended on each.
 */
static struct schedule *suspend_one_here_one_there(int *here, int *there, int *a, int *b)
{
	struct schedule *S = coroutine_open();
	*a = coroutine_new(S, yield_twice, here);
	*b = coroutine_new(S, yield_twice, there);
	coroutine_resume(S, *a);
	resume_on_another_thread(S, *b);
	return S;
}

static void test_each_suspended_coroutine_keeps_its_thread(void **state)
{
	int here = 0, there = 0, a, b;
	struct schedule *S = suspend_one_here_one_there(&here, &there, &a, &b);
	(void)state;
	assert_int_equal(coroutine_status(S, a), COROUTINE_SUSPEND);
	assert_int_equal(coroutine_status(S, b), COROUTINE_SUSPEND);
	coroutine_resume(S, a); /* still this thread's */
	assert_int_equal(here, 2);
	assert_int_equal(there, 1);
	assert_int_equal(coroutine_status(S, b), COROUTINE_SUSPEND);
	coroutine_close(S);
}

static void resume_here_what_another_thread_suspended(void *arg)
{
	int here = 0, there = 0, a, b;
	struct schedule *S = suspend_one_here_one_there(&here, &there, &a, &b);
	(void)arg;
	coroutine_resume(S, a);
	coroutine_resume(S, b);
}

static void test_coroutine_suspended_on_another_thread_is_refused_here(void **state)
{
	struct child_result r = run_in_child(resume_here_what_another_thread_suspended, NULL);
	(void)state;
	assert_aborted_with(&r, "coroutine_resume: coroutine 1 was suspended on another thread; "
				"resume it on that thread");
}

/*
 * Coroutine 0 yields on this thread (A); the schedule moves to thread B,
 * then to thread C, where resuming coroutine 0 is refused: the walk on
 * the way to C must not take "suspended elsewhere" for "suspended on B".
 */
static void resume_on_a_third_thread(void *arg)
{
	struct schedule *S = coroutine_open();
	int yields = 0;
	(void)arg;
	coroutine_resume(S, coroutine_new(S, yield_twice, &yields)); /* 0, on A */
	resume_on_another_thread(S, coroutine_new(S, ignore, NULL)); /* 1, on B */
	resume_on_another_thread(S, 0);                              /* on C */
}

static void test_coroutine_suspended_here_is_refused_on_a_third_thread(void **state)
{
	struct child_result r = run_in_child(resume_on_a_third_thread, NULL);
	(void)state;
	assert_aborted_with(&r, "coroutine_resume: coroutine 0 was suspended on another thread; "
				"resume it on that thread");
}

/*
 * Coroutines 0 and 1 finish, coroutine 2 yields: one coroutine is live, in
 * a slot past the count of live ones.  Another thread must still be
 * refused it.
 */
static void resume_past_the_live_count_on_another_thread(void *arg)
{
	struct schedule *S = coroutine_open();
	int yields = 0;
	(void)arg;
	coroutine_new(S, ignore, NULL);
	coroutine_new(S, ignore, NULL);
	coroutine_resume(S, coroutine_new(S, yield_twice, &yields)); /* 2 */
	coroutine_resume(S, 0);
	coroutine_resume(S, 1);
	resume_on_another_thread(S, 2);
}

static void test_coroutine_in_a_slot_past_the_live_count_is_refused_elsewhere(void **state)
{
	struct child_result r = run_in_child(resume_past_the_live_count_on_another_thread, NULL);
	(void)state;
	assert_aborted_with(&r, "coroutine_resume: coroutine 2 was suspended on another thread; "
				"resume it on that thread");
}

/* ---- Closing a schedule that moved -------------------------------------- */

/* The bytes of the process's address space, from /proc/self/maps (which
 * qemu-user writes for its guest, too). */
static unsigned long long address_space(void)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	unsigned long long start, end, total = 0;
	char line[512];
	assert_non_null(maps);
	while (fgets(line, sizeof line, maps) != NULL)
		if (sscanf(line, "%llx-%llx", &start, &end) == 2)
			total += end - start;
	fclose(maps);
	return total;
}

/* Where frame's address goes, so that it stays a real array in memory
 * (under ASan with detect_stack_use_after_return: on a "fake stack" that
 * ASan keeps for the coroutine while it is suspended). */
static volatile char *volatile escaped;

static void yield_holding_a_frame(struct schedule *S, void *ud)
{
	volatile char frame[256];
	(void)ud;
	escaped = frame;
	frame[0] = 1;
	coroutine_yield(S);
}

/* A coroutine suspended on this thread, the schedule moved to another,
 * then closed here: the coroutine was never resumed, and its bookkeeping
 * (ASan's fake stack, its saved slice) must go with the schedule. */
static void close_with_a_coroutine_suspended_elsewhere(void)
{
	struct schedule *S = coroutine_open();
	coroutine_resume(S, coroutine_new(S, yield_holding_a_frame, NULL));
	resume_on_another_thread(S, coroutine_new(S, ignore, NULL));
	coroutine_close(S);
}

enum { CLOSE_ROUNDS = 20, LEAK_PER_ROUND = 1024 * 1024 };

static void test_close_frees_a_coroutine_suspended_on_another_thread(void **state)
{
	unsigned long long before, after;
	int round;
	(void)state;
	close_with_a_coroutine_suspended_elsewhere(); /* what a first use maps once */
	before = address_space();
	for (round = 0; round < CLOSE_ROUNDS; round++)
		close_with_a_coroutine_suspended_elsewhere();
	after = address_space();
	print_message("address space: %llu bytes before, %llu after %d rounds\n", before, after, CLOSE_ROUNDS);
	assert_true(after < before + (unsigned long long)CLOSE_ROUNDS * LEAK_PER_ROUND);
}

/* Each coroutine finishes on the thread that started it; the schedule then
 * goes on on another. */
static void test_schedule_without_suspended_coroutines_moves_freely(void **state)
{
	struct schedule *S = coroutine_open();
	int yields = 0, id, thread;
	(void)state;
	for (thread = 0; thread < 3; thread++) {
		struct resume_call c;
		pthread_t t;
		id = coroutine_new(S, yield_twice, &yields);
		c.S = S;
		c.id = id;
		assert_int_equal(pthread_create(&t, NULL, resume_three_times, &c), 0);
		assert_int_equal(pthread_join(t, NULL), 0);
		assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
	}
	assert_int_equal(yields, 9);
	coroutine_close(S);
}

/* ---- A thread's name is never another's ------------------------------ */

/*
 * A thread that has ended leaves its thread-locals' addresses to the next
 * thread created: glibc gives the new thread the old one's cached stack,
 * where its thread-locals live.  Something named by such an address would
 * take the new thread for the old one.
 */
static __thread int thread_value;

static void write_42_then_yield(struct schedule *S, void *ud)
{
	(void)ud;
	thread_value = 42;
	coroutine_yield(S);
	/* Resumed on another thread, thread_value would not be 42 here. */
}

/* The status with which the child says that the second thread did not
 * get the first one's thread-locals, which the test needs. */
#define NO_REUSE 77

struct thread_visit {
	struct resume_call call;
	int *thread_value_at; /* where the thread finds its thread_value */
};

/* Resumes only on a thread whose thread_value is where it was expected. */
static void *resume_where_expected(void *arg)
{
	struct thread_visit *v = arg;
	if (v->thread_value_at == NULL) {
		v->thread_value_at = &thread_value;
	} else if (v->thread_value_at != &thread_value) {
		fprintf(stderr, "the threads' thread-locals are at %p and %p\n",
			(void *)v->thread_value_at, (void *)&thread_value);
		_exit(NO_REUSE);
	}
	coroutine_resume(v->call.S, v->call.id);
	return NULL;
}

/* Coroutine 0 yields on a thread, which ends; main resumes coroutine 1, so
 * that the schedule moves to main; a new thread, whose thread-locals are
 * where the first one's were, resumes coroutine 0. */
static void resume_on_a_thread_that_reuses_the_first_ones_addresses(void *arg)
{
	struct thread_visit v;
	pthread_t first, second;
	(void)arg;
	v.call.S = coroutine_open();
	v.call.id = coroutine_new(v.call.S, write_42_then_yield, NULL);
	v.thread_value_at = NULL;
	assert_int_equal(pthread_create(&first, NULL, resume_where_expected, &v), 0);
	assert_int_equal(pthread_join(first, NULL), 0);
	coroutine_resume(v.call.S, coroutine_new(v.call.S, ignore, NULL));
	assert_int_equal(pthread_create(&second, NULL, resume_where_expected, &v), 0);
	assert_int_equal(pthread_join(second, NULL), 0);
}

static void test_thread_with_an_ended_threads_addresses_is_refused(void **state)
{
	struct child_result r = run_in_child(resume_on_a_thread_that_reuses_the_first_ones_addresses, NULL);
	(void)state;
	if (WIFEXITED(r.status) && WEXITSTATUS(r.status) == NO_REUSE) {
		fprintf(stderr, "the C library gave the second thread fresh addresses: %s", r.err);
		skip();
	}
	assert_aborted_with(&r, "coroutine_resume: coroutine 0 was suspended on another thread; "
				"resume it on that thread");
}

/* ---- The process's first thread ----------------------------------------- */

/*
 * Threads are numbered from 1: 0 means "not numbered yet", which a thread
 * that never called the library has.  The process's first thread numbered
 * must not get 0 too, or another thread would pass the thread check of its
 * schedule.  So this runs in a fresh process (this program again, run with
 * --first-thread), whose first call into the library is here.
 */
static const char *self;

static void first_thread_resumes_nothing_elsewhere(void)
{
	struct schedule *S = coroutine_open();
	int yields = 0;
	int id = coroutine_new(S, yield_twice, &yields);
	coroutine_resume(S, id);
	resume_on_another_thread(S, id);
	exit(0);
}

static void run_again_as_first_thread(void *arg)
{
	const char *emulator = getenv("EMULATOR");
	(void)arg;
	if (emulator != NULL && *emulator != '\0')
		execlp(emulator, emulator, self, "--first-thread", (char *)NULL);
	else
		execl(self, self, "--first-thread", (char *)NULL);
	_exit(127);
}

static void test_first_thread_of_the_process_is_told_from_the_others(void **state)
{
	struct child_result r = run_in_child(run_again_as_first_thread, NULL);
	(void)state;
	assert_aborted_with(&r, "coroutine_resume: coroutine 0 was suspended on another thread; "
				"resume it on that thread");
}

int main(int argc, char **argv)
{
	self = argv[0];
	if (argc == 2 && strcmp(argv[1], "--first-thread") == 0)
		first_thread_resumes_nothing_elsewhere();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_thread_of_the_process_is_told_from_the_others),
		cmocka_unit_test(test_threads_drive_their_own_schedules),
		cmocka_unit_test(test_resume_on_another_thread_than_the_yield_aborts),
		cmocka_unit_test(test_coroutine_that_never_ran_starts_on_any_thread),
		cmocka_unit_test(test_schedule_without_suspended_coroutines_moves_freely),
		cmocka_unit_test(test_each_suspended_coroutine_keeps_its_thread),
		cmocka_unit_test(test_coroutine_suspended_on_another_thread_is_refused_here),
		cmocka_unit_test(test_thread_with_an_ended_threads_addresses_is_refused),
		cmocka_unit_test(test_coroutine_suspended_here_is_refused_on_a_third_thread),
		cmocka_unit_test(test_coroutine_in_a_slot_past_the_live_count_is_refused_elsewhere),
		cmocka_unit_test(test_close_frees_a_coroutine_suspended_on_another_thread),
	};
	return run_suite(tests);
}
