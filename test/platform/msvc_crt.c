/*
 * msvc_crt.c - what Microsoft's static C runtime (libcmt, libvcruntime)
 * would add to a program, for make windows-msvc-test, which links programs
 * built for the MSVC ABI against the C runtime's interface as wine
 * provides it (import libraries of ucrtbase and vcruntime140, and
 * libwinecrt0's mainCRTStartup), where these three are missing:
 *
 *   - the image's TLS directory, which the loader reads to give each
 *     thread its copy of the thread_local variables: the compiler puts
 *     their initial values in .tls$ sections and addresses them through
 *     _tls_index; the directory (_tls_used) says where .tls begins and
 *     ends and where the loader stores that index;
 *   - type_info's vftable, which the type descriptors of thrown C++
 *     types point at (none of its entries is called here);
 *   - __chkstk, the stack probe (below).
 *
 * Test support only: a program built with cl.exe or clang-cl against
 * Microsoft's own runtime gets all three from it.
 */
#include <windows.h>

unsigned long _tls_index;

/* The linker sorts sections by the name after the '$': the compiler's
 * .tls$ sections lie between these two. */
__attribute__((section(".tls"))) char _tls_start;
__attribute__((section(".tls$ZZZ"))) char _tls_end;

/* An empty list of TLS callbacks: the .CRT$XL sections sort likewise. */
__attribute__((section(".CRT$XLA"))) PIMAGE_TLS_CALLBACK _tls_callbacks_start;
__attribute__((section(".CRT$XLZ"))) PIMAGE_TLS_CALLBACK _tls_callbacks_end;

/* The linker points the image's TLS data directory at this symbol. */
const IMAGE_TLS_DIRECTORY64 _tls_used = {
	(ULONGLONG)&_tls_start,               /* StartAddressOfRawData */
	(ULONGLONG)&_tls_end,                 /* EndAddressOfRawData */
	(ULONGLONG)&_tls_index,               /* AddressOfIndex */
	(ULONGLONG)(&_tls_callbacks_start + 1), /* AddressOfCallBacks */
	0,                                    /* SizeOfZeroFill */
	0,                                    /* Characteristics */
};

/* type_info's vftable, by its mangled name (`const type_info::`vftable'). */
const void *type_info_vftable[1] __asm__("??_7type_info@@6B@");

/*
 * __chkstk: the compiler calls it before a frame of more than a page
 * (rax: the frame's size) and then moves rsp down by rax itself; it may
 * change only r10, r11 and the flags.  Microsoft's runtime links in one
 * that touches, top down, each page between the lowest committed address
 * (the TIB's StackLimit, gs:0x10) and the frame's new bottom, while rsp
 * still lies above them: no frame skips a page, a thread's stack grows
 * through its guard page, and a frame that runs into the run stack's guard
 * (coroutine.cpp's map_guarded; the switch sets StackLimit to the run
 * stack's bottom) faults on its first page, with rsp on the run stack,
 * where the fault can be dispatched.  Wine's import libraries bind
 * __chkstk to ntdll's instead, which on wine only returns: the frame's
 * first touch then comes after rsp has moved into the guard, wine's signal
 * handler faults again writing the exception onto that stack, and the
 * process dies of SIGSEGV with no handler run (its parent reads exit code
 * 0).  A leaf that leaves rsp alone needs no unwind data.
 */
__asm__(
	"	.text\n"
	"	.globl __chkstk\n"
	"	.p2align 4\n"
	"__chkstk:\n"
	"	leaq 8(%rsp), %r10\n"    /* the caller's rsp, before its call */
	"	subq %rax, %r10\n"       /* ... once it has the frame: the new bottom */
	"	jae 1f\n"
	"	xorl %r10d, %r10d\n"     /* a frame larger than the address space: down to 0 */
	"1:	movq %gs:0x10, %r11\n"   /* StackLimit, page-aligned */
	"2:	cmpq %r10, %r11\n"       /* pages below the limit left above the bottom? */
	"	jbe 3f\n"
	"	subq $0x1000, %r11\n"
	"	testb %al, (%r11)\n"     /* touch the next page down: a read will do */
	"	jmp 2b\n"
	"3:	ret\n");
