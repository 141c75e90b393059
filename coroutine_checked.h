/*
 * coroutine_checked.h - the checked build of coroutine.cpp: the run stack
 * out of main's reach.  coroutine.cpp includes it, at its end, when built
 * with -DCOROUTINE_CHECKED=1; it is not a header for programs, and no
 * other build needs it.
 *
 * With -DCOROUTINE_CHECKED=1, main cannot touch the run stack: it is made
 * inaccessible at open and at every return to main (a yield, a finish), and
 * accessible again only while the library itself works on it, from the top
 * of a resume.  So a pointer that main kept to a suspended coroutine's local
 * faults at its first use, and a fault handler, installed from the first
 * open to the last close, finds on the list of open schedules whose run
 * stack was hit, and says whose bytes may lie there.  Then the fault goes
 * where it would have gone with no check, as the kernel would have sent it:
 * to the program's own handler, or the default action, which ends the
 * process on the faulting access itself (a core file and a debugger see
 * that access, not a handler calling abort).  Every other fault, and the
 * guard's, is passed on untouched.
 *
 * Two system calls per round trip: microseconds, for debugging builds.  Each
 * schedule protects only its own run stack, so schedules on other threads
 * never trip, and a running coroutine's run stack is never protected.  Under
 * AddressSanitizer, a suspended coroutine's locals that ASan keeps off the
 * run stack are poisoned besides (at the end of the section), so that a
 * coroutine's use of another's is stopped too.
 */
/* The line that names the fault, built without stdio (a signal handler may
 * call only async-signal-safe functions): text, a decimal, a hexadecimal. */
struct report_line {
	char text[512];
	size_t n;
};

static void add_text(struct report_line *line, const char *text)
{
	while (*text != '\0' && line->n < sizeof line->text - 1)
		line->text[line->n++] = *text++;
}

static void add_number(struct report_line *line, uintmax_t value, unsigned base)
{
	char digits[24];
	size_t n = 0;
	do
		digits[n++] = "0123456789abcdef"[value % base];
	while ((value /= base) != 0);
	while (n > 0 && line->n < sizeof line->text - 1)
		line->text[line->n++] = digits[--n];
}

/* The window of S whose run stack (with the room above its top) holds
 * address, or -1: the guards between the windows hold none. */
static int window_at(const struct schedule *S, const char *address)
{
	if (S->stack == NULL || address >= S->stack + MAPPED_STACK_SIZE || address < mapping_of(S))
		return -1;
	size_t below = (size_t)(S->stack + MAPPED_STACK_SIZE - address) - 1; /* under window 0's end */
	return below % WINDOW_STRIDE < MAPPED_STACK_SIZE ? (int)(below / WINDOW_STRIDE) : -1;
}

/* The open schedule one of whose windows holds address, and which, or
 * NULL.  Only a real fault asks, never inside the list's lock (which does
 * no memory access that can fault), so the lock is taken: a schedule being
 * closed on another thread stays readable until we are done. */
static struct schedule *schedule_whose_run_stack(const char *address, int *window)
{
	struct schedule *S = open_schedules;
	while (S != NULL && (*window = window_at(S, address)) < 0)
		S = S->next_open;
	return S;
}

static void add_coroutine(struct report_line *line, int id)
{
	add_text(line, "coroutine ");
	add_number(line, (uintmax_t)id, 10);
}

static void add_schedule(struct report_line *line, const struct schedule *S)
{
	add_text(line, "schedule 0x");
	add_number(line, (uintmax_t)(uintptr_t)S, 16);
}

static uintmax_t system_thread_id(void); /* per platform, below: 0 if none */

/* "main read", "coroutine 1 wrote to" or, of another schedule than S whose
 * run stack or locals were touched, "coroutine 1 (schedule 0x...) read":
 * whatever runs on this thread, an open schedule's coroutine; else main,
 * on S's thread; else "another thread (id 1234)", by the system's number
 * (gdb's LWP).  A thread that never used the library has no number (and
 * runs none). */
