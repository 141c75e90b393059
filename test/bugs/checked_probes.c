/*
 * checked_probes.c - the checked build (COROUTINE_CHECKED=1) probed from
 * main, from other threads and from coroutines: whose bytes its line names
 * for each address of a run stack, and how each fault then reaches the
 * program's own SIGSEGV handler, as the kernel would have sent it there
 * without the check.  POSIX only (make check-checked-bugs).
 *
 * The program's handler is installed before the first coroutine_open, as a
 * program that probes memory installs it, and goes back to the probe by
 * longjmp; the checked build's line is read back from a pipe that stderr
 * points at during the probe.  A line per check (plain.h), each named for
 * what it holds; an alarm ends a check that hangs (a lock never given back).
 */
#define _GNU_SOURCE /* SYS_gettid */
#include "checked_windows.h"
#include "coroutine.h"
#include "guard_frames.h"
#include "plain.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

/* The room above the run stack's top that the ucontext backend keeps on
 * x86 with glibc (TOP_ROOM in coroutine.cpp). */
#if !defined(COROUTINE_ASM) && defined(__GLIBC__) && (defined(__x86_64__) || defined(__i386__))
#define ROOM_ABOVE_TOP 1
#else
#define ROOM_ABOVE_TOP 0
#endif

/* ---- The program's handler, and probes -------------------------------------- */

static sigjmp_buf back;      /* where the probe goes on after a fault */
static int restore_mask;     /* whether going back restores the mask (siglongjmp) */
static int return_from_handler; /* 1: it returns instead (a signal that was sent) */
static volatile sig_atomic_t handled; /* signals the program's handler took */
static sigset_t mask_in_handler;
static void *volatile fault_address;
static char *volatile local_in_handler; /* where its frame was */

/* p, which the compiler can no longer tell is a local's address. */
static char *launder(char *p)
{
	__asm__("" : "+r"(p));
	return p;
}

static void program_handler(int sig)
{
	char here;
	(void)sig;
	handled++;
	sigprocmask(SIG_BLOCK, NULL, &mask_in_handler);
	local_in_handler = launder(&here);
	if (!return_from_handler)
		siglongjmp(back, 1);
}

static void program_siginfo_handler(int sig, siginfo_t *info, void *context)
{
	(void)context;
	fault_address = info->si_addr;
	program_handler(sig);
}

/* The program's handler, with flags and a mask (NULL: none). */
static void install_program_handler(int flags, const sigset_t *mask)
{
	struct sigaction a;
	memset(&a, 0, sizeof a);
	if (flags & SA_SIGINFO)
		a.sa_sigaction = program_siginfo_handler;
	else
		a.sa_handler = program_handler;
	a.sa_flags = flags;
	if (mask != NULL)
		a.sa_mask = *mask;
	else
		sigemptyset(&a.sa_mask);
	sigaction(SIGSEGV, &a, NULL);
	restore_mask = 0;
	return_from_handler = 0;
}

static void install_action(void (*action)(int))
{
	struct sigaction a;
	memset(&a, 0, sizeof a);
	a.sa_handler = action;
	sigemptyset(&a.sa_mask);
	sigaction(SIGSEGV, &a, NULL);
}

/* What was written on stderr during the last probe.  Where the CPU or the
 * emulator does not tell a read from a write (qemu-user), the line says
 * "touched": taken as "read" here, as every probe reads. */
static char said[8192];

static void read_all(int fd)
{
	size_t n = 0;
	ssize_t got;
	char *touched;
	while (n < sizeof said - 1 && (got = read(fd, said + n, sizeof said - 1 - n)) > 0)
		n += (size_t)got;
	said[n] = '\0';
	while ((touched = strstr(said, " touched ")) != NULL)
		memmove(touched + 5, touched + 8, strlen(touched + 8) + 1), memcpy(touched, " read", 5);
}

/* Reads *p, with stderr pointed at a pipe: 1 if the read faulted (and the
 * program's handler came back here), 0 if it read. */
static int probe(const volatile char *p)
{
	int fds[2], saved = dup(2);
	volatile int faulted = 0;
	if (saved < 0 || pipe(fds) != 0)
		return -1;
	dup2(fds[1], 2);
	close(fds[1]);
	if (sigsetjmp(back, restore_mask) == 0)
		(void)*p;
	else
		faulted = 1;
	dup2(saved, 2);
	close(saved);
	read_all(fds[0]);
	close(fds[0]);
	return faulted;
}

/* A page that faults at any touch, that the checked build does not know. */
static char *forbidden_page(void)
{
	static char *page;
	if (page == NULL)
		page = (char *)mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return page;
}

/* What went wrong, for report(): the checked build's line as read. */
static char why[sizeof said + 256];

static const char *wrong(const char *what)
{
	snprintf(why, sizeof why, "%s; stderr said: \"%s\"", what, said);
	return why;
}

/* Whether said holds text, with the schedule's address after "schedule ". */
static int said_has(const char *text)
{
	return strstr(said, text) != NULL;
}

