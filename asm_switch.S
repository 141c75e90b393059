/*
 * asm_switch.S - the assembly context switch of coroutine.cpp
 * (selected by compiling coroutine.cpp with -DCOROUTINE_ASM=1).
 *
 * Two functions, called only from coroutine.cpp:
 *
 *   void coroutine_switch_context(context *from, const context *to);
 *       Saves the caller's callee-saved state in *from, loads *to and
 *       continues where *to was saved (as a return from the call that
 *       saved it).
 *
 *   void coroutine_start_context(context *from, char *top,
 *                                void (*entry)(struct schedule *),
 *                                struct schedule *S);
 *       Saves the caller in *from, moves the stack pointer to top (rounded
 *       down to 16 bytes, the alignment the ABI demands at a call) and calls
 *       entry(S), S whole in the first argument register.  entry never
 *       returns; if it did, the instruction after the call traps.
 *
 * A context holds only what the ABI says a function call preserves: the
 * callee-saved registers, the stack pointer, the resume address and the
 * floating-point control state.  Everything else is dead across a call, so
 * the compiler has already spilled what it needs.
 *
 * The resume address lives in the context, never only on the run stack.
 * A yielding coroutine copies its live slice out first and calls the
 * switch afterwards, so the return address that this call writes on the
 * run stack is newer than the copy: the copy holds whatever that slot held
 * before.  And while the coroutine is suspended another coroutine runs on
 * the same run stack and overwrites that memory.  For the same reason
 * nothing is pushed here: every saved word goes into the context.
 *
 * Unlike swapcontext(3), the signal mask is not switched: it stays one per
 * thread, shared by main and every coroutine.  That saves the
 * rt_sigprocmask system call that swapcontext makes on every switch.
 *
 * Floating point: the control bits (rounding mode, flush-to-zero, trap
 * masks) are callee-saved, so a coroutine's fesetround survives its yields
 * and does not leak into main; the sticky exception flags are not, and
 * stay as they are, per thread like the signal mask (swapcontext restores
 * them too).  Reloading a control register is slow (ldmxcsr and fldcw
 * stall the FP pipeline, msr fpcr can serialize) and the control bits
 * almost never differ between two contexts, so the switch compares the
 * control bits saved in *to with the current ones and reloads only when
 * they differ: an FP division that merely set a sticky flag costs nothing.
 * When it does reload MXCSR it keeps the current status flags.
 *
 * Visibility: both symbols are .hidden.  Hidden symbols still link between
 * the objects of one link (so a static libcoroutine.a works as usual), but
 * they are not exported from a shared object or executable built from it:
 * a shared library does not leak two internal names, and calls from
 * coroutine.o bind directly instead of through the PLT.
 *
 * One section per architecture, each with the same shape: the layout of
 * the context, the save, the restore, the first-entry trampoline.
 */

#if defined(__x86_64__) && defined(__ELF__) && !defined(__ILP32__)
/* ======================================================================
 * x86_64, System V ABI (ELF).  "System V Application Binary Interface,
 * AMD64 Architecture Processor Supplement", section 3.2 (Function Calling
 * Sequence): Figure 3.4 lists the callee-saved registers, the MXCSR
 * control bits and the x87 control word among them; rsp + 8 is a multiple
 * of 16 on entry to a function.
 *
 * Context layout (CONTEXT_WORDS 9 in coroutine.cpp):
 *
 *   offset  bytes  holds
 *        0      8  rbx
 *        8      8  rbp
 *       16      8  r12
 *       24      8  r13
 *       32      8  r14
 *       40      8  r15
 *       48      8  rsp   as the caller sees it after the call returns
 *       56      8  rip   the resume address (the call's return address)
 *       64      4  MXCSR (SSE control and status)
 *       68      2  x87 control word
 *       70      2  unused
 * ====================================================================== */
#define RBX   0
#define RBP   8
#define R12  16
#define R13  24
#define R14  32
#define R15  40
#define RSP  48
#define RIP  56
#define MXCSR 64
#define FCW  68
/* MXCSR bits 0-5 are exception flags (status, caller-saved); 6-15 are
 * DAZ, exception masks, rounding control and FZ (control, callee-saved). */
#define MXCSR_CONTROL 0xffc0

/*
 * With -fcf-protection the compiler marks indirect-branch targets with
 * endbr64 (a no-op on older CPUs); our two entry points get one too.  No
 * GNU property note claims CET support, though: the switch jumps to a
 * resume address that is not an endbr64 target and changes stacks without
 * changing shadow stacks, so the linker must (and, without the note, does)
 * leave IBT and SHSTK off for any program linking this file.
 */
#ifdef __CET__
#define ENTRY_MARK endbr64
#else
#define ENTRY_MARK
#endif

	.text

