/*
 * win_stack.c - what the Windows x64 switch owes Windows beyond registers
 * (run by make windows-test under wine; Windows only):
 *
 *   - the Thread Information Block's stack fields (StackBase gs:0x08,
 *     StackLimit gs:0x10, DeallocationStack gs:0x1478) describe the run
 *     stack while a coroutine runs, on its first entry and after a resume,
 *     and the thread's own stack again in main;
 *   - the TIB's exception list (gs:0x00) is empty (-1, the end of the
 *     chain) while a coroutine runs, and main's own again in main: wine
 *     dispatches through it, and main's records lie outside the run stack;
 *   - unwinding from inside a coroutine ends at the first-entry
 *     trampoline, at the top of the run stack, instead of running on into
 *     whatever lies above it, and the trampoline calls the entry with its
 *     32-byte home space;
 *   - xmm6-xmm15, nonvolatile in the Microsoft x64 ABI, survive a resume,
 *     all 128 bits of each;
 *   - the FP control state (MXCSR, x87 control word) is each coroutine's,
 *     set together (fesetround), each alone, or both differently;
 *   - a frame larger than a page (which the compiler probes with __chkstk)
 *     works in a coroutine;
 *   - coroutine_close gives the run stack's address space back;
 *   - coroutine_delete walks C frames built without -fexceptions (this
 *     file's) to the trampoline and runs none of their cleanups (they
 *     have no handler for Windows' unwinder to call): the coroutine is
 *     freed, and the next one starts.
 *
 * It ends with the line "N passed, N failed" and exits non-zero on any
 * failure.
 */
#include "coroutine.h"
#include "plain.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <windows.h>


/* ---- The stack fields of the Thread Information Block ------------------- */

struct stack_fields {
	char *base;         /* StackBase: the top */
	char *limit;        /* StackLimit: the lowest committed address */
	char *deallocation; /* DeallocationStack: the base of the reservation */
};

/* The TEB is where gs points.  (Read directly: through NtCurrentTeb,
 * g++ 12 warns of an out-of-bounds array in MinGW's header.) */
static struct stack_fields current_stack_fields(void)
{
	struct stack_fields f;
	__asm__ volatile("mov %%gs:0x08, %0" : "=r"(f.base));
	__asm__ volatile("mov %%gs:0x10, %0" : "=r"(f.limit));
	__asm__ volatile("mov %%gs:0x1478, %0" : "=r"(f.deallocation));
	return f;
}

static int same_fields(struct stack_fields a, struct stack_fields b)
{
	return a.base == b.base && a.limit == b.limit && a.deallocation == b.deallocation;
}

/* What VirtualQuery says of the page at address. */
static MEMORY_BASIC_INFORMATION page_at(const void *address)
{
	MEMORY_BASIC_INFORMATION page;
	if (VirtualQuery(address, &page, sizeof page) == 0)
		memset(&page, 0, sizeof page);
	return page;
}

static int is_read_write(MEMORY_BASIC_INFORMATION page)
{
	return page.State == MEM_COMMIT && page.Protect == PAGE_READWRITE;
}

/*
 * Whether f describes the stack that holds the local at address: the
 * committed pages from limit up to base, in one reservation that starts at
 * deallocation, with no access just below limit (the guard region) and
 * another reservation (or none) at base.
 */
static const char *fields_describe_stack_of(struct stack_fields f, const void *local)
{
	MEMORY_BASIC_INFORMATION lowest = page_at(f.limit), highest = page_at(f.base - 1);
	MEMORY_BASIC_INFORMATION below = page_at(f.limit - 1), above = page_at(f.base);
	if ((const char *)local < f.limit || (const char *)local >= f.base)
		return "a local lies outside [StackLimit, StackBase)";
	if ((char *)page_at(local).AllocationBase != f.deallocation)
		return "DeallocationStack is not the base of the stack's reservation";
	if (!is_read_write(lowest) || !is_read_write(highest))
		return "[StackLimit, StackBase) is not all read-write memory";
	if ((char *)lowest.AllocationBase != f.deallocation || (char *)highest.AllocationBase != f.deallocation)
		return "[StackLimit, StackBase) spans more than the stack's reservation";
	if (below.State == MEM_COMMIT && below.Protect != PAGE_NOACCESS)
		return "the page below StackLimit is accessible, not the guard region";
	if (above.State != MEM_FREE && (char *)above.AllocationBase == f.deallocation)
		return "the stack's reservation goes on above StackBase";
	return NULL;
}

