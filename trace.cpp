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
 * (the next resume decides whether they are overwritten), and so is the
 * dead frame of the save below them (save_stack or save_shallow_stack,
 * which returned before the switch).  Where the run stack is, a probe
 * coroutine told before the demo's first resume (it runs once and ends);
 * coroutine_stack_size gives the slice, [top - size, top).  In it, or just
 * below it, the save's return address into coroutine_yield: the call
 * before it names the save, and where it lies gives coroutine_yield's
 * stack pointer as the save returned.  From that register state the C++
 * runtime's unwinder (_Unwind_Backtrace, reading each function's call
 * frame information) walks up through coroutine_yield, foo and
 * run_coroutine to the entry.  Each frame's canonical frame address (CFA:
 * the stack pointer in its caller just before the call, gdb's "frame at")
 * is where it ends, so the bytes between two CFAs are one frame's share of
 * the slice; the save's share runs from the slice's bottom (the rest of
 * its frame, its dummy and below, is not saved).  _Unwind_Backtrace starts
 * from where it is called, not from a state we give it, so it is called
 * from a signal handler whose interrupted state is set to ours for the
 * walk: unwinders read a signal frame's registers from the saved state.
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
	int returned;            /* the coroutine returned: no yield */
	long copied_out;         /* bytes copied out at the yield */
	long heap_before[2];     /* both heap copies before and after the */
	long heap[2];            /* step: bytes, 0 none yet, -1 freed */
	char said_before[32];    /* what the demo printed before the resume */
	char said[64];           /* and during it */
	int nframes;
	struct frame frames[MAX_FRAMES];
	const struct step *frames_before; /* the yield that left the slice */
	const struct step *overwritten;   /* at a first run, the other's */
};

#define MAX_STEPS 32
static struct step steps[MAX_STEPS], spare, *now = &spare;
static int nsteps;
static int html;
static long heap_now[2];
static struct step *last_yield[2]; /* each coroutine's, for its frames */

/* Whose bytes are on the run stack: the last coroutine resumed, unless it
 * has ended.  coroutine_resume skips the copy back for that one. */
static int on_run_stack = -1;

/* ---- The frames of a yield ------------------------------------------------- */

#if defined(__linux__) && defined(__GLIBC__) && \
	(defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)) && !defined(TRACE_NO_FRAMES)
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

/* Where the run stack is: a probe coroutine notes its frame's address, and
 * the run stack is the mapping that holds it, which starts where its
 * inaccessible guard ends. */
static uintptr_t run_stack_top;

static void probe(struct schedule *, void *ud)
{
	/* Not a local's address: under ASan a local may live elsewhere. */
	*(uintptr_t *)ud = (uintptr_t)__builtin_frame_address(0);
}

static void find_run_stack(struct schedule *S)
{
	uintptr_t inside = 0;
	unsigned long start, end;
	char line[256];
	int id = coroutine_new(S, probe, &inside);
	coroutine_resume(S, id);
	FILE *maps = fopen("/proc/self/maps", "r");
	if (maps == NULL)
		return;
	while (fgets(line, sizeof line, maps) != NULL)
		if (sscanf(line, "%lx-%lx", &start, &end) == 2 && start <= inside && inside < end)
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
	int32_t words = (int32_t)((insn & 0x03ffffffu) << 6) >> 6; /* signed imm26 */
	return ra - 4 + (uintptr_t)((intptr_t)words * 4);
#endif
}

/* The register state to unwind from: a pc, the stack and frame pointers,
 * and (aarch64) the link register. */
struct regs {
	uintptr_t pc, sp, fp, lr;
};

#define WORD sizeof(uintptr_t)

/*
 * The state to unwind from, just after the save returned into
 * coroutine_yield, given R, the slot that held the save's return address:
 * the pc it holds, the stack pointer coroutine_yield had (the save's CFA),
 * and coroutine_yield's frame pointer, which a save built with frame
 * pointers keeps in the word below R (without them nothing reads it).
 * x86: the call pushed the return address at the top of the save's frame,
 * so the stack pointer was just above it.  Built without optimisation,
 * coroutine_yield then calls the switch rather than jumping to it, and
 * that call's return address has replaced the save's in R (see
 * save_name).  aarch64: bl leaves the return address in the link
 * register, and the save's first instruction, stp x29, x30, [sp, #-n]!,
 * stores both in its frame record, n bytes below its CFA.  Returns the
 * save's CFA, or 0.
 */
