/*
 * test_frames.c - while a coroutine runs, its outermost frame leads on to
 * the frames of whoever resumed it this time: a backtrace taken inside it
 * (backtrace(3), which reads the unwind tables) and a walk of the frame
 * pointers (what a profiler's call graph does) go on from the coroutine's
 * start into the function that called coroutine_resume, and up to main.
 * A resume from elsewhere leads there; a copy leads to whoever resumes the
 * copy; a coroutine resumed by a coroutine of another schedule leads
 * through that one's frames.  While a coroutine waits, the frames in its
 * slice lead nowhere into main's stack.
 *
 * Where the build has no link (see LINKED), the chain ends at the
 * coroutine's start, and that is checked instead.  The names come from
 * dladdr: the program exports its functions (-rdynamic), which therefore
 * are not static; it is built with frame pointers (see mk/test.mk).
 */
#define _GNU_SOURCE /* pthread_getattr_np, dladdr */
#include "support.h"
#include "resumers.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdint.h>

/* Where a frame record keeps the caller's frame pointer and the return
 * address, from the frame pointer; none on armv7 (Thumb code's r7 points
 * below the locals, not at a record). */
#if defined(__x86_64__) || defined(__aarch64__)
#define NEXT_AT 0
#define RETURN_AT 8
#elif defined(__i386__)
#define NEXT_AT 0
#define RETURN_AT 4
#elif defined(__riscv)
#define NEXT_AT (-16)
#define RETURN_AT (-8)
#endif

#define MAX_FRAMES 64

/* The functions of a chain of return addresses, innermost first. */
struct trail {
	int n;
	const char *name[MAX_FRAMES]; /* "?" where dladdr finds none */
};

/* The function a return address returns into: pc - 1 is in the call. */
static const char *name_of(void *pc)
{
	Dl_info info;
	return dladdr((char *)pc - 1, &info) && info.dli_sname != NULL ? info.dli_sname : "?";
}

static void name_frames(void *const *pcs, int n, struct trail *t)
{
	t->n = 0;
	for (int i = 0; i < n && i < MAX_FRAMES; i++)
		t->name[t->n++] = name_of(pcs[i]);
}

/* Where name first appears in t from frame from on, or -1. */
static int find(const struct trail *t, const char *name, int from)
{
	for (int i = from; i < t->n; i++)
		if (strcmp(t->name[i], name) == 0)
			return i;
	return -1;
}

/* Whether t holds the names, in that order (innermost first), NULL-ended. */
static int in_order(const struct trail *t, ...)
{
	va_list ap;
	const char *name;
	int at = 0;
	va_start(ap, t);
	while ((name = va_arg(ap, const char *)) != NULL && at >= 0) {
		at = find(t, name, at);
		if (at >= 0)
			at++;
	}
	va_end(ap);
	return at >= 0;
}

/* ---- backtrace(3) ------------------------------------------------------- */

/* What each call of record_backtrace saw. */
static struct trail seen[4];
static int times_seen;

__attribute__((noinline)) void record_backtrace(void)
{
	void *pcs[MAX_FRAMES];
	int n = backtrace(pcs, MAX_FRAMES);
	name_frames(pcs, n, &seen[times_seen++ % 4]);
}

/* How a coroutine looks at its frames: record_backtrace, or (below)
 * walk_from_here. */
struct look {
	void (*at)(void);
};
static const struct look by_backtrace = { record_backtrace };

/* Looks at its frames at each resume, three times. */
void looking_coroutine(struct schedule *S, void *ud)
{
	const struct look *look = (const struct look *)ud;
	for (int i = 0; i < 3; i++) {
		look->at();
		coroutine_yield(S);
	}
}

static void test_backtrace_in_a_coroutine_goes_on_into_its_resumer(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	times_seen = 0;
	resume_from_a(S, coroutine_new(S, looking_coroutine, (void *)&by_backtrace));
	assert_int_equal(times_seen, 1);
	assert_true(in_order(&seen[0], "record_backtrace", "looking_coroutine", (char *)NULL));
#if LINKED
	assert_true(in_order(&seen[0], "looking_coroutine", "resume_from_a", "main", (char *)NULL));
#else
	assert_int_equal(find(&seen[0], "resume_from_a", 0), -1);
#endif
}

/* Three resumes: from a, from b deeper, from a again.  Exported, as the
 * test functions are not: where a walk of the frame pointers stops. */