static int said_names_schedule(const struct schedule *S)
{
	char name[64];
	snprintf(name, sizeof name, "schedule 0x%llx)", (unsigned long long)(uintptr_t)S);
	return said_has(name);
}

static int said_lines(void)
{
	int n = 0;
	for (const char *c = said; *c != '\0'; c++)
		n += *c == '\n';
	return n;
}

/* ---- Coroutines that hand out a local ---------------------------------------- */

/* Hands out the address of its local and yields there; if deep, below a
 * frame of 512 bytes; and once more at its start, if yield_first. */
struct handout {
	volatile char *local;
	int deep;
	int yield_first;
};

__attribute__((noinline)) static void hand_out_here(struct schedule *S, struct handout *h)
{
	volatile char local[16];
	local[0] = 1;
	h->local = local;
	coroutine_yield(S);
	local[1] = local[0]; /* no tail call: this frame stays as it was */
}

/* Where a frame's address escapes to: the compiler must keep all of it. */
static volatile char *volatile frame_seen;

__attribute__((noinline)) static void hand_out_below_a_frame(struct schedule *S, struct handout *h)
{
	volatile char frame[512];
	frame[0] = 1;
	frame_seen = frame;
	hand_out_here(S, h);
	frame[1] = frame[0];
}

static void hand_out(struct schedule *S, void *ud)
{
	struct handout *h = (struct handout *)ud;
	if (h->yield_first)
		coroutine_yield(S);
	if (h->deep)
		hand_out_below_a_frame(S, h);
	else
		hand_out_here(S, h);
}

/* Coroutine 0 hands out a local below a frame; the second runs after it,
 * and yields at its top: its slice is smaller.  The second is coroutine 1,
 * in a window of its own, or (open_two_in_one_window) coroutine
 * CHECKED_WINDOWS, in coroutine 0's, the ones between never run.  The top
 * of coroutine 0's window, as the line about its local tells it (NULL: it
 * did not). */
struct two {
	struct schedule *S;
	int second; /* its id */
	struct handout h[2];
	size_t size[2];
	char *top;
};

static const char *open_two_as(struct two *t, int second)
{
	static const char *const first = "main read coroutine 0's stack (top-";
	static struct handout never_run;
	memset(t, 0, sizeof *t);
	t->h[0].deep = 1;
	t->second = second;
	t->S = coroutine_open();
	coroutine_new(t->S, hand_out, &t->h[0]);
	for (int id = 1; id < second; id++)
		coroutine_new(t->S, hand_out, &never_run);
	coroutine_new(t->S, hand_out, &t->h[1]);
	coroutine_resume(t->S, 0);
	coroutine_resume(t->S, second);
	t->size[0] = (size_t)coroutine_stack_size(t->S, 0);
	t->size[1] = (size_t)coroutine_stack_size(t->S, second);
	if (t->size[1] >= t->size[0])
		return "the second's slice is not smaller than coroutine 0's";
	if (probe(t->h[0].local) != 1)
		return wrong("main's read of coroutine 0's local did not fault");
	const char *at = strstr(said, first);
	if (at == NULL || !said_has("while coroutine 0 is suspended") || !said_names_schedule(t->S))
		return wrong("main's read of coroutine 0's local, coroutine 1 having run after it, "
			     "named another than coroutine 0");
	t->top = (char *)t->h[0].local + strtoul(at + strlen(first), NULL, 10);
	return NULL;
}

static const char *open_two(struct two *t)
{
	return open_two_as(t, 1);
}

static const char *open_two_in_one_window(struct two *t)
{
	return open_two_as(t, CHECKED_WINDOWS);
}

static void close_two(struct two *t)
{
	coroutine_close(t->S);
}

/* said is "WHO read ... (top-N": offset, with N below the top. */
static int said_offset(const char *before, size_t below_top)
{
	char text[256];
	snprintf(text, sizeof text, "%s (top-%zu, ", before, below_top);
	return said_has(text);
}

/* ---- Whose bytes the line names ------------------------------------------------ */

static const char *main_read_names_the_coroutine_whose_slice_covers_it(void)
{
	struct two t;
	const char *wrong_here = open_two(&t);
	close_two(&t);
	return wrong_here;
}

static const char *the_lowest_byte_of_a_slice_is_its_coroutines(void)
{
	struct two t;
	const char *w = open_two(&t);
	if (w == NULL && (probe(t.top - t.size[0]) != 1 || !said_offset("main read coroutine 0's stack", t.size[0])
			  || said_lines() != 1))
		w = wrong("the lowest byte of coroutine 0's slice was not named coroutine 0's");
	close_two(&t);
	return w;
}

