/*
 * asm_switch.S - the assembly context switch of coroutine.cpp
 * (selected by compiling coroutine.cpp with -DCOROUTINE_ASM=1).
 *
 * Three functions, used only by coroutine.cpp:
 *
 *   void coroutine_switch_context(context *from, const context *to);
 *       Saves the caller's callee-saved state in *from, loads *to and
 *       continues where *to was saved (as a return from the call that
 *       saved it).
 *
 *   void coroutine_start_context(context *from, char *top,
 *                                void (*entry)(struct schedule *, void *),
 *                                void (*finish)(struct schedule *),
 *                                struct schedule *S);
 *   (Windows: ..., struct schedule *S, char *bottom, char *reservation);)
 *       Saves the caller in *from, moves the stack pointer to top (rounded
 *       down to 16 bytes, the alignment the ABI demands at a call) and calls
 *       entry(S, NULL), S whole in the first argument register; when entry
 *       returns, it calls finish(S).  finish never returns; if it did, the
 *       instruction after the call traps.  S and finish wait in callee-saved
 *       registers, which entry and whatever it calls preserve: the
 *       trampoline keeps nothing on the run stack, and entry's frame starts
 *       at the top (on Windows, below the home space the ABI gives it).
 *       bottom and reservation, the lowest addresses of the run stack and of
 *       its mapping, are Windows' (see its section).
 *
 *   void coroutine_call_in_context(void);
 *       Never called: a resume address.  coroutine.cpp makes a saved
 *       context resume here, having put two words on top of its stack: a
 *       function, then the context's own resume address.  This pops them
 *       and jumps to the function, so that the context calls it as if the
 *       code at the resume address had: the return address is that resume
 *       address, and the stack pointer is as at that call.  The function's
 *       arguments are the switch's, from and to, which the switch leaves in
 *       the argument registers (i386: copied to the arguments' slots).  So
 *       a suspended coroutine that coroutine_delete ends calls
 *       unwind_coroutine(S) from inside its coroutine_yield, and the
 *       unwinder walks on from there into its frames; and main, back from a
 *       coroutine that asked for deletes, carries them out first.
 *
 * A context holds only what the ABI says a function call preserves: the
 * callee-saved registers, the stack pointer, the resume address and the
 * floating-point control state.  Each section names its offsets CTX_
 * and what they hold (CTX_RBX, CTX_SP, CTX_FCW), as asm_switch.asm does.
 * Everything else is dead across a call, so the compiler has already
 * spilled what it needs.
 *
 * The resume address lives in the context, never only on the run stack.
 * A yielding coroutine copies its live slice out first and calls the
 * switch afterwards, so the return address that this call writes on the
 * run stack is newer than the copy: the copy holds whatever that slot held
 * before.  And while the coroutine is suspended another coroutine runs on
 * the same run stack and overwrites that memory.  For the same reason
 * nothing is pushed here: every saved word goes into the context.
 *
 * The link to the resumer.  While a coroutine runs, its outermost frame
 * leads on to the frames of whoever resumed it this time, so that a
 * debugger's backtrace, backtrace(3) and a profiler's call graph go on from
 * the coroutine's start into the caller of coroutine_resume and up to
 * main.  Every resume saves the resumer in *from (S->main), and each
 * layout keeps the resumer's frame pointer and resume address side by
 * side, in the order of the ABI's frame record.  The trampoline points its
 * frame-pointer register at that record instead of zeroing it, and callees
 * preserve the register: a frame-pointer walker steps from the coroutine's
 * outermost frame into the resumer's, and a resume from elsewhere needs
 * nothing more than the save it makes anyway.  The trampoline's unwind
 * entry says the same to DWARF unwinders: the caller's stack pointer,
 * return address and callee-saved registers are words of *from, found
 * from the frame-pointer register (SAVED_AT, below).  Its own CFA stays at
 * the top of the run stack, below which its callees' lie: gdb ends a
 * backtrace whose frames go down the stack, and the resumer's stack may
 * lie below the run stack (a thread's stack mapped after it), so that gdb
 * stops after the resumer's first frame rather than before it.
 *
 * The link lives in the schedule, never on the run stack: a suspended
 * coroutine's slice holds the address of S->main, nothing of main's stack,
 * and S->main describes a resumer only while a coroutine of S runs (a
 * debugger that shows a suspended coroutine must not follow it).  No
 * unwinding may cross the link, or main's frames would be unwound from
 * under the run stack: the trampoline's personality routine
 * (coroutine_personality, in coroutine.cpp) stops the program when an
 * exception's search reaches it, and finishes the coroutine there when
 * coroutine_delete's forced unwinding does.  The Win64 and armv7 sections
 * have no link (each says why).
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
 * When it does reload MXCSR it keeps the current status flags.  On x86
 * that takes care: ldmxcsr reads memory only, and reading a word stored a
 * moment before, it waits for the store.  So when the flags saved in *to
 * are the current ones (the common case: nothing raised a flag since *to
 * was saved), *to's saved word, which is then exactly the word wanted, is
 * loaded as it is; only otherwise is the word merged and stored first.
 * The Win64 and i386 sections keep fldcw and ldmxcsr apart, the register
 * restore between them, so that the restore runs while the first stalls.
 *
 * Why compare rather than reload the saved words whole at every switch,
 * as libaco does (the flags would then travel with the context, as with
 * swapcontext), which is fewer instructions?  On some CPUs an ldmxcsr
 * that changes the flags is slow, and while main has a sticky flag set
 * every such switch changes them; the compare costs little on any.  `make
 * bench` times that other switch beside this one (this file built with
 * ASM_SWITCH_FP_RELOAD=1, for the x86 sections), and docs/performance.md
 * gives the figures.  The aarch64, armv7 and riscv64 sections compare
 * too: writing FPCR, FPSCR or frm may serialize the pipeline.
 *
 * The control words are read by the switch, except on x86_64 (System V),
 * where coroutine.cpp reads them before it (that section says why).
 *
 * Visibility: both symbols are hidden (.hidden on ELF, .private_extern on
 * Mach-O; on Windows nothing is exported unless asked).  Hidden symbols
 * still link between the objects of one link (so a static libcoroutine.a
 * works as usual), but they are not exported from a shared object or
 * executable built from it: a shared library does not leak two internal
 * names, and calls from coroutine.o bind directly instead of through the
 * PLT.
 *
 * One section per ABI, each with the same shape: the layout of the
 * context, the save, the restore, the first-entry trampoline, the call in
 * a context.  A section
 * serves every object format of its ABI through the macros of the
 * object-format layer below.
 */

/* ======================================================================
 * The object-format layer: what differs between ELF (Linux), Mach-O
 * (macOS) and COFF (Windows) is here, so that every section below reads
 * the same on each.
 *
 *   FUNCTION name      opens an entry point: global, not exported from a
 *                      shared object, aligned, its label
 *   END_FUNCTION name  closes it (ELF records its size)
 *   LOCAL(x)           a label that stays out of the symbol table
 *   PERSONALITY        names the link's personality routine in an unwind
 *                      entry (see the top of the file)
 *
 * gas macros, not cpp ones: on Apple arm64 ';' starts a comment, so a cpp
 * macro cannot hold two statements; clang's integrated assembler reads gas
 * macros too.
 * ====================================================================== */
#if defined(__ELF__)
#define LOCAL(x) .L##x
/* The link's personality routine, hidden in the same link: pc-relative. */
#define PERSONALITY .cfi_personality 0x1b, coroutine_personality
.macro FUNCTION name
	.globl	\name
	.hidden	\name
	.type	\name, %function
	.p2align 4
\name:
.endm
.macro END_FUNCTION name
	.size	\name, .-\name
.endm
#elif defined(__APPLE__)
/* Mach-O: C names carry a leading underscore, .private_extern is .hidden,
 * and local labels start with L. */
