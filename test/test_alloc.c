/*
 * test_alloc.c - running out of memory.  coroutine_open returns NULL and
 * coroutine_new returns -1, leaving everything as it was and leaking
 * nothing; coroutine_close frees everything.
 *
 * The binary is linked with -Wl,--wrap=malloc,... (see the Makefile), so
 * the library's calls to malloc go to __wrap_malloc below, which fails on
 * demand and counts the live blocks and mappings.
 */
#include "support.h"

#include <stdlib.h>
#include <sys/mman.h>

/* ---- The wrappers ------------------------------------------------------ */

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void __real_free(void *p);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int __real_munmap(void *addr, size_t len);

static int allocations_before_failure = -1; /* -1: never fail */
static int live;                            /* blocks and mappings not yet freed */

/* Counts down to the allocation that must fail. */
static int must_fail(void)
{
	if (allocations_before_failure < 0)
		return 0;
	return allocations_before_failure-- == 0;
}

static void fail_allocation_after(int n)
{
	allocations_before_failure = n;
}

void *__wrap_malloc(size_t size)
{
	void *p = must_fail() ? NULL : __real_malloc(size);
	live += p != NULL;
	return p;
}

void *__wrap_calloc(size_t n, size_t size)
{
	void *p = must_fail() ? NULL : __real_calloc(n, size);
	live += p != NULL;
	return p;
}

void *__wrap_realloc(void *old, size_t size)
{
	void *p = must_fail() ? NULL : __real_realloc(old, size);
	live += old == NULL && p != NULL;
	return p;
}

void __wrap_free(void *p)
{
	live -= p != NULL;
	__real_free(p);
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p = must_fail() ? MAP_FAILED : __real_mmap(addr, len, prot, flags, fd, off);
	live += p != MAP_FAILED;
	return p;
}

int __wrap_munmap(void *addr, size_t len)
{
	live--;
	return __real_munmap(addr, len);
}

/* ---- Bodies ------------------------------------------------------------ */

static void ignore(struct schedule *S, void *ud)
{
	(void)S, (void)ud;
}

static void yield_once(struct schedule *S, void *ud)
{
	(void)ud;
	coroutine_yield(S);
}

/* ---- coroutine_open ------------------------------------------------------ */

static void test_open_fails_cleanly_at_every_allocation(void **state)
{
	int n, failures = 0, before = live;
	(void)state;
	for (n = 0;; n++) {
		struct schedule *S;
		fail_allocation_after(n);
		S = coroutine_open();
		fail_allocation_after(-1);
		if (S != NULL) {
			coroutine_close(S);
			break;
		}
		failures++;
		assert_int_equal(live, before);
	}
	/* The schedule, its slots, the six levels of its tree of slot bitmaps,
	 * and its run stack. */
	assert_int_equal(failures, 9);
	assert_int_equal(live, before);
}

/* ---- coroutine_new ------------------------------------------------------- */

static void test_new_returns_minus_one_when_calloc_fails(void **state)
{
	struct schedule *S = coroutine_open();
	int before;
	(void)state;
	assert_int_equal(coroutine_new(S, ignore, NULL), 0);
	before = live;
	fail_allocation_after(0);
	assert_int_equal(coroutine_new(S, ignore, NULL), -1);
	fail_allocation_after(-1);
	assert_int_equal(live, before);
	assert_int_equal(coroutine_status(S, 1), COROUTINE_DEAD);
	/* nco did not move: the next id is the one the failed call would have had. */
	assert_int_equal(coroutine_new(S, ignore, NULL), 1);
	coroutine_close(S);
}

static void status_of_16(void *S)
{
	coroutine_status(S, 16);
}

static void test_new_returns_minus_one_when_growing_fails(void **state)
{
	struct schedule *S = coroutine_open();
	struct child_result r;
	int id, before;
	(void)state;
	for (id = 0; id < 16; id++)
		coroutine_new(S, ignore, NULL);
	before = live;
	fail_allocation_after(1); /* the coroutine's calloc, then the realloc */
	assert_int_equal(coroutine_new(S, ignore, NULL), -1);
	fail_allocation_after(-1);
	assert_int_equal(live, before);
	/* Still 16 slots, all of them taken. */
	r = run_in_child(status_of_16, S);
	assert_aborted_with(&r, "coroutine_status: id 16 is out of range [0, 16)");
	for (id = 0; id < 16; id++)
		assert_int_equal(coroutine_status(S, id), COROUTINE_READY);
	assert_int_equal(coroutine_new(S, ignore, NULL), 16);
	coroutine_close(S);
}

/* ---- coroutine_yield ------------------------------------------------------ */

static void yield_without_memory(void *arg)
{
	struct schedule *S = coroutine_open();
	(void)arg;
	coroutine_new(S, yield_once, NULL);
	fail_allocation_after(0);
	coroutine_resume(S, 0);
}

static void test_yield_aborts_when_saving_the_stack_fails(void **state)
{
	struct child_result r = run_in_child(yield_without_memory, NULL);
	(void)state;
	assert_aborted_with_prefix(&r, "coroutine_yield: out of memory saving ");
}

/* ---- coroutine_close ------------------------------------------------------ */

static void test_close_frees_every_coroutine(void **state)
{
	int before = live;
	struct schedule *S = coroutine_open();
	int id;
	(void)state;
	for (id = 0; id < 40; id++)
		coroutine_new(S, yield_once, NULL);
	for (id = 0; id < 40; id += 2)
		coroutine_resume(S, id); /* suspended, with a saved stack */
	coroutine_resume(S, 0);          /* finished */
	coroutine_close(S);
	assert_int_equal(live, before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_fails_cleanly_at_every_allocation),
		cmocka_unit_test(test_new_returns_minus_one_when_calloc_fails),
		cmocka_unit_test(test_new_returns_minus_one_when_growing_fails),
		cmocka_unit_test(test_yield_aborts_when_saving_the_stack_fails),
		cmocka_unit_test(test_close_frees_every_coroutine),
	};
	return run_suite(tests);
}