/* ---- The save: the caller's callee-saved state into the context at \ctx */
.macro SAVE_CALLER ctx
	pop	%rax		/* the return address: where the caller resumes */
	mov	%rbx, RBX(\ctx)
	mov	%rbp, RBP(\ctx)
	mov	%r12, R12(\ctx)
	mov	%r13, R13(\ctx)
	mov	%r14, R14(\ctx)
	mov	%r15, R15(\ctx)
	mov	%rsp, RSP(\ctx)	/* after the pop: as it will be after a return */
	mov	%rax, RIP(\ctx)
	stmxcsr	MXCSR(\ctx)
	fnstcw	FCW(\ctx)
.endm

/* ---- The switch: the save, then the restore of *to
 * void coroutine_switch_context(context *from (rdi), const context *to (rsi)) */
	.globl	coroutine_switch_context
	.hidden	coroutine_switch_context
	.type	coroutine_switch_context, @function
	.p2align 4
coroutine_switch_context:
	ENTRY_MARK
	SAVE_CALLER %rdi

	/* Reload MXCSR or the x87 control word only if *to's differ. */
	mov	MXCSR(%rdi), %eax
	xor	MXCSR(%rsi), %eax
	test	$MXCSR_CONTROL, %eax
	jnz	.Lload_mxcsr
.Lmxcsr_loaded:
	movzwl	FCW(%rdi), %eax
	cmp	FCW(%rsi), %ax
	jne	.Lload_fcw
.Lfcw_loaded:

	mov	RBX(%rsi), %rbx
	mov	RBP(%rsi), %rbp
	mov	R12(%rsi), %r12
	mov	R13(%rsi), %r13
	mov	R14(%rsi), %r14
	mov	R15(%rsi), %r15
	mov	RSP(%rsi), %rsp
	jmp	*RIP(%rsi)	/* "return" from the call that saved *to */

.Lload_mxcsr:			/* eax: current MXCSR ^ *to's */
	and	$MXCSR_CONTROL, %eax
	xor	MXCSR(%rdi), %eax	/* *to's control bits, the current flags */
	mov	%eax, -8(%rsp)	/* ldmxcsr reads memory only; the red zone is free */
	ldmxcsr	-8(%rsp)
	jmp	.Lmxcsr_loaded

.Lload_fcw:
	fldcw	FCW(%rsi)
	jmp	.Lfcw_loaded
	.size	coroutine_switch_context, .-coroutine_switch_context

/*
 * ---- The first-entry trampoline
 * void coroutine_start_context(context *from (rdi), char *top (rsi),
 *                              void (*entry)(struct schedule *) (rdx),
 *                              struct schedule *S (rcx))
 * The new coroutine runs with the caller's FP control state, as a function
 * it called would.
 */
	.globl	coroutine_start_context
	.hidden	coroutine_start_context
	.type	coroutine_start_context, @function
	.p2align 4
coroutine_start_context:
	ENTRY_MARK
	SAVE_CALLER %rdi
	and	$-16, %rsi	/* rsp % 16 == 0 at a call, 8 at the callee's entry */
	mov	%rsi, %rsp
	/*
	 * The unwind entry covers only the call on the new stack and says that
	 * it has no caller: backtraces and unwinders stop here instead of
	 * reading whatever lies above the top of the run stack.
	 */
	.cfi_startproc
	.cfi_undefined rip
	xor	%ebp, %ebp	/* ends frame-pointer chains here too */
	mov	%rcx, %rdi
	call	*%rdx
	ud2			/* entry returned: it must leave by a switch */
	.cfi_endproc
	.size	coroutine_start_context, .-coroutine_start_context

#elif defined(__aarch64__) && defined(__ELF__) && !defined(__ILP32__)
/* ======================================================================
 * aarch64, AAPCS64 (ELF).  "Procedure Call Standard for the Arm 64-bit
 * Architecture": x19-x29 and sp are callee-saved, x30 is the link
 * register (the return address), the low 64 bits of v8-v15 (d8-d15) are
 * callee-saved, FPCR's mode fields are preserved across calls, and sp is
 * 16-byte aligned whenever it is used to access memory.
 *
 * Context layout (CONTEXT_WORDS 22 in coroutine.cpp):
 *
 *   offset  bytes  holds
 *        0     80  x19 ... x28
 *       80      8  x29 (frame pointer)
 *       88      8  x30 (link register: the resume address)
 *       96     64  d8 ... d15
 *      160      8  sp
 *      168      8  FPCR (rounding mode, flush-to-zero, trap enables)
 * ====================================================================== */
#define X19   0
#define X21  16
#define X23  32
#define X25  48
#define X27  64
#define X29  80
#define D8   96
#define D10 112
#define D12 128
#define D14 144
#define SP  160
#define FPCR 168