__attribute__((noinline)) void resume_three_times(struct schedule *S, int id)
{
	resume_from_a(S, id);
	resume_from_deeper(S, id);
	resume_from_a(S, id);
	resumes++;
}

static void test_backtrace_follows_each_resume_to_its_resumer(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	times_seen = 0;
	resume_three_times(S, coroutine_new(S, looking_coroutine, (void *)&by_backtrace));
	assert_int_equal(times_seen, 3);
#if LINKED
	assert_true(in_order(&seen[1], "looking_coroutine", "resume_from_b", "resume_from_deeper", "main",
			     (char *)NULL));
	assert_int_equal(find(&seen[1], "resume_from_a", 0), -1);
	assert_true(in_order(&seen[2], "looking_coroutine", "resume_from_a", "main", (char *)NULL));
	assert_int_equal(find(&seen[2], "resume_from_b", 0), -1);
#else
	for (int i = 0; i < 3; i++)
		assert_int_equal(find(&seen[i], "test_backtrace_follows_each_resume_to_its_resumer", 0), -1);
#endif
}

/* A copy waits where its original waits, and leads to whoever resumes it. */
static void test_a_clone_goes_on_into_whoever_resumes_it(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int id = coroutine_new(S, looking_coroutine, (void *)&by_backtrace);
	times_seen = 0;
	resume_from_a(S, id);
	int copy = coroutine_clone(S, id);
	assert_true(copy >= 0);
	resume_from_deeper(S, copy);
	resume_from_a(S, id);
	assert_int_equal(times_seen, 3);
#if LINKED
	assert_true(in_order(&seen[1], "looking_coroutine", "resume_from_b", "resume_from_deeper", "main",
			     (char *)NULL));
	assert_true(in_order(&seen[2], "looking_coroutine", "resume_from_a", "main", (char *)NULL));
	assert_int_equal(find(&seen[2], "resume_from_deeper", 0), -1);
#endif
}

/* A coroutine of one schedule resumes a coroutine of another: the inner
 * one's frames lead through the outer one's, then to main. */
void outer_coroutine(struct schedule *S, void *inner)
{
	(void)S;
	struct schedule *I = (struct schedule *)inner;
	resume_from_b(I, coroutine_new(I, looking_coroutine, (void *)&by_backtrace));
	coroutine_yield(S);
}

static void test_a_coroutine_resumed_by_another_schedules_goes_on_through_it(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	struct schedule *inner = coroutine_open();
	times_seen = 0;
	resume_from_a(S, coroutine_new(S, outer_coroutine, inner));
	assert_int_equal(times_seen, 1);
#if LINKED
	assert_true(in_order(&seen[0], "looking_coroutine", "resume_from_b", "outer_coroutine", "resume_from_a",
			     "main", (char *)NULL));
#endif
	coroutine_close(inner);
}

/* ---- Frame pointers, as a profiler walks them ---------------------------- */

#if defined(NEXT_AT)
/* A word of memory, or 0 where there is none: read by the kernel (into a
 * pipe and back), as a profiler reads a sampled program's stack, so that a
 * chain that leads astray fails the test rather than the program. */
static int words[2] = { -1, -1 };

static int read_word(uintptr_t at, uintptr_t *word)
{
	if (words[0] < 0 && pipe(words) != 0)
		return 0;
	if (write(words[1], (const void *)at, sizeof *word) != (ssize_t)sizeof *word)
		return 0;
	return read(words[0], word, sizeof *word) == (ssize_t)sizeof *word;
}

/* The return addresses of the frame records from fp on, innermost first,
 * up to the first in function last (included), at most MAX_FRAMES. */
static void walk_frame_pointers(uintptr_t fp, const char *last, struct trail *t)
{
	void *pcs[MAX_FRAMES];
	int n = 0;
	uintptr_t ret;
	while (n < MAX_FRAMES && fp != 0 && read_word(fp + RETURN_AT, &ret)) {
		pcs[n++] = (void *)ret;
		if (strcmp(name_of((void *)ret), last) == 0 || !read_word(fp + NEXT_AT, &fp))
			break;
	}
	name_frames(pcs, n, t);
}

/* Not at the first resume (see below), where the chain may lead through the
 * library's start into any memory: valgrind would see the walk read it. */