static void add_toucher(struct report_line *line, const struct schedule *S, const char *verb)
{
	const struct schedule *R = open_schedules;
	while (R != NULL && !(R->running >= 0 && R->thread == thread_number && thread_number != 0))
		R = R->next_open;
	if (R != NULL) {
		add_coroutine(line, R->running);
		if (R != S) {
			add_text(line, " (");
			add_schedule(line, R);
			add_text(line, ")");
		}
	} else if (S->thread == thread_number && thread_number != 0) {
		add_text(line, "main");
	} else {
		uintmax_t id = system_thread_id();
		add_text(line, "another thread");
		if (id != 0) {
			add_text(line, " (id ");
			add_number(line, id, 10);
			add_text(line, ")");
		}
	}
	add_text(line, " ");
	add_text(line, verb);
}

static void add_rule(struct report_line *line, int suspended)
{
	if (suspended >= 0) {
		add_text(line, ") while ");
		add_coroutine(line, suspended);
		add_text(line, " is suspended: a suspended coroutine's locals have no address");
	} else {
		add_text(line, ") while no coroutine is on it: a finished coroutine's locals have no address");
	}
	add_text(line, " (the shared-stack rule)\n");
}

/* The suspended coroutines of window w of S whose saved slices reach
 * below_top bytes under its top (top - address <= size): a local there is
 * one of theirs.  How many, and the first NAMED ids, which the line lists:
 * one, unless more coroutines than windows share it. */
#define NAMED 4
struct covering {
	int id[NAMED];
	int n;
};

static void find_covering(const struct schedule *S, int w, size_t below_top, struct covering *c)
{
	c->n = 0;
	/* An empty slot's size is 0, as a coroutine's that has not run. */
	for (int id = 0; id < S->cap && below_top > 0; id++)
		if (WINDOW_OF(S->co[id]) == w && below_top <= S->co[id]->size && id != S->running) {
			if (c->n < NAMED)
				c->id[c->n] = id;
			c->n++;
		}
}

/* "coroutine 0, 1, 2, 3 or 996 others" */
static void add_ids(struct report_line *line, const struct covering *c)
{
	int listed = c->n <= NAMED ? c->n : NAMED;
	add_coroutine(line, c->id[0]);
	for (int k = 1; k < listed; k++) {
		add_text(line, k + 1 < listed || c->n > NAMED ? ", " : " or ");
		add_number(line, (uintmax_t)c->id[k], 10);
	}
	if (c->n > NAMED) {
		add_text(line, " or ");
		add_number(line, (uintmax_t)(c->n - NAMED), 10);
		add_text(line, c->n - NAMED == 1 ? " other" : " others");
	}
}

/* " (top-40, schedule 0x...": from the top of the window it lies in. */
static void add_offset(struct report_line *line, const struct schedule *S, const char *top, const char *address)
{
	add_text(line, address < top ? " (top-" : " (top+");
	add_number(line, address < top ? (uintmax_t)(top - address) : (uintmax_t)(address - top), 10);
	add_text(line, ", ");
	add_schedule(line, S);
}

/* "main read coroutine 0's stack (top-40, schedule 0x...) while coroutine 0
 * is suspended: ...": whose locals may lie at address, in window w.  Those
 * of the suspended coroutines of the window whose saved slices reach it,
 * all of them (any may have handed out the pointer); else bytes of a call
 * that has returned, of whichever coroutine ran there: the line names the
 * last to run in the window, and says so.  With none (none has run there,
 * or the last one finished), nobody's. */
static void describe_touch(struct report_line *line, struct schedule *S, int w, const char *address, const char *verb)
{
	struct covering c;
	const char *top = S->top - (size_t)w * WINDOW_STRIDE;
	find_covering(S, w, address < top ? (size_t)(top - address) : 0, &c);
	int last = S->last_in_window[w] - 1;
	if (last >= 0 && (S->co[last] == &no_coroutine || WINDOW_OF(S->co[last]) != w)) /* it finished */
		last = -1;
	add_toucher(line, S, verb);
	if (address >= top) {
		add_text(line, " the run stack's room above its top");
		add_offset(line, S, top, address);
		add_text(line, "), where no coroutine's locals lie (the shared-stack rule)\n");
	} else if (c.n == 1) {
		add_text(line, " ");
		add_coroutine(line, c.id[0]);
		add_text(line, "'s stack");
		add_offset(line, S, top, address);
		add_rule(line, c.id[0]);
	} else if (c.n > 1) {
		add_text(line, " the stack of ");
		add_ids(line, &c);
		add_offset(line, S, top, address);
		add_text(line, ") while they are suspended: a suspended coroutine's locals have no address "
			 "(the shared-stack rule); the saved slices of all ");
		add_number(line, (uintmax_t)c.n, 10);
		add_text(line, " reach there, and gdb's coroutine bt ID shows which of their functions "
			 "has a local at top-");
		add_number(line, (uintmax_t)(top - address), 10);
		add_text(line, "\n");
	} else if (last >= 0) {
		add_text(line, " the run stack");
		add_offset(line, S, top, address);
		add_text(line, ") below every suspended coroutine's slice, where ");
		add_coroutine(line, last);
		add_text(line, " ran last: the locals of a call that has returned have no address (the shared-stack rule)\n");
	} else {
		add_text(line, " the run stack");
		add_offset(line, S, top, address);
		add_rule(line, -1);
	}
}