#define LOCAL(x) L##x
/* Through the GOT, as Apple's assembler has it for a personality. */
#define PERSONALITY .cfi_personality 0x9b, _coroutine_personality
.macro FUNCTION name
	.globl	_\name
	.private_extern	_\name
	.p2align 4
_\name:
.endm
.macro END_FUNCTION name
.endm
#elif defined(_WIN32)
/* COFF on a PE target: a symbol is exported from a DLL only when asked
 * (dllexport), so global is as hidden as it gets; .def gives it the
 * "function" type (storage class 2 = external, type 32 = function). */
#define LOCAL(x) .L##x
.macro FUNCTION name
	.globl	\name
	.def	\name
	.scl	2
	.type	32
	.endef
	.p2align 4
\name:
.endm
.macro END_FUNCTION name
.endm
#else
#error "asm_switch.S knows the ELF, Mach-O and COFF object formats only"
#endif

/* ======================================================================
 * The link's unwind entry: the resumer's registers are words of *from,
 * which the frame-pointer register reg points into, at the context's
 * offset base (registers by their DWARF numbers, DW_..., as each ABI's
 * DWARF supplement gives them; offsets as each section's CTX_...).
 *
 *   SAVED_AT col, reg, at, base  the caller's register col was saved at
 *                                offset at: DW_CFA_expression
 *                                [DW_OP_breg(reg) at-base]
 *
 * Raw CFI bytes (.cfi_escape): no directive says "at a register plus an
 * offset".  The offset is a signed LEB128 in two bytes, which holds any in
 * [-8192, 8191].
 * ====================================================================== */
#define SLEB128_2(x) (((x) & 0x7f) | 0x80), (((x) >> 7) & 0x7f)
.macro SAVED_AT col, reg, at, base
	.cfi_escape 0x10, \col, 3, 0x70 + \reg, SLEB128_2(\at - \base)
.endm

#if defined(__x86_64__) && (defined(__ELF__) || defined(__APPLE__)) && !defined(__ILP32__)
/* ======================================================================
 * x86_64, System V ABI (ELF on Linux, Mach-O on macOS).  "System V Application Binary Interface,
 * AMD64 Architecture Processor Supplement", section 3.2 (Function Calling
 * Sequence): Figure 3.4 lists the callee-saved registers, the MXCSR
 * control bits and the x87 control word among them; rsp + 8 is a multiple
 * of 16 on entry to a function.
 *
 * Context layout (CONTEXT_WORDS 9 in coroutine.cpp):
 *
 *   offset  bytes  holds
 *        0      8  rbx
 *        8      8  r12
 *       16      8  r13
 *       24      8  r14
 *       32      8  r15
 *       40      8  rsp   as the caller sees it after the call returns
 *       48      8  rbp   } a frame record, [rbp] then [rbp + 8]: the link
 *       56      8  rip   } the resume address (the call's return address)
 *       64      4  MXCSR (SSE control and status)  } written by coroutine.cpp
 *       68      2  x87 control word                } before the call
 *       70      2  unused
 *
 * The FP control words are read early, by coroutine.cpp at the top of
 * coroutine_resume and coroutine_yield (note_fp_control), not by the
 * switch, which only compares them: on AMD Zen stmxcsr is slow and holds
 * up what follows it, and a load of the word it stored waits for it, so a
 * switch that read MXCSR and then compared it would wait for both, twice
 * a round trip.  Read a few dozen instructions earlier, the words are
 * ready when the switch compares them.
 *
 * Each is compared on its own: a load that spans both would read two
 * stores still in the store buffer, which cannot forward them to one load
 * (it waits for both to reach the cache, longer than the compare saves).
 * ====================================================================== */
#define CTX_RBX   0
#define CTX_R12   8
#define CTX_R13  16
#define CTX_R14  24
#define CTX_R15  32
#define CTX_RSP  40
#define CTX_RBP  48
#define CTX_RIP  56
#define CTX_MXCSR 64
#define CTX_FCW  68
/* MXCSR bits 0-5 are exception flags (status, caller-saved); 6-15 are
 * DAZ, exception masks, rounding control and FZ (control, callee-saved). */
#define MXCSR_FLAGS 0x3f
#define MXCSR_CONTROL 0xffc0
/* DWARF's numbers (Figure 3.36 of the ABI), for the link's unwind entry. */
#define DW_RBX 3
#define DW_RBP 6
#define DW_RSP 7
#define DW_R12 12
#define DW_R13 13
#define DW_R14 14
#define DW_R15 15
#define DW_RIP 16

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

/* ---- The save: the caller's callee-saved registers into the context at
 * \ctx (the FP control words are in it already: see above) */
.macro SAVE_CALLER ctx
	pop	%rax		/* the return address: where the caller resumes */
	mov	%rbx, CTX_RBX(\ctx)
	mov	%r12, CTX_R12(\ctx)
	mov	%r13, CTX_R13(\ctx)
	mov	%r14, CTX_R14(\ctx)
	mov	%r15, CTX_R15(\ctx)
	mov	%rsp, CTX_RSP(\ctx)	/* after the pop: as it will be after a return */
	mov	%rbp, CTX_RBP(\ctx)
	mov	%rax, CTX_RIP(\ctx)
.endm

/* ---- The restore of the registers (the stack pointer last) from \ctx */
.macro LOAD_CALLEE_SAVED ctx
	mov	CTX_RBX(\ctx), %rbx
	mov	CTX_R12(\ctx), %r12
	mov	CTX_R13(\ctx), %r13
	mov	CTX_R14(\ctx), %r14
	mov	CTX_R15(\ctx), %r15
	mov	CTX_RBP(\ctx), %rbp
	mov	CTX_RSP(\ctx), %rsp
.endm

/* ---- The switch: the save, then the restore of *to
 * void coroutine_switch_context(context *from (rdi), const context *to (rsi)) */
FUNCTION coroutine_switch_context
	ENTRY_MARK
	SAVE_CALLER %rdi
#if ASM_SWITCH_FP_RELOAD
	/* The bench's other switch (see the top of the file): *to's FP state
	 * as saved, flags included. */
	fldcw	CTX_FCW(%rsi)
	LOAD_CALLEE_SAVED %rsi
	ldmxcsr	CTX_MXCSR(%rsi)
	jmp	*CTX_RIP(%rsi)
#else
	LOAD_CALLEE_SAVED %rsi
	/* Then reload the x87 control word and MXCSR only if *to's control
	 * bits differ (after the registers' loads, which a compare before them
	 * held up).  Most switches find both words the same, MXCSR's flags
	 * included. */
	movzwl	CTX_FCW(%rdi), %ecx
	cmp	CTX_FCW(%rsi), %cx
	jne	LOCAL(load_fcw)
	mov	CTX_MXCSR(%rdi), %eax
	xor	CTX_MXCSR(%rsi), %eax
	jnz	LOCAL(mxcsr_differs)
	jmp	*CTX_RIP(%rsi)	/* "return" from the call that saved *to */

LOCAL(load_fcw):
	fldcw	CTX_FCW(%rsi)
	mov	CTX_MXCSR(%rdi), %eax
	xor	CTX_MXCSR(%rsi), %eax
LOCAL(mxcsr_differs):		/* eax: current MXCSR ^ *to's */
	test	$MXCSR_CONTROL, %eax
	jz	LOCAL(resume)	/* as a rule the flags differ only, which stay */
/* *to's control bits, the current flags: see the top of the file. */
	test	$MXCSR_FLAGS, %eax
	jnz	LOCAL(merge_flags)
	ldmxcsr	CTX_MXCSR(%rsi)	/* the flags agree: *to's word as saved */
LOCAL(resume):
	jmp	*CTX_RIP(%rsi)