static uintptr_t start_state(uintptr_t R, struct regs *r)
{
	r->pc = *(uintptr_t *)R;
	r->fp = *(uintptr_t *)(R - WORD);
	r->lr = r->pc;
#if defined(__x86_64__) || defined(__i386__)
	r->sp = R + WORD;
#else
	uintptr_t save = call_target(r->pc);
	uint32_t insn;
	if (save == 0)
		return 0;
	memcpy(&insn, (const void *)save, 4);
	if ((insn & 0xffc07fffu) != 0xa9807bfdu) /* stp x29, x30, [sp, #imm]! */
		return 0;
	int32_t imm = (int32_t)(insn << 10) >> 25; /* signed imm7, in words */
	r->sp = R - WORD - (uintptr_t)((intptr_t)imm * 8);
#endif
	return r->sp;
}

/* Whether the function at f is called, by a call naming it, from the
 * function [from, from + len). */
static int calls(uintptr_t from, uintptr_t len, uintptr_t f)
{
	for (uintptr_t ra = from + 5; ra <= from + len; ra++)
		if (call_target(ra) == f)
			return 1;
	return 0;
}

/* name, cut to fit len bytes. */
static void copy_name(char *out, size_t len, const char *name)
{
	size_t n = strlen(name);
	if (n >= len)
		n = len - 1;
	memcpy(out, name, n);
	out[n] = '\0';
}

/*
 * The last resort, when calls made after the save (under ASan, its fiber
 * bookkeeping) wrote over every return address the save left: the save is
 * one of the functions named save_ that coroutine_yield calls.  Where there
 * are two (the asm backend's save_shallow_stack and save_stack), the one
 * without a frame, the shallow one, has its slice's bottom, its dummy in
 * the red zone, just below the return address in R; save_stack's frame
 * puts it further down.
 */
static void saves_called(uintptr_t R, uintptr_t bottom, uintptr_t yield, uintptr_t yield_len, char *out, size_t len)
{
	char name[256], deep[256] = "", shallow[256] = "";
	for (uintptr_t ra = yield + 5; ra <= yield + yield_len; ra++) {
		uintptr_t f = call_target(ra);
		if (f == 0 || function_start(f) != f)
			continue;
		name_at(f, name, sizeof name);
		if (strncmp(name, "save_shallow", 12) == 0)
			copy_name(shallow, sizeof shallow, name);
		else if (strncmp(name, "save_", 5) == 0)
			copy_name(deep, sizeof deep, name);
	}
	const char *save = shallow[0] != '\0' && bottom + WORD >= R ? shallow : deep;
	copy_name(out, len, save[0] != '\0' ? save : "the save");
}

/*
 * The save's name (x86).  Usually the call that left the return address in
 * R names it.  When coroutine_yield called the switch instead (built
 * without optimisation), the save's own calls, just below its frame, still
 * hold their return addresses into it.  So may the calls of the functions
 * coroutine_yield called before the save (give_back_eh_state's, say), in
 * words that the save's frame covers but never wrote: the memory does not
 * say which came last.  The library names its two saves save_stack and
 * save_shallow_stack, so a return address into a function of that name is
 * taken first; else the highest one below R into a function that
 * coroutine_yield calls.
 */
static void save_name(uintptr_t R, uintptr_t bottom, uintptr_t yield, uintptr_t yield_len, char *out, size_t len)
{
	uintptr_t save = call_target(*(uintptr_t *)R);
	if (save != 0 && function_start(save) == save) {
		name_at(save, out, len);
		if (strcmp(out, "coroutine_switch_context") != 0)
			return;
	}
	char name[256];
	out[0] = '\0';
	for (uintptr_t slot = R - WORD; slot > R - 512; slot -= WORD) {
		uintptr_t f = function_start(*(uintptr_t *)slot - 1);
		if (f == 0 || f == yield || !calls(yield, yield_len, f))
			continue;
		name_at(f, name, sizeof name);
		if (strncmp(name, "save_", 5) == 0) {
			copy_name(out, len, name);
			return;
		}
		if (out[0] == '\0')
			copy_name(out, len, name);
	}
	if (out[0] == '\0')
		saves_called(R, bottom, yield, yield_len, out, len);
}