static void print_to_stderr(const char *text, size_t n); /* per platform, below */
static void describe_fake_touch(struct report_line *line, const char *address, const char *verb);

/* If a touch of address, an access of kind verb, was on a protected run
 * stack (a fault), or on a suspended coroutine's fake frames (ASan's
 * report), the line that says so.  The lock is tried for a bounded time:
 * only a bug of the library's own could fault while holding it. */
static void report_touch(const void *address, const char *verb, int in_fake_frames)
{
	int locked = 0;
	for (long tries = 0; !locked && tries < 100000000; tries++)
		locked = try_lock_open_schedules();
	struct report_line line;
	line.n = 0;
	if (in_fake_frames) {
		describe_fake_touch(&line, (const char *)address, verb);
	} else {
		int w;
		struct schedule *S = schedule_whose_run_stack((const char *)address, &w);
		if (S != NULL)
			describe_touch(&line, S, w, (const char *)address, verb);
	}
	if (locked)
		unlock_open_schedules();
	print_to_stderr(line.text, line.n);
}

#if defined(_WIN32)
/* VirtualProtect, and a vectored exception handler, which sees each access
 * violation first and passes it on (EXCEPTION_CONTINUE_SEARCH) to the
 * program's handlers, or to the end of the process. */
static void *fault_watcher; /* AddVectoredExceptionHandler's, under the list's lock */

static void set_access(char *from, size_t n, DWORD access)
{
	DWORD old;
	if (!VirtualProtect(from, n, access, &old))
		fail("the checked build: VirtualProtect of the run stack failed (error %lu)", (unsigned long)GetLastError());
}

#define ACCESS_READ_WRITE PAGE_READWRITE
#define ACCESS_NONE PAGE_NOACCESS

static void print_to_stderr(const char *text, size_t n)
{
	fwrite(text, 1, n, stderr);
	fflush(stderr);
}

static uintmax_t system_thread_id(void)
{
	return GetCurrentThreadId();
}

/* ExceptionInformation: what the access was (0 read, 1 write, 8 execute), and where. */
static LONG CALLBACK on_access_violation(EXCEPTION_POINTERS *e)
{
	const EXCEPTION_RECORD *r = e->ExceptionRecord;
	if (r->ExceptionCode == EXCEPTION_ACCESS_VIOLATION && r->NumberParameters >= 2) {
		ULONG_PTR kind = r->ExceptionInformation[0];
		report_touch((const void *)r->ExceptionInformation[1],
			     kind == 0 ? "read" : kind == 1 ? "wrote to" : "touched", 0);
	}
	return EXCEPTION_CONTINUE_SEARCH;
}

static void watch_faults(void)
{
	fault_watcher = AddVectoredExceptionHandler(1, on_access_violation);
	if (fault_watcher == NULL)
		fail("coroutine_open: AddVectoredExceptionHandler failed (the checked build)");
}

/* A module that is freed must leave no handler of its code behind. */
static void stop_watching_faults(void)
{
	RemoveVectoredExceptionHandler(fault_watcher);
	fault_watcher = NULL;
}
#else
#include <errno.h>
#include <signal.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#elif defined(__APPLE__)
#include <pthread.h>
#endif