struct tib_probe {
	const char *first_entry;         /* what was wrong on the first entry */
	const char *after_resume;        /* and after a yield and a resume */
};

static void read_fields_twice(struct schedule *S, void *ud)
{
	struct tib_probe *p = (struct tib_probe *)ud;
	char local = 0;
	p->first_entry = fields_describe_stack_of(current_stack_fields(), &local);
	coroutine_yield(S);
	p->after_resume = fields_describe_stack_of(current_stack_fields(), &local);
}

static const char *tib_in_coroutine(void)
{
	struct tib_probe probe;
	struct schedule *S = coroutine_open();
	int id = coroutine_new(S, read_fields_twice, &probe);
	probe.first_entry = probe.after_resume = "never read";
	coroutine_resume(S, id);
	coroutine_resume(S, id);
	coroutine_close(S);
	return probe.first_entry != NULL ? probe.first_entry : probe.after_resume;
}

/* The thread's own, read at the start of main before any coroutine ran:
 * a test that broke them must not hide it from the next one. */
static struct stack_fields thread_fields;

/* Whether the TIB describes the thread's stack, in which local lies. */
static int tib_is_the_threads(const void *local)
{
	struct stack_fields f = current_stack_fields();
	return same_fields(f, thread_fields) && (const char *)local >= f.limit && (const char *)local < f.base;
}

static const char *tib_in_main(void)
{
	struct tib_probe probe;
	struct schedule *S = coroutine_open();
	int id = coroutine_new(S, read_fields_twice, &probe);
	const char *why = NULL;
	coroutine_resume(S, id); /* the coroutine yields */
	if (!tib_is_the_threads(&probe))
		why = "after a yield, the TIB does not describe the thread's stack";
	coroutine_resume(S, id); /* the coroutine returns */
	if (why == NULL && !tib_is_the_threads(&probe))
		why = "after a coroutine returned, the TIB does not describe the thread's stack";
	coroutine_close(S);
	return why;
}

/* ---- The exception list of the Thread Information Block ------------------ */

#define END_OF_CHAIN ((void *)-1)

/* The head of the exception registration records: ExceptionList, gs:0x00. */
static void *current_exception_list(void)
{
	void *head;
	__asm__ volatile("mov %%gs:0x00, %0" : "=r"(head));
	return head;
}

/* Main's own, read at the start of main, like thread_fields. */
static void *thread_exception_list;

struct list_probe {
	void *first_entry;  /* gs:0x00 on the first entry */
	void *after_resume; /* and after a yield and a resume */
};

static void read_list_twice(struct schedule *S, void *ud)
{
	struct list_probe *p = (struct list_probe *)ud;
	p->first_entry = current_exception_list();
	coroutine_yield(S);
	p->after_resume = current_exception_list();
}

static const char *exception_list_in_coroutine_and_main(void)
{
	struct list_probe probe = { NULL, NULL };
	const char *why = NULL;
	struct schedule *S = coroutine_open();
	int id = coroutine_new(S, read_list_twice, &probe);
	coroutine_resume(S, id); /* the coroutine yields */
	if (current_exception_list() != thread_exception_list)
		why = "after a yield, gs:0x00 is not main's exception list";
	coroutine_resume(S, id); /* the coroutine returns */
	if (why == NULL && current_exception_list() != thread_exception_list)
		why = "after a coroutine returned, gs:0x00 is not main's exception list";
	coroutine_close(S);
	if (why == NULL && probe.first_entry != END_OF_CHAIN)
		why = "on its first entry, a coroutine's gs:0x00 is not -1";
	if (why == NULL && probe.after_resume != END_OF_CHAIN)
		why = "after a resume, a coroutine's gs:0x00 is not -1";
	return why;
}