static const char *a_byte_below_every_slice_names_the_last_to_run_and_says_so(void)
{
	struct two t;
	char ran_last[128];
	const char *w = open_two_in_one_window(&t);
	snprintf(ran_last, sizeof ran_last, ") below every suspended coroutine's slice, where coroutine %d ran last: ",
		 t.second);
	if (w == NULL && (probe(t.top - t.size[0] - 1) != 1 || !said_offset("main read the run stack", t.size[0] + 1)
			  || !said_has(ran_last)))
		w = wrong("a byte below every slice of a window was not said to be below them, "
			  "where the second ran last");
	close_two(&t);
	return w;
}

static const char *a_byte_that_two_slices_of_a_window_reach_names_both(void)
{
	struct two t;
	char both[128];
	const char *w = open_two_in_one_window(&t);
	snprintf(both, sizeof both, "main read the stack of coroutine 0 or %d", t.second);
	if (w == NULL && (probe(t.top - t.size[1]) != 1 || !said_offset(both, t.size[1])
			  || !said_has(") while they are suspended: ") || !said_has("the saved slices of all 2 reach there")))
		w = wrong("the lowest byte of the second's slice, which coroutine 0's reaches too, did not name both");
	close_two(&t);
	return w;
}

/* Coroutine 1 runs in a window of its own: as deep under coroutine 0's top,
 * the byte is coroutine 0's alone. */
static const char *a_byte_of_one_window_names_none_of_anothers(void)
{
	struct two t;
	const char *w = open_two(&t);
	if (w == NULL && (probe(t.top - t.size[1]) != 1 || !said_offset("main read coroutine 0's stack", t.size[1])
			  || !said_has("while coroutine 0 is suspended")))
		w = wrong("a byte of coroutine 0's window, as deep as coroutine 1's slice reaches in its own, "
			  "was not coroutine 0's alone");
	close_two(&t);
	return w;
}

#if ROOM_ABOVE_TOP
static const char *a_touch_of_the_room_above_the_top_is_reported(void)
{
	struct two t;
	const char *w = open_two(&t);
	if (w == NULL && (probe(t.top + 8) != 1 || !said_has("main read the run stack's room above its top (top+8, ")
			  || !said_names_schedule(t.S)))
		w = wrong("a read 8 bytes above the run stack's top was not reported");
	close_two(&t);
	return w;
}
#endif

/* A copy of a suspended coroutine waits where its original waits, in its
 * window: a local of one is at the same address in the other. */
static const char *a_clone_waits_in_its_originals_window(void)
{
	struct two t;
	char both[128];
	const char *w = open_two(&t);
	int copy = w == NULL ? coroutine_clone(t.S, 1) : -1;
	snprintf(both, sizeof both, "main read the stack of coroutine 1 or %d (top-", copy);
	if (w == NULL && (copy < 0 || probe(t.h[1].local) != 1 || !said_has(both)
			  || !said_has("the saved slices of all 2 reach there")))
		w = wrong("coroutine 1's local was not said to be its copy's too");
	close_two(&t);
	return w;
}

/* An engine: a thousand entities, each waiting as deep as the others, the
 * slices of all those of a window reaching the local of each. */
enum { ENTITIES = 1000 };

static const char *a_thousand_slices_that_reach_a_byte_make_one_line(void)
{
	static struct handout h[ENTITIES];
	struct schedule *S = coroutine_open();
	const char *w = NULL;
	char ids[128], named[256], all[64];
	int i;
	for (i = 0; i < ENTITIES; i++) {
		h[i].deep = 1;
		coroutine_resume(S, coroutine_new(S, hand_out, &h[i]));
	}
	snprintf(all, sizeof all, "the saved slices of all %d reach there",
		 ids_sharing_window(ids, sizeof ids, ENTITIES, ENTITIES / 2));
	snprintf(named, sizeof named, "main read the stack of coroutine %s (top-", ids);
	if (probe(h[ENTITIES / 2].local) != 1 || said_lines() != 1 || !said_has(named) || !said_has(all))
		w = wrong("one entity's local, which the slice of every entity of its window reaches, "
			  "was not one line naming a few");
	coroutine_close(S);
	return w;
}

/* ---- Who touched ------------------------------------------------------------------ */

struct reader {
	volatile char *local;
	int use_the_library_first; /* its own schedule, opened and closed */
	int faulted;
	unsigned long id; /* the system's number for it, 0 if unknown */
};

static void *read_on_this_thread(void *arg)
{
	struct reader *r = (struct reader *)arg;
	if (r->use_the_library_first)
		coroutine_close(coroutine_open());
#if defined(__linux__)
	r->id = (unsigned long)syscall(SYS_gettid);
#endif
	r->faulted = probe(r->local);
	return NULL;
}

static void read_on_another_thread(struct reader *r)
{
	pthread_t thread;
	pthread_create(&thread, NULL, read_on_this_thread, r);
	pthread_join(thread, NULL);
}

static const char *said_another_thread(const struct reader *r)
{
	char text[128];
	if (r->id != 0)
		snprintf(text, sizeof text, "another thread (id %lu) read coroutine 0's stack (top-", r->id);
	else
		snprintf(text, sizeof text, "another thread (id ");
	if (r->faulted != 1 || strncmp(said, text, strlen(text)) != 0)
		return wrong("another thread's read was not named as another thread's");
	return NULL;
}