LOCAL(merge_flags):		/* eax: current MXCSR ^ *to's */
	and	$MXCSR_CONTROL, %eax
	xor	CTX_MXCSR(%rdi), %eax	/* *to's control bits, the current flags */
	mov	%eax, -8(%rsp)	/* ldmxcsr reads memory only; below *to's rsp is free */
	ldmxcsr	-8(%rsp)
	jmp	*CTX_RIP(%rsi)
#endif
END_FUNCTION coroutine_switch_context

/*
 * ---- The first-entry trampoline
 * void coroutine_start_context(context *from (rdi), char *top (rsi),
 *                              void (*entry)(struct schedule *, void *) (rdx),
 *                              void (*finish)(struct schedule *) (rcx),
 *                              struct schedule *S (r8))
 * The new coroutine runs with the caller's FP control state, as a function
 * it called would.
 */
FUNCTION coroutine_start_context
	ENTRY_MARK
	SAVE_CALLER %rdi
	and	$-16, %rsi	/* rsp % 16 == 0 at a call, 8 at the callee's entry */
	mov	%rsi, %rsp
	lea	CTX_RBP(%rdi), %rbp	/* the link: see the top of the file */
	/*
	 * The unwind entry covers only the calls on the new stack: their
	 * caller is the resumer, whose registers are in *from, around rbp.
	 */
	.cfi_startproc
	PERSONALITY
	.cfi_def_cfa rsp, 0
	SAVED_AT DW_RSP, DW_RBP, CTX_RSP, CTX_RBP
	SAVED_AT DW_RIP, DW_RBP, CTX_RIP, CTX_RBP
	SAVED_AT DW_RBP, DW_RBP, CTX_RBP, CTX_RBP
	SAVED_AT DW_RBX, DW_RBP, CTX_RBX, CTX_RBP
	SAVED_AT DW_R12, DW_RBP, CTX_R12, CTX_RBP
	SAVED_AT DW_R13, DW_RBP, CTX_R13, CTX_RBP
	SAVED_AT DW_R14, DW_RBP, CTX_R14, CTX_RBP
	SAVED_AT DW_R15, DW_RBP, CTX_R15, CTX_RBP
	mov	%r8, %rbx	/* S and finish, for after entry: callee-saved */
	mov	%rcx, %r12
	mov	%r8, %rdi
	xor	%esi, %esi
	call	*%rdx		/* entry(S, NULL): its return address is the top word */
	mov	%rbx, %rdi
	call	*%r12		/* finish(S) */
	ud2			/* finish returned: it must leave by a switch */
	.cfi_endproc
END_FUNCTION coroutine_start_context

/* ---- The call in a context: above rsp, the function, then the resume
 * address, which the pop leaves as the return address (from: rdi). */
FUNCTION coroutine_call_in_context
	ENTRY_MARK
	pop	%rax
	jmp	*%rax
END_FUNCTION coroutine_call_in_context

#elif defined(__x86_64__) && defined(_WIN32)
/* ======================================================================
 * x86_64, Microsoft x64 ABI (COFF, MinGW-w64 GNU assembler syntax).
 * "x64 calling convention" and "x64 ABI conventions" (Microsoft Learn,
 * learn.microsoft.com/cpp/build/x64-calling-convention and
 * .../x64-software-conventions): arguments in rcx, rdx, r8, r9, then on
 * the stack above a 32-byte home space that the caller reserves for the
 * callee; rbx, rbp, rdi, rsi, r12-r15 and xmm6-xmm15 are callee-saved
 * (nonvolatile), and so are the control bits of MXCSR and the x87 control
 * word; rsp is 16-byte aligned at a call, so rsp + 8 is at the callee's
 * entry.  There is no red zone: memory below rsp may be overwritten at any
 * time.
 *
 * Windows also keeps the bounds of the running stack in the Thread
 * Information Block, at fixed offsets from gs ("TEB" and "NT_TIB" in
 * winnt.h): StackBase (gs:0x08, the top), StackLimit (gs:0x10, the lowest
 * committed address) and DeallocationStack (gs:0x1478, the base of the
 * stack's reservation).  The unwinder (C++ exceptions, longjmp, stack
 * backtraces) rejects frames outside [StackLimit, StackBase), MSVC's stack
 * probe (__chkstk) compares rsp with StackLimit, and the stack-growth
 * logic reads all three: they must describe the run stack while a
 * coroutine runs and the thread's stack in main.  So they are part of the
 * context, like rsp.  (MinGW's probe, ___chkstk_ms, touches every page
 * without reading them.)  The run stack is committed whole, so
 * StackLimit, its lowest committed address, is its bottom.
 *
 * The TIB's first field, ExceptionList (gs:0x00), heads the chain of
 * exception registration records that 32-bit Windows dispatches through.
 * x64 Windows dispatches by the unwind tables and leaves the list alone,
 * but wine's dispatcher walks it too: it calls a record's handler before
 * the handler of any frame above the record in memory.  Main's records lie
 * on the thread's stack, below the run stack, so a throw in a coroutine
 * would reach main's top-level handler (terminate) before the coroutine's
 * own catch.  So the list is part of the context as well: a coroutine
 * starts with the end of the chain (-1), and main gets its own back.
 *
 * Context layout (CONTEXT_WORDS 35 in coroutine.cpp):
 *
 *   offset  bytes  holds
 *        0      8  rbx
 *        8      8  rbp
 *       16      8  rdi
 *       24      8  rsi
 *       32      8  r12
 *       40      8  r13
 *       48      8  r14
 *       56      8  r15
 *       64      8  rsp   as the caller sees it after the call returns
 *       72      8  rip   the resume address (the call's return address)
 *       80      8  StackBase          (gs:0x08)
 *       88      8  StackLimit         (gs:0x10)
 *       96      8  DeallocationStack  (gs:0x1478)
 *      104      4  MXCSR (SSE control and status)
 *      108      2  x87 control word
 *      110      2  unused
 *      112    160  xmm6 ... xmm15 (16 bytes each; the context is only
 *                  8-byte aligned, hence movups rather than movaps)
 *      272      8  ExceptionList      (gs:0x00)
 * ====================================================================== */
#define CTX_RBX   0
#define CTX_RBP   8
#define CTX_RDI  16
#define CTX_RSI  24
#define CTX_R12  32
#define CTX_R13  40
#define CTX_R14  48
#define CTX_R15  56
#define CTX_RSP  64
#define CTX_RIP  72
#define CTX_STACK_BASE  80
#define CTX_STACK_LIMIT 88
#define CTX_DEALLOCATION_STACK 96
#define CTX_MXCSR 104
#define CTX_FCW  108
#define CTX_XMM6 112
#define CTX_EXCEPTION_LIST 272
/* The TIB's stack fields and exception list, as gs-relative addresses. */
#define TIB_EXCEPTION_LIST %gs:0x00
#define TIB_STACK_BASE  %gs:0x08
#define TIB_STACK_LIMIT %gs:0x10
#define TIB_DEALLOCATION_STACK %gs:0x1478
/* MXCSR bits 0-5 are exception flags (status, volatile); 6-15 are DAZ,
 * exception masks, rounding control and FZ (control, nonvolatile). */
#define MXCSR_FLAGS 0x3f
#define MXCSR_CONTROL 0xffc0

	.text

