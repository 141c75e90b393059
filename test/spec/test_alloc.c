/*
 * test_alloc.c - running out of memory.  coroutine_open returns NULL and
 * coroutine_new and coroutine_clone return -1, leaving everything as it was
 * and leaking nothing; coroutine_delete needs no memory; coroutine_close
 * frees everything.  And the library never writes
 * past a block it allocated (a save buffer too small for its slice).
 *
 * The binary is linked with -Wl,--wrap=malloc,... (see the Makefile), so
 * the library's calls to malloc go to __wrap_malloc below, which fails on
 * demand, counts the live blocks and mappings, and fences every block
 * (and so on for calloc, realloc, mmap).
 */
#include "support.h"
#include "checked_windows.h"

#include <stdlib.h>
#include <sys/mman.h>

/* ---- The wrappers ------------------------------------------------------ */

void *__real_malloc(size_t size);
size_t __real_malloc_usable_size(void *p);
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

/*
 * Every block is fenced: a header before it holds the size asked for, and
 * FENCE bytes of a known value follow it.  malloc_usable_size reports the
 * size asked for, so the library cannot lean on malloc's slack (glibc's,
 * which would hide a buffer a byte short), and a write past the end breaks
 * the fence, which free and realloc check.  (Under ASan and valgrind the
 * copy of a slice is not checked either: see copy_slice.)  A new block
 * holds poison, not what the last one there held: a save that misses a
 * word of the stack puts poison back, not a copy of the same word.
 */
enum { HEADER = 16, FENCE = 16, FENCE_BYTE = 0xa5, POISON_BYTE = 0x5a }; /* HEADER keeps malloc's alignment */
static int broken_fences;

static void *fence(unsigned char *raw, size_t size)
{
	if (raw == NULL)
		return NULL;
	memcpy(raw, &size, sizeof size);
	memset(raw + HEADER + size, FENCE_BYTE, FENCE);
	return raw + HEADER;
}

static unsigned char *raw_block(void *p)
{
	return (unsigned char *)p - HEADER;
}

static size_t size_asked(void *p)
{
	size_t size;
	memcpy(&size, raw_block(p), sizeof size);
	return size;
}

static void check_fence(void *p)
{
	const unsigned char *after = (unsigned char *)p + size_asked(p);
	int i;
	for (i = 0; i < FENCE; i++)
		broken_fences += after[i] != FENCE_BYTE;
}

void *__wrap_malloc(size_t size)
{
	void *p = must_fail() ? NULL : fence(__real_malloc(HEADER + size + FENCE), size);
	if (p != NULL)
		memset(p, POISON_BYTE, size);
	live += p != NULL;
	return p;
}

void *__wrap_calloc(size_t n, size_t size)
{
	void *p = NULL;
	if (!must_fail() && (size == 0 || n <= ((size_t)-1 - HEADER - FENCE) / size))
		p = fence(__real_calloc(1, HEADER + n * size + FENCE), n * size);
	live += p != NULL;
	return p;
}

/*
 * Always moves the block, and poisons the old one before freeing it: a
 * library that kept using the old address (stored the new one too late)
 * reads poison, not the same bytes by luck.  The new bytes are poison too.
 */
void *__wrap_realloc(void *old, size_t size)
{
	void *p = NULL;
	if (old != NULL)
		check_fence(old);
	if (!must_fail())
		p = fence(__real_malloc(HEADER + size + FENCE), size);
	if (p != NULL) {
		size_t kept = old != NULL && size_asked(old) < size ? size_asked(old) : size;
		memset(p, POISON_BYTE, size);
		if (old != NULL) {
			memcpy(p, old, kept);
			memset(raw_block(old), POISON_BYTE, HEADER + size_asked(old) + FENCE);
			__real_free(raw_block(old));
		}
	}
	live += old == NULL && p != NULL;
	return p;
}

void __wrap_free(void *p)
{
	if (p == NULL)
		return;
	check_fence(p);
	live--;
	__real_free(raw_block(p));
}

