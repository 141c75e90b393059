/*
 * The frames of a saved slice, for the demo's --trace (trace.cpp), named
 * and measured as the program runs.  The library knows nothing of this:
 * everything here is found from outside, with the public API, the run
 * stack's memory and an unwinder.
 *
 * How the frames of a yield are found, after coroutine_yield has switched
 * back to main.  The yielding coroutine's bytes are still on the run stack
 * (the next resume decides whether they are overwritten), and so is the
 * dead frame of the save below them (save_slice or save_slice_quickly,
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
#include "trace_frames.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The run stack's size, and its guard's, as coroutine.cpp's defaults. */
#ifndef COROUTINE_STACK_SIZE
#define COROUTINE_STACK_SIZE (1024 * 1024)
#endif
#define GUARD_SIZE (1024L * 1024)

#if defined(__linux__) && defined(__GLIBC__) && \
	(defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)) && !defined(TRACE_NO_FRAMES)
#define FRAMES_KNOWN 1
#else
#define FRAMES_KNOWN 0
#endif

/* Whether a call pushes the return address on the stack (x86), where
 * the call frame information gives it a rule like a saved register's. */
#if defined(__x86_64__) || defined(__i386__)
#define CALL_PUSHES_RETURN 1
#else
#define CALL_PUSHES_RETURN 0
#endif

#if FRAMES_KNOWN
#include <cxxabi.h>
#include <dlfcn.h>
#include <setjmp.h>
#include <signal.h>
#include <ucontext.h>
#include <unwind.h>

const int frames_known = 1;

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

/* A name as gdb prints it in a backtrace: demangled, without parameters,
 * and without the return type that a template function's name carries
 * ("context* save_slice<0>"): what follows the last space outside <>. */
static void plain_name(const char *symbol, char *out, size_t len)
{
	int status = 0;
	char *demangled = abi::__cxa_demangle(symbol, NULL, NULL, &status);
	const char *name = status == 0 && demangled != NULL ? demangled : symbol;
	size_t n = strcspn(name, "(");
	int depth = 0;
	for (size_t i = n; i-- > 0;) {
		depth += name[i] == '>' ? 1 : name[i] == '<' ? -1 : 0;
		if (name[i] == ' ' && depth == 0) {
			name += i + 1;
			n -= i + 1;
			break;
		}
	}
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
 * function that holds them, then what was inlined into it, outermost
 * first: "f, g inlined, h inlined" for h inlined into g inlined into f. */
static int name_from_line_info(void *data, uintptr_t, const char *, int, const char *function)
{
	struct naming *n = (struct naming *)data;
	char name[NAME_LEN], joined[2 * NAME_LEN];
	if (function == NULL)
		return 0;
	plain_name(function, name, sizeof name);
	if (n->calls++ == 0) {
		snprintf(joined, sizeof joined, "%s", name);
	} else {
		/* the function named so far (before the first comma) was inlined */
		size_t held = strcspn(n->out, ",");
		snprintf(joined, sizeof joined, "%s, %.*s inlined%s", name, (int)held, n->out, n->out + held);
	}
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
 * What makecontext puts at the top of a context's stack, for its function
 * to return to: the start of libc's start routine (glibc's
 * __start_context), a local symbol that neither gdb nor libbacktrace can
 * name.  The trace finds it as it finds the rest: makecontext on a scratch
 * stack leaves it in a word of that stack (x86) or in the link register
 * (aarch64), the one that points into libc.
 */
static uintptr_t start_routine;

static void never_run(void)
{
}

static int in_libc(uintptr_t address)
{
	Dl_info info;
	if (address == 0 || !dladdr((void *)address, &info) || info.dli_fname == NULL)
		return 0;
	const char *base = strrchr(info.dli_fname, '/');
	return strncmp(base ? base + 1 : info.dli_fname, "libc.so", 7) == 0;
}

static void find_start_routine(void)
{
	static uintptr_t stack[64];
	ucontext_t uc;
	if (getcontext(&uc) != 0)
		return;
	uc.uc_stack.ss_sp = stack;
	uc.uc_stack.ss_size = sizeof stack;
	uc.uc_link = NULL;
	makecontext(&uc, never_run, 0);
#if defined(__aarch64__)
	if (in_libc(uc.uc_mcontext.regs[30]))
		start_routine = uc.uc_mcontext.regs[30];
#else
	for (int i = 63; i >= 0 && start_routine == 0; i--)
		if (in_libc(stack[i]))
			start_routine = stack[i];
#endif
}

/* A frame's name (pc is just before its return address), and for the one
 * makecontext left, what it is. */
static void name_frame(uintptr_t pc, char *out, size_t len)
{
	name_at(pc, out, len);
	if (start_routine != 0 && pc + 1 == start_routine && strncmp(out, "??", 2) == 0) {
		char file[40];
		copy_name(file, sizeof file, out + 2);
		snprintf(out, len, "makecontext's start routine%s", file);
	}
}

/* Where the run stack is: a probe coroutine notes its frame's address, and
 * the run stack is the mapping that holds it, which starts where its
 * inaccessible guard, the mapping below, ends. */
static uintptr_t run_stack_top;
static long guard_size;

static void probe(struct schedule *, void *ud)
{
	/* Not a local's address: under ASan a local may live elsewhere. */
	*(uintptr_t *)ud = (uintptr_t)__builtin_frame_address(0);
}

static void find_run_stack(struct schedule *S)
{
	uintptr_t inside = 0;
	unsigned long start, end, below_start = 0, below_end = 0;
	char line[256], perms[8], below_perms[8] = "";
	int id = coroutine_new(S, probe, &inside);
	coroutine_resume(S, id);
	run_stack_top = 0;
	guard_size = 0;
	FILE *maps = fopen("/proc/self/maps", "r");
	if (maps == NULL)
		return;
	while (fgets(line, sizeof line, maps) != NULL) {
		if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) != 3)
			continue;
		if (start <= inside && inside < end) {
			run_stack_top = start + COROUTINE_STACK_SIZE;
			if (below_end == start && strncmp(below_perms, "---", 3) == 0)
				guard_size = (long)(below_end - below_start);
		}
		below_start = start, below_end = end;
		memcpy(below_perms, perms, sizeof perms);
	}
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