/* ---- Unwinding ends at the trampoline -------------------------------------- */

/*
 * Unwinds from inside a coroutine with Windows' own unwinder, frame by
 * frame, as an exception dispatch or a stack walk would, until the return
 * address is 0 (the end of a chain).  Records the stack pointer there and
 * in the frame before (the trampoline's, at its call of the entry).
 */
struct unwind {
	int frames;                /* unwound before reaching return address 0 */
	DWORD64 end_rsp;           /* rsp "after returning" to address 0 */
	DWORD64 trampoline_rsp;    /* rsp in the last frame, at its call */
	struct stack_fields stack; /* the coroutine's TIB fields */
};

#define MAX_FRAMES 16

__attribute__((noinline)) static void unwind_from_here(struct unwind *u)
{
	CONTEXT ctx;
	RtlCaptureContext(&ctx);
	u->stack = current_stack_fields();
	for (u->frames = 0; ctx.Rip != 0 && u->frames < MAX_FRAMES; u->frames++) {
		DWORD64 image, establisher;
		void *handler_data;
		u->trampoline_rsp = ctx.Rsp;
		PRUNTIME_FUNCTION f = RtlLookupFunctionEntry(ctx.Rip, &image, NULL);
		if (f == NULL) { /* a leaf: its return address is at rsp */
			ctx.Rip = *(DWORD64 *)ctx.Rsp;
			ctx.Rsp += 8;
		} else {
			RtlVirtualUnwind(UNW_FLAG_NHANDLER, image, ctx.Rip, f, &ctx, &handler_data, &establisher, NULL);
		}
	}
	u->end_rsp = ctx.Rsp;
}

static void unwind_coroutine(struct schedule *S, void *ud)
{
	(void)S;
	unwind_from_here((struct unwind *)ud);
}

static struct unwind unwind_in_a_coroutine(void)
{
	struct unwind u;
	memset(&u, 0, sizeof u);
	struct schedule *S = coroutine_open();
	coroutine_resume(S, coroutine_new(S, unwind_coroutine, &u));
	coroutine_close(S);
	return u;
}

/* The chain ends right at the top of the run stack, not above it. */
static const char *unwinding_ends_at_the_top_of_the_run_stack(void)
{
	static char why[160];
	struct unwind u = unwind_in_a_coroutine();
	if (u.frames == MAX_FRAMES)
		return "unwinding from a coroutine found no end";
	if (u.end_rsp != (DWORD64)u.stack.base) {
		snprintf(why, sizeof why, "unwinding ended at %lld bytes from the top of the run stack, not at the top",
			 (long long)(u.end_rsp - (DWORD64)u.stack.base));
		return why;
	}
	return NULL;
}

/* The trampoline calls the entry as the ABI says: rsp 16-byte aligned,
 * with 32 bytes of home space between rsp and its own return address. */
static const char *trampoline_gives_the_entry_home_space(void)
{
	struct unwind u = unwind_in_a_coroutine();
	DWORD64 null_return_address = u.end_rsp - 8;
	if (u.trampoline_rsp % 16 != 0)
		return "the trampoline calls the entry with rsp not 16-byte aligned";
	if (u.trampoline_rsp + 32 > null_return_address)
		return "the trampoline calls the entry with less than 32 bytes of home space";
	return NULL;
}

/* ---- xmm6-xmm15 survive a resume -------------------------------------------- */