/* ---- The save: the caller's nonvolatile state into the context at \ctx */
.macro SAVE_CALLER ctx
	pop	%rax		/* the return address: where the caller resumes */
	mov	%rax, CTX_RIP(\ctx)
	mov	%rbx, CTX_RBX(\ctx)
	mov	%rbp, CTX_RBP(\ctx)
	mov	%rdi, CTX_RDI(\ctx)
	mov	%rsi, CTX_RSI(\ctx)
	mov	%r12, CTX_R12(\ctx)
	mov	%r13, CTX_R13(\ctx)
	mov	%r14, CTX_R14(\ctx)
	mov	%r15, CTX_R15(\ctx)
	mov	%rsp, CTX_RSP(\ctx)	/* after the pop: as it will be after a return */
	mov	TIB_STACK_BASE, %rax
	mov	%rax, CTX_STACK_BASE(\ctx)
	mov	TIB_STACK_LIMIT, %rax
	mov	%rax, CTX_STACK_LIMIT(\ctx)
	mov	TIB_DEALLOCATION_STACK, %rax
	mov	%rax, CTX_DEALLOCATION_STACK(\ctx)
	mov	TIB_EXCEPTION_LIST, %rax
	mov	%rax, CTX_EXCEPTION_LIST(\ctx)
	stmxcsr	CTX_MXCSR(\ctx)
	fnstcw	CTX_FCW(\ctx)
	movups	%xmm6, CTX_XMM6+0*16(\ctx)
	movups	%xmm7, CTX_XMM6+1*16(\ctx)
	movups	%xmm8, CTX_XMM6+2*16(\ctx)
	movups	%xmm9, CTX_XMM6+3*16(\ctx)
	movups	%xmm10, CTX_XMM6+4*16(\ctx)
	movups	%xmm11, CTX_XMM6+5*16(\ctx)
	movups	%xmm12, CTX_XMM6+6*16(\ctx)
	movups	%xmm13, CTX_XMM6+7*16(\ctx)
	movups	%xmm14, CTX_XMM6+8*16(\ctx)
	movups	%xmm15, CTX_XMM6+9*16(\ctx)
.endm

/* ---- The restore of the nonvolatile state from \ctx: the TIB describes
 * \ctx's stack (and holds its exception list) before rsp moves onto it,
 * and rsp is last. */
.macro LOAD_CALLEE_SAVED ctx
	mov	CTX_STACK_BASE(\ctx), %rax
	mov	%rax, TIB_STACK_BASE
	mov	CTX_STACK_LIMIT(\ctx), %rax
	mov	%rax, TIB_STACK_LIMIT
	mov	CTX_DEALLOCATION_STACK(\ctx), %rax
	mov	%rax, TIB_DEALLOCATION_STACK
	mov	CTX_EXCEPTION_LIST(\ctx), %rax
	mov	%rax, TIB_EXCEPTION_LIST
	movups	CTX_XMM6+0*16(\ctx), %xmm6
	movups	CTX_XMM6+1*16(\ctx), %xmm7
	movups	CTX_XMM6+2*16(\ctx), %xmm8
	movups	CTX_XMM6+3*16(\ctx), %xmm9
	movups	CTX_XMM6+4*16(\ctx), %xmm10
	movups	CTX_XMM6+5*16(\ctx), %xmm11
	movups	CTX_XMM6+6*16(\ctx), %xmm12
	movups	CTX_XMM6+7*16(\ctx), %xmm13
	movups	CTX_XMM6+8*16(\ctx), %xmm14
	movups	CTX_XMM6+9*16(\ctx), %xmm15
	mov	CTX_RBX(\ctx), %rbx
	mov	CTX_RBP(\ctx), %rbp
	mov	CTX_RDI(\ctx), %rdi
	mov	CTX_RSI(\ctx), %rsi
	mov	CTX_R12(\ctx), %r12
	mov	CTX_R13(\ctx), %r13
	mov	CTX_R14(\ctx), %r14
	mov	CTX_R15(\ctx), %r15
	mov	CTX_RSP(\ctx), %rsp
.endm

/*
 * ---- The switch: the save, then the restore of *to
 * void coroutine_switch_context(context *from (rcx), const context *to (rdx))
 * No unwind info (.seh_proc): a function without it is taken for a leaf
 * whose return address is at rsp, and nothing here can raise an exception
 * for an unwinder to look at anyway.
 */
FUNCTION coroutine_switch_context
	SAVE_CALLER %rcx

	/* Reload MXCSR and the x87 control word only if *to's control bits
	 * differ.  eax keeps the bits that differ in MXCSR for load_fp, so the
	 * x87 control word is compared in r8d.  Most switches find no bit of
	 * MXCSR changed, flags included: that case is tested first. */
	mov	CTX_MXCSR(%rcx), %eax
	xor	CTX_MXCSR(%rdx), %eax
	jnz	LOCAL(mxcsr_differs)
LOCAL(compare_fcw):
	movzwl	CTX_FCW(%rcx), %r8d
	cmp	CTX_FCW(%rdx), %r8w
	jne	LOCAL(load_fp)

	LOAD_CALLEE_SAVED %rdx
	jmp	*CTX_RIP(%rdx)	/* "return" from the call that saved *to */

LOCAL(mxcsr_differs):		/* as a rule in the flags only, which stay */
	test	$MXCSR_CONTROL, %eax
	jz	LOCAL(compare_fcw)
/* *to's control bits, the current flags: see the top of the file. */
LOCAL(load_fp):			/* eax: current MXCSR ^ *to's */
	fldcw	CTX_FCW(%rdx)
	test	$MXCSR_FLAGS, %eax
	jnz	LOCAL(merge_flags)
	LOAD_CALLEE_SAVED %rdx
	ldmxcsr	CTX_MXCSR(%rdx)	/* the flags agree: *to's word as saved */
	jmp	*CTX_RIP(%rdx)

LOCAL(merge_flags):		/* eax: current MXCSR ^ *to's */
	and	$MXCSR_CONTROL, %eax
	xor	CTX_MXCSR(%rcx), %eax	/* *to's control bits, the current flags */
	/*
	 * ldmxcsr reads memory only, and there is no red zone.  But rsp (after
	 * the pop) points at the home space, which the caller reserved for
	 * this function: its first slot is ours to write.
	 */
	mov	%eax, (%rsp)
	ldmxcsr	(%rsp)
	LOAD_CALLEE_SAVED %rdx
	jmp	*CTX_RIP(%rdx)
END_FUNCTION coroutine_switch_context

/*
 * ---- The first-entry trampoline
 * void coroutine_start_context(context *from (rcx), char *top (rdx),
 *                              void (*entry)(struct schedule *, void *) (r8),
 *                              void (*finish)(struct schedule *) (r9),
 *                              struct schedule *S (rsp + 40),
 *                              char *bottom (rsp + 48),
 *                              char *reservation (rsp + 56))
 * bottom and reservation are the lowest addresses of the run stack and of
 * its mapping (the guard region below it): the new StackLimit and
 * DeallocationStack.  The new coroutine's exception list is empty: -1,
 * the end of the chain.  It runs with the caller's FP control state, as a
 * function it called would.
 */
FUNCTION coroutine_start_context
	SAVE_CALLER %rcx
	mov	32(%rsp), %rbx	/* S, above the home space (after the pop) */
	mov	40(%rsp), %r10	/* bottom */
	mov	48(%rsp), %r11	/* reservation */
	mov	%r9, %r12	/* finish: S and finish are for after entry */
	and	$-16, %rdx
	mov	%rdx, TIB_STACK_BASE
	mov	%r10, TIB_STACK_LIMIT
	mov	%r11, TIB_DEALLOCATION_STACK
	movq	$-1, TIB_EXCEPTION_LIST
	/*
	 * The top word of the run stack is a null return address: the frame
	 * below it is entered as if called from nowhere, so rsp % 16 == 8, as
	 * at any function's entry.
	 */
	lea	-8(%rdx), %rsp
	movq	$0, (%rsp)
	/*
	 * The unwind info covers only this frame on the run stack: 40 bytes
	 * (entry's 32-byte home space, 8 to align the call), then the null
	 * return address.  An unwinder that reaches it stops there (a zero
	 * return address ends the chain) instead of reading whatever lies above
	 * the top of the run stack, and the frame is inside StackBase.  No link
	 * to the resumer (see the top of the file): Windows' unwinder checks
	 * each frame against the TIB's stack bounds, which describe the run
	 * stack, and main's frames and a record in the schedule lie outside.
	 */
	.seh_proc coroutine_start_context
	sub	$40, %rsp
	.seh_stackalloc 40
	.seh_endprologue
	mov	%rbx, %rcx
	xor	%edx, %edx
	call	*%r8		/* entry(S, NULL) */
	mov	%rbx, %rcx
	call	*%r12		/* finish(S) */
	ud2			/* finish returned: it must leave by a switch */
	.seh_endproc
