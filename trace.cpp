/*
 * The demo's --trace: after every switch, what it copied, and for every
 * yield the frames inside the saved slice, named and measured as the
 * program runs.  --trace=html writes the same story as one page to step
 * through.  The library knows nothing of this: everything here is found
 * from outside, with the public API, the run stack's memory and an
 * unwinder.
 *
 * How the frames of a yield are found, after coroutine_yield has switched
 * back to main.  The yielding coroutine's bytes are still on the run stack
 * (the next resume decides whether they are overwritten), and so are the
 * dead frame of the save below them (save_stack or save_shallow_stack,
 * which returned before the switch).  coroutine_stack_size gives the
 * slice, [top - size, top).  The lowest return address into
 * coroutine_yield there is the save's: the call that pushed it names the
 * save, and where it lies gives the save's stack pointer at its entry.
 * From that register state the C++ runtime's unwinder
 * (_Unwind_Backtrace, reading each function's call frame information)
 * walks up through coroutine_yield, foo and run_coroutine to the entry;
 * each frame's canonical frame address (CFA: the stack pointer in its
 * caller just before the call) is where it ends, so the bytes between two
 * CFAs are one frame's share of the slice.  _Unwind_Backtrace starts from
 * where it is called, not from a state we give it, so it is called from a
 * signal handler whose interrupted state is set to ours for the walk:
 * unwinders read a signal frame's registers from the saved state.
 * libbacktrace (GCC's, from the debug information) names each frame as
 * gdb does, inlined calls included.
 */
#include "trace.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- What the trace collects --------------------------------------------- */

#define MAX_FRAMES 12
#define NAME_LEN 96

struct frame {
	char name[NAME_LEN]; /* as gdb names it; inlined calls after a comma */
	long size;           /* its bytes in the slice */
};

/* One step of the demo: a resume, then what it ended with. */
struct step {
	int id, other;
	int first_run;           /* resume of a coroutine that never ran */
	long copied_in;          /* bytes copied back at the resume (0: none) */
	long owned;              /* bytes left on the run stack, not copied */
	char printed[64];        /* what the coroutine printed */
	int returned;            /* the coroutine returned: no yield */
	long copied_out;         /* bytes copied out at the yield */
	long heap[2];            /* both heap copies after the step */
	int nframes;
	struct frame frames[MAX_FRAMES];
};

#define MAX_STEPS 32
static struct step steps[MAX_STEPS];
static int nsteps;
static int html;

/* Whose bytes are on the run stack: the last coroutine resumed, unless it
 * has ended.  coroutine_resume skips the copy back for that one. */
static int on_run_stack = -1;

/* ---- The frames of a yield ------------------------------------------------- */

#if defined(__linux__) && (defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)) && \
	!defined(TRACE_NO_FRAMES)
#define FRAMES_KNOWN 1
#else
#define FRAMES_KNOWN 0
#endif

#if FRAMES_KNOWN
#include <cxxabi.h>
#include <dlfcn.h>
#include <signal.h>
#include <ucontext.h>
#include <unwind.h>

/* The run stack's size, as coroutine.cpp has it. */
#ifndef COROUTINE_STACK_SIZE
#define COROUTINE_STACK_SIZE (1024 * 1024)
#endif

/* libbacktrace (shipped with GCC as libbacktrace.a): its documented API. */
extern "C" {
struct backtrace_state;
typedef void (*backtrace_error_callback)(void *data, const char *msg, int errnum);
typedef int (*backtrace_full_callback)(void *data, uintptr_t pc, const char *filename, int lineno,
				       const char *function);
typedef void (*backtrace_syminfo_callback)(void *data, uintptr_t pc, const char *symname, uintptr_t symval,
					   uintptr_t symsize);
struct backtrace_state *backtrace_create_state(const char *filename, int threaded,
					       backtrace_error_callback error_callback, void *data);
int backtrace_pcinfo(struct backtrace_state *state, uintptr_t pc, backtrace_full_callback callback,
		     backtrace_error_callback error_callback, void *data);
int backtrace_syminfo(struct backtrace_state *state, uintptr_t addr, backtrace_syminfo_callback callback,
		      backtrace_error_callback error_callback, void *data);
}

static struct backtrace_state *symbols;

static void ignore_error(void *, const char *, int)
{
}

/* A name as gdb prints it in a backtrace: demangled, without parameters. */
static void plain_name(const char *symbol, char *out, size_t len)
{
	int status = 0;
	char *demangled = abi::__cxa_demangle(symbol, NULL, NULL, &status);
	const char *name = status == 0 && demangled != NULL ? demangled : symbol;
	size_t n = strcspn(name, "(");
	if (n >= len)
		n = len - 1;
	memcpy(out, name, n);
	out[n] = '\0';
	free(demangled);
}