static void set_access(char *from, size_t n, int access)
{
	if (mprotect(from, n, access) != 0)
		fail("the checked build: mprotect of the run stack failed (%s)", strerror(errno));
}

#define ACCESS_READ_WRITE (PROT_READ | PROT_WRITE)
#define ACCESS_NONE PROT_NONE

static void print_to_stderr(const char *text, size_t n)
{
	while (n > 0) {
		ssize_t written = write(2, text, n);
		if (written <= 0)
			return;
		text += written, n -= (size_t)written;
	}
}

static uintmax_t system_thread_id(void)
{
#if defined(__linux__)
	return (uintmax_t)syscall(SYS_gettid);
#elif defined(__APPLE__)
	uint64_t id = 0;
	pthread_threadid_np(NULL, &id);
	return id;
#else
	return 0;
#endif
}

/* Whether the access was a write, as far as the CPU says: x86_64's page
 * fault error code (bit 1), aarch64's fault syndrome (a data abort's WnR
 * bit), which Linux puts in the signal context.  Elsewhere: "touched". */
static const char *access_kind(const void *context)
{
#if defined(__linux__) && defined(__x86_64__)
	const ucontext_t *uc = (const ucontext_t *)context;
	return uc->uc_mcontext.gregs[REG_ERR] & 2 ? "wrote to" : "read";
#elif defined(__linux__) && defined(__aarch64__)
	/* Records of {magic, size} in __reserved, ended by a magic of 0. */
	const unsigned char *record = ((const ucontext_t *)context)->uc_mcontext.__reserved;
	const unsigned char *end = record + sizeof ((const ucontext_t *)context)->uc_mcontext.__reserved;
	while (record + 16 <= end) {
		uint32_t magic, size;
		uint64_t esr;
		memcpy(&magic, record, 4);
		memcpy(&size, record + 4, 4);
		if (magic == 0 || size < 8)
			break;
		if (magic == 0x45535201) { /* ESR_MAGIC */
			memcpy(&esr, record + 8, 8);
			unsigned ec = (unsigned)(esr >> 26) & 0x3f;
			if (ec == 0x24 || ec == 0x25) /* a data abort, from EL0 or EL1 */
				return esr & (1u << 6) ? "wrote to" : "read";
			break;
		}
		record += size;
	}
	return "touched";
#else
	(void)context;
	return "touched";
#endif
}

/* What this copy of the library keeps of the fault handlers: its own, and
 * the actions it replaced, which it passes faults on to (the program's, the
 * sanitizers', another copy's).  Other copies read and write it: see
 * "Several copies of the library", below. */
#if defined(__APPLE__)
static const int fault_signals[] = { SIGSEGV, SIGBUS }; /* macOS: SIGBUS for a protected page */
#else
static const int fault_signals[] = { SIGSEGV };
#endif
#define FAULT_SIGNALS (sizeof fault_signals / sizeof fault_signals[0])
typedef void (*fault_handler)(int, siginfo_t *, void *);
struct fault_chain_link {
	uint32_t size;          /* sizeof (struct fault_chain_link): the same layout */
	fault_handler handler;  /* on_fault */
	struct sigaction earlier[FAULT_SIGNALS];
};
static void on_fault(int sig, siginfo_t *info, void *context);
/* Named for the note that leads to it on ELF (see there). */
#if defined(__APPLE__)
#define NAMED_FOR_THE_NOTE
#else
#define CHAIN_LINK_NAME "coroutine_fault_chain_link"
#define NAMED_FOR_THE_NOTE __asm__(CHAIN_LINK_NAME)
#endif
KEPT struct fault_chain_link this_copy NAMED_FOR_THE_NOTE = { sizeof(struct fault_chain_link), on_fault, {} };

static int is_ours(const struct sigaction *action)
{
	return (action->sa_flags & SA_SIGINFO) && action->sa_sigaction == on_fault;
}

static struct sigaction *earlier_action(int sig)
{
	size_t i = 0;
	while (i < FAULT_SIGNALS - 1 && fault_signals[i] != sig)
		i++;
	return &this_copy.earlier[i];
}