/* coroutine_yield's code, [yield, yield + yield_len), found once. */
static uintptr_t yield, yield_len;

/* The next function that coroutine_yield calls by name, after the call
 * that returns to *ra (0: from the start); *ra becomes that call's return
 * address.  0 after the last. */
static uintptr_t next_call(uintptr_t *ra)
{
#if defined(__x86_64__) || defined(__i386__)
	const uintptr_t first = 5, step = 1; /* call rel32, at any byte */
#else
	const uintptr_t first = 4, step = 4; /* bl */
#endif
	for (*ra = *ra == 0 ? yield + first : *ra + step; *ra <= yield + yield_len; *ra += step) {
		uintptr_t f = call_target(*ra);
		if (f != 0 && function_start(f) == f)
			return f;
	}
	return 0;
}

/* Whether coroutine_yield calls the function at f by name. */
static int yield_calls(uintptr_t f)
{
	uintptr_t ra = 0, g;
	while ((g = next_call(&ra)) != 0)
		if (g == f)
			return 1;
	return 0;
}


/*
 * The last resort, when calls made after the save (under ASan, its fiber
 * bookkeeping) wrote over every return address the save left: the save is
 * one of the functions named save_ that coroutine_yield calls.  Where there
 * are two (the asm backend's save_slice_quickly and save_slice), the one
 * without a frame, the quick one, has its slice's bottom, its dummy in
 * the red zone, just below the return address in R; save_slice's frame
 * puts it further down.
 */
static void saves_called(uintptr_t R, uintptr_t bottom, char *out, size_t len)
{
	char name[256], deep[256] = "", shallow[256] = "";
	uintptr_t ra = 0, f;
	while ((f = next_call(&ra)) != 0) {
		name_at(f, name, sizeof name);
		if (strncmp(name, "save_slice_quickly", 18) == 0)
			copy_name(shallow, sizeof shallow, name);
		else if (strncmp(name, "save_", 5) == 0)
			copy_name(deep, sizeof deep, name);
	}
	const char *save = shallow[0] != '\0' && bottom + WORD >= R ? shallow : deep;
	copy_name(out, len, save[0] != '\0' ? save : "the save");
}

/*
 * The save's name.  Usually the call that left the return address in
 * R names it.  When coroutine_yield called the switch instead (built
 * without optimisation), the save's own calls, just below its frame, still
 * hold their return addresses into it.  So may the calls of the functions
 * coroutine_yield called before the save (give_back_eh_state's, say), in
 * words that the save's frame covers but never wrote: the memory does not
 * say which came last.  The library names its two saves save_slice and
 * save_slice_quickly, so a return address into a function of that name is
 * taken first; else the highest one below R into a function that
 * coroutine_yield calls.
 */
static void save_name(uintptr_t R, uintptr_t bottom, char *out, size_t len)
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
		if (f == 0 || f == yield || !yield_calls(f))
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
		saves_called(R, bottom, out, len);
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
static int save_return_slot(uintptr_t bottom, uintptr_t top, uintptr_t *R)
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