END_FUNCTION coroutine_start_context

/* ---- The call in a context: above rsp, the function, then the resume
 * address, which the pop leaves as the return address (from: rcx; the
 * home space above it is the switch's, a callee's to use). */
FUNCTION coroutine_call_in_context
	pop	%rax
	jmp	*%rax
END_FUNCTION coroutine_call_in_context

#elif defined(__i386__) && defined(__ELF__)
/* ======================================================================
 * i386, System V ABI (ELF, cdecl).  "System V Application Binary
 * Interface, Intel386 Architecture Processor Supplement", version 1.1,
 * section 2.2 (Function Calling Sequence): ebx, esi, edi, ebp and esp are
 * callee-saved, as are the x87 control word and the control bits of
 * MXCSR; the arguments are passed on the stack, which the caller pops;
 * the end of the argument area is 16-byte aligned at a call (esp % 16 == 0
 * at the call instruction), which gcc assumes on Linux.
 *
 * Context layout (CONTEXT_WORDS 8 in coroutine.cpp):
 *
 *   offset  bytes  holds
 *        0      4  ebx
 *        4      4  esi
 *        8      4  edi
 *       12      4  esp   as the caller sees it after the call returns
 *       16      4  ebp   } a frame record, [ebp] then [ebp + 4]: the link
 *       20      4  eip   } the resume address (the call's return address)
 *       24      4  MXCSR (SSE control and status), in an SSE build only
 *       28      2  x87 control word
 *       30      2  unused
 *
 * MXCSR is switched only when this file is built for a CPU with SSE
 * (__SSE__: -msse, or an -march that implies it, such as -march=pentium4).
 * The i686 baseline that Debian's compilers target has no SSE, and there
 * stmxcsr would fault (#UD) on a CPU without it, so the choice is made
 * where the code's target CPU is chosen: at build time, with no CPUID on
 * the switch path.  A build without SSE does its floating point on the x87,
 * whose control word is always switched; what it leaves per thread, like
 * the sticky flags, is the MXCSR that fesetround also sets on a CPU that
 * has SSE, which only SSE code from elsewhere (a library's SSE routines)
 * could see.
 * ====================================================================== */
#define CTX_EBX   0
#define CTX_ESI   4
#define CTX_EDI   8
#define CTX_ESP  12
#define CTX_EBP  16
#define CTX_EIP  20
#define CTX_MXCSR 24
#define CTX_FCW  28
/* MXCSR bits 0-5 are exception flags (status, caller-saved); 6-15 are
 * DAZ, exception masks, rounding control and FZ (control, callee-saved). */
#define MXCSR_FLAGS 0x3f
#define MXCSR_CONTROL 0xffc0
/* DWARF's numbers (the ABI's Table 2.14), for the link's unwind entry. */
#define DW_EBX 3
#define DW_ESP 4
#define DW_EBP 5
#define DW_ESI 6
#define DW_EDI 7
#define DW_EIP 8

/* -fcf-protection: as on x86_64 (see there), marked entry points but no
 * GNU property note claiming CET support. */
#ifdef __CET__
#define ENTRY_MARK endbr32
#else
#define ENTRY_MARK
#endif

	.text

/* ---- The save: the caller's callee-saved state into the context at \ctx.
 * After the pop, the arguments start at (%esp). */
.macro SAVE_CALLER ctx
	pop	%ecx		/* the return address: where the caller resumes */
	mov	%ebx, CTX_EBX(\ctx)
	mov	%esi, CTX_ESI(\ctx)
	mov	%edi, CTX_EDI(\ctx)
	mov	%esp, CTX_ESP(\ctx)	/* after the pop: as it will be after a return */
	mov	%ebp, CTX_EBP(\ctx)
	mov	%ecx, CTX_EIP(\ctx)
#ifdef __SSE__
	stmxcsr	CTX_MXCSR(\ctx)
#endif
	fnstcw	CTX_FCW(\ctx)
.endm

/* ---- The restore of the registers (the stack pointer last) from \ctx */
.macro LOAD_CALLEE_SAVED ctx
	mov	CTX_EBX(\ctx), %ebx
	mov	CTX_ESI(\ctx), %esi
	mov	CTX_EDI(\ctx), %edi
	mov	CTX_EBP(\ctx), %ebp
	mov	CTX_ESP(\ctx), %esp
.endm

/* ---- The switch: the save, then the restore of *to
 * void coroutine_switch_context(context *from (4(%esp)), const context *to (8(%esp))) */
FUNCTION coroutine_switch_context
	ENTRY_MARK
	mov	4(%esp), %eax	/* from */
	mov	8(%esp), %edx	/* to */
	SAVE_CALLER %eax
#if ASM_SWITCH_FP_RELOAD
	/* The bench's other switch (see the top of the file): *to's FP state
	 * as saved, flags included. */
	fldcw	CTX_FCW(%edx)
	LOAD_CALLEE_SAVED %edx
#ifdef __SSE__
	ldmxcsr	CTX_MXCSR(%edx)
#endif
	jmp	*CTX_EIP(%edx)
#else
	/* Reload the x87 control word and MXCSR only if *to's control bits
	 * differ.  Most switches find no bit of MXCSR changed, flags included:
	 * that case is tested first. */
	movzwl	CTX_FCW(%eax), %ecx
	cmp	CTX_FCW(%edx), %cx
	jne	LOCAL(load_fp)
#ifdef __SSE__
	mov	CTX_MXCSR(%eax), %ecx
	xor	CTX_MXCSR(%edx), %ecx
	jnz	LOCAL(mxcsr_differs)
#endif
LOCAL(fp_agrees):
	LOAD_CALLEE_SAVED %edx
	jmp	*CTX_EIP(%edx)	/* "return" from the call that saved *to */

#ifdef __SSE__
LOCAL(mxcsr_differs):		/* as a rule in the flags only, which stay */
	test	$MXCSR_CONTROL, %ecx
	jz	LOCAL(fp_agrees)
#endif
/* *to's control bits, the current flags: see the top of the file. */
LOCAL(load_fp):
	fldcw	CTX_FCW(%edx)
#ifdef __SSE__
	mov	CTX_MXCSR(%eax), %ecx
	xor	CTX_MXCSR(%edx), %ecx
	test	$MXCSR_FLAGS, %ecx
	jnz	LOCAL(merge_flags)
#endif
	LOAD_CALLEE_SAVED %edx
#ifdef __SSE__
	ldmxcsr	CTX_MXCSR(%edx)	/* the flags agree: *to's word as saved */
#endif
	jmp	*CTX_EIP(%edx)

#ifdef __SSE__
LOCAL(merge_flags):		/* ecx: current MXCSR ^ *to's */
	and	$MXCSR_CONTROL, %ecx
	xor	CTX_MXCSR(%eax), %ecx	/* *to's control bits, the current flags */
	/*
	 * ldmxcsr reads memory only.  i386 has no red zone below esp (a signal
	 * handler may write there), but the argument slots above it belong to
	 * the called function, as a C function that assigns to a parameter
	 * writes there: from's slot is free, eax holds from.
	 */
	mov	%ecx, (%esp)
	ldmxcsr	(%esp)
	LOAD_CALLEE_SAVED %edx
	jmp	*CTX_EIP(%edx)
#endif
#endif
END_FUNCTION coroutine_switch_context