static int returns_into(uintptr_t slot, uintptr_t function)
{
	return function_start(*(uintptr_t *)slot - 1) == function;
}

/*
 * R, the slot that holds the save's return address into coroutine_yield.
 * x86: the call pushed it at the top of the save's frame, inside the
 * slice or (a save with no frame, whose dummy is in the red zone) just
 * below it: a word from there up.  aarch64: the save keeps it in its
 * frame record at the bottom of its frame, below the slice, which is dead
 * but still there: a word below the slice.  A word that looks like it may
 * be stale: an earlier yield's, made with a deeper stack (before foo's
 * last call became a tail call, say), whose slice the resume copied back,
 * lying in a part of the save's frame that the save never wrote.  So this
 * gives the candidates one at a time, nearest the slice's bottom first,
 * each after the one in *R (0: none yet), and find_frames takes the first
 * that unwinds up to the top.
 */
static int save_return_slot(uintptr_t bottom, uintptr_t top, uintptr_t yield, uintptr_t *R)
{
#if defined(__x86_64__) || defined(__i386__)
	for (*R = *R == 0 ? bottom - 2 * WORD : *R + WORD; *R < top; *R += WORD)
		if (returns_into(*R, yield))
			return 1;
#else
	(void)top;
	for (*R = *R == 0 ? bottom - WORD : *R - WORD; *R >= bottom - 256; *R -= WORD)
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

/* Whether the walk went up through the slice: each frame's CFA above the
 * last (w->cfa[i] is frame i - 1's, see below), up to the top or to the
 * few words below it that the entry keeps. */
static int walk_reaches(const struct walk *w, uintptr_t bottom, uintptr_t top)
{
	uintptr_t below = bottom;
	for (int i = 1; i < w->n; i++) {
		if (w->cfa[i] <= below || w->cfa[i] > top + 64)
			return 0;
		if (w->cfa[i] >= top)
			return 1;
		below = w->cfa[i];
	}
	return below + 64 >= top;
}

/*
 * The walk up from coroutine_yield as the save returned to it, given R,
 * the slot that held the save's return address.  Returns the save's CFA,
 * or 0 if that walk does not go up through the slice to its top.
 */
static uintptr_t walk_up_from(uintptr_t R, uintptr_t bottom, uintptr_t top, struct walk *w)
{
	memset(w, 0, sizeof *w);
	uintptr_t save_cfa = start_state(R, &w->start);
	if (save_cfa == 0)
		return 0;
	walk_from(w);
	/* Where coroutine_yield's CFA depends on its frame pointer and the
	 * word below R no longer holds it (calls made after the save, as
	 * under ASan, reuse that word), the frame pointer is the slot below
	 * a return address higher in the slice, where each frame with one
	 * keeps its caller's: the first that gives a walk up to the top. */
	for (uintptr_t slot = R + WORD; !walk_reaches(w, bottom, top) && slot + WORD < top; slot += WORD)
		if (function_start(*(uintptr_t *)(slot + WORD) - 1) != 0) {
			w->start.fp = slot;
			w->n = 0;
			w->found = 0;
			walk_from(w);
		}
	return walk_reaches(w, bottom, top) ? save_cfa : 0;
}

#if defined(__aarch64__)
/*
 * aarch64, when no word below the slice returns into coroutine_yield: the
 * save had no frame (save_shallow_stack calls nothing), and its return
 * address stayed in the link register.  The walk then starts in
 * coroutine_yield just after its call of the save, with the stack pointer
 * it had there, the slice's bottom, which is also its frame pointer (its
 * frame record lies at the bottom of its frame).  Returns the save's CFA,
 * the bottom, or 0; names the save in name.
 */
static uintptr_t walk_up_from_frameless_save(uintptr_t bottom, uintptr_t top, uintptr_t yield, uintptr_t yield_len,
					      struct walk *w, char *name, size_t len)
{
	for (uintptr_t ra = yield + 4; ra <= yield + yield_len; ra += 4) {
		uintptr_t f = call_target(ra);
		if (f == 0 || function_start(f) != f)
			continue;
		name_at(f, name, len);
		if (strncmp(name, "save_shallow", 12) != 0)
			continue;
		memset(w, 0, sizeof *w);
		w->start.pc = w->start.lr = ra;
		w->start.sp = w->start.fp = bottom;
		walk_from(w);
		if (walk_reaches(w, bottom, top))
			return bottom;
	}
	name[0] = '\0';
	return 0;
}
#endif

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
	uintptr_t R = 0, save_cfa = 0;
	if (top == 0 || yield == 0)
		return;
	char frameless_save[NAME_LEN] = "";
	while (save_cfa == 0 && save_return_slot(bottom, top, yield, &R))
		save_cfa = walk_up_from(R, bottom, top, &w);
#if defined(__aarch64__)
	if (save_cfa == 0)
		save_cfa = walk_up_from_frameless_save(bottom, top, yield, yield_len, &w, frameless_save,
						       sizeof frameless_save);
#endif
	if (save_cfa == 0)
		return;
	/* The save goes first, ending where coroutine_yield's stack pointer
	 * was: its CFA. */
	memmove(w.pc + 1, w.pc, (MAX_FRAMES - 1) * sizeof *w.pc);
	memmove(w.cfa + 1, w.cfa, (MAX_FRAMES - 1) * sizeof *w.cfa);
	w.cfa[1] = save_cfa;
	w.n = w.n < MAX_FRAMES ? w.n + 1 : MAX_FRAMES;
	/* The unwinder shows a frame before it works out that frame's CFA:
	 * the CFA it reports is the one of the frame below.  The last frame
	 * listed is the one whose return address is the slice's highest,
	 * the entry: all of its frame but that (and, with makecontext, what
	 * makecontext put above it) lies above the top. */
	long below = (long)bottom;
	int n = 0;
	Dl_info info;
	/* A return address in no loaded file ends the walk: the entry's
	 * caller is nobody, and what lies above is the entry's. */
	for (int i = 2; i < w.n; i++)
		if (!dladdr((void *)w.pc[i], &info)) {
			w.n = i;
			break;
		}
	while (n < w.n && below < (long)top) {
		long end = n + 1 < w.n ? (long)w.cfa[n + 1] : (long)top;
		if (end > (long)top)
			end = (long)top;
		if (n == 0 && frameless_save[0] != '\0')
			copy_name(s->frames[0].name, sizeof s->frames[0].name, frameless_save);
		else if (n == 0)
			save_name(R, bottom, yield, yield_len, s->frames[0].name, sizeof s->frames[0].name);
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
	if (size <= 0)
		printf(size == 0 ? "none yet" : "freed");
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
		printf(FRAMES_KNOWN ? "       (its frames were not found)\n"
				    : "       (its frames cannot be found on this platform)\n");
		return;
	}
	printf("       frames in the slice, top of the run stack first:\n");
	for (int i = 0; i < s->nframes; i++)
		printf("       %6ld B  %s\n", s->frames[i].size, s->frames[i].name);
}