struct naming {
	char *out;
	size_t len;
	int calls; /* inlined calls first, then the function holding them */
};

/* libbacktrace reports the innermost inlined call first; gdb lists the
 * function that holds them, then what was inlined into it. */
static int name_from_line_info(void *data, uintptr_t, const char *, int, const char *function)
{
	struct naming *n = (struct naming *)data;
	char name[NAME_LEN], joined[2 * NAME_LEN];
	if (function == NULL)
		return 0;
	plain_name(function, name, sizeof name);
	if (n->calls++ == 0)
		snprintf(joined, sizeof joined, "%s", name);
	else
		snprintf(joined, sizeof joined, "%s, %s inlined", name, n->out);
	snprintf(n->out, n->len, "%s", joined);
	return 0;
}

static void name_from_symbol(void *data, uintptr_t, const char *symname, uintptr_t, uintptr_t)
{
	struct naming *n = (struct naming *)data;
	if (symname != NULL) {
		plain_name(symname, n->out, n->len);
		n->calls = 1;
	}
}

/* The name of the function at pc: from the debug information, else the
 * symbol table, else "??" and the file it is in, as gdb says it. */
static void name_at(uintptr_t pc, char *out, size_t len)
{
	struct naming n = { out, len, 0 };
	Dl_info info;
	out[0] = '\0';
	backtrace_pcinfo(symbols, pc, name_from_line_info, ignore_error, &n);
	if (n.calls == 0)
		backtrace_syminfo(symbols, pc, name_from_symbol, ignore_error, &n);
	if (n.calls == 0) {
		const char *file = dladdr((void *)pc, &info) && info.dli_fname ? info.dli_fname : "";
		const char *base = strrchr(file, '/');
		snprintf(out, len, "?? (%s)", base ? base + 1 : file);
	}
}

/* Where the run stack is: a probe coroutine notes the address of a local,
 * and the run stack is the mapping that holds it, which starts where its
 * inaccessible guard ends. */
static uintptr_t run_stack_top;

static void probe(struct schedule *, void *ud)
{
	volatile char local = 0;
	*(uintptr_t *)ud = (uintptr_t)&local;
}

static void find_run_stack(struct schedule *S)
{
	uintptr_t inside = 0, start, end;
	char line[256];
	int id = coroutine_new(S, probe, &inside);
	coroutine_resume(S, id);
	FILE *maps = fopen("/proc/self/maps", "r");
	if (maps == NULL)
		return;
	while (fgets(line, sizeof line, maps) != NULL)
		if (sscanf(line, "%lx-%lx", (unsigned long *)&start, (unsigned long *)&end) == 2 &&
		    start <= inside && inside < end)
			run_stack_top = start + COROUTINE_STACK_SIZE;
	fclose(maps);
}

/* The function that holds code address pc: its start (0 if none), and
 * its length in bytes. */
static void note_start(void *data, uintptr_t, const char *symname, uintptr_t symval, uintptr_t symsize)
{
	uintptr_t *f = (uintptr_t *)data;
	f[0] = symname != NULL ? symval : 0;
	f[1] = symsize;
}

static uintptr_t function_start(uintptr_t pc, uintptr_t *len = NULL)
{
	uintptr_t f[2] = { 0, 0 };
	backtrace_syminfo(symbols, pc, note_start, ignore_error, f);
	if (len != NULL)
		*len = f[1];
	return f[0];
}

/*
 * The function that the call returning to ra called, if the call names it:
 * x86's call rel32, aarch64's bl.  0 otherwise.
 */
static uintptr_t call_target(uintptr_t ra)
{
#if defined(__x86_64__) || defined(__i386__)
	const unsigned char *call = (const unsigned char *)ra - 5;
	int32_t offset;
	if (call[0] != 0xe8)
		return 0;
	memcpy(&offset, call + 1, 4);
	return ra + (uintptr_t)(intptr_t)offset;
#else
	uint32_t insn;
	memcpy(&insn, (const void *)(ra - 4), 4);
	if ((insn & 0xfc000000u) != 0x94000000u)
		return 0;
	int64_t words = (int64_t)((insn & 0x03ffffffu) << 6) >> 6;
	return ra - 4 + (uintptr_t)(words * 4);
#endif
}

/* The register state to unwind from: a pc, the stack and frame pointers,
 * and (aarch64) the link register. */