/*
 * With -mbranch-protection=bti (or =standard) the compiler starts every
 * function that may be reached by an indirect call with "bti c", and the
 * GNU property note below tells the loader this object is ready for BTI
 * enforcement.  That is true of this file: both entry points are marked,
 * the resume is a "ret" (not checked by BTI), and the only indirect call
 * goes to entry, which the compiler marked.  (hint #34 = bti c, a no-op
 * before Armv8.5.)
 */
#ifdef __ARM_FEATURE_BTI_DEFAULT
#define ENTRY_MARK hint #34
#else
#define ENTRY_MARK
#endif

	.text

/* ---- The save: the caller's callee-saved state into the context at \ctx,
 * leaving the current FPCR in x10 for the restore to compare. */
.macro SAVE_CALLER ctx
	stp	x19, x20, [\ctx, #X19]
	stp	x21, x22, [\ctx, #X21]
	stp	x23, x24, [\ctx, #X23]
	stp	x25, x26, [\ctx, #X25]
	stp	x27, x28, [\ctx, #X27]
	stp	x29, x30, [\ctx, #X29]	/* x30: where the caller resumes */
	stp	d8, d9, [\ctx, #D8]
	stp	d10, d11, [\ctx, #D10]
	stp	d12, d13, [\ctx, #D12]
	stp	d14, d15, [\ctx, #D14]
	mov	x9, sp			/* stp cannot store sp itself */
	mrs	x10, fpcr
	stp	x9, x10, [\ctx, #SP]
.endm

/* ---- The switch: the save, then the restore of *to
 * void coroutine_switch_context(context *from (x0), const context *to (x1)) */
	.globl	coroutine_switch_context
	.hidden	coroutine_switch_context
	.type	coroutine_switch_context, %function
	.p2align 4
coroutine_switch_context:
	ENTRY_MARK
	SAVE_CALLER x0

	ldp	x19, x20, [x1, #X19]
	ldp	x21, x22, [x1, #X21]
	ldp	x23, x24, [x1, #X23]
	ldp	x25, x26, [x1, #X25]
	ldp	x27, x28, [x1, #X27]
	ldp	x29, x30, [x1, #X29]
	ldp	d8, d9, [x1, #D8]
	ldp	d10, d11, [x1, #D10]
	ldp	d12, d13, [x1, #D12]
	ldp	d14, d15, [x1, #D14]
	ldp	x9, x11, [x1, #SP]
	mov	sp, x9
	/* FPCR has no status bits (those are in FPSR): compare it whole. */
	cmp	x10, x11
	b.ne	.Lload_fpcr
	ret			/* to x30: "return" from the call that saved *to */

.Lload_fpcr:
	msr	fpcr, x11
	ret
	.size	coroutine_switch_context, .-coroutine_switch_context

/*
 * ---- The first-entry trampoline
 * void coroutine_start_context(context *from (x0), char *top (x1),
 *                              void (*entry)(struct schedule *) (x2),
 *                              struct schedule *S (x3))
 * The new coroutine runs with the caller's FPCR, as a function it called
 * would.
 */
	.globl	coroutine_start_context
	.hidden	coroutine_start_context
	.type	coroutine_start_context, %function
	.p2align 4
coroutine_start_context:
	ENTRY_MARK
	SAVE_CALLER x0
	and	x1, x1, #-16	/* sp must always be 16-byte aligned */
	mov	sp, x1
	/*
	 * The unwind entry covers only the call on the new stack and says that
	 * it has no caller: backtraces and unwinders stop here instead of
	 * reading whatever lies above the top of the run stack.
	 */
	.cfi_startproc
	.cfi_undefined x30
	mov	x29, xzr	/* a zero frame pointer ends frame-record chains */
	mov	x0, x3
	blr	x2
	brk	#0x3e8		/* entry returned: it must leave by a switch */
	.cfi_endproc
	.size	coroutine_start_context, .-coroutine_start_context

#ifdef __ARM_FEATURE_BTI_DEFAULT
/* GNU property note: GNU_PROPERTY_AARCH64_FEATURE_1_AND with the BTI bit. */
	.pushsection .note.gnu.property, "a"
	.p2align 3
	.long	4		/* name size */
	.long	16		/* descriptor size */
	.long	5		/* NT_GNU_PROPERTY_TYPE_0 */
	.asciz	"GNU"
	.long	0xc0000000	/* GNU_PROPERTY_AARCH64_FEATURE_1_AND */
	.long	4		/* property data size */
	.long	1		/* GNU_PROPERTY_AARCH64_FEATURE_1_BTI */
	.long	0		/* padding to 8 bytes */
	.popsection
#endif

#else
#error "asm_switch.S supports x86_64 (System V ELF) and aarch64 (AAPCS64 ELF) only; build coroutine.cpp without -DCOROUTINE_ASM to use the ucontext backend"
#endif

/* The stack need not be executable (without this note the linker assumes it must). */
	.section .note.GNU-stack, "", %progbits