static const char *another_threads_read_is_named_as_another_threads(void)
{
	struct two t;
	struct reader r = { NULL, 0, 0, 0 };
	const char *w = open_two(&t);
	if (w == NULL) {
		r.local = t.h[0].local;
		read_on_another_thread(&r);
		w = said_another_thread(&r);
	}
	close_two(&t);
	return w;
}

/* The reader thread is started by a coroutine of another schedule, which
 * runs on main's thread meanwhile. */
struct from_a_coroutine {
	volatile char *local;
	int faulted;
};

static void start_reader(struct schedule *T, void *ud)
{
	(void)T;
	read_on_another_thread((struct reader *)ud);
}

static const char *a_thread_that_used_the_library_is_not_named_for_mains_coroutine(void)
{
	struct two t;
	struct reader r = { NULL, 1, 0, 0 };
	const char *w = open_two(&t);
	if (w == NULL) {
		struct schedule *T = coroutine_open();
		r.local = t.h[0].local;
		coroutine_resume(T, coroutine_new(T, start_reader, &r));
		coroutine_close(T);
		w = said_another_thread(&r);
	}
	close_two(&t);
	return w;
}

static void read_in_coroutine(struct schedule *T, void *ud)
{
	struct from_a_coroutine *c = (struct from_a_coroutine *)ud;
	(void)T;
	c->faulted = probe(c->local);
}

static const char *a_coroutine_of_another_schedule_is_named_with_its_schedule(void)
{
	struct two t;
	const char *w = open_two(&t);
	if (w == NULL) {
		struct schedule *T = coroutine_open();
		struct from_a_coroutine c = { t.h[0].local, 0 };
		char text[128];
		coroutine_resume(T, coroutine_new(T, read_in_coroutine, &c));
		snprintf(text, sizeof text, "coroutine 0 (schedule 0x%llx) read coroutine 0's stack (top-",
			 (unsigned long long)(uintptr_t)T);
		if (c.faulted != 1 || strncmp(said, text, strlen(text)) != 0)
			w = wrong("a coroutine of another schedule was not named with its schedule");
		coroutine_close(T);
	}
	close_two(&t);
	return w;
}

/* ---- The program's handler, called as the kernel would call it -------------- */

/* Probes the forbidden page n times, then coroutine 0's local n times:
 * each faults, and only the second kind is reported. */
static const char *probe_again_and_again(int n)
{
	struct two t;
	const char *w = open_two(&t);
	int i;
	for (i = 0; i < n && w == NULL; i++)
		if (probe(forbidden_page() + i) != 1 || said[0] != '\0')
			w = wrong("a probe of a page that is not a run stack's did not fault, or was reported");
	for (i = 0; i < n && w == NULL; i++)
		if (probe(t.h[0].local) != 1 || !said_has("main read coroutine 0's stack (top-"))
			w = wrong("a probe of coroutine 0's local did not fault, or was not reported");
	close_two(&t);
	return w;
}

static const char *a_nodefer_handler_that_leaves_by_longjmp_probes_again_and_again(void)
{
	install_program_handler(SA_NODEFER, NULL);
	return probe_again_and_again(5);
}

static const char *a_handler_that_leaves_by_siglongjmp_probes_again_and_again(void)
{
	install_program_handler(0, NULL);
	restore_mask = 1;
	return probe_again_and_again(5);
}

/* The mask while the program's handler runs, as the kernel makes it: the
 * mask at the fault, its sa_mask, and SIGSEGV unless SA_NODEFER. */
static const char *handler_mask(int flags, int segv_in_sa_mask)
{
	sigset_t sa_mask, at_fault, before;
	const char *w = NULL;
	struct two t;
	sigemptyset(&sa_mask);
	sigaddset(&sa_mask, SIGUSR1);
	if (segv_in_sa_mask)
		sigaddset(&sa_mask, SIGSEGV);
	sigemptyset(&at_fault);
	sigaddset(&at_fault, SIGUSR2);
	install_program_handler(flags, &sa_mask);
	restore_mask = 1; /* the probe goes on with the mask it had */
	w = open_two(&t);
	sigprocmask(SIG_BLOCK, &at_fault, &before);
	if (w == NULL && probe(t.h[0].local) != 1)
		w = wrong("the probe did not fault");
	sigprocmask(SIG_SETMASK, &before, NULL);
	if (w == NULL && (!sigismember(&mask_in_handler, SIGUSR1) || !sigismember(&mask_in_handler, SIGUSR2)
			  || sigismember(&mask_in_handler, SIGHUP)))
		w = "the handler's mask was not the mask at the fault and its sa_mask";
	if (w == NULL && sigismember(&mask_in_handler, SIGSEGV) != (!(flags & SA_NODEFER) || segv_in_sa_mask))
		w = "SIGSEGV was blocked in the handler where the kernel would not block it, or the other way";
	close_two(&t);
	install_program_handler(SA_NODEFER, NULL);
	return w;
}