struct regs {
	uintptr_t pc, sp, fp, lr;
};

#define WORD sizeof(uintptr_t)

/*
 * The state to unwind from, given R, the slot that held the save's return
 * address into coroutine_yield.  x86: the call pushed it at the top of the
 * save's frame, so the state just after the save returned has the pc it
 * holds and the stack pointer just above it; the frame pointer is still
 * coroutine_yield's, in the word below, where a save built with frame
 * pointers pushed it (without them nothing reads it).  The walk starts in
 * coroutine_yield: built without optimisation, coroutine_yield calls the
 * switch rather than jumping to it, and that call's return address has
 * replaced the save's in R (see save_name).  aarch64: bl leaves the return
 * address in the link register, and the save's first instruction, stp
 * x29, x30, [sp, #-n]!, stores both in its frame record, which nothing
 * overwrites: the walk starts in the save, just after that instruction,
 * with sp at the record.
 */
#if defined(__x86_64__) || defined(__i386__)
#define WALK_STARTS_IN_SAVE 0
static int start_state(uintptr_t R, struct regs *r)
{
	r->pc = *(uintptr_t *)R;
	r->sp = R + WORD;
	r->fp = *(uintptr_t *)(R - WORD);
	return 1;
}
#else
#define WALK_STARTS_IN_SAVE 1
static int start_state(uintptr_t R, struct regs *r)
{
	uintptr_t save = call_target(*(uintptr_t *)R);
	uint32_t insn;
	if (save == 0)
		return 0;
	memcpy(&insn, (const void *)save, 4);
	if ((insn & 0xffc07fffu) != 0xa9807bfdu) /* stp x29, x30, [sp, #imm]! */
		return 0;
	r->pc = save + 4;
	r->sp = R - WORD;
	r->fp = *(uintptr_t *)(R - WORD);
	r->lr = *(uintptr_t *)R;
	return 1;
}
#endif

/* Whether the function at f is called, by a call naming it, from the
 * function [from, from + len). */
static int calls(uintptr_t from, uintptr_t len, uintptr_t f)
{
	for (uintptr_t ra = from + 5; ra <= from + len; ra++)
		if (call_target(ra) == f)
			return 1;
	return 0;
}

/*
 * The save's name (x86).  Usually the call that left the return address in
 * R names it.  When coroutine_yield called the switch instead (built
 * without optimisation), the save's own calls, just below its frame, still
 * hold their return addresses into it: the highest return address below R
 * into a function that coroutine_yield calls is the save's.
 */
static void save_name(uintptr_t R, uintptr_t yield, uintptr_t yield_len, char *out, size_t len)
{
	uintptr_t save = call_target(*(uintptr_t *)R);
	if (save != 0 && function_start(save) == save) {
		name_at(save, out, len);
		if (strcmp(out, "coroutine_switch_context") != 0)
			return;
	}
	for (uintptr_t slot = R - WORD; slot > R - 512; slot -= WORD) {
		uintptr_t f = function_start(*(uintptr_t *)slot - 1);
		if (f != 0 && f != yield && calls(yield, yield_len, f)) {
			name_at(f, out, len);
			return;
		}
	}
	snprintf(out, len, "the save");
}

static int returns_into(uintptr_t slot, uintptr_t function)
{
	return function_start(*(uintptr_t *)slot - 1) == function;
}

/*
 * R, the slot that holds the save's return address into coroutine_yield.
 * x86: the call pushed it at the top of the save's frame, inside the
 * slice or (a save with no frame, whose dummy is in the red zone) just
 * below it: the lowest such word from there.  aarch64: the save keeps it in its
 * frame record at the bottom of its frame, below the slice, which is dead
 * but still there: the highest such word below the slice.
 */
static int save_return_slot(uintptr_t bottom, uintptr_t top, uintptr_t yield, uintptr_t *R)
{
#if defined(__x86_64__) || defined(__i386__)
	for (*R = bottom - 2 * WORD; *R < top; *R += WORD)
		if (returns_into(*R, yield))
			return 1;
#else
	(void)top;
	for (*R = bottom - WORD; *R >= bottom - 256; *R -= WORD)
		if (returns_into(*R, yield))
			return 1;
#endif
	return 0;
}

/* ---- Unwinding from a given state, through a signal frame ---- */

struct walk {
	struct regs start;
	int found; /* the frame with start's pc has been reached */
	int n;
	uintptr_t pc[MAX_FRAMES], cfa[MAX_FRAMES];
};

static struct walk *walking;

