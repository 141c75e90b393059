; asm_switch.asm - the assembly context switch of coroutine.cpp for
; Microsoft's assembler (ml64, llvm-ml): the x86_64 Windows section of
; asm_switch.S, line for line, in MASM syntax.  Build coroutine.cpp with
; /DCOROUTINE_ASM=1 and link this file instead of asm_switch.S.
;
; The two files must not drift: the same order, the same comments, the
; same context offsets; make windows-msvc-test runs the same checks on each.
; What asm_switch.S says at its top (the three functions, why the resume
; address lives in the context, the FP control state) holds here too.
; The context's offsets are CTX_RBX, CTX_FCW... in both files (MASM
; reserves the register names, so a bare RBX would not do here).
;
; ======================================================================
; x86_64, Microsoft x64 ABI (COFF, Microsoft assembler syntax).
; "x64 calling convention" and "x64 ABI conventions" (Microsoft Learn,
; learn.microsoft.com/cpp/build/x64-calling-convention and
; .../x64-software-conventions): arguments in rcx, rdx, r8, r9, then on
; the stack above a 32-byte home space that the caller reserves for the
; callee; rbx, rbp, rdi, rsi, r12-r15 and xmm6-xmm15 are callee-saved
; (nonvolatile), and so are the control bits of MXCSR and the x87 control
; word; rsp is 16-byte aligned at a call, so rsp + 8 is at the callee's
; entry.  There is no red zone: memory below rsp may be overwritten at any
; time.
;
; Windows also keeps the bounds of the running stack in the Thread
; Information Block, at fixed offsets from gs ("TEB" and "NT_TIB" in
; winnt.h): StackBase (gs:0x08, the top), StackLimit (gs:0x10, the lowest
; committed address) and DeallocationStack (gs:0x1478, the base of the
; stack's reservation).  The unwinder (C++ exceptions, longjmp, stack
; backtraces) rejects frames outside [StackLimit, StackBase), MSVC's stack
; probe (__chkstk) compares rsp with StackLimit, and the stack-growth
; logic reads all three: they must describe the run stack while a
; coroutine runs and the thread's stack in main.  So they are part of the
; context, like rsp.  (MinGW's probe, ___chkstk_ms, touches every page
; without reading them.)  The run stack is committed whole, so
; StackLimit, its lowest committed address, is its bottom.
;
; The TIB's first field, ExceptionList (gs:0x00), heads the chain of
; exception registration records that 32-bit Windows dispatches through.
; x64 Windows dispatches by the unwind tables and leaves the list alone,
; but wine's dispatcher walks it too: it calls a record's handler before
; the handler of any frame above the record in memory.  Main's records lie
; on the thread's stack, below the run stack, so a throw in a coroutine
; would reach main's top-level handler (terminate) before the coroutine's
; own catch.  So the list is part of the context as well: a coroutine
; starts with the end of the chain (-1), and main gets its own back.
;
; Context layout (CONTEXT_WORDS 35 in coroutine.cpp):
;
;   offset  bytes  holds
;        0      8  rbx
;        8      8  rbp
;       16      8  rdi
;       24      8  rsi
;       32      8  r12
;       40      8  r13
;       48      8  r14
;       56      8  r15
;       64      8  rsp   as the caller sees it after the call returns
;       72      8  rip   the resume address (the call's return address)
;       80      8  StackBase          (gs:0x08)
;       88      8  StackLimit         (gs:0x10)
;       96      8  DeallocationStack  (gs:0x1478)
;      104      4  MXCSR (SSE control and status)
;      108      2  x87 control word
;      110      2  unused
;      112    160  xmm6 ... xmm15 (16 bytes each; the context is only
;                  8-byte aligned, hence movups rather than movaps)
;      272      8  ExceptionList      (gs:0x00)
; ======================================================================
CTX_RBX   EQU 0
CTX_RBP   EQU 8
CTX_RDI   EQU 16
CTX_RSI   EQU 24
CTX_R12   EQU 32
CTX_R13   EQU 40
CTX_R14   EQU 48
CTX_R15   EQU 56
CTX_RSP   EQU 64
CTX_RIP   EQU 72
CTX_STACK_BASE  EQU 80
CTX_STACK_LIMIT EQU 88
CTX_DEALLOCATION_STACK EQU 96
CTX_MXCSR EQU 104
CTX_FCW  EQU 108
CTX_XMM6 EQU 112
CTX_EXCEPTION_LIST EQU 272
; The TIB's stack fields and exception list, as gs-relative addresses.
TIB_EXCEPTION_LIST EQU <qword ptr gs:[0]>
TIB_STACK_BASE  EQU <qword ptr gs:[8h]>
TIB_STACK_LIMIT EQU <qword ptr gs:[10h]>
TIB_DEALLOCATION_STACK EQU <qword ptr gs:[1478h]>
; MXCSR bits 0-5 are exception flags (status, volatile); 6-15 are DAZ,
; exception masks, rounding control and FZ (control, nonvolatile).
MXCSR_FLAGS EQU 3fh
MXCSR_CONTROL EQU 0ffc0h

	.code

; ---- The save: the caller's nonvolatile state into the context at ctx
SAVE_CALLER MACRO ctx
	pop	rax		; the return address: where the caller resumes
	mov	[ctx + CTX_RIP], rax
	mov	[ctx + CTX_RBX], rbx
	mov	[ctx + CTX_RBP], rbp
	mov	[ctx + CTX_RDI], rdi
	mov	[ctx + CTX_RSI], rsi
	mov	[ctx + CTX_R12], r12
	mov	[ctx + CTX_R13], r13
	mov	[ctx + CTX_R14], r14
	mov	[ctx + CTX_R15], r15
	mov	[ctx + CTX_RSP], rsp	; after the pop: as it will be after a return
	mov	rax, TIB_STACK_BASE
	mov	[ctx + CTX_STACK_BASE], rax
	mov	rax, TIB_STACK_LIMIT
	mov	[ctx + CTX_STACK_LIMIT], rax
	mov	rax, TIB_DEALLOCATION_STACK
	mov	[ctx + CTX_DEALLOCATION_STACK], rax
	mov	rax, TIB_EXCEPTION_LIST
	mov	[ctx + CTX_EXCEPTION_LIST], rax
	stmxcsr	dword ptr [ctx + CTX_MXCSR]
	fnstcw	word ptr [ctx + CTX_FCW]
	movups	xmmword ptr [ctx + CTX_XMM6 + 0*16], xmm6
	movups	xmmword ptr [ctx + CTX_XMM6 + 1*16], xmm7
	movups	xmmword ptr [ctx + CTX_XMM6 + 2*16], xmm8
	movups	xmmword ptr [ctx + CTX_XMM6 + 3*16], xmm9
	movups	xmmword ptr [ctx + CTX_XMM6 + 4*16], xmm10
	movups	xmmword ptr [ctx + CTX_XMM6 + 5*16], xmm11
	movups	xmmword ptr [ctx + CTX_XMM6 + 6*16], xmm12
	movups	xmmword ptr [ctx + CTX_XMM6 + 7*16], xmm13
	movups	xmmword ptr [ctx + CTX_XMM6 + 8*16], xmm14
	movups	xmmword ptr [ctx + CTX_XMM6 + 9*16], xmm15
ENDM

; ---- The restore of the nonvolatile state from ctx: the TIB describes
; ctx's stack (and holds its exception list) before rsp moves onto it,
; and rsp is last.
LOAD_CALLEE_SAVED MACRO ctx
	mov	rax, [ctx + CTX_STACK_BASE]
	mov	TIB_STACK_BASE, rax
	mov	rax, [ctx + CTX_STACK_LIMIT]
	mov	TIB_STACK_LIMIT, rax
	mov	rax, [ctx + CTX_DEALLOCATION_STACK]
	mov	TIB_DEALLOCATION_STACK, rax
	mov	rax, [ctx + CTX_EXCEPTION_LIST]
	mov	TIB_EXCEPTION_LIST, rax
	movups	xmm6, xmmword ptr [ctx + CTX_XMM6 + 0*16]
	movups	xmm7, xmmword ptr [ctx + CTX_XMM6 + 1*16]
	movups	xmm8, xmmword ptr [ctx + CTX_XMM6 + 2*16]
	movups	xmm9, xmmword ptr [ctx + CTX_XMM6 + 3*16]
	movups	xmm10, xmmword ptr [ctx + CTX_XMM6 + 4*16]
	movups	xmm11, xmmword ptr [ctx + CTX_XMM6 + 5*16]
	movups	xmm12, xmmword ptr [ctx + CTX_XMM6 + 6*16]
	movups	xmm13, xmmword ptr [ctx + CTX_XMM6 + 7*16]
	movups	xmm14, xmmword ptr [ctx + CTX_XMM6 + 8*16]
	movups	xmm15, xmmword ptr [ctx + CTX_XMM6 + 9*16]
	mov	rbx, [ctx + CTX_RBX]
	mov	rbp, [ctx + CTX_RBP]
	mov	rdi, [ctx + CTX_RDI]
	mov	rsi, [ctx + CTX_RSI]
	mov	r12, [ctx + CTX_R12]
	mov	r13, [ctx + CTX_R13]
	mov	r14, [ctx + CTX_R14]
	mov	r15, [ctx + CTX_R15]
	mov	rsp, [ctx + CTX_RSP]
ENDM

;
; ---- The switch: the save, then the restore of *to
; void coroutine_switch_context(context *from (rcx), const context *to (rdx))
; No unwind info (PROC without FRAME): a function without it is taken for
; a leaf whose return address is at rsp, and nothing here can raise an
; exception for an unwinder to look at anyway.
;
	ALIGN 16
coroutine_switch_context PROC
	SAVE_CALLER rcx

	; Reload MXCSR and the x87 control word only if *to's control bits
	; differ.  eax keeps the bits that differ in MXCSR for load_fp, so the
	; x87 control word is compared in r8d.  Most switches find no bit of
	; MXCSR changed, flags included: that case is tested first.
	mov	eax, dword ptr [rcx + CTX_MXCSR]
	xor	eax, dword ptr [rdx + CTX_MXCSR]
	jnz	mxcsr_differs
compare_fcw:
	movzx	r8d, word ptr [rcx + CTX_FCW]
	cmp	r8w, word ptr [rdx + CTX_FCW]
	jne	load_fp

	LOAD_CALLEE_SAVED rdx
	jmp	qword ptr [rdx + CTX_RIP]	; "return" from the call that saved *to

mxcsr_differs:			; as a rule in the flags only, which stay
	test	eax, MXCSR_CONTROL
	jz	compare_fcw
; *to's control bits, the current flags: see the top of asm_switch.S.
load_fp:			; eax: current MXCSR ^ *to's
	fldcw	word ptr [rdx + CTX_FCW]
	test	eax, MXCSR_FLAGS
	jnz	merge_flags
	LOAD_CALLEE_SAVED rdx
	ldmxcsr	dword ptr [rdx + CTX_MXCSR]	; the flags agree: *to's word as saved
	jmp	qword ptr [rdx + CTX_RIP]

merge_flags:			; eax: current MXCSR ^ *to's
	and	eax, MXCSR_CONTROL
	xor	eax, dword ptr [rcx + CTX_MXCSR]	; *to's control bits, the current flags
	;
	; ldmxcsr reads memory only, and there is no red zone.  But rsp (after
	; the pop) points at the home space, which the caller reserved for
	; this function: its first slot is ours to write.
	;
	mov	dword ptr [rsp], eax
	ldmxcsr	dword ptr [rsp]
	LOAD_CALLEE_SAVED rdx
	jmp	qword ptr [rdx + CTX_RIP]
coroutine_switch_context ENDP

;
; ---- The first-entry trampoline
; void coroutine_start_context(context *from (rcx), char *top (rdx),
;                              void (*entry)(struct schedule *, void *) (r8),
;                              void (*finish)(struct schedule *) (r9),
;                              struct schedule *S (rsp + 40),
;                              char *bottom (rsp + 48),
;                              char *reservation (rsp + 56))
; bottom and reservation are the lowest addresses of the run stack and of
; its mapping (the guard region below it): the new StackLimit and
; DeallocationStack.  The new coroutine's exception list is empty: -1,
; the end of the chain.  It runs with the caller's FP control state, as a
; function it called would.
;
	ALIGN 16
coroutine_start_context PROC
	SAVE_CALLER rcx
	mov	rbx, [rsp + 32]	; S, above the home space (after the pop)
	mov	r10, [rsp + 40]	; bottom
	mov	r11, [rsp + 48]	; reservation
	mov	r12, r9		; finish: S and finish are for after entry
	and	rdx, -16
	mov	TIB_STACK_BASE, rdx
	mov	TIB_STACK_LIMIT, r10
	mov	TIB_DEALLOCATION_STACK, r11
	mov	TIB_EXCEPTION_LIST, -1
	;
	; The top word of the run stack is a null return address: the frame
	; below it is entered as if called from nowhere, so rsp % 16 == 8, as
	; at any function's entry.
	;
	lea	rsp, [rdx - 8]
	mov	qword ptr [rsp], 0
coroutine_start_context ENDP
	;
	; The unwind info covers only this frame on the run stack: 40 bytes
	; (entry's 32-byte home space, 8 to align the call), then the null
	; return address.  An unwinder that reaches it stops there (a zero
	; return address ends the chain) instead of reading whatever lies above
	; the top of the run stack, and the frame is inside StackBase.  No link
	; to the resumer (see the top of asm_switch.S): Windows' unwinder checks
	; each frame against the TIB's stack bounds, which describe the run
	; stack, and main's frames and a record in the schedule lie outside.
	; (MASM wants a FRAME procedure's prologue at its start, where
	; asm_switch.S opens its .seh_proc mid-function: the code falls through
	; into a procedure of its own.)
	;
coroutine_start_context_call PROC FRAME
	sub	rsp, 40
	.allocstack 40
	.endprolog
	mov	rcx, rbx
	xor	edx, edx
	call	r8		; entry(S, NULL)
	mov	rcx, rbx
	call	r12		; finish(S)
	ud2			; finish returned: it must leave by a switch
coroutine_start_context_call ENDP

;
; ---- The call in a context: above rsp, the function, then the resume
; address, which the pop leaves as the return address (from: rcx; the
; home space above it is the switch's, a callee's to use).
;
	ALIGN 16
coroutine_call_in_context PROC
	pop	rax
	jmp	rax
coroutine_call_in_context ENDP

END