size_t __wrap_malloc_usable_size(void *p)
{
	return p == NULL ? 0 : size_asked(p);
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p = must_fail() ? MAP_FAILED : __real_mmap(addr, len, prot, flags, fd, off);
	/* MAP_FIXED maps over part of a mapping already counted. */
	live += p != MAP_FAILED && !(flags & MAP_FIXED);
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
	/* The schedule, its slots, the six levels of its tree of slot bitmaps
	 * and the bitmap of its words in use (coroutine_next's), and its run
	 * stack: reserved, then mapped read-write (the checked build's windows
	 * each). */
#if COROUTINE_CHECKED
	assert_int_equal(failures, 10 + CHECKED_WINDOWS);
#else
	assert_int_equal(failures, 11);
#endif
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

static int runs;

static void count_run(struct schedule *S, void *ud)
{
	(void)S, (void)ud;
	runs++;
}

/*
 * Growing from 16 slots to 32 allocates several times: the coroutine, the
 * slot array, and the levels of the tree of slot bitmaps.  Whichever of
 * them fails, coroutine_new returns -1 and the schedule is as it was: 16
 * slots, all of them its coroutines', still able to grow and to run them.
 * (A bitmap that fails after the slot array grew must find the array's
 * new address stored, and the capacity not yet doubled.)
 */
static void test_growth_fails_cleanly_at_every_allocation(void **state)
{
	int at_start = live;
	struct schedule *S = coroutine_open();
	struct child_result r;
	int id, n, before;
	(void)state;
	runs = 0;
	for (id = 0; id < 16; id++)
		coroutine_new(S, count_run, NULL);
	before = live;
	for (n = 0;; n++) {
		fail_allocation_after(n);
		id = coroutine_new(S, count_run, NULL);
		fail_allocation_after(-1);
		if (id != -1)
			break;
		assert_int_equal(live, before);
		r = run_in_child(status_of_16, S);
		assert_aborted_with(&r, "coroutine_status: id 16 is out of range [0, 16)");
		for (id = 0; id < 16; id++)
			assert_int_equal(coroutine_status(S, id), COROUTINE_READY);
	}
	assert_true(n >= 3); /* the coroutine, the slot array, a bitmap at least */
	assert_int_equal(id, 16);
	broken_fences = 0;
	for (id = 17; id < 100; id++)
		assert_int_equal(coroutine_new(S, count_run, NULL), id);
	for (id = 0; id < 100; id++)
		coroutine_resume(S, id);
	assert_int_equal(runs, 100);
	coroutine_close(S);
	assert_int_equal(broken_fences, 0);
	assert_int_equal(live, at_start);
}

/*
 * A failed coroutine_new leaves the count of live coroutines alone, which
 * the original's id rule depends on: with 15 of 16 slots live, the next id
 * is the first empty slot at or after 15, wrapping around.
 */
static void test_failed_new_leaves_the_id_rule_intact(void **state)
{
	struct schedule *S = coroutine_open();
	int id;
	(void)state;
	for (id = 0; id < 16; id++)
		coroutine_new(S, id == 5 ? ignore : yield_once, NULL);
	fail_allocation_after(1); /* the coroutine's malloc, then the realloc */
	assert_int_equal(coroutine_new(S, ignore, NULL), -1);
	fail_allocation_after(-1);
	coroutine_resume(S, 5); /* finishes: slot 5 is empty */
	assert_int_equal(coroutine_status(S, 5), COROUTINE_DEAD);
	assert_int_equal(coroutine_new(S, ignore, NULL), 5);
	coroutine_close(S);
}

/* ---- coroutine_yield ------------------------------------------------------ */

enum { LEVELS = 40, LEVEL_BYTES = 100 };

/* Yields on the way down and on the way up: slices of every depth. */
static void yield_at_every_level(struct schedule *S, int depth)
{
	volatile char frame[LEVEL_BYTES];
	frame[0] = (char)depth;
	coroutine_yield(S);
	if (depth < LEVELS)
		yield_at_every_level(S, depth + 1);
	coroutine_yield(S);
	assert_int_equal(frame[0], (char)depth);
}

static void descend_yielding(struct schedule *S, void *ud)
{
	(void)ud;
	yield_at_every_level(S, 0);
}

/* Resumes a and b in turn until both have finished: each resume but the
 * first puts a slice back, the other's bytes being on the run stack. */
static void resume_in_turns(struct schedule *S, int a, int b)
{
	while (coroutine_status(S, a) != COROUTINE_DEAD || coroutine_status(S, b) != COROUTINE_DEAD) {
		coroutine_resume(S, a);
		coroutine_resume(S, b);
	}
}

static void test_every_yield_saves_within_its_buffer(void **state)
{
	struct schedule *S = coroutine_open();
	int a = coroutine_new(S, descend_yielding, NULL);
	int b = coroutine_new(S, descend_yielding, NULL);
	(void)state;
	broken_fences = 0;
	resume_in_turns(S, a, b);
	coroutine_close(S);
	assert_int_equal(broken_fences, 0);
}

/*
 * Next to no locals: their live stacks are return addresses and saved
 * registers, slices of a few blocks (one more with the call between), which
 * a yield saves without memcpy (see save_slice_quickly).  A word of them
 * the save missed comes back as poison (see __wrap_malloc), and the
 * coroutine dies on its way out.
 */
static int yields_asked, yields_made;

__attribute__((noinline)) static void yield_and_count(struct schedule *S)
{
	coroutine_yield(S);
	yields_made++;
}

static void yield_while_asked(struct schedule *S, void *ud)
{
	(void)ud;
	while (yields_asked-- > 0)
		coroutine_yield(S);
}

static void yield_one_call_down_while_asked(struct schedule *S, void *ud)
{
	(void)ud;
	while (yields_asked-- > 0)
		yield_and_count(S);
}

static void test_shallow_slices_come_back_whole(void **state)
{
	struct schedule *S = coroutine_open();
	int a = coroutine_new(S, yield_while_asked, NULL);
	int b = coroutine_new(S, yield_one_call_down_while_asked, NULL);
	(void)state;
	yields_asked = 20;
	yields_made = 0;
	resume_in_turns(S, a, b);
	assert_true(yields_asked < 0);
	assert_true(yields_made > 0);
	coroutine_close(S);
}

/* Where held's address goes, so that the whole array stays in the frame
 * (clang keeps only the bytes used of an array whose address stays home). */
static volatile char *volatile escaped;

/* Yields with a kilobyte of its own stack live: more than a new coroutine
 * has room for, so that the yield must allocate. */
static void yield_holding_a_kilobyte(struct schedule *S, void *ud)
{
	volatile char held[1024];
	(void)ud;
	escaped = held;
	coroutine_yield(S);
	held[0] = 1;
}

/* The yield's allocations before the one that fails: *(int *)arg. */
static void yield_without_memory(void *arg)
{
	struct schedule *S = coroutine_open();
	coroutine_new(S, yield_holding_a_kilobyte, NULL);
	fail_allocation_after(*(int *)arg);
	coroutine_resume(S, 0);
}

static void test_yield_aborts_when_saving_the_stack_fails(void **state)
{
	int first = 0;
	struct child_result r = run_in_child(yield_without_memory, &first);
	(void)state;
	assert_aborted_with_prefix(&r, "coroutine_yield: out of memory saving ");
}

/* Whichever of its allocations fails (the block; under ASan its shadow
 * too), a yield stops with its own name, until none is left to fail. */
static void test_yield_aborts_at_every_allocation_it_makes(void **state)
{
	int n;
	(void)state;
	for (n = 0; n < 10; n++) {
		struct child_result r = run_in_child(yield_without_memory, &n);
		if (WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0)
			break; /* it had all it asked for */
		assert_aborted_with_prefix(&r, "coroutine_yield: out of memory saving ");
	}
	assert_true(n > 0 && n < 10);
}

/* ---- coroutine_try_yield ------------------------------------------------ */

/* A kilobyte of its own, filled with a pattern its owner checks after each
 * attempt to yield: try_yield's -1 leaves it where it was, running. */
struct attempt {
	int result[2];   /* what the two attempts returned */
	int running[2];  /* coroutine_running, right after each */
	int intact;      /* the kilobyte still held its pattern at the end */
	int leaked;      /* blocks the first attempt left live */
	long size[2];    /* its saved size before the first attempt, and after */
};

static void try_holding_a_kilobyte(struct schedule *S, void *ud)
{
	struct attempt *a = (struct attempt *)ud;
	volatile char held[1024];
	int i, k;
	for (i = 0; i < (int)sizeof held; i++)
		held[i] = (char)(i * 7 + 1);
	for (k = 0; k < 2; k++) {
		int before = live;
		if (k == 0)
			a->size[0] = coroutine_stack_size(S, coroutine_running(S));
		a->result[k] = coroutine_try_yield(S);
		a->running[k] = coroutine_running(S);
		if (k == 0) {
			a->leaked = live - before;
			a->size[1] = coroutine_stack_size(S, coroutine_running(S));
		}
	}
	a->intact = 1;
	for (i = 0; i < (int)sizeof held; i++)
		a->intact = a->intact && held[i] == (char)(i * 7 + 1);
}

static void test_try_yield_returns_minus_one_and_runs_on_when_saving_fails(void **state)
{
	struct attempt a = { { 9, 9 }, { 9, 9 }, 0, 9, { 9, 9 } };
	struct schedule *S = coroutine_open();
	int id = coroutine_new(S, try_holding_a_kilobyte, &a);
	(void)state;
	fail_allocation_after(0); /* the first attempt's realloc fails */
	coroutine_resume(S, id);  /* the second attempt yields */
	fail_allocation_after(-1);
	assert_int_equal(a.result[0], -1);
	assert_int_equal(a.running[0], id);
	assert_int_equal(coroutine_status(S, id), COROUTINE_SUSPEND);
	assert_true(coroutine_stack_size(S, id) > 0);
	assert_int_equal(a.leaked, 0);
	coroutine_resume(S, id);
	assert_int_equal(a.result[1], 0);
	assert_int_equal(a.running[1], id);
	assert_true(a.intact);
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
	coroutine_close(S);
}

/* Whichever of its allocations fails (the block; under ASan its shadow
 * too), a try_yield returns -1 with nothing changed (its saved size, the
 * blocks live) and runs on, until none is left to fail; it never stops
 * the program. */
static void test_try_yield_fails_cleanly_at_every_allocation(void **state)
{
	int n;
	(void)state;
	for (n = 0; n < 10; n++) {
		struct attempt a = { { 9, 9 }, { 9, 9 }, 0, 9, { 9, 9 } };
		struct schedule *S = coroutine_open();
		int id = coroutine_new(S, try_holding_a_kilobyte, &a);
		fail_allocation_after(n);
		coroutine_resume(S, id);
		fail_allocation_after(-1);
		if (a.result[0] == 9) { /* not back from its first attempt: it yielded */
			coroutine_close(S);
			break;
		}
		assert_int_equal(a.result[0], -1);
		assert_int_equal(a.running[0], id);
		assert_int_equal(a.size[1], a.size[0]);
		assert_int_equal(a.leaked, 0);
		coroutine_resume(S, id); /* from its second attempt, which yielded, to its end */
		assert_int_equal(a.result[1], 0);
		assert_true(a.intact);
		assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
		coroutine_close(S);
	}
	assert_true(n > 0 && n < 10);
}

/* Another coroutine's failed attempt leaves a suspended one's saved stack
 * as it was: it comes back whole. */
static void test_failed_try_yield_leaves_the_others_whole(void **state)
{
	struct attempt first = { { 9, 9 }, { 9, 9 }, 0, 9, { 9, 9 } }, second = { { 9, 9 }, { 9, 9 }, 0, 9, { 9, 9 } };
	struct schedule *S = coroutine_open();
	int a = coroutine_new(S, try_holding_a_kilobyte, &first);
	int b = coroutine_new(S, try_holding_a_kilobyte, &second);
	(void)state;
	coroutine_resume(S, a); /* saved, with memory */
	fail_allocation_after(0);
	coroutine_resume(S, b); /* fails once, then yields */
	fail_allocation_after(-1);
	coroutine_resume(S, a);
	coroutine_resume(S, a);
	coroutine_resume(S, b);
	assert_int_equal(first.result[0], 0);
	assert_int_equal(second.result[0], -1);
	assert_true(first.intact && second.intact);
	coroutine_close(S);
}

/* ---- coroutine_clone ------------------------------------------------------ */

/* Keeps a value in each of HOLD_LEVELS frames down to its two yields, and
 * counts in held_wrong those changed when it comes back up (hold_seed is
 * read again, so each value is kept across the call).  No local's address
 * is taken: see test_clone.c. */
enum { HOLD_LEVELS = 40 };
static long hold_seed = 12345;
static int held_wrong;

static long hold_down(struct schedule *S, int level);
static long (*volatile hold_next)(struct schedule *, int) = hold_down;

static long hold_down(struct schedule *S, int level)
{
	long mine = hold_seed * level + 3, below = 0;
	if (level < HOLD_LEVELS) {
		below = hold_next(S, level + 1);
	} else {
		coroutine_yield(S);
		coroutine_yield(S);
	}
	held_wrong += mine != hold_seed * level + 3;
	return below + mine;
}

static void hold_values_and_yield_twice(struct schedule *S, void *ud)
{
	(void)ud;
	hold_down(S, 0);
}

#if defined(__SANITIZE_ADDRESS__)
#define ASAN_SHADOW 1 /* a copy's saved shadow: a block more */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN_SHADOW 1
#endif
#endif
#ifndef ASAN_SHADOW
#define ASAN_SHADOW 0
#endif

/*
 * A copy of a suspended coroutine into a free slot: its block, then (under
 * ASan) its saved shadow.  Whichever fails, -1, and nothing changed; then
 * the copy and its original go on, each to its own end, within their blocks.
 */
static void test_clone_fails_cleanly_at_every_allocation(void **state)
{
	int at_start = live;
	struct schedule *S = coroutine_open();
	int n, copy, failures = 0, before;
	(void)state;
	coroutine_resume(S, coroutine_new(S, hold_values_and_yield_twice, NULL));
	before = live;
	for (n = 0;; n++) {
		fail_allocation_after(n);
		copy = coroutine_clone(S, 0);
		fail_allocation_after(-1);
		if (copy != -1)
			break;
		failures++;
		assert_int_equal(live, before);
		assert_int_equal(coroutine_status(S, 1), COROUTINE_DEAD);
	}
	assert_int_equal(failures, 1 + ASAN_SHADOW);
	assert_int_equal(copy, 1);
	broken_fences = held_wrong = 0;
	resume_in_turns(S, copy, 0);
	assert_int_equal(held_wrong, 0);
	assert_int_equal(broken_fences, 0);
	coroutine_close(S);
	assert_int_equal(live, at_start);
}

/* A copy of a coroutine that never ran: one block, as coroutine_new's. */
static void test_clone_of_a_new_coroutine_returns_minus_one_when_malloc_fails(void **state)
{
	struct schedule *S = coroutine_open();
	int before;
	(void)state;
	coroutine_new(S, ignore, NULL);
	before = live;
	fail_allocation_after(0);
	assert_int_equal(coroutine_clone(S, 0), -1);
	fail_allocation_after(-1);
	assert_int_equal(live, before);
	assert_int_equal(coroutine_status(S, 1), COROUTINE_DEAD);
	assert_int_equal(coroutine_clone(S, 0), 1);
	coroutine_close(S);
}

/*
 * All 16 slots taken: the copy's block (and shadow), then the slot array
 * and the bitmaps that grow.  Whichever fails, -1, the schedule as it was
 * (16 slots, its coroutines suspended), and nothing leaked; then the copy
 * takes id 16, and every coroutine goes on to its end.
 */
static void test_clone_into_new_slots_fails_cleanly_at_every_allocation(void **state)
{
	int at_start = live;
	struct schedule *S = coroutine_open();
	struct child_result r;
	int id, n, copy, failures = 0, before;
	(void)state;
	for (id = 0; id < 16; id++)
		coroutine_resume(S, coroutine_new(S, hold_values_and_yield_twice, NULL));
	before = live;
	for (n = 0;; n++) {
		fail_allocation_after(n);
		copy = coroutine_clone(S, 5);
		fail_allocation_after(-1);
		if (copy != -1)
			break;
		failures++;
		assert_int_equal(live, before);
		r = run_in_child(status_of_16, S);
		assert_aborted_with(&r, "coroutine_status: id 16 is out of range [0, 16)");
		for (id = 0; id < 16; id++)
			assert_int_equal(coroutine_status(S, id), COROUTINE_SUSPEND);
	}
	assert_true(failures >= 3 + ASAN_SHADOW); /* the copy, the slot array, a bitmap at least */
	assert_int_equal(copy, 16);
	broken_fences = held_wrong = 0;
	resume_in_turns(S, copy, 5);
	for (id = 0; id < 16; id++)
		resume_in_turns(S, id, id);
	assert_int_equal(held_wrong, 0);
	assert_int_equal(broken_fences, 0);
	assert_int_equal(coroutine_next(S, -1), -1);
	coroutine_close(S);
	assert_int_equal(live, at_start);
}

/*
 * A copy's block is its own size, whatever its original's grew to: here
 * the original's grew (a yield a kilobyte deep), the copy is made at a
 * shallow yield, then yields a call deeper each time, its slices of a few
 * blocks saved by the quick path into the room its own block has.
 */
__attribute__((noinline)) static void yield_with_a_kilobyte(struct schedule *S)
{
	volatile char held[1024];
	escaped = held;
	coroutine_yield(S);
	held[0] = 1;
}

static void yield_calls_down(struct schedule *S, int calls);
static void (*volatile yield_deeper)(struct schedule *, int) = yield_calls_down;

static void yield_calls_down(struct schedule *S, int calls)
{
	if (calls > 0)
		yield_deeper(S, calls - 1);
	else
		coroutine_yield(S);
	yields_made++;
}

static void grow_then_yield_deeper_each_time(struct schedule *S, void *ud)
{
	int calls;
	(void)ud;
	yield_with_a_kilobyte(S);
	for (calls = 0; calls < 4; calls++)
		yield_calls_down(S, calls);
}

static void test_copy_of_a_grown_coroutine_saves_within_its_own_block(void **state)
{
	struct schedule *S = coroutine_open();
	int original = coroutine_new(S, grow_then_yield_deeper_each_time, NULL), copy;
	(void)state;
	coroutine_resume(S, original); /* a kilobyte deep */
	coroutine_resume(S, original); /* a few blocks */
	copy = coroutine_clone(S, original);
	broken_fences = 0;
	resume_in_turns(S, copy, original);
	coroutine_close(S);
	assert_int_equal(broken_fences, 0);
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

/* ---- coroutine_delete ----------------------------------------------------- */

/* Built with -fexceptions (see mk/test.mk): the unwinder runs this cleanup. */
static int cleanups_run;

static void count_cleanup(int *unused)
{
	(void)unused;
	cleanups_run++;
}

static void yield_with_a_cleanup(struct schedule *S, void *ud)
{
	int held __attribute__((cleanup(count_cleanup))) = 0;
	(void)ud;
	coroutine_yield(S);
	held = 1;
}

/* A delete, suspended or never started, asks for no memory (the next
 * allocation would fail): it cannot fail for want of it.  The schedule is
 * whole after: the other coroutine runs on, ids follow the rule, and
 * close gives everything back. */
static void test_delete_needs_no_memory_and_leaves_the_schedule_whole(void **state)
{
	int at_start = live, before;
	struct schedule *S = coroutine_open();
	int waiting, other, never;
	(void)state;
	waiting = coroutine_new(S, yield_with_a_cleanup, NULL);
	other = coroutine_new(S, yield_once, NULL);
	never = coroutine_new(S, yield_with_a_cleanup, NULL);
	coroutine_resume(S, waiting);
	coroutine_resume(S, other);
	before = live;
	cleanups_run = 0;
	fail_allocation_after(0);
	coroutine_delete(S, waiting);
	coroutine_delete(S, never);
	assert_int_equal(allocations_before_failure, 0); /* nothing was asked for */
	fail_allocation_after(-1);
	assert_int_equal(cleanups_run, 1);
	assert_true(live <= before - 2); /* their blocks (and ASan's shadow) */
	coroutine_resume(S, other);
	assert_int_equal(coroutine_status(S, other), COROUTINE_DEAD);
	assert_int_equal(coroutine_new(S, ignore, NULL), 0);
	broken_fences = 0;
	coroutine_close(S);
	assert_int_equal(broken_fences, 0);
	assert_int_equal(live, at_start);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_fails_cleanly_at_every_allocation),
		cmocka_unit_test(test_new_returns_minus_one_when_calloc_fails),
		cmocka_unit_test(test_growth_fails_cleanly_at_every_allocation),
		cmocka_unit_test(test_failed_new_leaves_the_id_rule_intact),
		cmocka_unit_test(test_yield_aborts_when_saving_the_stack_fails),
		cmocka_unit_test(test_yield_aborts_at_every_allocation_it_makes),
		cmocka_unit_test(test_try_yield_returns_minus_one_and_runs_on_when_saving_fails),
		cmocka_unit_test(test_try_yield_fails_cleanly_at_every_allocation),
		cmocka_unit_test(test_failed_try_yield_leaves_the_others_whole),
		cmocka_unit_test(test_every_yield_saves_within_its_buffer),
		cmocka_unit_test(test_shallow_slices_come_back_whole),
		cmocka_unit_test(test_clone_fails_cleanly_at_every_allocation),
		cmocka_unit_test(test_clone_of_a_new_coroutine_returns_minus_one_when_malloc_fails),
		cmocka_unit_test(test_clone_into_new_slots_fails_cleanly_at_every_allocation),
		cmocka_unit_test(test_copy_of_a_grown_coroutine_saves_within_its_own_block),
		cmocka_unit_test(test_close_frees_every_coroutine),
		cmocka_unit_test(test_delete_needs_no_memory_and_leaves_the_schedule_whole),
	};
	return run_suite(tests);
}