/* Fills xmm6-xmm15 with garbage and yields with it there. */
static void clobber_xmm_and_yield(struct schedule *S, void *ud)
{
	__asm__ volatile("pcmpeqd %%xmm6, %%xmm6\n\t"
			 "pcmpeqd %%xmm7, %%xmm7\n\t"
			 "pcmpeqd %%xmm8, %%xmm8\n\t"
			 "pcmpeqd %%xmm9, %%xmm9\n\t"
			 "pcmpeqd %%xmm10, %%xmm10\n\t"
			 "pcmpeqd %%xmm11, %%xmm11\n\t"
			 "pcmpeqd %%xmm12, %%xmm12\n\t"
			 "pcmpeqd %%xmm13, %%xmm13\n\t"
			 "pcmpeqd %%xmm14, %%xmm14\n\t"
			 "pcmpeqd %%xmm15, %%xmm15"
			 ::: "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
	coroutine_yield(S);
	/* Something after the yield, so that it is not a tail call: before
	 * one, the compiler would put back the caller's xmm6-xmm15 itself. */
	*(volatile int *)ud = 1;
}

/*
 * Loads in[] into xmm6-xmm15 (all 128 bits of each: two words), calls coroutine_resume(S, id) and stores
 * xmm6-xmm15 into out[], all in one asm statement so that no compiled code
 * between them may use those registers.  The call gets the ABI's frame: rsp
 * 16-byte aligned, 32 bytes of home space (rbx keeps the old rsp).
 */
static void resume_holding_xmm(struct schedule *S, int id, const uint64_t in[20], uint64_t out[20])
{
	__asm__ volatile("movdqu 0(%[in]), %%xmm6\n\t"
			 "movdqu 16(%[in]), %%xmm7\n\t"
			 "movdqu 32(%[in]), %%xmm8\n\t"
			 "movdqu 48(%[in]), %%xmm9\n\t"
			 "movdqu 64(%[in]), %%xmm10\n\t"
			 "movdqu 80(%[in]), %%xmm11\n\t"
			 "movdqu 96(%[in]), %%xmm12\n\t"
			 "movdqu 112(%[in]), %%xmm13\n\t"
			 "movdqu 128(%[in]), %%xmm14\n\t"
			 "movdqu 144(%[in]), %%xmm15\n\t"
			 "mov %%rsp, %%rbx\n\t"
			 "and $-16, %%rsp\n\t"
			 "sub $32, %%rsp\n\t"
			 "call coroutine_resume\n\t"
			 "mov %%rbx, %%rsp\n\t"
			 "movdqu %%xmm6, 0(%%rdi)\n\t"
			 "movdqu %%xmm7, 16(%%rdi)\n\t"
			 "movdqu %%xmm8, 32(%%rdi)\n\t"
			 "movdqu %%xmm9, 48(%%rdi)\n\t"
			 "movdqu %%xmm10, 64(%%rdi)\n\t"
			 "movdqu %%xmm11, 80(%%rdi)\n\t"
			 "movdqu %%xmm12, 96(%%rdi)\n\t"
			 "movdqu %%xmm13, 112(%%rdi)\n\t"
			 "movdqu %%xmm14, 128(%%rdi)\n\t"
			 "movdqu %%xmm15, 144(%%rdi)"
			 : "+c"(S), "+d"(id)
			 : [in] "r"(in), "D"(out)
			 : "rax", "rbx", "r8", "r9", "r10", "r11", "memory", "cc",
			   "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
			   "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
}

static const char *xmm_survives_a_resume(void)
{
	static char why[96];
	uint64_t in[20], out[20];
	for (int i = 0; i < 20; i++)
		in[i] = 0x0123456789abcdefu * (uint64_t)(i + 1);
	int resumed = 0;
	struct schedule *S = coroutine_open();
	int id = coroutine_new(S, clobber_xmm_and_yield, &resumed);
	resume_holding_xmm(S, id, in, out);
	coroutine_close(S);
	for (int i = 0; i < 20; i++)
		if (out[i] != in[i]) {
			snprintf(why, sizeof why, "the %s 64 bits of xmm%d changed across a resume",
				 i % 2 ? "high" : "low", i / 2 + 6);
			return why;
		}
	return NULL;
}

/* ---- The FP control state is the coroutine's own ----------------------------- */

/* The rounding-control fields of MXCSR (bits 13-14) and of the x87
 * control word (bits 10-11): 0 is round to nearest, 3 toward zero. */
static unsigned rounding_of_mxcsr(void)
{
	unsigned mxcsr;
	__asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
	return mxcsr >> 13 & 3;
}

static unsigned rounding_of_x87(void)
{
	unsigned short cw;
	__asm__ volatile("fnstcw %0" : "=m"(cw));
	return cw >> 10 & 3;
}

static void set_rounding_toward_zero(void)
{
	unsigned mxcsr;
	unsigned short cw;
	__asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
	mxcsr |= 3u << 13;
	__asm__ volatile("ldmxcsr %0" : : "m"(mxcsr));
	__asm__ volatile("fnstcw %0" : "=m"(cw));
	cw |= 3u << 10;
	__asm__ volatile("fldcw %0" : : "m"(cw));
}

/* Rounds toward zero, yields, and records whether it still does after the resume. */
static void round_toward_zero_across_a_yield(struct schedule *S, void *ud)
{
	int *kept = (int *)ud;
	set_rounding_toward_zero();
	coroutine_yield(S);
	*kept = rounding_of_mxcsr() == 3 && rounding_of_x87() == 3;
}

static const char *rounding_mode_stays_with_its_coroutine(void)
{
	int kept = 0;
	const char *why = NULL;
	struct schedule *S = coroutine_open();
	int id = coroutine_new(S, round_toward_zero_across_a_yield, &kept);
	coroutine_resume(S, id);
	if (rounding_of_mxcsr() != 0 || rounding_of_x87() != 0)
		why = "a coroutine's rounding mode leaked into main";
	coroutine_resume(S, id);
	coroutine_close(S);
	if (why == NULL && !kept)
		why = "a coroutine lost its rounding mode across a yield";
	return why;
}

/* ---- The x87 control word and MXCSR, each the coroutine's own --------------- */

/*
 * fesetround moves both registers together; code that sets one alone
 * (fldcw in x87 code, ldmxcsr for flush-to-zero) must find the switch
 * carrying each by itself.  The switch compares MXCSR, then the x87 word,
 * and reloads both when either differs, merging MXCSR from the difference
 * it computed first: a word differing only in the x87 register, only in
 * MXCSR, or in both takes its own path there.  The first is the one where
 * a difference held in the wrong register would reach MXCSR.
 */
struct fp_control {
	unsigned short x87; /* the whole x87 control word */
	unsigned mxcsr;     /* MXCSR's control bits: the flags are the thread's */
};

#define MXCSR_CONTROL 0xffc0u

static struct fp_control fp_control_now(void)
{
	struct fp_control c;
	__asm__ volatile("fnstcw %0" : "=m"(c.x87));
	__asm__ volatile("stmxcsr %0" : "=m"(c.mxcsr));
	c.mxcsr &= MXCSR_CONTROL;
	return c;
}

/* Loads c, keeping MXCSR's current flags. */
static void set_fp_control(struct fp_control c)
{
	unsigned mxcsr;
	__asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
	mxcsr = (mxcsr & ~MXCSR_CONTROL) | c.mxcsr;
	__asm__ volatile("fldcw %0" : : "m"(c.x87));
	__asm__ volatile("ldmxcsr %0" : : "m"(mxcsr));
}

/* Which register of now is not own's, or NULL. */
static const char *register_lost(struct fp_control now, struct fp_control own)
{
	if (now.x87 != own.x87)
		return "x87 control word";
	if (now.mxcsr != own.mxcsr)
		return "MXCSR";
	return NULL;
}

struct fp_keeper {
	struct fp_control own; /* what it sets before its first yield */
	const char *lost;      /* the register it first found changed after a resume */
};

static void keep_fp_control(struct schedule *S, void *ud)
{
	struct fp_keeper *k = (struct fp_keeper *)ud;
	set_fp_control(k->own);
	for (int i = 0; i < 3; i++) {
		coroutine_yield(S);
		if (k->lost == NULL)
			k->lost = register_lost(fp_control_now(), k->own);
	}
}

/* A coroutine sets main's control state with these bits flipped, and
 * yields a few times: each side must keep its own. */
static const char *fp_control_stays_apart(unsigned short x87_flip, unsigned mxcsr_flip)
{
	static char why[96];
	struct fp_control mains = fp_control_now();
	struct fp_keeper k = { { (unsigned short)(mains.x87 ^ x87_flip), mains.mxcsr ^ mxcsr_flip }, NULL };
	const char *main_lost = NULL;
	struct schedule *S = coroutine_open();
	int id = coroutine_new(S, keep_fp_control, &k);
	while (coroutine_status(S, id) != COROUTINE_DEAD) {
		coroutine_resume(S, id);
		if (main_lost == NULL)
			main_lost = register_lost(fp_control_now(), mains);
	}
	coroutine_close(S);
	set_fp_control(mains);
	if (main_lost || k.lost) {
		snprintf(why, sizeof why, "%s %s changed across a switch", main_lost ? "main's" : "the coroutine's",
			 main_lost ? main_lost : k.lost);
		return why;
	}
	return NULL;
}

/* The x87 rounding alone (bits 10-11), upward from main's to-nearest. */
static const char *x87_control_word_alone_stays_with_its_coroutine(void)
{
	return fp_control_stays_apart(0x0800, 0);
}

/* MXCSR alone: rounding (bits 13-14) downward and flush-to-zero (bit 15). */
static const char *mxcsr_alone_stays_with_its_coroutine(void)
{
	return fp_control_stays_apart(0, 0x2000 | 0x8000);
}

/* Both, differently: the x87 toward zero, MXCSR upward. */
static const char *x87_and_mxcsr_set_differently_stay_with_their_coroutine(void)
{
	return fp_control_stays_apart(0x0c00, 0x4000);
}

/* ---- Frames larger than a page -------------------------------------------- */

#define BIG_FRAME (64 * 1024)

/* Its frame is larger than a page, so the compiler calls __chkstk (MinGW:
 * ___chkstk_ms) to touch it page by page, top down. */
__attribute__((noinline)) static int sum_of_big_frame(int seed)
{
	volatile unsigned char big[BIG_FRAME];
	int sum = 0;
	for (int i = 0; i < BIG_FRAME; i++)
		big[i] = (unsigned char)(seed + i);
	for (int i = 0; i < BIG_FRAME; i++)
		sum += big[i];
	return sum;
}

static void use_big_frames(struct schedule *S, void *ud)
{
	int *sums = (int *)ud;
	sums[0] = sum_of_big_frame(1);
	coroutine_yield(S);
	sums[1] = sum_of_big_frame(1);
}

static const char *big_frames_work_in_a_coroutine(void)
{
	int sums[2] = { 0, 0 };
	int expected = sum_of_big_frame(1);
	struct schedule *S = coroutine_open();
	int id = coroutine_new(S, use_big_frames, sums);
	coroutine_resume(S, id);
	coroutine_resume(S, id);
	coroutine_close(S);
	if (sums[0] != expected || sums[1] != expected)
		return "a 64 KiB frame in a coroutine computed another sum than in main";
	return NULL;
}

/* ---- close gives the address space back --------------------------------------- */

/* The bytes of the process's address space reserved or committed, found by
 * walking it region by region with VirtualQuery. */
static unsigned long long address_space_in_use(void)
{
	SYSTEM_INFO system;
	GetSystemInfo(&system);
	unsigned long long total = 0;
	char *at = (char *)system.lpMinimumApplicationAddress;
	MEMORY_BASIC_INFORMATION region;
	while (at < (char *)system.lpMaximumApplicationAddress &&
	       VirtualQuery(at, &region, sizeof region) == sizeof region) {
		if (region.State != MEM_FREE)
			total += region.RegionSize;
		at = (char *)region.BaseAddress + region.RegionSize;
	}
	return total;
}

static void yield_once(struct schedule *S, void *ud)
{
	(void)ud;
	coroutine_yield(S);
}

/* A schedule with a suspended coroutine, opened and closed. */
static void open_and_close(void)
{
	struct schedule *S = coroutine_open();
	coroutine_resume(S, coroutine_new(S, yield_once, NULL));
	coroutine_close(S);
}

#define CLOSE_ROUNDS 50

/* A run stack decommitted rather than released would stay reserved: 2 MiB
 * (run stack and guard) a round. */
static const char *close_releases_the_run_stack(void)
{
	static char why[128];
	open_and_close(); /* what a first use maps once */
	unsigned long long before = address_space_in_use();
	for (int i = 0; i < CLOSE_ROUNDS; i++)
		open_and_close();
	unsigned long long after = address_space_in_use();
	if (after >= before + CLOSE_ROUNDS * 1024ull * 1024) {
		snprintf(why, sizeof why, "%d schedules opened and closed kept %llu KiB of address space",
			 CLOSE_ROUNDS, (after - before) / 1024);
		return why;
	}
	return NULL;
}

/* ---- A delete of C built without -fexceptions ------------------------------ */

static int cleanups;

static void count_cleanup(int *unused)
{
	(void)unused;
	cleanups++;
}

static void wait_with_a_cleanup(struct schedule *S, void *ud)
{
	int label __attribute__((cleanup(count_cleanup), unused)) = 0;
	(void)ud;
	coroutine_yield(S);
}

static void count_start(struct schedule *S, void *ud)
{
	(void)S;
	++*(int *)ud;
}

static const char *delete_runs_no_cleanup_of_c_without_exceptions(void)
{
	int starts = 0;
	struct schedule *S = coroutine_open();
	int id = coroutine_new(S, wait_with_a_cleanup, NULL);
	coroutine_resume(S, id);
	coroutine_delete(S, id);
	int status = coroutine_status(S, id);
	coroutine_resume(S, coroutine_new(S, count_start, &starts));
	coroutine_close(S);
	if (cleanups != 0)
		return "a cleanup of a frame built without -fexceptions ran";
	if (status != COROUTINE_DEAD)
		return "the coroutine was not freed";
	return starts == 1 ? NULL : "the next coroutine did not start";
}

int main(void)
{
	thread_fields = current_stack_fields();
	thread_exception_list = current_exception_list();
	report("the TIB describes the run stack inside a coroutine", tib_in_coroutine());
	report("the TIB describes the thread's stack in main", tib_in_main());
	report("the exception list is -1 in a coroutine and main's in main",
	       thread_exception_list == END_OF_CHAIN ? "main's gs:0x00 is -1 already: nothing to tell apart"
						     : exception_list_in_coroutine_and_main());
	report("unwinding ends at the top of the run stack", unwinding_ends_at_the_top_of_the_run_stack());
	report("the trampoline gives the entry its home space", trampoline_gives_the_entry_home_space());
	report("xmm6-xmm15 survive a resume", xmm_survives_a_resume());
	report("the rounding mode stays with its coroutine", rounding_mode_stays_with_its_coroutine());
	report("an x87 control word set alone stays with its coroutine", x87_control_word_alone_stays_with_its_coroutine());
	report("MXCSR set alone stays with its coroutine", mxcsr_alone_stays_with_its_coroutine());
	report("x87 and MXCSR set differently stay with their coroutine",
	       x87_and_mxcsr_set_differently_stay_with_their_coroutine());
	report("frames larger than a page work in a coroutine", big_frames_work_in_a_coroutine());
	report("close gives the run stack's address space back", close_releases_the_run_stack());
	report("a delete runs no cleanup of C built without -fexceptions", delete_runs_no_cleanup_of_c_without_exceptions());
	return finish();
}