/* ---- What a frame's bytes are: the registers it saved ---- */

/*
 * How many registers the function at pc had saved on its stack by pc, as
 * its call frame information says (.eh_frame, which the unwinder reads
 * too): the rules in force at pc that put a register at an offset from
 * the CFA.  On x86 the return address, which the call pushed, has such a
 * rule too, and is not counted.  -1 where the information cannot be read
 * (an encoding or an instruction this reader does not know).
 */
struct dwarf_eh_bases {
	void *tbase, *dbase, *func;
};
extern "C" const void *_Unwind_Find_FDE(void *pc, struct dwarf_eh_bases *bases);

static uint64_t uleb(const unsigned char **p)
{
	uint64_t v = 0;
	int shift = 0;
	while (**p & 0x80)
		v |= (uint64_t)(*(*p)++ & 0x7f) << shift, shift += 7;
	return v | (uint64_t)(*(*p)++) << shift;
}

static int64_t sleb(const unsigned char **p)
{
	int64_t v = 0;
	int shift = 0;
	unsigned char b;
	do {
		b = *(*p)++;
		v |= (int64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	return shift < 64 && (b & 0x40) ? v | -((int64_t)1 << shift) : v;
}

/* The size of a pointer in .eh_frame's encoding enc (DW_EH_PE_*), 0 if not fixed. */
static size_t encoded_size(unsigned enc)
{
	switch (enc & 0x0f) {
	case 0x00: return sizeof(void *); /* absptr */
	case 0x02: case 0x0a: return 2;
	case 0x03: case 0x0b: return 4;
	case 0x04: case 0x0c: return 8;
	default: return 0;
	}
}

/* Which registers have a rule that saves them on the stack. */
#define CFI_REGS 128
struct cfi_state {
	unsigned char saved[CFI_REGS];
};

/* Runs the call frame instructions [p, end) from location loc up to pc,
 * into *now (initial: the CIE's rules, for DW_CFA_restore).  Returns 0 if
 * an instruction is not known. */
static int run_cfi(const unsigned char *p, const unsigned char *end, uintptr_t loc, uintptr_t pc,
		   uint64_t code_align, struct cfi_state *now, const struct cfi_state *initial)
{
	struct cfi_state remembered[4];
	int depth = 0;
	while (p < end) {
		unsigned op = *p++, low = op & 0x3f;
		uint64_t reg = 0, delta = 0;
		switch (op & 0xc0) {
		case 0x40: delta = low; break;                                  /* advance_loc */
		case 0x80: reg = low; uleb(&p); now->saved[reg] = 1; continue; /* offset */
		case 0xc0: now->saved[low] = initial ? initial->saved[low] : 0; continue; /* restore */
		}
		switch (op) {
		case 0x00: continue;                                            /* nop */
		default:
			if ((op & 0xc0) != 0x40)
				return 0;
			break;
		case 0x02: delta = *p++; break;                                 /* advance_loc1 */
		case 0x03: delta = p[0] | p[1] << 8; p += 2; break;             /* advance_loc2 */
		case 0x04: delta = p[0] | p[1] << 8 | p[2] << 16 | (uint64_t)p[3] << 24; p += 4; break;
		case 0x05: case 0x2f: reg = uleb(&p); uleb(&p); goto save;      /* offset_extended */
		case 0x11: reg = uleb(&p); sleb(&p); goto save;                 /* offset_extended_sf */
		case 0x10: reg = uleb(&p); p += uleb(&p); goto save;            /* expression */
		case 0x06: reg = uleb(&p);                                      /* restore_extended */
			if (reg < CFI_REGS) now->saved[reg] = initial ? initial->saved[reg] : 0;
			continue;
		case 0x07: case 0x08: reg = uleb(&p); goto forget;              /* undefined, same_value */
		case 0x09: case 0x14: reg = uleb(&p); uleb(&p); goto forget;    /* register, val_offset */
		case 0x15: reg = uleb(&p); sleb(&p); goto forget;               /* val_offset_sf */
		case 0x16: reg = uleb(&p); p += uleb(&p); goto forget;          /* val_expression */
		case 0x0a: if (depth == 4) return 0; remembered[depth++] = *now; continue;
		case 0x0b: if (depth == 0) return 0; *now = remembered[--depth]; continue;
		case 0x0c: uleb(&p); uleb(&p); continue;                        /* def_cfa */
		case 0x0d: case 0x0e: case 0x2e: uleb(&p); continue;            /* def_cfa_register, _offset, args_size */
		case 0x12: uleb(&p); sleb(&p); continue;                        /* def_cfa_sf */
		case 0x13: sleb(&p); continue;                                  /* def_cfa_offset_sf */
		case 0x0f: p += uleb(&p); continue;                             /* def_cfa_expression */
		}
		/* an advance: stop once past pc */
		loc += delta * code_align;
		if (loc > pc)
			return 1;
		continue;
	save:
		if (reg < CFI_REGS)
			now->saved[reg] = 1;
		continue;
	forget:
		if (reg < CFI_REGS)
			now->saved[reg] = 0;
	}
	return 1;
}

static int saved_registers(uintptr_t pc)
{
	struct dwarf_eh_bases bases;
	const unsigned char *fde = (const unsigned char *)_Unwind_Find_FDE((void *)pc, &bases), *p, *end;
	if (fde == NULL || *(const uint32_t *)fde == 0xffffffff)
		return -1;
	/* The CIE the FDE names: its augmentation, alignment, return address
	 * column, the FDE pointers' encoding and its initial rules. */
	const unsigned char *cie = fde + 4 - *(const int32_t *)(fde + 4);
	const unsigned char *cie_end = cie + 4 + *(const uint32_t *)cie;
	unsigned version = cie[8], fde_enc = 0;
	const char *aug = (const char *)cie + 9;
	p = (const unsigned char *)aug + strlen(aug) + 1;
	if (aug[0] != 'z' && aug[0] != '\0')
		return -1;
	uint64_t code_align = uleb(&p);
	sleb(&p); /* data alignment: the offsets do not matter here */
	uint64_t ra = version == 1 ? *p++ : uleb(&p);
	if (aug[0] == 'z') {
		uint64_t n = uleb(&p);
		const unsigned char *data = p;
		for (const char *a = aug + 1; *a != '\0'; a++) {
			if (*a == 'R')
				fde_enc = *data++;
			else if (*a == 'L')
				data++;
			else if (*a == 'P') {
				size_t k = encoded_size(*data++);
				if (k == 0)
					return -1;
				data += k;
			} else if (*a != 'S')
				return -1;
		}
		p += n;
	}
	struct cfi_state initial, now;
	memset(&initial, 0, sizeof initial);
	uintptr_t start = (uintptr_t)bases.func;
	if (!run_cfi(p, cie_end, start, pc, code_align, &initial, NULL))
		return -1;
	/* The FDE: past its pc_begin and pc_range, and its augmentation. */
	size_t k = encoded_size(fde_enc);
	if (k == 0)
		return -1;
	end = fde + 4 + *(const uint32_t *)fde;
	p = fde + 8 + 2 * k;
	if (aug[0] == 'z') {
		uint64_t n = uleb(&p);
		p += n;
	}
	now = initial;
	if (!run_cfi(p, end, start, pc, code_align, &now, &initial))
		return -1;
	int count = 0;
	for (int r = 0; r < CFI_REGS; r++)
		count += now.saved[r] && !(CALL_PUSHES_RETURN && (uint64_t)r == ra);
	return count;
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
	/* The frame above the run stack's top is the entry: its caller (the
	 * resumer, through the link) is found from registers this start only
	 * guessed, and the walk needs no more. */
	return w->cfa[w->n++] >= run_stack_top ? _URC_END_OF_STACK : _URC_NO_REASON;
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

/* A start that is only a guess (a frame pointer a later call overwrote,
 * under ASan) can lead the unwinder to read anywhere: a fault there ends
 * that walk, found nothing, and the next guess is tried. */
static sigjmp_buf unwinder_faulted;

static void stop_walking(int)
{
	siglongjmp(unwinder_faulted, 1);
}

static void walk_from(struct walk *w)
{
	struct sigaction action, fault, old, old_segv, old_bus;
	memset(&action, 0, sizeof action);
	action.sa_sigaction = unwind_from;
	action.sa_flags = SA_SIGINFO;
	sigemptyset(&action.sa_mask);
	memset(&fault, 0, sizeof fault);
	fault.sa_handler = stop_walking;
	sigemptyset(&fault.sa_mask);
	walking = w;
	sigaction(SIGUSR1, &action, &old);
	sigaction(SIGSEGV, &fault, &old_segv);
	sigaction(SIGBUS, &fault, &old_bus);
	if (sigsetjmp(unwinder_faulted, 1) == 0)
		raise(SIGUSR1);
	else
		w->n = 0;
	sigaction(SIGBUS, &old_bus, NULL);
	sigaction(SIGSEGV, &old_segv, NULL);
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
 * save had no frame (save_slice_quickly calls nothing), and its return
 * address stayed in the link register.  The walk then starts in
 * coroutine_yield just after its call of the save, with the stack pointer
 * it had there, the slice's bottom, which is also its frame pointer (its
 * frame record lies at the bottom of its frame).  Returns the save's CFA,
 * the bottom, or 0; names the save in name.
 */
static uintptr_t walk_up_from_frameless_save(uintptr_t bottom, uintptr_t top, struct walk *w, char *name, size_t len)
{
	uintptr_t ra = 0, f;
	while ((f = next_call(&ra)) != 0) {
		name_at(f, name, len);
		if (strncmp(name, "save_slice_quickly", 18) != 0)
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
 * The frames of the slice [bottom, top) that a coroutine left at its
 * yield, top of the run stack first.  The save's share is from the slice
 * bottom up to its CFA: the rest of its frame (its dummy and below) is not
 * saved.  The entry's share is from run_coroutine's CFA to the top.
 */
int find_frames(long size, struct frame *frames)
{
	uintptr_t top = run_stack_top, bottom = top - (uintptr_t)size;
	struct walk w;
	uintptr_t R = 0, save_cfa = 0;
	if (top == 0 || yield == 0)
		return 0;
	char frameless_save[NAME_LEN] = "";
	while (save_cfa == 0 && save_return_slot(bottom, top, &R))
		save_cfa = walk_up_from(R, bottom, top, &w);
#if defined(__aarch64__)
	if (save_cfa == 0)
		save_cfa = walk_up_from_frameless_save(bottom, top, &w, frameless_save, sizeof frameless_save);
#endif
	if (save_cfa == 0)
		return 0;
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
			copy_name(frames[0].name, sizeof frames[0].name, frameless_save);
		else if (n == 0)
			save_name(R, bottom, frames[0].name, sizeof frames[0].name);
		else
			name_frame(w.pc[n], frames[n].name, sizeof frames[n].name);
		frames[n].size = end - below;
		/* the save's frame is only partly in the slice */
		frames[n].saved = n == 0 ? -1 : saved_registers(w.pc[n]);
		below = end;
		n++;
	}
	if (n < w.n && below == (long)top) {
		name_frame(w.pc[n], frames[n].name, sizeof frames[n].name);
		frames[n].saved = -1;
		frames[n++].size = 0;
	}
	/* Top of the run stack first. */
	for (int i = 0; i < n / 2; i++) {
		struct frame f = frames[i];
		frames[i] = frames[n - 1 - i];
		frames[n - 1 - i] = f;
	}
	return n;
}

/* Not instrumented: the slice may hold a frame's redzones, which ASan
 * marks, and which the yield copied out with the rest. */
__attribute__((no_sanitize("address"))) unsigned long slice_fingerprint(long size)
{
	const unsigned char *byte = (const unsigned char *)(run_stack_top - (uintptr_t)size);
	uint32_t hash = 2166136261u;
	if (run_stack_top == 0)
		return 0;
	for (long i = 0; i < size; i++)
		hash = (hash ^ byte[i]) * 16777619u;
	return hash != 0 ? hash : 1;
}

long below_top(const volatile void *address)
{
	uintptr_t a = (uintptr_t)address;
	if (run_stack_top == 0 || a >= run_stack_top || a < run_stack_top - COROUTINE_STACK_SIZE)
		return 0;
	return (long)(run_stack_top - a);
}

__attribute__((no_sanitize("address"))) int slice_int(long size, long at, int *value)
{
	if (run_stack_top == 0 || at < (long)sizeof *value || at > size)
		return 0;
	/* byte by byte, as the fingerprint reads: ASan's memcpy would check them */
	const unsigned char *byte = (const unsigned char *)(run_stack_top - (uintptr_t)at);
	unsigned char *out = (unsigned char *)value;
	for (size_t i = 0; i < sizeof *value; i++)
		out[i] = byte[i];
	return 1;
}

void start_frames(struct schedule *S)
{
	if (symbols == NULL) {
		symbols = backtrace_create_state(NULL, 0, ignore_error, NULL);
		find_start_routine();
		yield = function_start((uintptr_t)coroutine_yield, &yield_len);
	}
	find_run_stack(S);
}
#else
const int frames_known = 0;
static const long guard_size = 0; /* not measured */

void start_frames(struct schedule *)
{
}

int find_frames(long, struct frame *)
{
	return 0;
}

unsigned long slice_fingerprint(long)
{
	return 0;
}

long below_top(const volatile void *)
{
	return 0;
}

int slice_int(long, long, int *)
{
	return 0;
}
#endif

void run_stack_sizes(long *size, long *guard)
{
	*size = COROUTINE_STACK_SIZE;
	*guard = guard_size > 0 ? guard_size : GUARD_SIZE;
}