/* The signal goes where it went before ours was installed, as the kernel
 * would have sent it there: ours was installed with that action's flags
 * and mask (see watch_faults), so the thread's mask and the stack are
 * already what the kernel would have made them; SA_NODEFER is left to do,
 * as ours keeps the signal blocked while it reports, and SA_RESETHAND: the
 * program's handler runs once, and the default is what ours passes on to
 * from then on (ours stays, to name every later fault).  The default
 * action, and an ignored fault (which the kernel would not ignore), are
 * had by returning with the default in place: the access faults again.  A
 * signal that was sent, not a fault, is sent again, or ignored if it was. */
static void pass_on(int sig, siginfo_t *info, void *context)
{
	struct sigaction *earlier = earlier_action(sig), handler = *earlier;
	int sent = info == NULL || info->si_code <= 0;
	if (handler.sa_flags & SA_RESETHAND) {
		memset(earlier, 0, sizeof *earlier);
		earlier->sa_handler = SIG_DFL;
	}
	if (handler.sa_handler == SIG_DFL || handler.sa_handler == SIG_IGN) {
		if (handler.sa_handler == SIG_IGN && sent)
			return;
		signal(sig, SIG_DFL);
		if (sent)
			raise(sig); /* delivered when this handler returns */
		return;
	}
	if ((handler.sa_flags & SA_NODEFER) && !sigismember(&handler.sa_mask, sig)) {
		sigset_t deferred;
		sigemptyset(&deferred);
		sigaddset(&deferred, sig);
		sigprocmask(SIG_UNBLOCK, &deferred, NULL);
	}
	if (handler.sa_flags & SA_SIGINFO)
		handler.sa_sigaction(sig, info, context);
	else
		handler.sa_handler(sig);
}

static void on_fault(int sig, siginfo_t *info, void *context)
{
	int saved_errno = errno;
	if (info != NULL && info->si_code > 0) /* a fault, not a signal sent */
		report_touch(info->si_addr, access_kind(context), 0);
	errno = saved_errno;
	pass_on(sig, info, context);
}

/* Ours goes in place of each action with its flags and mask, SA_SIGINFO
 * added and SA_NODEFER and SA_RESETHAND left to pass_on: the kernel then
 * sets the fault up for ours as it would for theirs (SA_ONSTACK: a guard
 * overflow reaches a handler on the program's alternate stack), and ours
 * stays installed whatever theirs asked. */
static void watch_faults(void)
{
	for (size_t i = 0; i < FAULT_SIGNALS; i++) {
		struct sigaction now, ours;
		memset(&ours, 0, sizeof ours);
		if (sigaction(fault_signals[i], NULL, &now) != 0)
			fail("coroutine_open: sigaction failed (%s; the checked build)", strerror(errno));
		ours.sa_sigaction = on_fault;
		ours.sa_flags = SA_SIGINFO | (now.sa_flags & (SA_ONSTACK | SA_RESTART));
		ours.sa_mask = now.sa_mask;
		if (sigaction(fault_signals[i], &ours, &this_copy.earlier[i]) != 0)
			fail("coroutine_open: sigaction failed (%s; the checked build)", strerror(errno));
	}
}

/* ---- Several copies of the library in one process
 *
 * Plugins may each have a copy of the library.  Each installs its handler
 * over whatever was there, another copy's too, and passes faults on to
 * that.  A copy whose last schedule closes, and which may then be unloaded,
 * must leave no handler of its code behind in that chain: if its own is
 * installed, the earlier action comes back; if another copy's was installed
 * over it (a new build opens before the old one closes), that copy passes
 * faults to our earlier action from then on.  Copies share no symbol
 * (plugins are loaded RTLD_LOCAL and built -fvisibility=hidden), so each
 * image has a note (a section on Mach-O) that leads to its copy's link, and
 * the loader lists the images.  A handler of the program's installed over
 * ours is left alone; so is one of a library copy with no note (older).
 */
#define MAX_COPIES 64
struct copies {
	struct fault_chain_link *link[MAX_COPIES];
	size_t n;
};

static void add_copy(struct copies *c, struct fault_chain_link *link)
{
	if (link->size == sizeof *link && c->n < MAX_COPIES)
		c->link[c->n++] = link;
}

#if defined(__APPLE__)
#include <mach-o/dyld.h>
#include <mach-o/getsect.h>

KEPT struct fault_chain_link *const chain_link_note __attribute__((section("__DATA,__coroutine_chn"))) = &this_copy;