/* The trace's line for a resume, and for what followed it. */
static void resume_line(const struct step *s, char *line, size_t len)
{
	if (s->first_run)
		snprintf(line, len, "resume %d: first run, starts at the top of the run stack", s->id);
	else if (s->owned)
		snprintf(line, len, "resume %d: its %ld bytes are still on the run stack, nothing to copy", s->id,
			 s->owned);
	else
		snprintf(line, len, "resume %d: copy %ld bytes back from its heap copy to top-%ld .. top", s->id,
			 s->copied_in, s->copied_in);
}

static void after_line(const struct step *s, char *line, size_t len)
{
	if (s->returned)
		snprintf(line, len, "coroutine %d returned: its slot and its heap copy are freed", s->id);
	else
		snprintf(line, len, "yield  %d: copied %ld bytes, top-%ld .. top, out to its heap copy", s->id,
			 s->copied_out, s->copied_out);
}

/* ---- --trace=html: the demo's own lines, kept for the page ------------------ */

#ifdef _WIN32
#include <io.h>
#else
#include <unistd.h>
#endif

/* With --trace=html the page goes to standard output, at the end; until
 * then the demo writes to a scratch file, read back line by line. */
static int page_fd = -1;
static FILE *said_file;
static long said_done;

static void keep_demo_lines(void)
{
	fflush(stdout);
	said_file = tmpfile();
	page_fd = dup(1);
	if (said_file == NULL || page_fd < 0 || dup2(fileno(said_file), 1) < 0) {
		fprintf(stderr, "--trace=html: cannot set standard output aside\n");
		exit(1);
	}
}