static const char *the_handler_runs_with_its_sa_mask_and_the_signal_blocked(void)
{
	return handler_mask(0, 0);
}

static const char *an_sa_nodefer_handler_runs_with_the_signal_unblocked(void)
{
	return handler_mask(SA_NODEFER, 0);
}

static const char *an_sa_nodefer_handler_whose_sa_mask_has_the_signal_runs_with_it_blocked(void)
{
	return handler_mask(SA_NODEFER, 1);
}

static const char *an_sa_siginfo_handler_gets_the_faulting_address(void)
{
	struct two t;
	const char *w;
	install_program_handler(SA_SIGINFO | SA_NODEFER, NULL);
	w = open_two(&t);
	if (w == NULL && (probe(forbidden_page() + 5) != 1 || fault_address != forbidden_page() + 5))
		w = "the handler did not get the forbidden page's address";
	if (w == NULL && (probe(t.h[0].local) != 1 || fault_address != (void *)t.h[0].local))
		w = "the handler did not get the local's address";
	close_two(&t);
	install_program_handler(SA_NODEFER, NULL);
	return w;
}

/* SA_RESETHAND: the program's handler is called at the first fault only,
 * and the default action is the program's from then on; the library's
 * handler stays installed, to name every later fault. */
static const char *an_sa_resethand_handler_leaves_the_default_action_at_the_last_close(void)
{
	struct two t;
	struct sigaction now;
	const char *w;
	install_program_handler(SA_RESETHAND, NULL);
	restore_mask = 1;
	handled = 0;
	w = open_two(&t); /* its probe is the first fault */
	if (w == NULL && handled != 1)
		w = "the first fault did not reach the program's handler";
	close_two(&t);
	if (w == NULL && (sigaction(SIGSEGV, NULL, &now) != 0 || now.sa_handler != SIG_DFL))
		w = "after the last close the action was not the default";
	install_program_handler(SA_NODEFER, NULL);
	return w;
}

/* An alternate stack, and whether a handler's frame was on it. */
static char alternate_stack[64 * 1024];

static void set_alternate_stack(void)
{
	stack_t s;
	s.ss_sp = alternate_stack;
	s.ss_size = sizeof alternate_stack;
	s.ss_flags = 0;
	sigaltstack(&s, NULL);
}

static int on_alternate_stack(const char *p)
{
	return p >= alternate_stack && p < alternate_stack + sizeof alternate_stack;
}

static const char *handler_stack(int flags)
{
	struct two t;
	const char *w;
	install_program_handler(flags | SA_NODEFER, NULL);
	w = open_two(&t);
	if (w == NULL && on_alternate_stack(local_in_handler) != !!(flags & SA_ONSTACK))
		w = flags & SA_ONSTACK ? "the SA_ONSTACK handler did not run on the alternate stack"
				       : "a handler without SA_ONSTACK ran on the alternate stack";
	close_two(&t);
	install_program_handler(SA_NODEFER, NULL);
	return w;
}

static const char *an_sa_onstack_handler_runs_on_the_alternate_stack(void)
{
	return handler_stack(SA_ONSTACK);
}

static const char *a_handler_without_sa_onstack_runs_on_the_threads_stack(void)
{
	return handler_stack(0);
}

/* ---- Faults and signals that end a child process ------------------------------ */

/* Runs body in a child, its stderr in said: its exit status, or 128 plus
 * the signal that ended it. */