static void find_copies(struct copies *c)
{
	c->n = 0;
	for (uint32_t i = 0; i < _dyld_image_count(); i++) {
		unsigned long size = 0;
		const struct mach_header_64 *image = (const struct mach_header_64 *)_dyld_get_image_header(i);
		struct fault_chain_link **links = image == NULL ? NULL
			: (struct fault_chain_link **)getsectiondata(image, "__DATA", "__coroutine_chn", &size);
		for (unsigned long k = 0; links != NULL && k < size / sizeof *links; k++)
			add_copy(c, links[k]);
	}
}
#else
#include <link.h>

/* The note: name "coroutine", type 1 (this layout of the link), and the
 * link's offset from the note's descriptor, which the static linker works
 * out (no relocation at load, in a read-only segment). */
__asm__(".pushsection .note.coroutine, \"a\", %note\n"
	"\t.balign 4\n"
	"\t.long 10, 4, 1\n"
	"\t.asciz \"coroutine\"\n"
	"\t.balign 4\n"
	"\t.long " CHAIN_LINK_NAME " - .\n"
	"\t.popsection");

static size_t note_round(size_t n, size_t align)
{
	return (n + align - 1) & ~(align - 1);
}

static int find_copies_in_image(struct dl_phdr_info *image, size_t, void *copies)
{
	for (int i = 0; i < image->dlpi_phnum; i++) {
		const ElfW(Phdr) *segment = &image->dlpi_phdr[i];
		size_t align = segment->p_align == 8 ? 8 : 4, at = 0, size = segment->p_memsz;
		const char *notes = (const char *)(image->dlpi_addr + segment->p_vaddr);
		uint32_t head[3]; /* name's size, descriptor's size, type */
		while (segment->p_type == PT_NOTE && size - at >= sizeof head) {
			memcpy(head, notes + at, sizeof head);
			/* The name follows the head, the descriptor rounds up after both. */
			size_t desc = at + note_round(sizeof head + head[0], align);
			if (desc > size || note_round(head[1], align) > size - desc)
				break;
			if (head[0] == 10 && head[1] == 4 && head[2] == 1 && memcmp(notes + at + sizeof head, "coroutine", 10) == 0) {
				int32_t offset;
				memcpy(&offset, notes + desc, sizeof offset);
				add_copy((struct copies *)copies, (struct fault_chain_link *)(notes + desc + offset));
			}
			at = desc + note_round(head[1], align);
		}
	}
	return 0;
}

static void find_copies(struct copies *c)
{
	c->n = 0;
	dl_iterate_phdr(find_copies_in_image, c);
}
#endif

/* The copy whose handler action is, if any. */
static struct fault_chain_link *copy_installed_as(const struct copies *c, const struct sigaction *action)
{
	for (size_t k = 0; k < c->n && (action->sa_flags & SA_SIGINFO); k++)
		if (c->link[k]->handler == action->sa_sigaction)
			return c->link[k];
	return NULL;
}

/* This copy leaves the chain of each signal, wherever it sits in it. */
static void stop_watching_faults(void)
{
	struct copies c;
	find_copies(&c);
	for (size_t i = 0; i < FAULT_SIGNALS; i++) {
		struct sigaction now;
		if (sigaction(fault_signals[i], NULL, &now) != 0)
			continue;
		if (is_ours(&now)) {
			sigaction(fault_signals[i], &this_copy.earlier[i], NULL);
			continue;
		}
		struct fault_chain_link *above = copy_installed_as(&c, &now);
		for (size_t steps = 0; above != NULL && above != &this_copy && steps < c.n; steps++) {
			if (is_ours(&above->earlier[i])) {
				above->earlier[i] = this_copy.earlier[i];
				break;
			}
			above = copy_installed_as(&c, &above->earlier[i]);
		}
	}
}
#endif

/* Under AddressSanitizer, a local whose address is taken lives in a "fake
 * stack" that ASan keeps per coroutine (detect_stack_use_after_return=1),
 * off the run stack, and a pointer to it goes on working there.  So while
 * its coroutine is suspended, the locals of its live fake frames are
 * poisoned: ASan stops whoever uses such a pointer, main or another
 * coroutine, and our line follows its report.  Nobody else has any business
 * there, so no valid program trips.  The frames are found the way a
 * conservative collector finds its roots: the words of the saved slice and
 * registers that point into a live frame of the coroutine's fake stack. */