static _Unwind_Reason_Code note_frame(struct _Unwind_Context *context, void *data)
{
	struct walk *w = (struct walk *)data;
	int before = 0;
	uintptr_t pc = _Unwind_GetIPInfo(context, &before);
	if (!w->found && !(before && pc == w->start.pc))
		return _URC_NO_REASON;
	w->found = 1;
	if (w->n == MAX_FRAMES)
		return _URC_END_OF_STACK;
	/* A return address is after its call: pc - 1 is in the call (and
	 * the start, just after a call or an instruction, is in its function). */
	w->pc[w->n] = pc - 1;
	w->cfa[w->n] = _Unwind_GetCFA(context);
	w->n++;
	return _URC_NO_REASON;
}

static void unwind_from(int, siginfo_t *, void *context)
{
	ucontext_t *uc = (ucontext_t *)context;
	struct regs *r = &walking->start;
#if defined(__x86_64__)
	greg_t *g = uc->uc_mcontext.gregs, kept[3] = { g[REG_RIP], g[REG_RSP], g[REG_RBP] };
	g[REG_RIP] = (greg_t)r->pc, g[REG_RSP] = (greg_t)r->sp, g[REG_RBP] = (greg_t)r->fp;
	_Unwind_Backtrace(note_frame, walking);
	g[REG_RIP] = kept[0], g[REG_RSP] = kept[1], g[REG_RBP] = kept[2];
#elif defined(__i386__)
	greg_t *g = uc->uc_mcontext.gregs, kept[3] = { g[REG_EIP], g[REG_ESP], g[REG_EBP] };
	g[REG_EIP] = (greg_t)r->pc, g[REG_ESP] = (greg_t)r->sp, g[REG_EBP] = (greg_t)r->fp;
	_Unwind_Backtrace(note_frame, walking);
	g[REG_EIP] = kept[0], g[REG_ESP] = kept[1], g[REG_EBP] = kept[2];
#else
	mcontext_t *m = &uc->uc_mcontext, kept = *m;
	m->pc = r->pc, m->sp = r->sp, m->regs[29] = r->fp, m->regs[30] = r->lr;
	_Unwind_Backtrace(note_frame, walking);
	*m = kept;
#endif
}

static void walk_from(struct walk *w)
{
	struct sigaction action, old;
	memset(&action, 0, sizeof action);
	action.sa_sigaction = unwind_from;
	action.sa_flags = SA_SIGINFO;
	sigemptyset(&action.sa_mask);
	walking = w;
	sigaction(SIGUSR1, &action, &old);
	raise(SIGUSR1);
	sigaction(SIGUSR1, &old, NULL);
}

/*
 * The frames of the slice [bottom, top) that id left at its yield, top of
 * the run stack first, into s->frames.  The save's share is from the slice
 * bottom up to its CFA: the rest of its frame (its dummy and below) is not
 * saved.  The entry's share is from run_coroutine's CFA to the top.
 */
static void find_frames(struct step *s, long size)
{
	uintptr_t top = run_stack_top, bottom = top - (uintptr_t)size;
	uintptr_t yield_len, yield = function_start((uintptr_t)coroutine_yield, &yield_len);
	struct walk w;
	uintptr_t R;
	memset(&w, 0, sizeof w);
	if (top == 0 || yield == 0 || !save_return_slot(bottom, top, yield, &R) || !start_state(R, &w.start))
		return;
	walk_from(&w);
	if (w.n == 0)
		return;
	if (!WALK_STARTS_IN_SAVE) {
		/* The save goes first, ending where coroutine_yield's stack
		 * pointer was: its CFA. */
		memmove(w.pc + 1, w.pc, (MAX_FRAMES - 1) * sizeof *w.pc);
		memmove(w.cfa + 1, w.cfa, (MAX_FRAMES - 1) * sizeof *w.cfa);
		w.cfa[1] = R + WORD;
		w.n = w.n < MAX_FRAMES ? w.n + 1 : MAX_FRAMES;
	}
	/* The unwinder shows a frame before it works out that frame's CFA:
	 * the CFA it reports is the one of the frame below.  The last frame
	 * listed is the one whose return address is the slice's highest,
	 * the entry: all of its frame but that (and, with makecontext, what
	 * makecontext put above it) lies above the top. */
	long below = (long)bottom;
	int n = 0;
	while (n < w.n && below < (long)top) {
		long end = n + 1 < w.n ? (long)w.cfa[n + 1] : (long)top;
		if (end > (long)top)
			end = (long)top;
		if (n == 0 && !WALK_STARTS_IN_SAVE)
			save_name(R, yield, yield_len, s->frames[0].name, sizeof s->frames[0].name);
		else
			name_at(w.pc[n], s->frames[n].name, sizeof s->frames[n].name);
		s->frames[n].size = end - below;
		below = end;
		n++;
	}
	if (n < w.n && below == (long)top) {
		name_at(w.pc[n], s->frames[n].name, sizeof s->frames[n].name);
		s->frames[n++].size = 0;
	}
	/* Top of the run stack first. */
	for (int i = 0; i < n / 2; i++) {
		struct frame f = s->frames[i];
		s->frames[i] = s->frames[n - 1 - i];
		s->frames[n - 1 - i] = f;
	}
	s->nframes = n;
}