__attribute__((noinline)) void walk_from_here(void)
{
	if (times_seen == 0) {
		times_seen++;
		return;
	}
	walk_frame_pointers((uintptr_t)__builtin_frame_address(0), "resume_three_times", &seen[times_seen++ % 4]);
}

static const struct look by_frame_pointers = { walk_from_here };

/*
 * Not the first resume: a coroutine's first frame-pointer chain may pass
 * through the library's start (with ucontext), whose frame pointer is the
 * library's to use unless it is built with frame pointers.  The same holds
 * of coroutine_resume where it calls the switch rather than jumps to it
 * (i386): there the walk ends in coroutine_resume, the link's return
 * address, and the resumer's frames are out of a walker's reach.
 */
static void test_frame_pointers_go_on_into_each_resumer(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	times_seen = 0;
	resume_three_times(S, coroutine_new(S, looking_coroutine, (void *)&by_frame_pointers));
	assert_int_equal(times_seen, 3);
	assert_true(in_order(&seen[1], "looking_coroutine", (char *)NULL));
#if LINKED
	if (find(&seen[1], "resume_from_b", 0) < 0 && find(&seen[1], "coroutine_resume", 0) >= 0)
		return; /* called, not jumped to, with no frame pointer: see above */
	assert_true(in_order(&seen[1], "looking_coroutine", "resume_from_b", "resume_from_deeper", "resume_three_times",
			     (char *)NULL));
	assert_true(in_order(&seen[2], "looking_coroutine", "resume_from_a", "resume_three_times", (char *)NULL));
	assert_int_equal(find(&seen[2], "resume_from_b", 0), -1);
#else
	assert_int_equal(find(&seen[1], "resume_from_b", 0), -1);
#endif
}

/* ---- While a coroutine waits ---------------------------------------------- */

/* The frame pointer of the coroutine's deepest frame of its own, noted
 * just before it yields. */
static uintptr_t waiting_fp;

__attribute__((noinline)) void note_and_yield(struct schedule *S)
{
	waiting_fp = (uintptr_t)__builtin_frame_address(0);
	coroutine_yield(S);
	resumes++;
}

void waiting_coroutine(struct schedule *S, void *ud)
{
	(void)ud;
	note_and_yield(S);
}

#if !COROUTINE_CHECKED /* the test below reads the run stack from main */
/* Whether a lies in the calling thread's stack. */
static int on_this_threads_stack(uintptr_t a)
{
	pthread_attr_t attr;
	void *low;
	size_t size;
	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return 0;
	int got = pthread_attr_getstack(&attr, &low, &size) == 0;
	pthread_attr_destroy(&attr);
	return got && a >= (uintptr_t)low && a - (uintptr_t)low < size;
}
#endif

/*
 * The slice of a waiting coroutine is [top - size, top), its deepest frame
 * of its own at the bottom: the chain of frame records from there runs up
 * through the slice, then leaves it.  Where it leaves, it must not lead
 * into main's stack, which main has changed since: a profiler or a
 * debugger that followed it would show a resumer long gone.  (Read from
 * main, which the checked build forbids.)
 */
static void test_a_waiting_coroutines_frames_lead_nowhere_into_mains_stack(void **state)
{
#if COROUTINE_CHECKED
	(void)state;
	skip();
#else
	struct schedule *S = (struct schedule *)*state;
	int id = coroutine_new(S, waiting_coroutine, NULL);
	resume_from_a(S, id);
	uintptr_t size = (uintptr_t)coroutine_stack_size(S, id), fp = waiting_fp, next;
	assert_true(fp != 0);
	/* Up through the slice: each record above the last, within size bytes. */
	while (read_word(fp + NEXT_AT, &next) && next > fp && next - waiting_fp < size)
		fp = next;
	assert_true(next != 0 || !LINKED);
	assert_false(on_this_threads_stack(next));
	coroutine_resume(S, id);
#endif
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		schedule_test(test_backtrace_in_a_coroutine_goes_on_into_its_resumer),
		schedule_test(test_backtrace_follows_each_resume_to_its_resumer),
		schedule_test(test_a_clone_goes_on_into_whoever_resumes_it),
		schedule_test(test_a_coroutine_resumed_by_another_schedules_goes_on_through_it),
#if defined(NEXT_AT)
		schedule_test(test_frame_pointers_go_on_into_each_resumer),
		schedule_test(test_a_waiting_coroutines_frames_lead_nowhere_into_mains_stack),
#endif
	};
	return run_suite(tests);
}