#if HIDE_FAKE_FRAMES
struct fake_frame {
	char *begin, *end;
	size_t shadow_at; /* where its shadow as it was lies in hidden->shadow */
};

struct hidden_frames {
	struct fake_frame *frame;
	size_t n, room;
	unsigned char *shadow;
	size_t shadow_n, shadow_room;
};

/* array (room elements of size bytes), or where realloc moved it to hold
 * need, doubling; NULL when out of memory, array as it was (the frame is
 * then left unpoisoned: a check missed, nothing more). */
static void *grown_to(void *array, size_t *room, size_t need, size_t size)
{
	if (need <= *room)
		return array;
	size_t more = need > 2 * *room ? need : 2 * *room;
	void *grown = realloc(array, more * size);
	if (grown != NULL)
		*room = more;
	return grown;
}

/* If word points into a live fake frame of C's not yet hidden, its shadow
 * is kept and the bytes of its locals (shadow 0 to 7) poisoned. */
NO_ASAN static void hide_frame_at(struct coroutine *C, uintptr_t word)
{
	void *begin, *end;
	if (__asan_addr_is_in_fake_stack(C->fake_stack, (void *)word, &begin, &end) == NULL)
		return;
	struct hidden_frames *h = C->hidden;
	for (size_t i = 0; i < h->n; i++)
		if (h->frame[i].begin == begin)
			return;
	size_t scale;
	unsigned char *shadow = shadow_of(begin, &scale);
	size_t n = ((uintptr_t)end - (uintptr_t)begin) >> scale;
	struct fake_frame *frames = (struct fake_frame *)grown_to(h->frame, &h->room, h->n + 1, sizeof *frames);
	if (frames == NULL)
		return;
	h->frame = frames;
	unsigned char *saved = (unsigned char *)grown_to(h->shadow, &h->shadow_room, h->shadow_n + n, 1);
	if (saved == NULL)
		return;
	h->shadow = saved;
	struct fake_frame f = { (char *)begin, (char *)end, h->shadow_n };
	h->frame[h->n++] = f;
	copy_slice((char *)h->shadow + h->shadow_n, (const char *)shadow, n); /* no memcpy: ASan would check it */
	h->shadow_n += n;
	for (size_t i = 0; i < n; i++)
		if (shadow[i] < 8) /* addressable, all 8 bytes or the first few */
			shadow[i] = 0xf7; /* ASan's "poisoned by the user" */
}

/* C has just yielded (its fake stack is known once it has left). */
NO_ASAN static void hide_fake_frames(struct schedule *S, struct coroutine *C)
{
	if (C->fake_stack == NULL)
		return; /* ASan keeps its locals on the run stack */
	if (C->hidden == NULL && (C->hidden = (struct hidden_frames *)calloc(1, sizeof *C->hidden)) == NULL)
		return;
	const char *slice = slice_in_block(C, top_of(S, C) - C->size, (size_t)C->size);
	uintptr_t word;
	for (size_t i = 0; i + sizeof word <= (size_t)C->size; i += sizeof word)
		hide_frame_at(C, (memcpy(&word, slice + i, sizeof word), word));
	for (size_t i = 0; i + sizeof word <= sizeof C->ctx; i += sizeof word)
		hide_frame_at(C, (memcpy(&word, (const char *)&C->ctx + i, sizeof word), word));
}

/* C is about to run again. */
NO_ASAN static void show_fake_frames(struct coroutine *C)
{
	struct hidden_frames *h = C->hidden;
	if (h == NULL)
		return;
	size_t scale;
	for (size_t i = 0; i < h->n; i++) {
		const struct fake_frame *f = &h->frame[i];
		unsigned char *shadow = shadow_of(f->begin, &scale);
		copy_slice((char *)shadow, (const char *)h->shadow + f->shadow_at, (size_t)(f->end - f->begin) >> scale);
	}
	h->n = h->shadow_n = 0;
}

/* C goes.  Its fake frames need not be shown first: ASan clears the shadow
 * of a fake stack that it frees (gcc 12's and clang 14's runtimes). */