/* What the demo printed since the last call. */
static void demo_said(char *out, size_t len)
{
	fflush(stdout);
	long end = (long)lseek(1, 0, SEEK_CUR);
	size_t n = end > said_done ? (size_t)(end - said_done) : 0;
	if (n >= len)
		n = len - 1;
	lseek(1, said_done, SEEK_SET);
	n = n > 0 ? (size_t)read(fileno(said_file), out, n) : 0;
	out[n] = '\0';
	said_done = end;
	lseek(1, end, SEEK_SET);
}

/* ---- --trace=html: the page --------------------------------------------------- */

static FILE *page;

static void json_string(const char *text)
{
	fputc('"', page);
	for (; *text != '\0'; text++) {
		if (*text == '"' || *text == '\\')
			fprintf(page, "\\%c", *text);
		else if (*text == '\n')
			fputs("\\n", page);
		else if (*text == '<')
			fputs("\\u003c", page);
		else
			fputc(*text, page);
	}
	fputc('"', page);
}

static void json_frames(const struct step *s)
{
	fputc('[', page);
	for (int i = 0; s != NULL && i < s->nframes; i++) {
		fprintf(page, "%s[", i ? "," : "");
		json_string(s->frames[i].name);
		fprintf(page, ",%ld]", s->frames[i].size);
	}
	fputc(']', page);
}

/* One step of the page: what the run stack holds (owner -1: nothing), both
 * heap copies, and the bytes that moved (dir "out", "in", "kept", "none"). */
static void json_step(const char *title, const char *said, int owner, long bytes, const struct step *frames,
		      const long heap[2], const char *dir, long moved, int id)
{
	fputs("{title:", page);
	json_string(title);
	fputs(",said:", page);
	json_string(said);
	fprintf(page, ",id:%d,owner:%d,bytes:%ld,frames:", id, owner, bytes);
	json_frames(frames);
	fprintf(page, ",heap:[%ld,%ld],dir:\"%s\",moved:%ld", heap[0], heap[1], dir, moved);
}

/* A first run: the run stack still holds the last yield's bytes, which
 * the new coroutine's frames overwrite. */
static void json_overwritten(const struct step *old)
{
	if (old != NULL) {
		fprintf(page, ",old:%d,oldbytes:%ld,oldframes:", old->id, old->copied_out);
		json_frames(old);
	}
}