/*
 * ---- The first-entry trampoline
 * void coroutine_start_context(context *from (4(%esp)), char *top (8(%esp)),
 *                              void (*entry)(struct schedule *, void *) (12(%esp)),
 *                              void (*finish)(struct schedule *) (16(%esp)),
 *                              struct schedule *S (20(%esp)))
 * The new coroutine runs with the caller's FP control state, as a function
 * it called would.
 */
FUNCTION coroutine_start_context
	ENTRY_MARK
	mov	4(%esp), %eax	/* from */
	SAVE_CALLER %eax
	mov	4(%esp), %ecx	/* top (the pop moved the arguments up by 4) */
	mov	8(%esp), %edx	/* entry */
	mov	12(%esp), %esi	/* finish: S and finish are for after entry */
	mov	16(%esp), %ebx	/* S */
	and	$-16, %ecx
	mov	%ecx, %esp
	lea	CTX_EBP(%eax), %ebp	/* the link: see the top of the file */
	/*
	 * The unwind entry covers only the calls on the new stack: their
	 * caller is the resumer, whose registers are in *from, around ebp.
	 */
	.cfi_startproc
	PERSONALITY
	.cfi_def_cfa esp, 0
	SAVED_AT DW_ESP, DW_EBP, CTX_ESP, CTX_EBP
	SAVED_AT DW_EIP, DW_EBP, CTX_EIP, CTX_EBP
	SAVED_AT DW_EBP, DW_EBP, CTX_EBP, CTX_EBP
	SAVED_AT DW_EBX, DW_EBP, CTX_EBX, CTX_EBP
	SAVED_AT DW_ESI, DW_EBP, CTX_ESI, CTX_EBP
	SAVED_AT DW_EDI, DW_EBP, CTX_EDI, CTX_EBP
	sub	$8, %esp	/* 8 + the 8 of the arguments: esp % 16 == 0 at the call */
	.cfi_adjust_cfa_offset 8
	push	$0
	.cfi_adjust_cfa_offset 4
	push	%ebx
	.cfi_adjust_cfa_offset 4
	call	*%edx		/* entry(S, NULL) */
	mov	%ebx, (%esp)	/* the argument slots were entry's to change */
	call	*%esi		/* finish(S) */
	ud2			/* finish returned: it must leave by a switch */
	.cfi_endproc
END_FUNCTION coroutine_start_context

/* ---- The call in a context: above esp, the function, then the resume
 * address, which the pop leaves as the return address.  from and to (eax
 * and edx, as the switch left them) go to the arguments' slots, which were
 * the switch's own and are a callee's to change. */
FUNCTION coroutine_call_in_context
	ENTRY_MARK
	pop	%ecx
	mov	%eax, 4(%esp)
	mov	%edx, 8(%esp)
	jmp	*%ecx
END_FUNCTION coroutine_call_in_context

#elif defined(__aarch64__) && (defined(__ELF__) || defined(__APPLE__)) && !defined(__ILP32__)
/* ======================================================================
 * aarch64, AAPCS64 (ELF on Linux, Mach-O on macOS).  "Procedure Call Standard for the Arm 64-bit
 * Architecture": x19-x29 and sp are callee-saved, x30 is the link
 * register (the return address), the low 64 bits of v8-v15 (d8-d15) are
 * callee-saved, FPCR's mode fields are preserved across calls, and sp is
 * 16-byte aligned whenever it is used to access memory.  x18 is the
 * platform register: Apple's "Writing ARM64 code for Apple platforms"
 * reserves it, so it is neither saved nor touched here.
 *
 * Context layout (CONTEXT_WORDS 22 in coroutine.cpp):
 *
 *   offset  bytes  holds
 *        0     80  x19 ... x28
 *       80      8  x29 (frame pointer)          } a frame record: the link
 *       88      8  x30 (link register: the resume address)     }
 *       96     64  d8 ... d15
 *      160      8  sp
 *      168      8  FPCR (rounding mode, flush-to-zero, trap enables)
 * ====================================================================== */
#define CTX_X19   0
#define CTX_X21  16
#define CTX_X23  32
#define CTX_X25  48
#define CTX_X27  64
#define CTX_X29  80
#define CTX_D8   96
#define CTX_D10 112
#define CTX_D12 128
#define CTX_D14 144
#define CTX_SP  160
#define CTX_FPCR 168
/* DWARF's numbers ("DWARF for the Arm 64-bit Architecture"), for the
 * link's unwind entry: x19-x30 are 19-30, sp 31, d8-d15 (v8-v15) 72-79. */