static int in_child(void (*body)(void))
{
	int fds[2], status = -1;
	pid_t child;
	fflush(stdout);
	if (pipe(fds) != 0)
		return -1;
	child = fork();
	if (child == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		body();
		_exit(0);
	}
	close(fds[1]);
	read_all(fds[0]);
	close(fds[0]);
	waitpid(child, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

static void exit_3_on_alternate_stack(int sig)
{
	char here;
	(void)sig;
	(void)frame_of_twice_the_run_stack; /* guard_frames.h's other frame */
	_exit(on_alternate_stack(launder(&here)) ? 3 : 4);
}

static void run_past_the_run_stack(struct schedule *S, void *ud)
{
	(void)S, (void)ud;
	frame_just_past_the_run_stack();
}

static void overflow_the_guard(void)
{
	struct sigaction a;
	struct schedule *S;
	memset(&a, 0, sizeof a);
	a.sa_handler = exit_3_on_alternate_stack;
	a.sa_flags = SA_ONSTACK;
	sigemptyset(&a.sa_mask);
	set_alternate_stack();
	sigaction(SIGSEGV, &a, NULL);
	S = coroutine_open();
	coroutine_resume(S, coroutine_new(S, run_past_the_run_stack, NULL));
}

static const char *a_guard_overflow_reaches_the_handler_on_the_alternate_stack(void)
{
	int status = in_child(overflow_the_guard);
	if (status == 3 && !said_has("shared-stack rule"))
		return NULL;
	return wrong(status == 4 ? "the handler ran on another stack than the alternate one"
		     : status == 3 ? "the guard's fault was reported as a stale access"
				   : "the handler on the alternate stack did not run");
}

/* In a child: the first fault goes to the program's SA_RESETHAND handler
 * (which goes back by siglongjmp); the second is reported, then ends the
 * child at the access.  Exits with a code of its own where it did not. */
enum { HANDLER_RAN_TWICE = 5, FIRST_FAULT_NOT_HANDLED, LIBRARYS_HANDLER_GONE, SECOND_READ_READ };
static const char second_read[] = "the second read:\n";

static void resethand_handler(int sig)
{
	(void)sig;
	if (handled++ > 0)
		_exit(HANDLER_RAN_TWICE);
	siglongjmp(back, 1);
}

static void read_twice_with_an_sa_resethand_handler(void)
{
	struct sigaction a, now;
	struct two t;
	memset(&a, 0, sizeof a);
	a.sa_handler = resethand_handler;
	a.sa_flags = SA_RESETHAND;
	sigemptyset(&a.sa_mask);
	sigaction(SIGSEGV, &a, NULL);
	restore_mask = 1;
	handled = 0;
	if (open_two(&t) != NULL || handled != 1) /* its probe is the first fault */
		_exit(FIRST_FAULT_NOT_HANDLED);
	/* Only the library's handler takes siginfo, not the program's (and
	 * the kernel's reset to the default would keep SA_SIGINFO). */
	if (sigaction(SIGSEGV, NULL, &now) != 0 || !(now.sa_flags & SA_SIGINFO) || now.sa_handler == SIG_DFL)
		_exit(LIBRARYS_HANDLER_GONE);
	if (write(2, second_read, sizeof second_read - 1) < 0)
		_exit(1);
	(void)*t.h[0].local;
	_exit(SECOND_READ_READ);
}

static const char *after_an_sa_resethand_handler_ran_a_stale_read_is_reported_then_ends_the_process(void)
{
	int status = in_child(read_twice_with_an_sa_resethand_handler);
	const char *after = strstr(said, second_read);
	if (status == 128 + SIGSEGV && after != NULL && strstr(after, "main read coroutine 0's stack (top-") != NULL)
		return NULL;
	return wrong(status == HANDLER_RAN_TWICE ? "the program's SA_RESETHAND handler ran twice"
		     : status == FIRST_FAULT_NOT_HANDLED ? "the first fault did not reach the program's handler once"
		     : status == LIBRARYS_HANDLER_GONE ? "the library's handler was gone after the first fault"
		     : status == SECOND_READ_READ ? "the second read did not fault"
		     : status == 128 + SIGSEGV ? "the second read was not reported before the child ended"
						 : "the second read did not end the child with SIGSEGV");
}

/* A coroutine of window 3 that runs past its run stack: the fault lies in
 * the guard under its own window, and goes to the program's handler
 * untouched, as any guard's (no line: no local of anyone's lies there). */
static char *volatile window_top[4]; /* near each coroutine's top: a local's address */

enum { NOT_IN_ITS_GUARD = 4, NOT_IN_WINDOW_3 };

static void in_its_own_guard(int sig, siginfo_t *info, void *context)
{
	size_t under = (size_t)(window_top[3] - (char *)info->si_addr);
	(void)sig, (void)context;
	if ((size_t)(window_top[0] - window_top[3]) < 3 * 2 * (size_t)RUN_STACK)
		_exit(NOT_IN_WINDOW_3); /* a window is a run stack and its guard of 1 MiB at least */
	_exit(under > RUN_STACK && under <= RUN_STACK + 1024 * 1024 ? 3 : NOT_IN_ITS_GUARD);
}

static void wait_in_window(struct schedule *S, void *ud)
{
	char here;
	window_top[(intptr_t)ud] = launder(&here);
	coroutine_yield(S);
}

static void run_past_in_window_3(struct schedule *S, void *ud)
{
	char here;
	(void)S, (void)ud;
	window_top[3] = launder(&here);
	frame_just_past_the_run_stack();
}

static void overflow_in_window_3(void)
{
	struct sigaction a;
	struct schedule *S;
	intptr_t w;
	memset(&a, 0, sizeof a);
	a.sa_sigaction = in_its_own_guard;
	a.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&a.sa_mask);
	set_alternate_stack();
	sigaction(SIGSEGV, &a, NULL);
	S = coroutine_open();
	for (w = 0; w < 3; w++)
		coroutine_resume(S, coroutine_new(S, wait_in_window, (void *)w));
	coroutine_resume(S, coroutine_new(S, run_past_in_window_3, NULL));
}

static const char *an_overflow_in_window_3_reaches_the_handler_from_its_own_guard_unreported(void)
{
	int status = in_child(overflow_in_window_3);
	if (status == 3 && !said_has("shared-stack rule"))
		return NULL;
	return wrong(status == NOT_IN_ITS_GUARD ? "the fault was not in the guard under coroutine 3's window"
		     : status == NOT_IN_WINDOW_3 ? "coroutine 3 did not run three windows under coroutine 0"
		     : status == 3 ? "the guard's fault was reported as a stale access"
				   : "the handler did not run");
}

static void send_sigsegv(void)
{
	struct schedule *S = coroutine_open();
	kill(getpid(), SIGSEGV);
	coroutine_close(S);
}

static void send_sigsegv_by_default(void)
{
	install_action(SIG_DFL);
	send_sigsegv();
}

static const char *a_sigsegv_sent_with_the_default_action_ends_the_process(void)
{
	int status = in_child(send_sigsegv_by_default);
	return status == 128 + SIGSEGV && !said_has("shared-stack rule") ? NULL : wrong("it did not end the child, unreported");
}

static void send_sigsegv_ignored(void)
{
	install_action(SIG_IGN);
	send_sigsegv();
}

static const char *an_ignored_sigsegv_sent_is_ignored(void)
{
	int status = in_child(send_sigsegv_ignored);
	return status == 0 && !said_has("shared-stack rule") ? NULL : wrong("it was not ignored");
}

static void read_forbidden_page_ignored(void)
{
	struct schedule *S;
	install_action(SIG_IGN);
	S = coroutine_open();
	(void)*(volatile char *)forbidden_page();
	coroutine_close(S);
}

static const char *an_ignored_fault_ends_the_process(void)
{
	int status = in_child(read_forbidden_page_ignored);
	return status == 128 + SIGSEGV ? NULL : wrong("the ignored fault did not end the child");
}

static const char *a_sigsegv_sent_reaches_the_handler_once_unreported(void)
{
	struct schedule *S;
	const char *w = NULL;
	install_program_handler(0, NULL);
	return_from_handler = 1;
	handled = 0;
	S = coroutine_open();
	kill(getpid(), SIGSEGV);
	if (handled != 1)
		w = "the program's handler did not take the signal once";
	coroutine_close(S);
	install_program_handler(SA_NODEFER, NULL);
	return w;
}

/* ---- The list of open schedules ------------------------------------------------ */

static const char *after_a_report_schedules_open_and_close(void)
{
	struct two t;
	const char *w = open_two(&t);
	alarm(20); /* a lock kept by the report: the open below hangs */
	coroutine_close(coroutine_open());
	alarm(0);
	close_two(&t);
	return w;
}

/* Three schedules; one closes (closing, 0 the oldest, 1 the middle one);
 * the newest's local must still be reported, naming it. */
static const char *after_a_close(int closing)
{
	struct handout h = { NULL, 0, 0 };
	struct schedule *S[3];
	const char *w = NULL;
	int i;
	for (i = 0; i < 3; i++)
		S[i] = coroutine_open();
	coroutine_resume(S[2], coroutine_new(S[2], hand_out, &h));
	coroutine_close(S[closing]);
	if (probe(h.local) != 1 || !said_has("main read coroutine 0's stack (top-") || !said_names_schedule(S[2]))
		w = wrong("the newest schedule's coroutine's local was not reported");
	for (i = 0; i < 3; i++)
		if (i != closing)
			coroutine_close(S[i]);
	return w;
}

static const char *the_newest_schedule_is_checked_after_the_middle_one_closes(void)
{
	return after_a_close(1);
}

static const char *the_newest_schedule_is_checked_after_the_oldest_one_closes(void)
{
	return after_a_close(0);
}

/* The writable regions of the address space of at least 1 MiB, as
 * /proc/self/maps lists them (Linux): how many, up to most. */
struct region {
	unsigned long start, end;
};

static int big_writable_regions(struct region *r, int most)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512], perms[8];
	int n = 0;
	while (maps != NULL && n < most && fgets(line, sizeof line, maps) != NULL)
		if (sscanf(line, "%lx-%lx %7s", &r[n].start, &r[n].end, perms) == 3 && perms[1] == 'w'
		    && r[n].end - r[n].start >= 1024 * 1024)
			n++;
	if (maps != NULL)
		fclose(maps);
	return n;
}