static void start_frames(struct schedule *S)
{
	symbols = backtrace_create_state(NULL, 0, ignore_error, NULL);
	find_run_stack(S);
}
#else
static void find_frames(struct step *, long)
{
}

static void start_frames(struct schedule *)
{
}
#endif

/* ---- --trace: the text ---------------------------------------------------- */

static void show_heap_copy(long size)
{
	if (size == 0)
		printf("none yet");
	else
		printf("%ld bytes", size);
}

/* The run stack just after id yielded, beside both coroutines' heap copies. */
static void draw_stacks(const struct step *s)
{
	printf("       run stack                       heap\n");
	printf("   top +---------------------+\n");
	printf("       | coroutine %d %4ld B  |  -->  coroutine %d: ", s->id, s->copied_out, s->id);
	show_heap_copy(s->heap[s->id]);
	printf("\n  -%-4ld+---------------------+       coroutine %d: ", s->copied_out, s->other);
	show_heap_copy(s->heap[s->other]);
	printf("\n       :        free         :\n");
}

static void show_frames(const struct step *s)
{
	if (s->nframes == 0) {
		printf("       (its frames cannot be found on this platform)\n");
		return;
	}
	printf("       frames in the slice, top of the run stack first:\n");
	for (int i = 0; i < s->nframes; i++)
		printf("       %6ld B  %s\n", s->frames[i].size, s->frames[i].name);
}

static void print_resume(const struct step *s)
{
	if (s->first_run)
		printf("  resume %d: first run, starts at the top of the run stack\n", s->id);
	else if (s->owned)
		printf("  resume %d: its %ld bytes are still on the run stack, nothing to copy\n", s->id, s->owned);
	else
		printf("  resume %d: copy %ld bytes back from its heap copy to top-%ld .. top\n", s->id,
		       s->copied_in, s->copied_in);
}

static void print_after(const struct step *s)
{
	if (s->returned) {
		printf("  coroutine %d returned: its slot and its heap copy are freed\n", s->id);
		return;
	}
	printf("  yield  %d: copied %ld bytes, top-%ld .. top, out to its heap copy\n", s->id, s->copied_out,
	       s->copied_out);
	draw_stacks(s);
	show_frames(s);
}

/* ---- The hooks main calls ---------------------------------------------------- */

static struct step spare;
static int started;

static struct step *current(void)
{
	return nsteps > 0 ? &steps[nsteps - 1] : &spare;
}

void trace_resume(struct schedule *S, int id)
{
	if (!started) {
		started = 1;
		start_frames(S);
	}
	struct step *s = nsteps < MAX_STEPS ? &steps[nsteps++] : &spare;
	long size = coroutine_stack_size(S, id);
	memset(s, 0, sizeof *s);
	s->id = id;
	if (coroutine_status(S, id) == COROUTINE_READY)
		s->first_run = 1;
	else if (id == on_run_stack)
		s->owned = size;
	else
		s->copied_in = size;
	if (!html) {
		print_resume(s);
		fflush(stdout);
	}
}

void trace_after_resume(struct schedule *S, int id, int other)
{
	struct step *s = current();
	s->other = other;
	if (coroutine_status(S, id) == COROUTINE_DEAD) {
		s->returned = 1;
		on_run_stack = -1;
	} else {
		s->copied_out = coroutine_stack_size(S, id);
		s->heap[id] = s->copied_out;
		s->heap[other] = coroutine_stack_size(S, other);
		find_frames(s, s->copied_out);
		on_run_stack = id;
	}
	if (!html)
		print_after(s);
}

int trace_start(const char *arg)
{
	if (arg == NULL)
		return 0;
	if (strcmp(arg, "--trace") == 0)
		return 1;
	if (strcmp(arg, "--trace=html") == 0) {
		html = 1;
		return 1;
	}
	return -1;
}

void trace_end(void)
{
}