static const char page_head[] = R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Stack copying, step by step</title>
<style>
body { font: 22px/1.35 system-ui, sans-serif; margin: 0; padding: 16px 28px; color: #111; background: #fff; }
h1 { font-size: 30px; margin: 0 0 4px; }
#title { font: bold 24px/1.3 ui-monospace, monospace; margin: 6px 0; min-height: 2.6em; }
#said { font: 22px ui-monospace, monospace; color: #064; min-height: 1.4em; white-space: pre; }
nav { display: flex; gap: 16px; align-items: center; margin: 8px 0 14px; }
button { font: inherit; padding: 6px 22px; border-radius: 8px; border: 2px solid #334; background: #eef; cursor: pointer; }
button:disabled { opacity: 0.4; cursor: default; }
#picture { display: flex; flex-wrap: wrap; gap: 28px; align-items: flex-start; }
.column { display: flex; flex-direction: column; }
.column h2 { font-size: 22px; margin: 0 0 6px; }
.stack { position: relative; width: 400px; border: 3px solid #222; border-bottom: 3px dashed #888; background: repeating-linear-gradient(45deg, #fff, #fff 8px, #f2f2f2 8px, #f2f2f2 16px); }
.frame { position: absolute; left: 0; right: 0; box-sizing: border-box; border-bottom: 2px solid #222; padding: 0 10px; display: flex; justify-content: space-between; align-items: center; overflow: hidden; font: 18px/1 ui-monospace, monospace; }
.frame span:last-child { white-space: nowrap; padding-left: 8px; }
.frame.empty { border-bottom: 2px dotted #222; height: 0 !important; overflow: visible; }
.frame.empty span { position: relative; top: -0.75em; background: #fff; padding: 0 4px; }
.c0 { background: #ffd98a; } .c1 { background: #9fd3ff; }
.old { position: absolute; left: 0; right: 0; box-sizing: border-box; border-bottom: 2px dashed #777; padding: 0 10px; opacity: 0.4; overflow: hidden; font: 18px/1 ui-monospace, monospace; }
.oldnote { position: absolute; left: 8px; right: 8px; font-size: 17px; color: #444; }
.moving { outline: 5px solid #d22; outline-offset: -5px; }
.slice { position: absolute; left: -3px; right: -3px; top: -3px; border: 5px solid #d22; pointer-events: none; }
.ruler { position: absolute; left: -80px; width: 74px; text-align: right; font: 18px ui-monospace, monospace; }
#arrow { width: 200px; flex-shrink: 0; text-align: center; font-weight: bold; padding-top: 60px; }
#arrow .bytes { font-size: 34px; display: block; }
#heaps { display: flex; gap: 24px; }
.heap { width: 200px; }
.frame small { font-size: 14px; }
.heap .box { box-sizing: border-box; border: 3px solid #222; }
.heap .label { font: 17px ui-monospace, monospace; white-space: nowrap; }
.heap.freed .box { display: none; }
#legend { margin-top: 12px; font-size: 18px; color: #444; max-width: 1150px; }
</style>
</head>
<body>
<h1>Stack copying, step by step: <code>./main --trace</code></h1>
<nav><button id="prev" type="button">&larr; previous</button>
<span>step <b id="step">1</b> of <b id="steps">1</b></span>
<button id="next" type="button">next &rarr;</button>
<span style="font-size:17px;color:#555">(or the arrow keys)</span></nav>
<div id="title"></div>
<div id="said"></div>
<div id="picture">
 <div class="column" style="margin-left:80px"><h2>run stack (top)</h2><div class="stack" id="stack"></div></div>
 <div id="arrow"></div>
 <div class="column"><h2>heap copies</h2><div id="heaps"></div></div>
</div>
<p id="legend">Drawn to scale: every frame is as tall as its bytes.  A coroutine's bytes are on
the run stack only while it runs (or until another one runs); at a yield its live slice,
from the save's <code>dummy</code> up to the top, is copied out to its heap copy, and at a
resume copied back to the same addresses, unless its bytes are still there.</p>
<script>
)";

static const char page_tail[] = R"(
var at = 0, scale = 1;
function el(tag, cls, text) {
  var e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
function draw() {
  var s = steps[at], stack = document.getElementById("stack"), heaps = document.getElementById("heaps");
  document.getElementById("step").textContent = at + 1;
  document.getElementById("title").textContent = s.title;
  document.getElementById("said").textContent = s.said;
  document.getElementById("prev").disabled = at === 0;
  document.getElementById("next").disabled = at === steps.length - 1;
  stack.textContent = "";
  stack.style.height = (deepest + 48) * scale + "px";
  var y = 0;
  if (s.owner < 0 && s.old !== undefined) {
    /* what the last yield left, about to be overwritten */
    s.oldframes.forEach(function (f) {
      var d = el("div", "old c" + s.old, f[0].split(", ")[0]);
      d.style.top = y * scale + "px";
      d.style.height = f[1] * scale + "px";
      stack.appendChild(d);
      y += f[1];
    });
    var note = el("div", "oldnote", "coroutine " + s.old + "'s bytes: coroutine " + s.id + "'s frames overwrite them");
    note.style.top = y * scale + 6 + "px";
    stack.appendChild(note);
  }
  if (s.owner >= 0) {
    s.frames.forEach(function (f) {
      var d = el("div", "frame c" + s.owner + (f[1] === 0 ? " empty" : ""));
      d.dataset.name = f[0];
      d.dataset.bytes = f[1];
      d.style.top = y * scale + "px";
      d.style.height = f[1] * scale + "px";
      var name = el("span", "", f[0].split(", ")[0]);
      if (f[0].indexOf(", ") > 0) {
        name.appendChild(document.createElement("br"));
        name.appendChild(el("small", "", f[0].slice(f[0].indexOf(", ") + 2)));
      }
      d.appendChild(name);
      d.appendChild(el("span", "", f[1] + " B"));
      stack.appendChild(d);
      y += f[1];
    });
    if (s.frames.length === 0) {
      var d = el("div", "frame c" + s.owner, "coroutine " + s.owner + ": " + s.bytes + " B");
      d.style.height = s.bytes * scale + "px";
      stack.appendChild(d);
    }
  }
  if (s.owner >= 0 && s.dir !== "none") {
    var slice = el("div", "slice");
    slice.style.height = s.bytes * scale + "px";
    stack.appendChild(slice);
  }
  var top = el("div", "ruler", "top");
  top.style.top = "-0.7em";
  stack.appendChild(top);
  if (s.owner >= 0) {
    var bottom = el("div", "ruler", "-" + s.bytes);
    bottom.style.top = s.bytes * scale - 12 + "px";
    stack.appendChild(bottom);
  }
  var free = el("div", "ruler", "free");
  free.style.top = (deepest + 20) * scale + "px";
  stack.appendChild(free);
  var arrow = document.getElementById("arrow");
  arrow.textContent = "";
  arrow.dataset.dir = s.dir;
  arrow.dataset.bytes = s.moved;
  arrow.id = "arrow";
  if (s.dir === "out") {
    arrow.appendChild(el("span", "bytes", s.moved + " B \u2192"));
    arrow.appendChild(el("span", "", "copied out to coroutine " + s.id + "'s heap copy"));
  } else if (s.dir === "in") {
    arrow.appendChild(el("span", "bytes", "\u2190 " + s.moved + " B"));
    arrow.appendChild(el("span", "", "copied back from coroutine " + s.id + "'s heap copy"));
  } else if (s.dir === "kept") {
    arrow.appendChild(el("span", "bytes", "0 B"));
    arrow.appendChild(el("span", "", "nothing to copy: its " + s.moved + " bytes are still on the run stack"));
  } else {
    arrow.appendChild(el("span", "bytes", "0 B"));
    arrow.appendChild(el("span", "", s.dir === "none" && s.title.indexOf("first run") >= 0 ? "first run: nothing to copy" : "nothing moves"));
  }
  heaps.textContent = "";
  s.heap.forEach(function (b, id) {
    var h = el("div", "heap" + (b < 0 ? " freed" : ""));
    h.dataset.id = id;
    h.dataset.bytes = b;
    var label = el("div", "label", "coroutine " + id);
    label.appendChild(document.createElement("br"));
    label.appendChild(document.createTextNode(b > 0 ? b + " bytes" : b === 0 ? "none yet" : "freed"));
    h.appendChild(label);
    var box = el("div", "box c" + id + ((s.dir === "out" || s.dir === "in") && s.id === id ? " moving" : ""));
    box.style.height = Math.max(b, 0) * scale + "px";
    h.appendChild(box);
    heaps.appendChild(h);
  });
  if (history.replaceState) history.replaceState(null, "", "#step=" + (at + 1));
}
function go(n) { at = Math.max(0, Math.min(steps.length - 1, n)); draw(); }
var deepest = 0;
steps.forEach(function (s) { deepest = Math.max(deepest, s.bytes, s.heap[0], s.heap[1]); });
scale = Math.max(1, Math.min(4, Math.floor(440 / (deepest + 48))));
document.getElementById("steps").textContent = steps.length;
document.getElementById("prev").onclick = function () { go(at - 1); };
document.getElementById("next").onclick = function () { go(at + 1); };
document.addEventListener("keydown", function (e) {
  if (e.key === "ArrowRight" || e.key === "ArrowDown" || e.key === " ") { go(at + 1); e.preventDefault(); }
  if (e.key === "ArrowLeft" || e.key === "ArrowUp") { go(at - 1); e.preventDefault(); }
});
/* #step=N opens step N; &next=K then presses "next" K times. */
var m = /step=(\d+)/.exec(location.hash), k = /next=(\d+)/.exec(location.hash);
go(m ? parseInt(m[1], 10) - 1 : 0);
for (var i = 0; k && i < parseInt(k[1], 10); i++) document.getElementById("next").click();
</script>
</body>
</html>
)";

static void write_page(void)
{
	static const long no_heap[2] = { 0, 0 };
	char title[160];
	fflush(stdout);
	page = fdopen(page_fd, "w");
	if (page == NULL)
		return;
	fputs(page_head, page);
	fputs("var steps = [\n", page);
	for (int i = 0; i < nsteps; i++) {
		const struct step *s = &steps[i];
		resume_line(s, title, sizeof title);
		if (s->first_run) {
			json_step(title, s->said_before, -1, 0, NULL, i ? s->heap_before : no_heap, "none", 0, s->id);
			json_overwritten(s->overwritten);
		} else {
			json_step(title, s->said_before, s->id, s->owned + s->copied_in, s->frames_before,
				  s->heap_before, s->owned ? "kept" : "in", s->owned + s->copied_in, s->id);
		}
		fputs("},\n", page);
		after_line(s, title, sizeof title);
		if (s->returned)
			json_step(title, s->said, -1, 0, NULL, s->heap, "none", 0, s->id);
		else
			json_step(title, s->said, s->id, s->copied_out, s, s->heap, "out", s->copied_out, s->id);
		fputs("},\n", page);
	}
	fputs("];\n", page);
	fputs(page_tail, page);
	fclose(page);
}

/* ---- The hooks main calls ---------------------------------------------------- */

static int started;

void trace_resume(struct schedule *S, int id)
{
	char line[160];
	if (!started) {
		started = 1;
		start_frames(S);
	}
	now = nsteps < MAX_STEPS ? &steps[nsteps++] : &spare;
	long size = coroutine_stack_size(S, id);
	memset(now, 0, sizeof *now);
	now->id = id;
	if (coroutine_status(S, id) == COROUTINE_READY)
		now->first_run = 1;
	else if (id == on_run_stack)
		now->owned = size;
	else
		now->copied_in = size;
	now->frames_before = id >= 0 && id < 2 ? last_yield[id] : NULL;
	if (now->first_run && on_run_stack >= 0 && on_run_stack < 2)
		now->overwritten = last_yield[on_run_stack];
	memcpy(now->heap_before, heap_now, sizeof heap_now);
	if (html) {
		demo_said(now->said_before, sizeof now->said_before);
	} else {
		resume_line(now, line, sizeof line);
		printf("  %s\n", line);
		fflush(stdout);
	}
}

void trace_after_resume(struct schedule *S, int id, int other)
{
	struct step *s = now;
	char line[160];
	s->other = other;
	if (coroutine_status(S, id) == COROUTINE_DEAD) {
		s->returned = 1;
		on_run_stack = -1;
		if (id >= 0 && id < 2)
			heap_now[id] = -1;
	} else {
		s->copied_out = coroutine_stack_size(S, id);
		if (id >= 0 && id < 2) {
			heap_now[id] = s->copied_out;
			last_yield[id] = s;
		}
		find_frames(s, s->copied_out);
		on_run_stack = id;
	}
	memcpy(s->heap, heap_now, sizeof heap_now);
	if (html) {
		demo_said(s->said, sizeof s->said);
		return;
	}
	after_line(s, line, sizeof line);
	printf("  %s\n", line);
	if (!s->returned) {
		draw_stacks(s);
		show_frames(s);
	}
}

int trace_start(const char *arg)
{
	if (arg == NULL)
		return 0;
	if (strcmp(arg, "--trace") == 0)
		return 1;
	if (strcmp(arg, "--trace=html") == 0) {
		html = 1;
		keep_demo_lines();
		return 1;
	}
	return -1;
}

void trace_end(void)
{
	if (!html)
		return;
	if (nsteps > 0) {
		struct step *last = &steps[nsteps - 1];
		size_t n = strlen(last->said);
		demo_said(last->said + n, sizeof last->said - n);
	}
	write_page();
}