/* Whether a writable region of 1 MiB or more is in after and not before. */
static int writable_region_appeared(const struct region *before, int n_before)
{
	struct region after[256];
	int n_after = big_writable_regions(after, 256), i, j;
	for (i = 0; i < n_after; i++) {
		int known = 0;
		for (j = 0; j < n_before; j++)
			known = known || (after[i].start >= before[j].start && after[i].end <= before[j].end);
		if (!known)
			return 1;
	}
	return 0;
}

struct regions {
	struct region r[256];
	int n;
	int appeared; /* while the coroutine ran */
};

static void look_at_the_regions(struct schedule *S, void *ud)
{
	struct regions *before = (struct regions *)ud;
	(void)S;
	before->appeared = writable_region_appeared(before->r, before->n);
}

/* Between coroutine_open and the first resume, main could otherwise use a
 * pointer kept from a schedule closed before, whose run stack was there.
 * The run stack is writable while a coroutine runs (which shows that the
 * check sees it), not before. */
static const char *a_run_stack_is_out_of_reach_from_its_open(void)
{
	static struct regions before;
	struct schedule *S;
	const char *w = NULL;
	if (access("/proc/self/maps", R_OK) != 0)
		return "no /proc/self/maps to read";
	before.n = big_writable_regions(before.r, 256);
	S = coroutine_open();
	if (writable_region_appeared(before.r, before.n))
		w = "a writable region of 1 MiB or more appeared at coroutine_open: the run stack, in main's reach";
	coroutine_resume(S, coroutine_new(S, look_at_the_regions, &before));
	if (w == NULL && !before.appeared)
		w = "no writable region appeared while the coroutine ran: this check cannot see the run stack";
	coroutine_close(S);
	return w;
}