static void forget_hidden_frames(struct coroutine *C)
{
	if (C->hidden != NULL) {
		free(C->hidden->frame);
		free(C->hidden->shadow);
		free(C->hidden);
		C->hidden = NULL;
	}
}

/* The line, if address is in a hidden frame of a suspended coroutine of an
 * open schedule. */
static void describe_fake_touch(struct report_line *line, const char *address, const char *verb)
{
	for (struct schedule *S = open_schedules; S != NULL; S = S->next_open)
		for (int id = 0; id < S->cap; id++) {
			const struct hidden_frames *h = S->co[id] != &no_coroutine ? S->co[id]->hidden : NULL;
			for (size_t i = 0; h != NULL && i < h->n; i++)
				if (address >= h->frame[i].begin && address < h->frame[i].end) {
					add_toucher(line, S, verb);
					add_text(line, " ");
					add_coroutine(line, id);
					add_text(line, "'s stack (a local that ASan keeps off the run stack, ");
					add_schedule(line, S);
					add_rule(line, id);
					return;
				}
		}
}

/* Called by ASan after each of its reports, before the process ends. */
static void on_asan_report(const char *)
{
	if (strcmp(__asan_get_report_description(), "use-after-poison") == 0)
		report_touch(__asan_get_report_address(), __asan_get_report_access_type() ? "wrote to" : "read", 1);
}

/* ASan keeps one callback, and tells nobody which: a program's own, set
 * before the first open, is replaced (after it, it replaces ours).  With no
 * fake stacks, locals stay on the run stack where nothing can poison them
 * (the frames of the running coroutine grow there): the check would miss
 * them silently, so the first open says so. */
static void watch_asan_reports(void)
{
	static const char notice[] = "coroutine_open: the checked build stops a use of a suspended "
		"coroutine's local under AddressSanitizer only with ASAN_OPTIONS=detect_stack_use_after_return=1 "
		"(without it, ASan keeps such locals on the run stack)\n";
	if (__asan_get_current_fake_stack() == NULL)
		print_to_stderr(notice, sizeof notice - 1);
	__asan_set_error_report_callback(on_asan_report);
}

static void stop_watching_asan_reports(void) { __asan_set_error_report_callback(NULL); }
#else
static void hide_fake_frames(struct schedule *, struct coroutine *) {}
static void show_fake_frames(struct coroutine *) {}
static void forget_hidden_frames(struct coroutine *) {}
static void describe_fake_touch(struct report_line *, const char *, const char *) {}
static void watch_asan_reports(void) {}
static void stop_watching_asan_reports(void) {}
#endif

/* Window w of S: its run stack and the room above its top. */
static void set_window_access(struct schedule *S, int w, int access)
{
	set_access(S->stack - (size_t)w * WINDOW_STRIDE, MAPPED_STACK_SIZE, access);
}

/* From the top of a resume: the coroutine's window, and its locals. */
static void run_stack_in_reach(struct schedule *S)
{
	struct coroutine *C = S->co[S->running];
	set_window_access(S, WINDOW_OF(C), ACCESS_READ_WRITE);
	S->window_in_reach = 1 + WINDOW_OF(C);
	S->last_in_window[WINDOW_OF(C)] = 1 + S->running;
	show_fake_frames(C);
}

/* Back in main: the window in reach (all of them, as mapped, at the open;
 * the guards never are); the coroutine that yielded, if any, is the owner. */
static void run_stack_out_of_reach(struct schedule *S)
{
	for (int w = 0; w < WINDOWS; w++)
		if (S->window_in_reach == 0 || S->window_in_reach == 1 + w)
			set_window_access(S, w, ACCESS_NONE);
	S->window_in_reach = -1;
	if (S->owner != NULL)
		hide_fake_frames(S, S->owner);
}

/* Round robin: a new coroutine's window (a clone keeps its original's). */
static void place_in_window(struct schedule *S, struct coroutine *C)
{
	C->window = (unsigned char)(S->next_window++ % WINDOWS);
}

static void watch_run_stacks(void)
{
	watch_faults();
	watch_asan_reports();
}

static void stop_watching_run_stacks(void)
{
	stop_watching_asan_reports();
	stop_watching_faults();
}
