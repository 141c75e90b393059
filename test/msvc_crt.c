/*
 * msvc_crt.c - what Microsoft's static C runtime (libcmt, libvcruntime)
 * would add to a program, for make windows-msvc-test, which links programs
 * built for the MSVC ABI against the C runtime's interface as wine
 * provides it (import libraries of ucrtbase and vcruntime140, and
 * libwinecrt0's mainCRTStartup), where these two are missing:
 *
 *   - the image's TLS directory, which the loader reads to give each
 *     thread its copy of the thread_local variables: the compiler puts
 *     their initial values in .tls$ sections and addresses them through
 *     _tls_index; the directory (_tls_used) says where .tls begins and
 *     ends and where the loader stores that index;
 *   - type_info's vftable, which the type descriptors of thrown C++
 *     types point at (none of its entries is called here).
 *
 * Test support only: a program built with cl.exe or clang-cl against
 * Microsoft's own runtime gets both from it.
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