/* ---- System calls ----------------------------------------------------------------- */

static const char *a_stale_pointer_handed_to_write_or_read_fails_with_efault(void)
{
	struct two t;
	const char *w = open_two(&t);
	int fds[2];
	if (w == NULL && pipe(fds) == 0) {
		errno = 0;
		if (write(fds[1], (const void *)t.h[0].local, 4) != -1 || errno != EFAULT)
			w = "write() from coroutine 0's local did not fail with EFAULT";
		if (w == NULL && write(fds[1], "abcd", 4) == 4) {
			errno = 0;
			if (read(fds[0], (void *)t.h[0].local, 4) != -1 || errno != EFAULT)
				w = "read() into coroutine 0's local did not fail with EFAULT";
		}
		close(fds[0]);
		close(fds[1]);
	}
	close_two(&t);
	return w;
}

/* ---- The checks ------------------------------------------------------------------- */

#define CHECK(f) { #f, f }
static const struct {
	const char *name;
	const char *(*check)(void);
} checks[] = {
	CHECK(main_read_names_the_coroutine_whose_slice_covers_it),
	CHECK(the_lowest_byte_of_a_slice_is_its_coroutines),
	CHECK(a_byte_below_every_slice_names_the_last_to_run_and_says_so),
	CHECK(a_byte_that_two_slices_of_a_window_reach_names_both),
	CHECK(a_byte_of_one_window_names_none_of_anothers),
	CHECK(a_clone_waits_in_its_originals_window),
#if ROOM_ABOVE_TOP
	CHECK(a_touch_of_the_room_above_the_top_is_reported),
#endif
	CHECK(a_thousand_slices_that_reach_a_byte_make_one_line),
	CHECK(another_threads_read_is_named_as_another_threads),
	CHECK(a_thread_that_used_the_library_is_not_named_for_mains_coroutine),
	CHECK(a_coroutine_of_another_schedule_is_named_with_its_schedule),
	CHECK(a_nodefer_handler_that_leaves_by_longjmp_probes_again_and_again),
	CHECK(a_handler_that_leaves_by_siglongjmp_probes_again_and_again),
	CHECK(the_handler_runs_with_its_sa_mask_and_the_signal_blocked),
	CHECK(an_sa_nodefer_handler_runs_with_the_signal_unblocked),
	CHECK(an_sa_nodefer_handler_whose_sa_mask_has_the_signal_runs_with_it_blocked),
	CHECK(an_sa_siginfo_handler_gets_the_faulting_address),
	CHECK(an_sa_resethand_handler_leaves_the_default_action_at_the_last_close),
	CHECK(an_sa_onstack_handler_runs_on_the_alternate_stack),
	CHECK(a_handler_without_sa_onstack_runs_on_the_threads_stack),
	CHECK(a_guard_overflow_reaches_the_handler_on_the_alternate_stack),
	CHECK(after_an_sa_resethand_handler_ran_a_stale_read_is_reported_then_ends_the_process),
	CHECK(an_overflow_in_window_3_reaches_the_handler_from_its_own_guard_unreported),
	CHECK(a_sigsegv_sent_with_the_default_action_ends_the_process),
	CHECK(an_ignored_sigsegv_sent_is_ignored),
	CHECK(an_ignored_fault_ends_the_process),
	CHECK(a_sigsegv_sent_reaches_the_handler_once_unreported),
	CHECK(after_a_report_schedules_open_and_close),
	CHECK(the_newest_schedule_is_checked_after_the_middle_one_closes),
	CHECK(the_newest_schedule_is_checked_after_the_oldest_one_closes),
	CHECK(a_run_stack_is_out_of_reach_from_its_open),
	CHECK(a_stale_pointer_handed_to_write_or_read_fails_with_efault),
};

int main(void)
{
	size_t i;
	set_alternate_stack(); /* for the SA_ONSTACK checks; unused by the others */
	install_program_handler(SA_NODEFER, NULL);
	for (i = 0; i < sizeof checks / sizeof checks[0]; i++) {
		alarm(60);
		report(checks[i].name, checks[i].check());
	}
	alarm(0);
	return finish();
}