#define DW_X29 29

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
	stp	x19, x20, [\ctx, #CTX_X19]
	stp	x21, x22, [\ctx, #CTX_X21]
	stp	x23, x24, [\ctx, #CTX_X23]
	stp	x25, x26, [\ctx, #CTX_X25]
	stp	x27, x28, [\ctx, #CTX_X27]
	stp	x29, x30, [\ctx, #CTX_X29]	/* x30: where the caller resumes */
	stp	d8, d9, [\ctx, #CTX_D8]
	stp	d10, d11, [\ctx, #CTX_D10]
	stp	d12, d13, [\ctx, #CTX_D12]
	stp	d14, d15, [\ctx, #CTX_D14]
	mov	x9, sp			/* stp cannot store sp itself */
	mrs	x10, fpcr
	stp	x9, x10, [\ctx, #CTX_SP]
.endm

/* ---- The switch: the save, then the restore of *to
 * void coroutine_switch_context(context *from (x0), const context *to (x1)) */
FUNCTION coroutine_switch_context
	ENTRY_MARK
	SAVE_CALLER x0

	ldp	x19, x20, [x1, #CTX_X19]
	ldp	x21, x22, [x1, #CTX_X21]
	ldp	x23, x24, [x1, #CTX_X23]
	ldp	x25, x26, [x1, #CTX_X25]
	ldp	x27, x28, [x1, #CTX_X27]
	ldp	x29, x30, [x1, #CTX_X29]
	ldp	d8, d9, [x1, #CTX_D8]
	ldp	d10, d11, [x1, #CTX_D10]
	ldp	d12, d13, [x1, #CTX_D12]
	ldp	d14, d15, [x1, #CTX_D14]
	ldp	x9, x11, [x1, #CTX_SP]
	mov	sp, x9
	/* FPCR has no status bits (those are in FPSR): compare it whole. */
	cmp	x10, x11
	b.ne	LOCAL(load_fpcr)
	ret			/* to x30: "return" from the call that saved *to */

LOCAL(load_fpcr):
	msr	fpcr, x11
	ret
END_FUNCTION coroutine_switch_context

/*
 * ---- The first-entry trampoline
 * void coroutine_start_context(context *from (x0), char *top (x1),
 *                              void (*entry)(struct schedule *, void *) (x2),
 *                              void (*finish)(struct schedule *) (x3),
 *                              struct schedule *S (x4))
 * The new coroutine runs with the caller's FPCR, as a function it called
 * would.
 */
FUNCTION coroutine_start_context
	ENTRY_MARK
	SAVE_CALLER x0
	and	x1, x1, #-16	/* sp must always be 16-byte aligned */
	mov	sp, x1
	add	x29, x0, #CTX_X29	/* the link: see the top of the file */
	/*
	 * The unwind entry covers only the calls on the new stack: their
	 * caller is the resumer, whose registers are in *from, around x29.
	 */
	.cfi_startproc
	PERSONALITY
	.cfi_def_cfa sp, 0
	SAVED_AT 31, DW_X29, CTX_SP, CTX_X29
	SAVED_AT 29, DW_X29, CTX_X29, CTX_X29
	SAVED_AT 30, DW_X29, CTX_X29+8, CTX_X29
	.irp n, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28
	SAVED_AT \n, DW_X29, CTX_X19+8*(\n-19), CTX_X29
	.endr
	.irp n, 8, 9, 10, 11, 12, 13, 14, 15
	SAVED_AT 64+\n, DW_X29, CTX_D8+8*(\n-8), CTX_X29
	.endr
	mov	x19, x4		/* S and finish, for after entry: callee-saved */
	mov	x20, x3
	mov	x0, x4
	mov	x1, xzr
	blr	x2		/* entry(S, NULL) */
	mov	x0, x19
	blr	x20		/* finish(S) */
	brk	#0x3e8		/* finish returned: it must leave by a switch */
	.cfi_endproc
END_FUNCTION coroutine_start_context

/* ---- The call in a context: above sp, the function, then the resume
 * address, which goes to x30 (from: x0).  x16: a br through it may land
 * on the "bti c" that starts a function. */
FUNCTION coroutine_call_in_context
	ENTRY_MARK
	ldp	x16, x30, [sp], #16
	br	x16
END_FUNCTION coroutine_call_in_context

#if defined(__ARM_FEATURE_BTI_DEFAULT) && defined(__ELF__)
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

#elif defined(__arm__) && defined(__ELF__) && defined(__ARM_PCS_VFP) && __ARM_ARCH >= 7 && (__ARM_FP & 8)
/* ======================================================================
 * armv7, AAPCS with the VFP (hard-float) variant (ELF, gnueabihf).
 * "Procedure Call Standard for the Arm Architecture" (AAPCS32), Machine
 * Registers: r4-r11 and sp are callee-saved, lr holds the return address,
 * d8-d15 (s16-s31) are callee-saved; Stack constraints at a public
 * interface: sp is 8-byte aligned at a call.  Of FPSCR, the standard makes
 * the exception-control bits (8-12, 15), the rounding mode (22-23) and
 * flush-to-zero (24) global state that only support functions change, and
 * the condition flags, saturation and cumulative exception bits (0-4, 7,
 * 27-31) not preserved: as on the other targets, a coroutine keeps its own
 * control bits and shares the flags with main.
 *
 * Context layout (CONTEXT_WORDS 27 in coroutine.cpp):
 *
 *   offset  bytes  holds
 *        0     32  r4 ... r11
 *       32      4  lr    the resume address, bit 0 set for Thumb code
 *       36      4  sp
 *       40      4  FPSCR
 *       44     64  d8 ... d15
 *
 * Interworking: Debian's compiler emits Thumb-2 code by default (-mthumb),
 * and a program may mix Thumb and ARM code.  This file is assembled in the
 * compiler's instruction set; FUNCTION's %function type makes the linker
 * set bit 0 of the address of a Thumb entry point (so that a call from ARM
 * code switches to Thumb); the resume is a bx and the call of entry a blx,
 * which switch to the instruction set that bit 0 of the address names.
 * ====================================================================== */
#define CTX_R4     0
#define CTX_LR    32
#define CTX_SP    36
#define CTX_FPSCR 40
#define CTX_D8    44
/* FPSCR bits 8-12 and 15 (trap enables), 22-23 (rounding mode), 24 (FZ),
 * 25 (default NaN) and 26 (alternative half precision) are control. */
#define FPSCR_CONTROL 0x07c09f00

	.syntax unified
#ifdef __thumb__
	.thumb
#else
	.arm
#endif
	/* ARM's unwinder reads .ARM.exidx (see .cantunwind below); the CFI is
	 * for debuggers, as the compiler emits it. */
	.cfi_sections .debug_frame
	.text

/* ---- The save: the caller's callee-saved state into the context at \ctx,
 * leaving the current FPSCR in r12 for the restore to compare. */
.macro SAVE_CALLER ctx
	stmia	\ctx, {r4-r11, lr}	/* lr: where the caller resumes */
	mov	r12, sp			/* Thumb's stm cannot store sp */
	str	r12, [\ctx, #CTX_SP]
	add	r12, \ctx, #CTX_D8
	vstmia	r12, {d8-d15}
	vmrs	r12, fpscr
	str	r12, [\ctx, #CTX_FPSCR]
.endm

/* ---- The switch: the save, then the restore of *to
 * void coroutine_switch_context(context *from (r0), const context *to (r1)) */
FUNCTION coroutine_switch_context
	SAVE_CALLER r0

	/* Reload FPSCR only if *to's control bits differ. */
	ldr	r2, [r1, #CTX_FPSCR]
	eor	r2, r2, r12		/* the bits that differ */
	movw	r3, #(FPSCR_CONTROL & 0xffff)
	movt	r3, #(FPSCR_CONTROL >> 16)
	tst	r2, r3
	bne	LOCAL(load_fpscr)
LOCAL(fpscr_loaded):

	add	r2, r1, #CTX_D8
	vldmia	r2, {d8-d15}
	ldr	r2, [r1, #CTX_SP]
	mov	sp, r2
	ldmia	r1, {r4-r11, lr}
	bx	lr		/* "return" from the call that saved *to, in its instruction set */

LOCAL(load_fpscr):
	and	r2, r2, r3		/* the control bits that differ */
	eor	r12, r12, r2		/* *to's control bits, the current flags */
	vmsr	fpscr, r12
	b	LOCAL(fpscr_loaded)
END_FUNCTION coroutine_switch_context

/*
 * ---- The first-entry trampoline
 * void coroutine_start_context(context *from (r0), char *top (r1),
 *                              void (*entry)(struct schedule *, void *) (r2),
 *                              void (*finish)(struct schedule *) (r3),
 *                              struct schedule *S ([sp]))
 * The new coroutine runs with the caller's FPSCR, as a function it called
 * would.
 */
FUNCTION coroutine_start_context
	SAVE_CALLER r0
	ldr	r4, [sp]	/* S and finish, for after entry: callee-saved */
	mov	r5, r3
	bic	r1, r1, #15	/* 16 as elsewhere; AAPCS asks for 8 at a call */
	mov	sp, r1
	/*
	 * The unwind entries cover only the calls on the new stack and say that
	 * they have no caller: .cantunwind for the EHABI unwinder (exceptions,
	 * backtrace(3)), an undefined lr (r14) for debuggers.  Both stop here
	 * instead of reading whatever lies above the top of the run stack.  No
	 * link to the resumer (see the top of the file): crossing it would take
	 * an EHABI entry and a personality routine of that format, and gcc's
	 * Thumb code keeps no frame records for a walker to follow (r7 points
	 * below a frame's locals).
	 */
	.fnstart
	.cantunwind
	.cfi_startproc
	.cfi_undefined 14
	mov	r7, #0		/* end frame-pointer chains here too: r7 is */
	mov	r11, #0		/* Thumb code's frame pointer, r11 ARM code's */
	mov	r0, r4
	mov	r1, #0
	blx	r2		/* entry(S, NULL), Thumb or ARM code: bit 0 says */
	mov	r0, r4
	blx	r5		/* finish(S) */
	udf	#0		/* finish returned: it must leave by a switch */
	.cfi_endproc
	.fnend
END_FUNCTION coroutine_start_context

/* ---- The call in a context: above sp, the function, then the resume
 * address, which goes to lr (from: r0); bx switches to the function's
 * instruction set. */
FUNCTION coroutine_call_in_context
	pop	{r12, lr}
	bx	r12
END_FUNCTION coroutine_call_in_context

#elif defined(__riscv) && defined(__ELF__) && __riscv_xlen == 64 && defined(__riscv_float_abi_double)
/* ======================================================================
 * riscv64, LP64D (ELF).  "RISC-V ELF psABI", Integer and Floating-point
 * Register Conventions: s0-s11 (s0 is the frame pointer) and sp are
 * callee-saved, ra holds the return address, fs0-fs11 are callee-saved
 * under the D ABI; sp is 16-byte aligned on entry to a function.  The
 * psABI gives fcsr thread storage duration, as C11 gives <fenv.h>; as on
 * the other targets, a coroutine keeps its own rounding mode (frm, the
 * control field of fcsr) and shares the accrued exception flags (fflags)
 * with main.
 *
 * Context layout (CONTEXT_WORDS 27 in coroutine.cpp):
 *
 *   offset  bytes  holds
 *        0      8  sp
 *        8     88  s1 ... s11
 *       96      8  s0 (frame pointer)      } a frame record, which s0
 *      104      8  ra (the resume address) } points just above: the link
 *      112     96  fs0 ... fs11
 *      208      8  frm   (the rounding mode of fcsr)
 * ====================================================================== */
#define CTX_SP    0
#define CTX_S1    8
#define CTX_S0   96
#define CTX_RA  104
#define CTX_FS0 112
#define CTX_FRM 208
/* Where s0 points for the link: just above the frame record. */
#define CTX_RECORD_END 112
/* DWARF's numbers (the psABI's DWARF Register Numbers), for the link's
 * unwind entry: x1 is ra, x8-x9 and x18-x27 are s0-s11, f8-f9 and f18-f27
 * (fs0-fs11) are 40-41 and 50-59. */
#define DW_RA 1
#define DW_SP 2
#define DW_S0 8

	.text

/* ---- The save: the caller's callee-saved state into the context at \ctx,
 * leaving the current rounding mode in t0 for the restore to compare. */
.macro SAVE_CALLER ctx
	sd	sp, CTX_SP(\ctx)
	sd	s1, CTX_S1+0(\ctx)
	sd	s2, CTX_S1+8(\ctx)
	sd	s3, CTX_S1+16(\ctx)
	sd	s4, CTX_S1+24(\ctx)
	sd	s5, CTX_S1+32(\ctx)
	sd	s6, CTX_S1+40(\ctx)
	sd	s7, CTX_S1+48(\ctx)
	sd	s8, CTX_S1+56(\ctx)
	sd	s9, CTX_S1+64(\ctx)
	sd	s10, CTX_S1+72(\ctx)
	sd	s11, CTX_S1+80(\ctx)
	sd	s0, CTX_S0(\ctx)
	sd	ra, CTX_RA(\ctx)	/* where the caller resumes */
	fsd	fs0, CTX_FS0+0(\ctx)
	fsd	fs1, CTX_FS0+8(\ctx)
	fsd	fs2, CTX_FS0+16(\ctx)
	fsd	fs3, CTX_FS0+24(\ctx)
	fsd	fs4, CTX_FS0+32(\ctx)
	fsd	fs5, CTX_FS0+40(\ctx)
	fsd	fs6, CTX_FS0+48(\ctx)
	fsd	fs7, CTX_FS0+56(\ctx)
	fsd	fs8, CTX_FS0+64(\ctx)
	fsd	fs9, CTX_FS0+72(\ctx)
	fsd	fs10, CTX_FS0+80(\ctx)
	fsd	fs11, CTX_FS0+88(\ctx)
	frrm	t0
	sd	t0, CTX_FRM(\ctx)
.endm

/* ---- The switch: the save, then the restore of *to
 * void coroutine_switch_context(context *from (a0), const context *to (a1)) */
FUNCTION coroutine_switch_context
	SAVE_CALLER a0

	/* Reload the rounding mode only if *to's differs. */
	ld	t1, CTX_FRM(a1)
	bne	t0, t1, LOCAL(load_frm)
LOCAL(frm_loaded):

	ld	sp, CTX_SP(a1)
	ld	s1, CTX_S1+0(a1)
	ld	s2, CTX_S1+8(a1)
	ld	s3, CTX_S1+16(a1)
	ld	s4, CTX_S1+24(a1)
	ld	s5, CTX_S1+32(a1)
	ld	s6, CTX_S1+40(a1)
	ld	s7, CTX_S1+48(a1)
	ld	s8, CTX_S1+56(a1)
	ld	s9, CTX_S1+64(a1)
	ld	s10, CTX_S1+72(a1)
	ld	s11, CTX_S1+80(a1)
	ld	s0, CTX_S0(a1)
	ld	ra, CTX_RA(a1)
	fld	fs0, CTX_FS0+0(a1)
	fld	fs1, CTX_FS0+8(a1)
	fld	fs2, CTX_FS0+16(a1)
	fld	fs3, CTX_FS0+24(a1)
	fld	fs4, CTX_FS0+32(a1)
	fld	fs5, CTX_FS0+40(a1)
	fld	fs6, CTX_FS0+48(a1)
	fld	fs7, CTX_FS0+56(a1)
	fld	fs8, CTX_FS0+64(a1)
	fld	fs9, CTX_FS0+72(a1)
	fld	fs10, CTX_FS0+80(a1)
	fld	fs11, CTX_FS0+88(a1)
	ret			/* to ra: "return" from the call that saved *to */

LOCAL(load_frm):
	fsrm	t1		/* writes frm only, not the flags */
	j	LOCAL(frm_loaded)
END_FUNCTION coroutine_switch_context

/*
 * ---- The first-entry trampoline
 * void coroutine_start_context(context *from (a0), char *top (a1),
 *                              void (*entry)(struct schedule *, void *) (a2),
 *                              void (*finish)(struct schedule *) (a3),
 *                              struct schedule *S (a4))
 * The new coroutine runs with the caller's rounding mode, as a function it
 * called would.
 */
FUNCTION coroutine_start_context
	SAVE_CALLER a0
	andi	a1, a1, -16	/* sp must be 16-byte aligned */
	mv	sp, a1
	addi	s0, a0, CTX_RECORD_END	/* the link: see the top of the file */
	/*
	 * The unwind entry covers only the calls on the new stack: their
	 * caller is the resumer, whose registers are in *from, below s0.
	 */
	.cfi_startproc
	PERSONALITY
	.cfi_def_cfa sp, 0
	SAVED_AT DW_SP, DW_S0, CTX_SP, CTX_RECORD_END
	SAVED_AT DW_RA, DW_S0, CTX_RA, CTX_RECORD_END
	SAVED_AT DW_S0, DW_S0, CTX_S0, CTX_RECORD_END
	SAVED_AT 9, DW_S0, CTX_S1, CTX_RECORD_END
	.irp n, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
	SAVED_AT 16+\n, DW_S0, CTX_S1+8*(\n-1), CTX_RECORD_END
	.endr
	SAVED_AT 40, DW_S0, CTX_FS0, CTX_RECORD_END
	SAVED_AT 41, DW_S0, CTX_FS0+8, CTX_RECORD_END
	.irp n, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
	SAVED_AT 48+\n, DW_S0, CTX_FS0+8*\n, CTX_RECORD_END
	.endr
	mv	s1, a4		/* S and finish, for after entry: callee-saved */
	mv	s2, a3
	mv	a0, a4
	li	a1, 0
	jalr	a2		/* entry(S, NULL) */
	mv	a0, s1
	jalr	s2		/* finish(S) */
	unimp			/* finish returned: it must leave by a switch */
	.cfi_endproc
END_FUNCTION coroutine_start_context

/* ---- The call in a context: above sp, the function, then the resume
 * address, which goes to ra (from: a0). */
FUNCTION coroutine_call_in_context
	ld	t0, 0(sp)
	ld	ra, 8(sp)
	addi	sp, sp, 16
	jr	t0
END_FUNCTION coroutine_call_in_context

#else
#error "asm_switch.S supports x86_64 (System V: Linux, macOS; Microsoft x64: Windows), aarch64 (AAPCS64: Linux, macOS), and on Linux i386 (System V), armv7 (AAPCS, hard float) and riscv64 (LP64D); build coroutine.cpp without -DCOROUTINE_ASM to use the ucontext backend"
#endif

#ifdef __ELF__
/* The stack need not be executable (without this note the linker assumes it must). */
	.section .note.GNU-stack, "", %progbits
#endif
