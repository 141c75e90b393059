/*
 * coroutine.cpp - asymmetric coroutines that share one run stack.
 *
 * A port of cloudwu's coroutine.c (MIT).  The idea in one paragraph: a schedule owns one big run
 * stack.  Whichever coroutine runs, runs there.  When it yields, the part of the run stack it is
 * using (its "live slice", from the deepest frame up to the top) is copied to a heap buffer of its
 * own; when it is resumed, the slice is copied back to the same addresses and execution continues
 * as if nothing happened.  Many coroutines thus cost one stack plus the bytes each one really uses.
 *
 * How to read it.  First what the story needs, from the sizes to what the machinery supplies.  Then
 * "==== The story", in the order a user meets the library: open, new, resume, yield, status,
 * running, next, clone, delete, close (coroutine.h marks the additions to the original API).  A
 * reader who stops at "==== The machinery" has seen the whole library; after it, a section per
 * concern, for a porter.  The checked build (-DCOROUTINE_CHECKED=1) is in coroutine_checked.h.  The
 * switch is swapcontext(3), asm_switch.S with -DCOROUTINE_ASM=1, or Emscripten's fibers.
 */

/* Before any system header, since they read them (see the platforms). */
#if defined(__APPLE__) && !COROUTINE_ASM
#define _XOPEN_SOURCE 700 /* <ucontext.h> wants it on Apple... */
#define _DARWIN_C_SOURCE  /* ...which would hide MAP_ANONYMOUS */
#endif
#if defined(_WIN32) && !defined(__USE_MINGW_ANSI_STDIO)
#define __USE_MINGW_ANSI_STDIO 1 /* MinGW: a C99 printf, for %zu and %td */
#endif

#include "coroutine.h"

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef COROUTINE_STACK_SIZE
#define COROUTINE_STACK_SIZE (1024 * 1024)
#endif
#define STACK_SIZE COROUTINE_STACK_SIZE
#define DEFAULT_COROUTINE 16

/* Below the run stack, an inaccessible guard: a coroutine that overruns faults instead of writing
 * over its neighbours (1 MiB, Linux's own stack guard gap; a size_t: sums may not fit an int). */
#define GUARD_SIZE ((size_t)1024 * 1024)
/* Mapped in whole 64 KiB pages, TOP_ROOM bytes above the top for glibc's makecontext on x86. */
#if !COROUTINE_ASM && !defined(__EMSCRIPTEN__) && defined(__GLIBC__) && (defined(__x86_64__) || defined(__i386__))
#define TOP_ROOM 16
#else
#define TOP_ROOM 0
#endif
#define MAP_UNIT ((size_t)64 * 1024)
#define MAPPED_STACK_SIZE (((size_t)(STACK_SIZE) + TOP_ROOM + MAP_UNIT - 1) / MAP_UNIT * MAP_UNIT)

static_assert(STACK_SIZE % 16 == 0, "COROUTINE_STACK_SIZE must be a multiple of 16");
static_assert(STACK_SIZE >= 16 * 1024, "COROUTINE_STACK_SIZE must be at least 16 KiB");
/* The real bound: a slice's size is kept in an unsigned, printed as an int. */
static_assert(STACK_SIZE <= INT_MAX, "COROUTINE_STACK_SIZE must fit in an int");
static_assert(MAPPED_STACK_SIZE <= SIZE_MAX - GUARD_SIZE, "the run stack and its guard must fit in the address space");

#ifndef COROUTINE_CHECKED
#define COROUTINE_CHECKED 0
#endif
#if COROUTINE_CHECKED && defined(__EMSCRIPTEN__)
#error "COROUTINE_CHECKED=1: WebAssembly has no memory protection, so nothing can keep main off the run stack; build coroutine.cpp without it there"
#endif
/* The checked build's windows, a run stack each over a guard: alike ones share no address. */
#if !COROUTINE_CHECKED
#define WINDOWS 1
#elif UINTPTR_MAX > 0xffffffffu && !defined(_WIN32)
#define WINDOWS 64
#else
#define WINDOWS 16 /* 32-bit address spaces; Windows commits every window */
#endif
#define WINDOW_STRIDE (GUARD_SIZE + MAPPED_STACK_SIZE)
#define MAPPING_SIZE (WINDOWS * WINDOW_STRIDE)
#define RUN_STACKS_SPAN ((WINDOWS - 1) * WINDOW_STRIDE + STACK_SIZE) /* what the tools watch */
static_assert(MAPPING_SIZE / WINDOWS == WINDOW_STRIDE, "the windows must fit in the address space");

/* ---- The compiler: one spelling per idea, GNU's and Microsoft's ------------
 * gcc and clang (clang-cl too) take GNU's; cl.exe, and clang given
 * -DCOROUTINE_MICROSOFT_SPELLINGS=1, Microsoft's.  Nothing else asks which.
 *
 *   NOINLINE, ALWAYS_INLINE  a frame of its own / none, even at -O0
 *   PRINTF_CHECK(f, a)   argument f is a printf format for those from a
 *   NO_SANITIZE_ADDRESS  not instrumented by AddressSanitizer
 *   WEAK                 a reference that may stay unresolved (NULL)
 *   KEEP_IN_REGISTERS(a, b), launder(p)  values the optimizer cannot see into
 *   copy_16(to, from)    16 bytes in one move, where HAVE_COPY_16 says so
 *   UNREACHABLE()        never reached: the optimizer may count on it
 *   KEPT                 the linkage of data kept though no code reads it (a debugger does)
 *   trailing_zeros(x)    the number of trailing zero bits of x, not 0
 *   atomic_increment(n)  adds 1 to *n atomically, returns the sum
 *   atomic_swap(l, v), atomic_release(l)  a lock's take (the old value) and give
 *   current_teb()        x64 Windows' thread environment block (Windows only) */
#if (defined(__GNUC__) || defined(__clang__)) && !COROUTINE_MICROSOFT_SPELLINGS
#define NOINLINE __attribute__((noinline))
#define ALWAYS_INLINE inline __attribute__((always_inline))
#if defined(__MINGW_PRINTF_FORMAT) /* MinGW's C99 printf, which __USE_MINGW_ANSI_STDIO chose */
#define PRINTF_CHECK(f, a) __attribute__((format(__MINGW_PRINTF_FORMAT, f, a)))
#else
#define PRINTF_CHECK(f, a) __attribute__((format(printf, f, a)))
#endif
#define NO_SANITIZE_ADDRESS __attribute__((no_sanitize_address))
#define WEAK __attribute__((weak))
#define KEEP_IN_REGISTERS(a, b) __asm__("" : "+r"(a), "+r"(b))
#define UNREACHABLE() __builtin_unreachable()
#define KEPT static __attribute__((used))
static ALWAYS_INLINE int trailing_zeros(uint64_t x) { return __builtin_ctzll(x); }
static ALWAYS_INLINE char *launder(char *p) { __asm__("" : "+r"(p)); return p; } /* the asm may change p */
#if defined(__x86_64__)
/* In asm: a 16-byte access in C makes gcc lay a frameless function's locals 8 bytes lower, and
 * save_slice_quickly's slice would grow by a block. */
#define HAVE_COPY_16 1
static ALWAYS_INLINE void copy_16(char *to, const char *from)
{
	__asm__("movdqu %1, %%xmm0\n\tmovdqu %%xmm0, %0" : "=m"(*(char(*)[16])to) : "m"(*(const char(*)[16])from) : "xmm0");
}
#endif
/* Inline for a variable aligned to its size (no libatomic); relaxed: numbers need only differ. */
static ALWAYS_INLINE uint64_t atomic_increment(uint64_t *n) { return __atomic_add_fetch(n, 1, __ATOMIC_RELAXED); }
static ALWAYS_INLINE long atomic_swap(volatile long *l, long v) { return __atomic_exchange_n(l, v, __ATOMIC_ACQUIRE); }
static ALWAYS_INLINE void atomic_release(volatile long *l) { __atomic_store_n(l, 0, __ATOMIC_RELEASE); }
#if defined(_WIN32)
/* gs:0x30 holds the TEB's address (MinGW's NtCurrentTeb, reading gs inline, makes g++ 12 warn). */
static ALWAYS_INLINE char *current_teb(void) { char *teb; __asm__("movq %%gs:0x30, %0" : "=r"(teb)); return teb; }
#endif
#elif defined(_MSC_VER)
#include <intrin.h>
#define NOINLINE __declspec(noinline)
#define ALWAYS_INLINE __forceinline
#define PRINTF_CHECK(f, a) /* cl.exe checks the CRT's own printf only */
#define NO_SANITIZE_ADDRESS __declspec(no_sanitize_address)
/* No weak references: nothing uses one (see EH_MSVC_ABI). */
#define KEEP_IN_REGISTERS(a, b) ((void)0)
#define UNREACHABLE() __assume(0)
#define KEPT extern /* defined, so never unused; no debugger script reads a cl.exe build */
static ALWAYS_INLINE int trailing_zeros(uint64_t x) { unsigned long i; _BitScanForward64(&i, x); return (int)i; }
/* The compiler must store p to the volatile and load it back (_ReadWriteBarrier orders memory). */
static ALWAYS_INLINE char *launder(char *p) { char *volatile opaque = p; return opaque; }
static ALWAYS_INLINE uint64_t atomic_increment(uint64_t *n) { return (uint64_t)_InterlockedIncrement64((volatile long long *)n); /* __int64 is long long */ }
static ALWAYS_INLINE long atomic_swap(volatile long *l, long v) { return _InterlockedExchange(l, v); }
static ALWAYS_INLINE void atomic_release(volatile long *l) { _InterlockedExchange(l, 0); }
#define current_teb() ((char *)NtCurrentTeb())
#else
#error "coroutine.cpp knows the GNU spellings (gcc, clang, clang-cl) and Microsoft's (cl.exe)"
#endif
#if defined(_MSC_VER)
#define EH_MSVC_ABI 1 /* Microsoft's C++ runtime: cl.exe, clang-cl, clang for *-windows-msvc */
#else
#define EH_MSVC_ABI 0
#endif

/* ---- The types the structures need -------------------------------------- */
/* Whether ASan or memcheck hears of the switches (see "AddressSanitizer and valgrind"). */
#if defined(__SANITIZE_ADDRESS__)
#define COROUTINE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COROUTINE_ASAN 1
#endif
#endif
#ifndef COROUTINE_ASAN
#define COROUTINE_ASAN 0
#endif
#if COROUTINE_ASAN
#define NO_ASAN NO_SANITIZE_ADDRESS /* for code that reads slices and shadows */
#else
#define NO_ASAN
#endif
#define HIDE_FAKE_FRAMES (COROUTINE_CHECKED && COROUTINE_ASAN) /* see "The checked build" */
/* No valgrind on Windows (its header assumes LP64); the header sets NVALGRIND where none runs. */
#if !defined(NVALGRIND) && !defined(_WIN32) && defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#ifndef NVALGRIND
#define COROUTINE_VALGRIND 1
#endif
#endif
#endif
#ifndef COROUTINE_VALGRIND
#define COROUTINE_VALGRIND 0
#endif

typedef struct coroutine_context context; /* where a switch saves a coroutine or main: per backend */

#if defined(_WIN32) && !COROUTINE_ASM
#error "Windows has no ucontext: compile coroutine.cpp with -DCOROUTINE_ASM=1 and link asm_switch.S"
#undef COROUTINE_ASM
#define COROUTINE_ASM 1 /* so that the message above stays the only error */
#endif

#if COROUTINE_ASM
/* asm_switch.S's: callee-saved registers, stack pointer, resume address, FP control words; the
 * words that hold the stack pointer and the resume address (see call_in_context). */
#if defined(__x86_64__) && (defined(__ELF__) || defined(__APPLE__)) && !defined(__ILP32__)
#define CONTEXT_WORDS 9  /* rbx r12-r15 rsp rbp rip, MXCSR + x87 control word */
#define CONTEXT_SP 5
#define CONTEXT_PC 7
#define NOTED_FP_WORD 8  /* the FP control words: see note_fp_control */
#elif defined(__x86_64__) && defined(_WIN32)
#define CONTEXT_WORDS 35 /* rbx rbp rdi rsi r12-r15 rsp rip, 4 TIB fields, MXCSR + x87 cw, xmm6-15 */
#define CONTEXT_SP 8
#define CONTEXT_PC 9
#elif defined(__i386__) && defined(__ELF__)
#define CONTEXT_WORDS 8  /* ebx esi edi esp ebp eip, MXCSR, x87 control word */
#define CONTEXT_SP 3
#define CONTEXT_PC 5
#elif defined(__aarch64__) && (defined(__ELF__) || defined(__APPLE__)) && !defined(__ILP32__)
#define CONTEXT_WORDS 22 /* x19-x30, d8-d15, sp, FPCR */
#define CONTEXT_SP 20
#define CONTEXT_PC 11    /* x30 */
#elif defined(__arm__) && defined(__ELF__) && defined(__ARM_PCS_VFP) && __ARM_ARCH >= 7 && (__ARM_FP & 8)
#define CONTEXT_WORDS 27 /* r4-r11 lr sp, FPSCR, d8-d15 (two words each) */
#define CONTEXT_SP 9
#define CONTEXT_PC 8     /* lr */
#elif defined(__riscv) && defined(__ELF__) && __riscv_xlen == 64 && defined(__riscv_float_abi_double)
#define CONTEXT_WORDS 27 /* sp s1-s11 s0 ra, fs0-fs11, frm */
#define CONTEXT_SP 0
#define CONTEXT_PC 13    /* ra */
#else
#error "COROUTINE_ASM=1 supports x86_64 (System V: Linux, macOS; Microsoft x64: Windows), aarch64 (AAPCS64: Linux, macOS), and on Linux i386 (System V), armv7 (AAPCS, hard float) and riscv64 (LP64D); build without it to use ucontext"
#endif
struct coroutine_context { void *word[CONTEXT_WORDS]; };
#define BACKEND_NAME "asm" /* for the debugger: see "The debugger's view" */
extern "C" {
void coroutine_switch_context(context *from, const context *to);
/* Saves the caller in *from, runs entry on a fresh stack below top, then finish(S); Windows, whose
 * thread block records a stack's bounds, also wants the run stack's and mapping's bases. */
#if defined(_WIN32)
void coroutine_start_context(context *from, char *top, coroutine_func entry, void (*finish)(struct schedule *),
			     struct schedule *S, char *bottom, char *reservation);
#else
void coroutine_start_context(context *from, char *top, coroutine_func entry, void (*finish)(struct schedule *),
			     struct schedule *S);
#endif
}
#elif defined(__EMSCRIPTEN__)
#define COROUTINE_FIBER 1 /* Emscripten's fibers: see "WebAssembly" for what one is made of */
#include <emscripten.h>
#include <emscripten/fiber.h>
#include <emscripten/stack.h>
struct coroutine_context { emscripten_fiber_t fiber; };
#define BACKEND_NAME "fiber"
#else
#if defined(__linux__) && !defined(__GLIBC__)
#error "this C library has no swapcontext for the ucontext backend: build coroutine.cpp with -DCOROUTINE_ASM=1 and link asm_switch.S"
#endif
#include <ucontext.h>
/* A base class: riscv64's ucontext_t ends in a zero-size array, barred in members by -Wpedantic. */
struct coroutine_context : ucontext_t {
#if defined(__i386__) && defined(__SSE__)
	unsigned int mxcsr; /* glibc's i386 swapcontext leaves MXCSR alone */
#endif
};
#define BACKEND_NAME "ucontext"
#endif
#ifndef COROUTINE_FIBER
#define COROUTINE_FIBER 0
#endif
/* Whether makecontext runs the library's entry, which links a coroutine's frames to main's. */
#if !COROUTINE_ASM && !COROUTINE_FIBER && defined(__GLIBC__) && (defined(__x86_64__) || defined(__aarch64__))
#define UCONTEXT_LINK 1
#else
#define UCONTEXT_LINK 0
#endif

/* A thread's exceptions being handled, swapped at the switches (see "The C++ exception state");
 * Itanium's, as __cxa_get_globals() gives it: the caught (what `throw;` rethrows), the uncaught. */
#if !EH_MSVC_ABI
struct eh_state {
	void *caught;
	unsigned int uncaught;
#if defined(__arm__) && !defined(__APPLE__)
	void *propagating; /* ARM EHABI's runtimes keep a third field */
#endif
};
#else
/* vcruntime's: three per-thread values, the catch handlers' chain's head (see save_thread_eh). */
struct frame_info;
struct eh_state {
	void *exception;
	void *context;
	int processing_throw;
	struct frame_info *handlers; /* the head of the chain */
};
#endif
typedef struct eh_state *(*eh_globals_func)(void); /* a runtime, by its function giving a thread's state */
static const struct eh_state no_exceptions = {}; /* what a coroutine starts with */

/* ---- The two structures ------------------------------------------------- */
/* Shallow slices (up to SHALLOW_SLICE bytes) move by blocks, frameless; a new block holds NEW_ROOM
 * (most yields need no realloc).  None with ucontext (larger slices) or ASan (see save_slice). */
#if !COROUTINE_ASM
#define SHALLOW_SLICE 0
#define NEW_ROOM 0
#elif defined(__aarch64__)
#define SHALLOW_SLICE (COROUTINE_ASAN ? 0 : 96) /* its frames keep fp and lr */
#define NEW_ROOM 96
#else
#define SHALLOW_SLICE (COROUTINE_ASAN ? 0 : 96)
#define NEW_ROOM 64 /* more would cost every coroutine's block 16 bytes per 16 */
#endif
#define SLICE_ALIGN 64

struct entry { coroutine_func func; void *ud; }; /* what a coroutine runs */

/* Its size counts per suspended coroutine: the slice follows it in its malloc block (saved_slice),
 * malloc knows the block size, the slice's is 32 bits, a union saves room. */
struct coroutine {
	context ctx;     /* first: a switch's argument is C itself, no offset added */
	union {
		struct entry start;     /* until it starts */
		struct eh_state eh;     /* once it has run, while it is suspended */
	};
	uint64_t thread;     /* SUSPENDED_ELSEWHERE: where; see move_to_this_thread */
	unsigned size;   /* bytes of the saved slice (unsigned: no sign to extend) */
	unsigned char status; /* READY until it starts; never RUNNING (coroutine_status) */
	unsigned char room;  /* bytes of shallow slice its block holds: see NEW_ROOM */
	unsigned char end_asked;   /* a delete asked inside a coroutine: see ask_to_end */
	unsigned char in_try_yield; /* waits in coroutine_try_yield: see end_coroutine */
#if COROUTINE_CHECKED
	unsigned char window;      /* where it runs: see top_of */
#endif
#if COROUTINE_FIBER
	char *frames;     /* its wasm frames, while another owns the run stack */
#endif
#if COROUTINE_ASAN
	void *fake_stack; /* ASan's per-stack bookkeeping while suspended */
	char *shadow;     /* ASan's shadow of the saved slice; grows too */
#endif
#if HIDE_FAKE_FRAMES
	struct hidden_frames *hidden; /* its fake frames, poisoned while it is suspended */
#endif
};

#define SUSPENDED_ELSEWHERE 4 /* suspended on a thread not S's, the only one that may resume it */

static struct coroutine no_coroutine; /* in empty slots (DEAD, size 0): no NULL to test; never written */

#define SLOT_LEVELS 6 /* of the slot tree: 64^6 slots are more than an int id names */

struct schedule {
	context main;                /* where coroutine_yield returns to; first, as C->ctx */
#if UCONTEXT_LINK
	void *resumer_frame[2];      /* main's frame pointer and resume address: see "The ucontext entry" */
#endif
	char *stack;                 /* lowest address of the run stack (window 0's) */
	char *top;                   /* stack + STACK_SIZE: where every slice ends (window 0's) */
	size_t quick_put_back;       /* see take_run_stack_quickly */
	struct coroutine **co;       /* cap slots, nco of them in use */
	uint64_t *used[SLOT_LEVELS]; /* which slots are in use: see take_slot */
	uint64_t *nonempty_words;    /* which words of used[0] are not 0 */
	int nco;
	int cap;
	int running;                 /* id of the running coroutine, or -1 */
	struct coroutine *owner;     /* whose bytes are on the run stack now */
	struct coroutine *ending;    /* what a delete resumes to end it, until it finishes */
	struct unwinding *unwinding; /* the forced unwinding of ending, if it is unwound */
	int ends_asked;              /* whether a coroutine has end_asked: see ask_to_end */
	int carry_out_when_back;     /* ucontext, fibers: see carry_out_if_asked */
	uint64_t thread;             /* its thread's number: see move_to_this_thread */
	uint64_t fast_thread;        /* thread, or none: see resume_the_long_way */
	struct eh_state *eh;         /* its thread's state in its C++ runtime, or spare */
	eh_globals_func eh_runtime;  /* that runtime; NULL until one is found */
	struct eh_state main_eh;     /* main's, while a coroutine runs */
	struct more_runtimes *more;  /* the C++ runtimes after the first; rarely any */
	struct schedule *next_open;  /* the list of open schedules: see list_open_schedule */
	struct schedule *prev_open;
#if COROUTINE_ASM || COROUTINE_FIBER
	context finished_context;    /* where a finished coroutine's last switch saves */
#endif
#if COROUTINE_FIBER
	char *frames;                /* the asyncify areas: the owner's, then main's */
#endif
#if COROUTINE_ASAN
	void *main_fake_stack;
	const void *main_bottom;
	size_t main_size;
#endif
#if COROUTINE_VALGRIND
	unsigned valgrind_stack_id;
	int memcheck;                /* whether memcheck watches: see tools_register_run_stack */
#endif
#if COROUTINE_CHECKED
	unsigned next_window;        /* the window of the next new coroutine */
	int window_in_reach;         /* of main: 1 + its number, 0 all (as mapped), -1 none */
	int last_in_window[WINDOWS]; /* 1 + the id of the last to run in each; 0: none */
#endif
};

/* Where C's slice ends: the run stack's top, or in the checked build its window's (a clone's). */
#if COROUTINE_CHECKED
#define WINDOW_OF(C) ((C)->window)
#else
#define WINDOW_OF(C) 0
#endif
static ALWAYS_INLINE char *top_of(const struct schedule *S, const struct coroutine *C)
{
	(void)C;
	return S->top - (size_t)WINDOW_OF(C) * WINDOW_STRIDE;
}

/* The lowest address of the mapping: the lowest window's guard. */
static char *mapping_of(const struct schedule *S) { return S->stack + MAPPED_STACK_SIZE - MAPPING_SIZE; }

/* ---- The switch, per backend -----------------------------------------------
 * SWITCH_CONTEXT(from, to) saves the caller in *from, goes on at *to; SWITCH_FROM_MAIN(S, to) does
 * so from &S->main (ucontext: noting main's frame first); LEAVE_CONTEXT(S, to) leaves for good. */
#if COROUTINE_ASM
#define SWITCH_CONTEXT(from, to) coroutine_switch_context(from, to)
#define SWITCH_FROM_MAIN(S, to) SWITCH_CONTEXT(&(S)->main, to)
#define LEAVE_CONTEXT(S, to) (note_fp_control(&(S)->finished_context), SWITCH_CONTEXT(&(S)->finished_context, to))
#elif COROUTINE_FIBER
#define SWITCH_CONTEXT(from, to) emscripten_fiber_swap(&(from)->fiber, &(to)->fiber)
#define SWITCH_FROM_MAIN(S, to) SWITCH_CONTEXT(&(S)->main, to)
/* A finished coroutine unwinds its last frames into its start's area: nobody rewinds them. */
#define LEAVE_CONTEXT(S, to) \
	((S)->finished_context.fiber.asyncify_data.stack_ptr = (S)->frames, SWITCH_CONTEXT(&(S)->finished_context, to))
#else
#if defined(__i386__) && defined(__SSE__)
/* The switch never touches MXCSR: loading *to's just before it is as good as its loading it. */
static ALWAYS_INLINE void save_mxcsr(context *ctx) { __asm__ volatile("stmxcsr %0" : "=m"(ctx->mxcsr)); }
static ALWAYS_INLINE void load_mxcsr(const context *ctx) { __asm__ volatile("ldmxcsr %0" : : "m"(ctx->mxcsr)); }
#else
/* Elsewhere swapcontext switches all of the floating-point environment. */
static ALWAYS_INLINE void save_mxcsr(context *) {}
static ALWAYS_INLINE void load_mxcsr(const context *) {}
#endif
/* setcontext only restores, where swapcontext would first save the whole FP environment. */
#define LEAVE_CONTEXT(S, to) ((void)(S), load_mxcsr(to), setcontext(to))
#if !COROUTINE_ASAN
#define SWITCH_WITH(swap, get, from, to) (save_mxcsr(from), load_mxcsr(to), swap(from, to))
#else
/* ASan intercepts swapcontext, whose frame, below the slice just saved, the next coroutine loses.
 * getcontext and setcontext switch with no frame; the flag tells getcontext's returns apart. */
static thread_local volatile int asan_switching;
#define SWITCH_WITH(swap, get, from, to) do {                           \
		asan_switching = 1;                                     \
		save_mxcsr(from), load_mxcsr(to), get(from);            \
		if (asan_switching)                                     \
			asan_switching = 0, setcontext(to);             \
	} while (0)
#endif
#if UCONTEXT_LINK
/* swapcontext and getcontext, having noted main's frame (see "The ucontext entry"). */
extern "C" int coroutine_swapcontext_noting(context *from, const context *to);
extern "C" __attribute__((returns_twice)) int coroutine_getcontext_noting(context *from);
#define SWITCH_FROM_MAIN(S, to) SWITCH_WITH(coroutine_swapcontext_noting, coroutine_getcontext_noting, &(S)->main, to)
#else
#define SWITCH_FROM_MAIN(S, to) SWITCH_WITH(swapcontext, getcontext, &(S)->main, to)
#endif
#define SWITCH_CONTEXT(from, to) SWITCH_WITH(swapcontext, getcontext, from, to)
#endif

/* The leaving code's FP control words, for the switch to compare with *to's (x86_64 System V: noted
 * atop resume and yield, as reading MXCSR stalls); from's must be noted since they last changed. */
#if defined(NOTED_FP_WORD)
static ALWAYS_INLINE void note_fp_control(context *ctx)
{
	char *fp = (char *)&ctx->word[NOTED_FP_WORD]; /* MXCSR, then the x87 word */
	__asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(*(char(*)[4])fp), "=m"(*(char(*)[2])(fp + 4)));
}
#else
static ALWAYS_INLINE void note_fp_control(context *) {}
#endif

/* A yield's work once back from main: with ucontext it tests, in its own code, whether
 * coroutine_delete resumed it to unwind it ("Ending a coroutine early"), and ASan hears of the
 * switch.  Both ask the thread, not S: what the compiler kept of S in the yield's frame may have
 * been stored after the save, which the slice lacks. */
#if !COROUTINE_ASM && !COROUTINE_FIBER
static thread_local struct schedule *resumed_to_unwind; /* see unwind_at_resume */
#define UNWIND_IF_DELETED() do {                                                     \
		struct schedule *deleting = resumed_to_unwind;                       \
		if (deleting != NULL)                                                \
			resumed_to_unwind = NULL, unwind_coroutine(deleting);        \
	} while (0)
#else
#define UNWIND_IF_DELETED() ((void)0)
#endif
#define BACK_FROM_MAIN() do { UNWIND_IF_DELETED(); asan_back_in_coroutine(); } while (0)

/* ---- What the machinery supplies -------------------------------------------
 * The story calls these; each is defined in the section its group names. */
/* The slots: a doubling array, beside a tree of bitmaps of those in use. */
static int resize_slots(struct schedule *S, size_t cap); /* the new ones empty; 0: out of memory */
static void free_slots(struct schedule *S);
static int first_free_slot(const struct schedule *S);    /* the original's scan from nco; nco < cap */
NOINLINE static int grow_slots(struct schedule *S);      /* doubles them: the first new id, or -1 */
static void take_slot(struct schedule *S, int id, struct coroutine *C);
NOINLINE static void empty_slot(struct schedule *S, int id);
static int next_used_slot(const struct schedule *S, size_t i); /* at or after i < cap, or -1 */
/* The process (see there), joined at open (0: no memory), left at close; S moved to this thread. */
static int join_process(struct schedule *S);
static void leave_process(struct schedule *S);
static uint64_t this_thread(void); /* a number no other thread ever gets */
NOINLINE static void move_to_this_thread(struct schedule *S);
static thread_local uint64_t thread_number; /* 0 until this_thread */
/* The platforms: the mapping (read-write windows, faulting guards; or NULL); a block's size. */
static char *map_windows(void);
static void unmap_windows(char *base);
static size_t buffer_capacity(void *block);
/* The switch: C started on the run stack; wasm's frames; a copy's context, frames (0: none). */
static void start_coroutine(struct schedule *S, struct coroutine *C);
static void make_frames(struct schedule *S);
static void hand_over_frames(struct schedule *S, struct coroutine *C);
static void note_main_stack(struct schedule *S);
static void rebase_copied_context(context *copy, const context *original);
static int copy_frames(struct schedule *S, const struct coroutine *C, struct coroutine *copy);
/* Slices in their blocks; a shallow one's quick paths (frameless; NULL: not shallow). */
static char *slice_bottom(char *dummy); /* where the live slice of dummy's function ends */
NOINLINE static struct coroutine *with_room_for(struct schedule *S, size_t size); /* the owner, grown; NULL */
static unsigned char shallow_room(size_t room); /* C->room, for room bytes of block */
static size_t room_for_slice(size_t size);     /* bytes of block a slice of size bytes needs */
static char *slice_in_block(struct coroutine *C, const char *bottom, size_t size);
static void copy_slice(char *to, const char *from, size_t n);
static context *save_slice_quickly(struct schedule *S, struct coroutine *C);
static void take_run_stack_quickly(struct schedule *S, struct coroutine *C);
/* ASan and valgrind, told of the run stack (1: one watches) and each move (C NULL: start, end). */
static int tools_register_run_stack(struct schedule *S);
static void tools_forget_schedule(struct schedule *S);
static void forget_run_stack(struct schedule *S, char *top, size_t span);
static void asan_leave_main(struct schedule *S);
static void asan_back_in_main(struct schedule *S);
static void asan_enter_coroutine(struct schedule *S, struct coroutine *C);
static void asan_back_in_coroutine(void); /* a yield's, once back */
static void asan_leave_coroutine(struct schedule *S, struct coroutine *C);
static int asan_save_shadow(struct schedule *S, struct coroutine *C, int may_fail); /* see there */
static void asan_restore_shadow(struct schedule *S, struct coroutine *C);
static void asan_free_shadow(struct coroutine *C);
static void asan_free_fake_stack(struct schedule *S, struct coroutine *C);
static int asan_keeps_fake_frames(struct schedule *S, struct coroutine *C); /* a copy would share them */
static int asan_copy_shadow(struct schedule *S, const struct coroutine *C, struct coroutine *copy); /* 0: no memory */
/* The C++ exception state; a late runtime (1: S keeps several now); a resume keeping several. */
static void take_eh_state(struct schedule *S, const struct eh_state *own);
static void give_back_eh_state(struct schedule *S, struct coroutine *C);
static void drop_eh_state(struct schedule *S);
static int take_up_late_runtime(struct schedule *S);
NOINLINE static void resume_keeping_more_runtimes(struct schedule *S, struct coroutine *C, int id);
static int handles_exceptions(const struct schedule *S, int id); /* in any runtime S keeps */
static void no_exceptions_in_more_runtimes(struct schedule *S, int id); /* a copy's */
/* Ending early: can C be unwound here; its unwinding (then done, or waiting); the yield's part. */
static int can_unwind(const struct coroutine *C);
NOINLINE static void resume_in_forced_unwind(struct schedule *S, int id);
#if !COROUTINE_FIBER /* WebAssembly has no unwinder */
NOINLINE static void unwind_coroutine(struct schedule *S);
#endif
/* Ends asked in a coroutine, done once main is back (asm: by main's context; else by a test). */
static void carry_out_when_main_is_back(struct schedule *S);
static void carry_out_if_asked(struct schedule *S);
/* The checked build (no-ops unless COROUTINE_CHECKED): run stacks out of reach, a fault handler. */
static void run_stack_in_reach(struct schedule *S);
static void run_stack_out_of_reach(struct schedule *S);
static void forget_hidden_frames(struct coroutine *C);
static void watch_run_stacks(void);
static void stop_watching_run_stacks(void);
static void place_in_window(struct schedule *S, struct coroutine *C); /* see top_of */

/* ---- Misuse: one line naming the function and the fault, then abort ----- */
[[noreturn]] PRINTF_CHECK(1, 2)
static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static void check_schedule(const struct schedule *S, const char *func)
{
	if (S == NULL)
		fail("%s: the schedule is NULL", func);
}

static void check_id(const struct schedule *S, int id, const char *func)
{
	if ((unsigned)id >= (unsigned)S->cap) /* as unsigned, a negative id is beyond any cap */
		fail("%s: id %d is out of range [0, %d)", func, id, S->cap);
}

static void check_in_main(const struct schedule *S, const char *func, const char *what)
{
	if (S->running != -1)
		fail("%s: called from inside coroutine %d%s; %s", func, S->running,
		     S->ending != NULL ? ", which is being deleted" : "", what);
}

/* ==== The story ========================================================== */

/* ---- Opening a schedule ------------------------------------------------- */
/* The run stack, above its guard, as the platform maps it. */
static int map_run_stack(struct schedule *S)
{
	char *base = map_windows();
	if (base == NULL)
		return 0;
	S->stack = base + MAPPING_SIZE - MAPPED_STACK_SIZE;
	S->top = S->stack + STACK_SIZE;
	make_frames(S);
	/* Any shallow slice, while no tool watches: see take_run_stack_quickly. */
	S->quick_put_back = tools_register_run_stack(S) ? 0 : shallow_room(STACK_SIZE);
	run_stack_out_of_reach(S);
	return 1;
}

static void unmap_run_stack(struct schedule *S) { tools_forget_schedule(S); unmap_windows(mapping_of(S)); }

/* It joins the process last: others find it, and its run stack, on the list of open schedules. */
struct schedule *coroutine_open(void)
{
	struct schedule *S = (struct schedule *)calloc(1, sizeof *S);
	if (S == NULL)
		return NULL;
	S->running = -1;
	if (resize_slots(S, DEFAULT_COROUTINE) && map_run_stack(S)) {
		if (join_process(S))
			return S;
		unmap_run_stack(S);
	}
	free_slots(S);
	free(S);
	return NULL;
}

/* ---- Creating a coroutine ----------------------------------------------- */
/* What the backend and the tools keep for C alone: nothing yet. */
static void own_nothing_yet(struct coroutine *C)
{
	(void)C; /* when there is none of them */
#if COROUTINE_FIBER
	C->frames = NULL;
#endif
#if COROUTINE_ASAN
	C->fake_stack = NULL;
	C->shadow = NULL;
#endif
#if HIDE_FAKE_FRAMES
	C->hidden = NULL;
#endif
}

static struct coroutine *new_coroutine(struct schedule *S, coroutine_func func, void *ud)
{
	/* Not calloc: glibc's skips its thread cache, and clears what the first switch writes. */
	struct coroutine *C = (struct coroutine *)malloc(sizeof *C + NEW_ROOM);
	if (C == NULL)
		return NULL;
	C->start.func = func;
	C->start.ud = ud;
	C->size = 0;
	C->status = COROUTINE_READY;
	C->room = shallow_room(NEW_ROOM);
	C->end_asked = C->in_try_yield = 0;
	place_in_window(S, C);
	own_nothing_yet(C);
	return C;
}

static void delete_coroutine(struct coroutine *C)
{
	asan_free_shadow(C);
	forget_hidden_frames(C);
#if COROUTINE_FIBER
	free(C->frames);
#endif
	free(C);
}

/* Puts C in the slot the original's rule gives (see coroutine.h), doubling the slots if all are
 * taken: its id, or -1.  Inlined, take_slot too: a new coroutine's common case calls nothing. */
static ALWAYS_INLINE int add_coroutine(struct schedule *S, struct coroutine *C)
{
	int id = S->nco >= S->cap ? grow_slots(S) : first_free_slot(S);
	if (id < 0)
		return -1;
	take_slot(S, id, C);
	++S->nco;
	return id;
}

int coroutine_new(struct schedule *S, coroutine_func func, void *ud)
{
	check_schedule(S, "coroutine_new");
	if (func == NULL)
		fail("coroutine_new: func is NULL");
	struct coroutine *C = new_coroutine(S, func, ud);
	if (C == NULL)
		return -1;
	int id = add_coroutine(S, C);
	if (id < 0)
		free(C);
	return id;
}

/* ---- Resuming: starting, and putting a slice back ----------------------- */
/* Every coroutine starts here, on the top of the run stack, and calls its function by a jump: no
 * frame of the library's is in any slice.  unused: on i386, where arguments are on the stack, only
 * a function given as many can jump to its callee. */
static void run_coroutine(struct schedule *S, void *unused)
{
	(void)unused;
	asan_enter_coroutine(S, NULL);
	struct coroutine *C = S->co[S->running];
	C->start.func(S, C->start.ud);
}

/* The coroutine's function has returned: it goes, with its slot, and leaves the run stack for good
 * by the switch.  Out of line: inlined into its caller, whose frame is in every slice with
 * ucontext, its registers would be that frame's too. */
NOINLINE static void finish_coroutine(struct schedule *S)
{
	drop_eh_state(S);
	int id = S->running;
	if (S->ending == S->co[id]) /* a delete ended it */
		S->ending = NULL;
	delete_coroutine(S->co[id]);
	empty_slot(S, id);
	--S->nco;
	S->owner = NULL;
	S->running = -1;
	asan_leave_coroutine(S, NULL);
	LEAVE_CONTEXT(S, &S->main);
}

/* Continues the owner of the run stack, a suspended coroutine, until it yields or finishes.  It
 * ends with the switch, as do its callers, so the saved resume address is in coroutine_resume's
 * caller: a yield comes straight back there. */
static void continue_owner(struct schedule *S)
{
	struct coroutine *C = S->owner;
	take_eh_state(S, &C->eh);
	asan_leave_main(S);
	note_main_stack(S);
	SWITCH_FROM_MAIN(S, &C->ctx);
	asan_back_in_main(S);
	run_stack_out_of_reach(S);
	carry_out_if_asked(S);
}

/* Hands the run stack to suspended C: the last occupant's bytes forgotten, C's put back. */
static ALWAYS_INLINE void put_back_slice(struct schedule *S, struct coroutine *C)
{
	forget_run_stack(S, top_of(S, C), STACK_SIZE);
	char *bottom = top_of(S, C) - C->size;
	copy_slice(bottom, slice_in_block(C, bottom, (size_t)C->size), (size_t)C->size);
	asan_restore_shadow(S, C);
	hand_over_frames(S, C);
	S->owner = C;
}

/* And continues it.  Out of line: most resumes resume the coroutine already there. */
NOINLINE static void take_run_stack(struct schedule *S, struct coroutine *C)
{
	put_back_slice(S, C);
	continue_owner(S);
}

/* Starts C, which has never run, on the top of the run stack. */
static ALWAYS_INLINE void start_ready(struct schedule *S, struct coroutine *C, int id)
{
	S->running = id;
	run_stack_in_reach(S);
	forget_run_stack(S, top_of(S, C), STACK_SIZE);
	hand_over_frames(S, NULL);
	S->owner = C;
	C->status = COROUTINE_SUSPEND; /* what it is whenever it does not run */
	take_eh_state(S, &no_exceptions);
	asan_leave_main(S);
	note_main_stack(S);
	start_coroutine(S, C);
	asan_back_in_main(S);
	run_stack_out_of_reach(S);
	carry_out_if_asked(S);
}

/* Continues C, suspended on this thread.  If it was the last to run, its bytes are still on the
 * run stack, exactly as it saved them: copying them back would change nothing. */
static ALWAYS_INLINE void resume_suspended(struct schedule *S, struct coroutine *C, int id)
{
	S->running = id;
	if (C == S->owner) {
		run_stack_in_reach(S);
		continue_owner(S);
	} else {
		run_stack_in_reach(S);
		take_run_stack_quickly(S, C);
	}
}

/* Whether the slot is empty (a resume does nothing there); stops for one suspended elsewhere. */
static int nothing_to_resume(const struct coroutine *C, int id)
{
	if (C->status == SUSPENDED_ELSEWHERE)
		fail("coroutine_resume: coroutine %d was suspended on another thread; "
		     "resume it on that thread", id);
	return C == &no_coroutine;
}

/* A slot whose coroutine is neither the owner nor suspended: it starts, or there is nothing to
 * resume.  Out of line: a coroutine starts once. */
NOINLINE static void start_or_refuse(struct schedule *S, struct coroutine *C, int id)
{
	if (nothing_to_resume(C, id))
		return;
	if (take_up_late_runtime(S)) /* it keeps several runtimes now */
		resume_keeping_more_runtimes(S, C, id);
	else
		start_ready(S, C, id);
}

/* The resume proper, checked, on the schedule's own thread. */
static ALWAYS_INLINE void resume_here(struct schedule *S, int id)
{
	note_fp_control(&S->main);
	struct coroutine *C = S->co[id];
	if (C != S->owner && C->status != COROUTINE_SUSPEND)
		start_or_refuse(S, C, id);
	else
		resume_suspended(S, C, id);
}

/* Out of line, the resume off the fast path: on another thread (S moves), or with more runtimes. */
NOINLINE static void resume_the_long_way(struct schedule *S, int id)
{
	if (S->thread != this_thread())
		move_to_this_thread(S);
	struct coroutine *C = S->co[id];
	if (S->more == NULL) {
		resume_here(S, id);
	} else if (!nothing_to_resume(C, id)) {
		note_fp_control(&S->main);
		resume_keeping_more_runtimes(S, C, id);
	}
}

NOINLINE static void refuse_resume(struct schedule *S, int id)
{
	check_schedule(S, "coroutine_resume");
	check_in_main(S, "coroutine_resume", "only the main program may resume");
	check_id(S, id, "coroutine_resume");
}

void coroutine_resume(struct schedule *S, int id)
{
	if (S == NULL || S->running != -1 || (unsigned)id >= (unsigned)S->cap) { /* one branch: no call, no frame */
		refuse_resume(S, id);
		return;
	}
	if (S->fast_thread != thread_number) { /* 0 on a thread not yet numbered */
		resume_the_long_way(S, id);
		return;
	}
	resume_here(S, id);
}

/* ---- Yielding: the dummy, and the save ---------------------------------- */
#define MIN_SLICE (COROUTINE_FIBER ? 0 : 1) /* a return address; none on wasm (frames in wasm locals) */

/*
 * The dummy trick.  dummy is a local of this function, so its address lies below every frame of the
 * coroutine that called coroutine_yield: [&dummy, top) is the coroutine's whole live stack, and
 * copying it saves the coroutine.  Never inlined, or dummy would sit inside its caller's frame,
 * whose part below it would not be saved.  It calls nothing, so it needs no frame: dummy lies just
 * below coroutine_yield's stack pointer, and the slice holds nothing of this function.
 */
NOINLINE NO_ASAN static char *slice_start(void)
{
	char dummy; /* only its address counts */
	return slice_bottom(&dummy);
}

static const char *yield_name(int may_fail) { return may_fail ? "coroutine_try_yield" : "coroutine_yield"; }

/* Saves the yielding coroutine's slice [bottom, top) and returns &C->ctx, where the switch saves
 * the registers, so that only S lives across the call in the yield.  Out of memory: NULL, having
 * changed nothing, if the yield may fail (a template argument: neither yield pays for it). */
template <int may_fail>
NOINLINE NO_ASAN static context *save_slice(struct schedule *S, char *bottom)
{
	struct coroutine *C = S->owner;
	char *top = top_of(S, C);
	size_t size = (size_t)(top - bottom), last = C->size; /* unsigned: a bottom above top is huge */
	if (size - MIN_SLICE > STACK_SIZE - MIN_SLICE)
		fail("%s: the caller is not on this schedule's run stack "
		     "(its live stack would be %td bytes; the run stack has %d)",
		     yield_name(may_fail), top - bottom, STACK_SIZE);
	if (size > last && (C = with_room_for(S, size)) == NULL) { /* only a larger slice may need room */
		if (may_fail)
			return NULL;
		fail("%s: out of memory saving %zu bytes of stack", yield_name(may_fail), size);
	}
	C->size = (unsigned)size;
	copy_slice(slice_in_block(C, bottom, size), bottom, size);
	if (!asan_save_shadow(S, C, may_fail)) { /* no memory: the old size; the new bytes go unread */
		C->size = (unsigned)last;
		return NULL;
	}
	return &C->ctx;
}

/* Tells which check of a yield failed; out of line, or wasm's yield would get a frame. */
[[noreturn]] NOINLINE static void refuse_yield(struct schedule *S, const char *func)
{
	check_schedule(S, func);
	fail("%s: called from outside any coroutine", func);
}

/* The slice saved at *saved, the coroutine leaves for main, back when resumed or deleted.  A macro:
 * the switch must be in the yield's own frame, in the slice (ASan's getcontext returns twice). */
#define SWITCH_TO_MAIN(S, saved) do {                                        \
		(S)->running = -1; /* only now: growing it needs its slot */ \
		asan_leave_coroutine(S, (S)->owner);                         \
		SWITCH_CONTEXT(saved, &(S)->main);                           \
	} while (0)

/* Why this is safe: the slice starts in a call below this frame, so it holds this frame (saved
 * registers, return address, canary, spills) wherever the compiler put them.  Between the save and
 * the switch this only computes arguments and writes to the heap; after, it reads nothing it stored
 * after the save (see BACK_FROM_MAIN).  The switch's return address, written after the save, is not
 * in the copy: the resume address is in the context.  Never inlined (LTO too), for that reason. */
NOINLINE void coroutine_yield(struct schedule *S)
{
	if (S == NULL || S->running == -1)
		refuse_yield(S, "coroutine_yield");
	struct coroutine *C = S->owner; /* running; the save may move it (with_room_for): looked up again */
	note_fp_control(&C->ctx);
	give_back_eh_state(S, C);
	context *saved = save_slice_quickly(S, C);
	if (saved == NULL)
		saved = save_slice<0>(S, slice_start());
	SWITCH_TO_MAIN(S, saved);
	BACK_FROM_MAIN();
}

/* The same yield, but with no memory for the slice it takes its exception state back and returns
 * -1.  It marks its wait, so that a delete ends it here politely (see end_coroutine). */
NOINLINE NO_ASAN int coroutine_try_yield(struct schedule *S)
{
	if (S == NULL || S->running == -1)
		refuse_yield(S, "coroutine_try_yield");
	struct schedule *volatile kept = S; /* for after the switch (see BACK_FROM_MAIN), on the stack */
	note_fp_control(&S->owner->ctx);
	give_back_eh_state(S, S->owner);
	context *saved = save_slice_quickly(S, S->owner);
	if (saved == NULL)
		saved = save_slice<1>(S, slice_start());
	if (saved == NULL) {
		take_eh_state(S, &S->owner->eh);
		return -1;
	}
	S->owner->in_try_yield = 1;
	SWITCH_TO_MAIN(S, saved);
	BACK_FROM_MAIN();
	struct schedule *back = kept;
	back->owner->in_try_yield = 0;
	return back->ending != NULL ? COROUTINE_ENDING : 0;
}

/* ---- Asking about coroutines -------------------------------------------- */
/* The running coroutine's status says SUSPEND, as when it does not run: no switch changes it. */
int coroutine_status(struct schedule *S, int id)
{
	check_schedule(S, "coroutine_status");
	check_id(S, id, "coroutine_status");
	if (S->co[id] == &no_coroutine)
		return COROUTINE_DEAD;
	if (id == S->running)
		return COROUTINE_RUNNING;
	int status = S->co[id]->status;
	return status == SUSPENDED_ELSEWHERE ? COROUTINE_SUSPEND : status;
}

int coroutine_running(struct schedule *S)
{
	check_schedule(S, "coroutine_running");
	return S->running;
}

long coroutine_stack_size(struct schedule *S, int id)
{
	check_schedule(S, "coroutine_stack_size");
	check_id(S, id, "coroutine_stack_size");
	return (long)S->co[id]->size; /* no_coroutine's is 0 */
}

int coroutine_next(struct schedule *S, int id)
{
	check_schedule(S, "coroutine_next");
	if (id < -1)
		fail("coroutine_next: id %d is below -1 (-1 asks for the first coroutine)", id);
	if (id >= S->cap - 1) /* read afresh: coroutines made since the last call count */
		return -1;
	return next_used_slot(S, (size_t)id + 1);
}

/* ---- Copying a coroutine ------------------------------------------------ */
/* Stops at coroutine_clone's first failed check.  A copy would share what lies outside its bytes:
 * the exception being handled (freed when a handler ends), ASan's fake frames. */
static void check_clonable(struct schedule *S, int id)
{
	check_schedule(S, "coroutine_clone");
	check_id(S, id, "coroutine_clone");
	struct coroutine *C = S->co[id];
	if (C == &no_coroutine)
		fail("coroutine_clone: slot %d is empty; there is no coroutine to copy", id);
	if (id == S->running)
		fail("coroutine_clone: coroutine %d is running; only a suspended or a new coroutine can be copied", id);
	if (C->status == COROUTINE_READY)
		return;
	uint64_t thread = C->status == SUSPENDED_ELSEWHERE ? C->thread : S->thread;
	if (thread != this_thread())
		fail("coroutine_clone: coroutine %d was suspended on another thread; clone it on that thread", id);
	if (handles_exceptions(S, id))
		fail("coroutine_clone: coroutine %d yielded inside a catch handler or while an exception "
		     "unwound its frames; its copy would share that exception", id);
	if (asan_keeps_fake_frames(S, C))
		fail("coroutine_clone: coroutine %d keeps locals in AddressSanitizer's fake stack, which its copy "
		     "would share (ASAN_OPTIONS=detect_stack_use_after_return=0 keeps them on the run stack)", id);
}

/* A copy of suspended C, waiting where C waits: its own block holds the slice (where slice_in_block
 * puts it), with its own of what the backend and tools keep.  The owner's slice too comes from its
 * block: only the owner changes its bytes on the run stack.  NULL: no memory. */
static struct coroutine *copy_suspended(struct schedule *S, struct coroutine *C)
{
	size_t size = C->size, room = room_for_slice(size);
	struct coroutine *copy = (struct coroutine *)malloc(sizeof *copy + (room > NEW_ROOM ? room : NEW_ROOM));
	if (copy == NULL)
		return NULL;
	*copy = *C; /* the context, the exception state, the thread, size, status, its wait */
	copy->room = shallow_room(buffer_capacity(copy) - sizeof *copy);
	copy->end_asked = 0;
	rebase_copied_context(&copy->ctx, &C->ctx);
	own_nothing_yet(copy);
	const char *bottom = top_of(S, C) - size;
	memcpy(slice_in_block(copy, bottom, size), slice_in_block(C, bottom, size), size);
	if (!copy_frames(S, C, copy) || !asan_copy_shadow(S, C, copy)) {
		delete_coroutine(copy);
		return NULL;
	}
	return copy;
}

/* A new coroutine is copied as coroutine_new would make it again. */
int coroutine_clone(struct schedule *S, int id)
{
	check_clonable(S, id);
	struct coroutine *C = S->co[id];
	struct coroutine *copy = C->status == COROUTINE_READY ? new_coroutine(S, C->start.func, C->start.ud)
							      : copy_suspended(S, C);
	if (copy == NULL)
		return -1;
	int copy_id = add_coroutine(S, copy);
	if (copy_id < 0) {
		delete_coroutine(copy);
		return -1;
	}
	no_exceptions_in_more_runtimes(S, copy_id);
	return copy_id;
}

/* ---- Deleting a coroutine ----------------------------------------------- */
/* Frees coroutine id where it lies, as the original's close does: nothing of it runs again. */
static void free_coroutine(struct schedule *S, int id)
{
	struct coroutine *C = S->co[id];
	if (C->status != COROUTINE_READY) /* it has run: ASan's fake frames go too */
		asan_free_fake_stack(S, C);
	if (S->owner == C) /* the bytes on the run stack are nobody's now */
		S->owner = NULL;
	delete_coroutine(C);
	empty_slot(S, id);
	--S->nco;
}

/* Resumes suspended C to end it, its try_yield returning COROUTINE_ENDING (polite), or into a
 * forced unwind: whether it waits again (yielded, not finished), where only a free ends it. */
static int waits_again(struct schedule *S, struct coroutine *C, int id, int polite)
{
	S->ending = C; /* finish_coroutine clears it */
	if (polite)
		coroutine_resume(S, id);
	else
		resume_in_forced_unwind(S, id);
	int waits = S->ending != NULL;
	S->ending = NULL;
	return waits;
}

/* Ends coroutine id, from main: one waiting in coroutine_try_yield is told so there, and may
 * return; one waiting elsewhere, or again, is unwound; one never started, one that nothing can
 * unwind, or one that waits even so, is freed. */
static void end_coroutine(struct schedule *S, int id)
{
	struct coroutine *C = S->co[id];
	if (C->status == COROUTINE_SUSPEND && C->in_try_yield && !waits_again(S, C, id, 1))
		return;
	C = S->co[id];
	if (C->status == COROUTINE_SUSPEND && can_unwind(C) && !waits_again(S, C, id, 0))
		return;
	free_coroutine(S, id);
}

/* The ends asked inside coroutines, main being back: in id order, again for those they asked. */
static void carry_out_asked_ends(struct schedule *S)
{
	while (S->ends_asked) {
		S->ends_asked = 0;
		for (int id = 0; id < S->cap; id++)
			if (S->co[id]->end_asked) /* no_coroutine's is 0 */
				end_coroutine(S, id);
	}
}

/* A delete inside a coroutine (of itself too): id is marked, and ended when control is back in
 * main, before the resume or delete that main called returns; until then it is as it was.  Once: a
 * coroutine marked, or being ended, is left alone. */
static void ask_to_end(struct schedule *S, int id)
{
	struct coroutine *C = S->co[id];
	if (S->thread != this_thread())
		fail("coroutine_delete: called on another thread while coroutine %d runs", S->running);
	if (C->status == SUSPENDED_ELSEWHERE)
		fail("coroutine_delete: coroutine %d was suspended on another thread; "
		     "delete it on that thread", id);
	if (C == &no_coroutine || C == S->ending || C->end_asked)
		return;
	C->end_asked = 1;
	if (!S->ends_asked && S->ending == NULL) /* else the delete under way carries them out */
		carry_out_when_main_is_back(S);
	S->ends_asked = 1;
}

void coroutine_delete(struct schedule *S, int id)
{
	check_schedule(S, "coroutine_delete");
	check_id(S, id, "coroutine_delete");
	if (S->running != -1) {
		ask_to_end(S, id);
		return;
	}
	if (S->thread != this_thread())
		move_to_this_thread(S);
	struct coroutine *C = S->co[id];
	if (C->status == SUSPENDED_ELSEWHERE)
		fail("coroutine_delete: coroutine %d was suspended on another thread; "
		     "delete it on that thread", id);
	if (C != &no_coroutine) /* an empty slot: nothing to delete */
		end_coroutine(S, id);
	carry_out_asked_ends(S);
}

/* ---- Closing a schedule ------------------------------------------------- */
/* Whether C waits at a yield made on the calling thread: only there can it be unwound. */
static int suspended_here(const struct schedule *S, const struct coroutine *C)
{
	uint64_t here = this_thread();
	if (C->status == COROUTINE_SUSPEND)
		return S->thread == here;
	return C->status == SUSPENDED_ELSEWHERE && C->thread == here;
}

/* Ends every coroutine suspended on this thread, in id order, as coroutine_delete does; then frees
 * the rest (never started, suspended elsewhere, or made by a destructor) without running them. */
void coroutine_close(struct schedule *S)
{
	if (S == NULL)
		return;
	check_in_main(S, "coroutine_close", "close the schedule from the main program");
	for (int id = 0; id < S->cap; id++)
		if (suspended_here(S, S->co[id])) {
			if (S->thread != this_thread())
				move_to_this_thread(S);
			end_coroutine(S, id);
			carry_out_asked_ends(S);
		}
	for (int i = 0; i < S->cap; i++) {
		struct coroutine *C = S->co[i];
		if (C == &no_coroutine)
			continue;
		if (C->status != COROUTINE_READY) /* suspended, here or elsewhere */
			asan_free_fake_stack(S, C);
		delete_coroutine(C);
	}
	leave_process(S);
	free_slots(S);
	unmap_run_stack(S);
	free(S);
}

/* ==== The machinery ====================================================== */

/* ---- The slots: a doubling array and a tree of bitmaps ------------------ */
static size_t bitmap_words(size_t n) { return (n + 63) / 64; }

/* Bits at level k of the slot tree of cap slots: one per word of level k - 1. */
static size_t level_bits(size_t cap, int k)
{
	size_t bits = cap;
	while (k-- > 0)
		bits = bitmap_words(bits);
	return bits;
}

static void free_slots(struct schedule *S)
{
	free(S->co);
	for (int k = 0; k < SLOT_LEVELS; k++)
		free(S->used[k]);
	free(S->nonempty_words);
}

/* Makes *bits hold n bits, of which the new ones are clear; 0 when out of memory. */
static int grow_bitmap(uint64_t **bits, size_t old_n, size_t n)
{
	uint64_t *grown = (uint64_t *)realloc(*bits, bitmap_words(n) * sizeof *grown);
	if (grown == NULL)
		return 0;
	memset(grown + bitmap_words(old_n), 0, (bitmap_words(n) - bitmap_words(old_n)) * sizeof *grown);
	*bits = grown;
	return 1;
}

/* Makes cap slots, the new ones empty; 0 when an allocation fails, S keeping its S->cap slots. */
static int resize_slots(struct schedule *S, size_t cap)
{
	size_t old = (size_t)S->cap;
	struct coroutine **co = (struct coroutine **)realloc(S->co, cap * sizeof *co);
	if (co == NULL)
		return 0;
	S->co = co;
	for (int k = 0; k < SLOT_LEVELS; k++)
		if (!grow_bitmap(&S->used[k], level_bits(old, k), level_bits(cap, k)))
			return 0;
	if (!grow_bitmap(&S->nonempty_words, level_bits(old, 1), level_bits(cap, 1)))
		return 0;
	for (size_t i = old; i < cap; i++)
		co[i] = &no_coroutine;
	S->cap = (int)cap;
	return 1;
}

NOINLINE static int grow_slots(struct schedule *S)
{
	int id = S->cap;
	return id <= INT_MAX / 2 && resize_slots(S, 2 * (size_t)id) ? id : -1;
}

static uint64_t clear_bits(const uint64_t *bits, size_t n, size_t w)
{
	uint64_t clear = ~bits[w];
	if (n < 64) /* a single, partial word: the bits past n stand for nothing */
		clear &= (UINT64_C(1) << n) - 1;
	return clear;
}

/* The first empty slot at or after slot i, or cap: up the tree until a word has a clear bit at or
 * after ours (a step up skips a full word's rest), then down the first clear bits. */
static size_t next_free_slot(const struct schedule *S, size_t i)
{
	size_t cap = (size_t)S->cap;
	int k = 0;
	for (;;) {
		size_t bits = level_bits(cap, k);
		if (i >= bits)
			return cap;
		uint64_t clear = clear_bits(S->used[k], bits, i / 64) & ~UINT64_C(0) << i % 64;
		if (clear != 0) {
			i = i / 64 * 64 + (size_t)trailing_zeros(clear);
			break;
		}
		if (++k == SLOT_LEVELS)
			return cap;
		i = i / 64 + 1; /* the next word of the level below */
	}
	while (k-- > 0)
		i = i * 64 + (size_t)trailing_zeros(clear_bits(S->used[k], level_bits(cap, k), i));
	return i;
}

/* The original's scan (from index nco, wrapping around), without testing slots one at a time. */
static int first_free_slot(const struct schedule *S)
{
	size_t id = next_free_slot(S, (size_t)S->nco);
	if (id == (size_t)S->cap)
		id = next_free_slot(S, 0);
	return (int)id;
}

/* Puts C in the empty slot id.  Level 0 of the tree has a bit per slot in use; each level above, a
 * bit per full word below.  Beside it, for coroutine_next, a bit per nonzero word of level 0. */
static ALWAYS_INLINE void take_slot(struct schedule *S, int id, struct coroutine *C)
{
	S->co[id] = C;
	size_t i = (size_t)id;
	for (int k = 0; k < SLOT_LEVELS; k++, i /= 64) {
		uint64_t *word = &S->used[k][i / 64];
		*word |= UINT64_C(1) << i % 64;
		if (*word != ~UINT64_C(0))
			break;
	}
	size_t w = (size_t)id / 64;
	S->nonempty_words[w / 64] |= UINT64_C(1) << w % 64;
}

/* Empties slot id.  Out of line: inlined, it costs coroutine_resume's common case a register. */
NOINLINE static void empty_slot(struct schedule *S, int id)
{
	S->co[id] = &no_coroutine;
	size_t i = (size_t)id;
	for (int k = 0; k < SLOT_LEVELS; k++, i /= 64) {
		uint64_t *word = &S->used[k][i / 64];
		int was_full = *word == ~UINT64_C(0);
		*word &= ~(UINT64_C(1) << i % 64);
		if (!was_full)
			break;
	}
	size_t w = (size_t)id / 64;
	if (S->used[0][w] == 0)
		S->nonempty_words[w / 64] &= ~(UINT64_C(1) << w % 64);
}

/* The first set bit at or after bit i of a bitmap of n words, or n * 64. */
static size_t first_set_bit(const uint64_t *bits, size_t n, size_t i)
{
	size_t w = i / 64;
	if (w >= n)
		return n * 64;
	uint64_t set = bits[w] & ~UINT64_C(0) << i % 64;
	while (set == 0) {
		if (++w == n)
			return n * 64;
		set = bits[w];
	}
	return w * 64 + (size_t)trailing_zeros(set);
}

/* The first slot in use at or after slot i: in i's word of used[0], or the next nonempty word. */
static int next_used_slot(const struct schedule *S, size_t i)
{
	uint64_t set = S->used[0][i / 64] & ~UINT64_C(0) << i % 64;
	if (set != 0)
		return (int)(i / 64 * 64 + (size_t)trailing_zeros(set));
	size_t words = bitmap_words((size_t)S->cap);
	size_t w = first_set_bit(S->nonempty_words, bitmap_words(words), i / 64 + 1);
	if (w >= words)
		return -1;
	return (int)(w * 64 + (size_t)trailing_zeros(S->used[0][w]));
}

/* ---- The platforms: mapping the run stack ------------------------------- */
#if defined(__APPLE__)
#include <malloc/malloc.h>
#else
#include <malloc.h>
#endif

static size_t buffer_capacity(void *block)
{
#if defined(_WIN32)
	return _msize(block);
#elif defined(__APPLE__)
	return malloc_size(block);
#else
	return malloc_usable_size(block);
#endif
}

#if defined(_WIN32)
#define WIN32_LEAN_AND_MEAN /* only the memory functions are needed */
#include <windows.h>

/* Reserved, never committed, a guard faults like a PROT_NONE page and costs no commit charge. */
static char *map_windows(void)
{
	char *base = (char *)VirtualAlloc(NULL, MAPPING_SIZE, MEM_RESERVE, PAGE_NOACCESS);
	for (size_t w = 0; base != NULL && w < WINDOWS; w++)
		if (VirtualAlloc(base + w * WINDOW_STRIDE + GUARD_SIZE, MAPPED_STACK_SIZE, MEM_COMMIT, PAGE_READWRITE) == NULL) {
			VirtualFree(base, 0, MEM_RELEASE);
			return NULL;
		}
	return base;
}

static void unmap_windows(char *base) { VirtualFree(base, 0, MEM_RELEASE); }
#elif defined(__EMSCRIPTEN__)
/* No memory protection: -sSTACK_OVERFLOW_CHECK=2 stops a coroutine that runs off the end. */
static char *map_windows(void) { return (char *)aligned_alloc(16, MAPPING_SIZE); }
static void unmap_windows(char *base) { free(base); }
#else
#include <sys/mman.h>

/* All reserved inaccessible, then each window mapped read-write (in two steps qemu-user sees the
 * guards; a window is a mapping), MAP_NORESERVE, or Linux charges it all to RAM and swap. */
#ifndef MAP_NORESERVE
#define MAP_NORESERVE 0
#endif

static char *map_windows(void)
{
	char *base = (char *)mmap(NULL, MAPPING_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	for (size_t w = 0; w < WINDOWS; w++)
		if (mmap(base + w * WINDOW_STRIDE + GUARD_SIZE, MAPPED_STACK_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED) {
			munmap(base, MAPPING_SIZE);
			return NULL;
		}
	return base;
}

static void unmap_windows(char *base) { munmap(base, MAPPING_SIZE); }
#endif

/* ---- The platforms: finding the C++ runtimes -------------------------------
 * find_runtimes adds each runtime in the process and what coroutine_delete needs: the Itanium ABI's
 * unwinder, each runtime's std::set_terminate.  One brought later (dlopen, LoadLibrary) is found by
 * file name on ELF, Apple and MinGW.  Each thread keeps what it found until modules_changed. */
#define MAX_RUNTIMES 3
typedef void (*any_function)(void); /* cast back to its type before a call */
typedef any_function (*terminate_setter)(any_function);
struct runtimes {
	int n; /* -1 until the thread looks */
	eh_globals_func get[MAX_RUNTIMES];
	any_function unwind; /* _Unwind_ForcedUnwind, if any */
	int setters;
	terminate_setter set_terminate[MAX_RUNTIMES];
};
static thread_local struct runtimes thread_runtimes = { -1, {}, NULL, 0, {} };
static void add_runtime(struct runtimes *found, eh_globals_func get);
#define SET_TERMINATE_NAME "_ZSt13set_terminatePFvvE" /* std::set_terminate */

/* Whether the count of modules loaded differs from the one this thread saw last. */
static int count_changed(unsigned long long count)
{
	static thread_local unsigned long long seen = ULLONG_MAX;
	int changed = count != seen;
	seen = count;
	return changed;
}

static void add_terminate_setter(struct runtimes *found, any_function set)
{
	if (set == NULL || found->setters == MAX_RUNTIMES)
		return;
	for (int i = 0; i < found->setters; i++)
		if (found->set_terminate[i] == (terminate_setter)set)
			return;
	found->set_terminate[found->setters++] = (terminate_setter)set;
}

#if EH_MSVC_ABI
static struct eh_state *linked_runtime(void); /* vcruntime's, which every MSVC-ABI program links */
extern "C" any_function __cdecl set_terminate(any_function); /* the CRT's, in C */

static void find_linked_terminate(struct runtimes *found) { add_terminate_setter(found, (any_function)set_terminate); }
#elif !defined(__APPLE__)
/* A program that catches links a runtime, which a weak reference finds (a static one too).  Called
 * directly: MinGW makes it weak only for a call.  Not on Apple: ld64 wants a definition. */
extern "C" struct eh_state *__cxa_get_globals(void) WEAK;
namespace std {
any_function set_terminate(any_function) noexcept WEAK;
}

static struct eh_state *linked_runtime(void) { return __cxa_get_globals ? __cxa_get_globals() : NULL; }
static any_function linked_set_terminate(any_function handler) { return std::set_terminate(handler); }

static void find_linked_terminate(struct runtimes *found)
{
	if (std::set_terminate)
		add_terminate_setter(found, (any_function)linked_set_terminate);
}
#endif

#if defined(_WIN32) && !EH_MSVC_ABI
/* ntdll calls count_dll_load at each DLL load, from the first open to the last close (its module
 * may be freed); registering counts one more, for loads missed; else every call looks. */
static void *registration;          /* its cookie, or NULL: under the list's lock */
static volatile LONG dll_loads;

static VOID CALLBACK count_dll_load(ULONG reason, const void *data, void *context)
{
	(void)reason, (void)data, (void)context; /* loaded (1) or unloaded (2) */
	InterlockedIncrement(&dll_loads);
}

typedef VOID(CALLBACK *dll_notification)(ULONG reason, const void *data, void *context);
typedef LONG(NTAPI *register_dll_notification)(ULONG flags, dll_notification notify, void *context, void **cookie);
typedef LONG(NTAPI *unregister_dll_notification)(void *cookie);

static FARPROC ntdll_function(const char *name)
{
	HMODULE ntdll = GetModuleHandleA("ntdll.dll");
	return ntdll ? GetProcAddress(ntdll, name) : NULL;
}

static void first_schedule_opened(void)
{
	FARPROC found = ntdll_function("LdrRegisterDllNotification");
	InterlockedIncrement(&dll_loads); /* for the loads nobody counted */
	if (found == NULL
	    || ((register_dll_notification)(void (*)(void))found)(0, count_dll_load, NULL, &registration) != 0)
		registration = NULL;
}

static void last_schedule_closed(void)
{
	if (registration == NULL)
		return;
	FARPROC found = ntdll_function("LdrUnregisterDllNotification");
	if (found != NULL)
		((unregister_dll_notification)(void (*)(void))found)(registration);
	registration = NULL;
}

/* Called with a schedule open (the caller's), so the registration stands still meanwhile. */
static int modules_changed(void) { return count_changed((unsigned long long)dll_loads) || registration == NULL; }

/* A weak reference finds only a static runtime: one in a DLL is found by the DLL's name. */
static void find_runtimes(struct runtimes *found)
{
	static const char *const names[] = { "libstdc++-6.dll", "libc++.dll" };
	add_runtime(found, linked_runtime);
	find_linked_terminate(found);
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		HMODULE module = GetModuleHandleA(names[i]);
		FARPROC get = module ? GetProcAddress(module, "__cxa_get_globals") : NULL;
		FARPROC set = module ? GetProcAddress(module, SET_TERMINATE_NAME) : NULL;
		add_runtime(found, (eh_globals_func)(void (*)(void))get);
		add_terminate_setter(found, (any_function)set);
	}
}
#elif (defined(__ELF__) || defined(__APPLE__)) && !defined(__EMSCRIPTEN__)
#include <dlfcn.h>
#if defined(__APPLE__)
#include <mach-o/dyld.h>
/* No weak reference (see above); libc++abi, in every process (libSystem needs it), is found. */
static const char *const runtime_names[] = { "/usr/lib/libc++abi.dylib" };

static int modules_changed(void) { return count_changed(_dyld_image_count()); }
#else
#include <link.h>

static const char *const runtime_names[] = { "libstdc++.so.6", "libc++abi.so.1" };

/* Modules ever loaded and unloaded: glibc and musl count them in the first module's entry. */
static int count_loads(struct dl_phdr_info *info, size_t size, void *loads)
{
	(void)size;
	*(unsigned long long *)loads = info->dlpi_adds + info->dlpi_subs;
	return 1;
}

static int modules_changed(void)
{
	unsigned long long loads = 0;
	dl_iterate_phdr(count_loads, &loads);
	return count_changed(loads);
}
#endif

/* The runtime and unwinder in module (dlsym searches what module loaded, too). */
static void find_in_module(struct runtimes *found, void *module)
{
	add_runtime(found, (eh_globals_func)dlsym(module, "__cxa_get_globals"));
	add_terminate_setter(found, (any_function)dlsym(module, SET_TERMINATE_NAME));
	if (found->unwind == NULL)
		found->unwind = (any_function)dlsym(module, "_Unwind_ForcedUnwind");
}

/* Globally, missing RTLD_LOCAL libraries and their runtimes; so by file name too (RTLD_NOLOAD). */
static void find_runtimes(struct runtimes *found)
{
#if !defined(__APPLE__)
	add_runtime(found, linked_runtime);
	find_linked_terminate(found);
#endif
	find_in_module(found, RTLD_DEFAULT);
	for (size_t i = 0; i < sizeof runtime_names / sizeof runtime_names[0]; i++) {
		void *module = dlopen(runtime_names[i], RTLD_LAZY | RTLD_NOLOAD);
		if (module != NULL) {
			find_in_module(found, module);
			dlclose(module);
		}
	}
}
#else
/* Microsoft's ABI or WebAssembly: only the runtime linked in, and nothing arrives later. */
static int modules_changed(void) { return count_changed(0); } /* only the first look is a change */

static void find_runtimes(struct runtimes *found)
{
	add_runtime(found, linked_runtime);
	find_linked_terminate(found);
}
#endif

static ALWAYS_INLINE const struct runtimes *runtimes_here(void)
{
	struct runtimes *found = &thread_runtimes;
	if (modules_changed() || found->n < 0) {
		found->n = found->setters = 0;
		found->unwind = NULL;
		find_runtimes(found);
	}
	return found;
}

#if !defined(_WIN32) || EH_MSVC_ABI /* only Windows' Itanium ABI registers anything while open */
static void first_schedule_opened(void) {}
static void last_schedule_closed(void) {}
#endif

/* Windows runs DllMain and a DLL's static constructors and destructors under the loader lock, which
 * ntdll may take (Wine's does) for a DLL notification: open or close there would wait for the open
 * schedules' lock, whose holder waits for the loader lock.  So both refuse.  The lock (a critical
 * section) names its owner; on x64 the TEB holds the PEB at 0x60, the PEB the lock at 0x110. */
#if defined(_WIN32)
static void refuse_under_loader_lock(const char *func)
{
	const char *peb = *(char *const *)(current_teb() + 0x60);
	const RTL_CRITICAL_SECTION *loader_lock = *(RTL_CRITICAL_SECTION *const *)(peb + 0x110);
	if (loader_lock->OwningThread == (HANDLE)(ULONG_PTR)GetCurrentThreadId())
		fail("%s: called under the loader lock (from DllMain, or a DLL's static constructor or destructor)",
		     func);
}
#else
static void refuse_under_loader_lock(const char *) {}
#endif

/* ---- WebAssembly's frames (Emscripten's fibers) ----------------------------
 * Wasm code cannot reach its call stack: Asyncify (-sASYNCIFY) rewrites every function that may
 * reach a switch to save its locals and place ("unwind") and go on later ("rewind").  A fiber: its
 * C stack (the run stack, copied at a yield) and its wasm frames (in an asyncify area). */
#if COROUTINE_FIBER
#ifndef COROUTINE_ASYNCIFY_SIZE
#define COROUTINE_ASYNCIFY_SIZE (64 * 1024) /* main's and the coroutines' */
#endif
#define ASYNCIFY_SIZE ((size_t)(COROUTINE_ASYNCIFY_SIZE))

/* Once, in the module's JavaScript, what Emscripten's fibers (3.1.6) leave undone: main's return
 * value, which its rewinding trampoline drops, goes to exit(); an area's overflow is reported. */
EM_JS(void, fiber_hooks, (size_t area_size), {
	if (Fibers.coroutineHooks)
		return;
	Fibers.coroutineHooks = true;
	var rewind = Asyncify.doRewind;
	Asyncify.doRewind = function(data) {
		var status = rewind(data);
		/* All runs in main's first call; a rewound return with no switch next is main's. */
		if (typeof calledMain != 'undefined' && !calledMain && !Fibers.nextFiber)
			exit(status, true);
		return status;
	};
	var onAbort = Module['onAbort'];
	Module['onAbort'] = function(what) {
		var data = Asyncify.currData;
		if (data && HEAPU32[data >> 2] > HEAPU32[(data + 4) >> 2])
			err('coroutine: a switch unwound ' + (HEAPU32[data >> 2] - HEAPU32[(data + 4) >> 2] + area_size) +
			    ' bytes of wasm frames into an asyncify area of ' + area_size +
			    ': build coroutine.cpp with a larger -DCOROUTINE_ASYNCIFY_SIZE');
		if (onAbort)
			onAbort(what);
	};
});

static size_t unwound_bytes(const struct schedule *S, const struct coroutine *C)
{
	return (size_t)((char *)C->ctx.fiber.asyncify_data.stack_ptr - S->frames);
}

/* Hands the area (where the owner's frames stay) to C with the run stack; NULL: a new coroutine. */
static void hand_over_frames(struct schedule *S, struct coroutine *C)
{
	struct coroutine *owner = S->owner;
	if (owner != NULL) {
		size_t n = unwound_bytes(S, owner);
		if (owner->frames == NULL || buffer_capacity(owner->frames) < n) {
			free(owner->frames);
			owner->frames = (char *)malloc(n);
			if (owner->frames == NULL)
				fail("coroutine_resume: out of memory saving %zu bytes of wasm frames", n);
		}
		memcpy(owner->frames, S->frames, n);
	}
	if (C != NULL)
		memcpy(S->frames, C->frames, unwound_bytes(S, C));
}

/* The copy's own wasm frames, from the area (the owner's) or C's buffer; 0 when out of memory. */
static int copy_frames(struct schedule *S, const struct coroutine *C, struct coroutine *copy)
{
	size_t n = unwound_bytes(S, C);
	copy->frames = (char *)malloc(n > 0 ? n : 1);
	if (copy->frames == NULL)
		return 0;
	memcpy(copy->frames, C == S->owner ? S->frames : C->frames, n);
	return 1;
}

/* Main's C stack bounds (the resumer's), which -sSTACK_OVERFLOW_CHECK=2 checks after a switch. */
static void note_main_stack(struct schedule *S)
{
	S->main.fiber.stack_base = (void *)emscripten_stack_get_base();
	S->main.fiber.stack_limit = (void *)emscripten_stack_get_end();
}

/* The asyncify areas, low in the guard: Asyncify checks an area's end after writing past it. */
static_assert(2 * ASYNCIFY_SIZE <= GUARD_SIZE / 2, "the asyncify areas must leave most of the guard free");

static void make_frames(struct schedule *S)
{
	S->frames = mapping_of(S);
	emscripten_fiber_init_from_current_context(&S->main.fiber, S->frames + ASYNCIFY_SIZE, ASYNCIFY_SIZE);
	emscripten_fiber_init_from_current_context(&S->finished_context.fiber, S->frames, ASYNCIFY_SIZE);
	fiber_hooks(ASYNCIFY_SIZE);
}
#else
static void hand_over_frames(struct schedule *, struct coroutine *) {}
static int copy_frames(struct schedule *, const struct coroutine *, struct coroutine *) { return 1; }
static void note_main_stack(struct schedule *) {}
static void make_frames(struct schedule *) {}
#endif

/* ---- The ucontext entry: linking to the resumer ----------------------------
 * With ucontext a coroutine's first frame would return into glibc's start routine, whose unwind
 * entry ends the chain.  On x86_64 and aarch64 makecontext's function is instead the library's
 * coroutine_start_context (see asm_switch.S's top), whose frame-pointer register points at
 * S->resumer_frame, a record of main's frame pointer and resume address, which main's switch to a
 * coroutine writes first (coroutine_swapcontext_noting, getcontext's under ASan, then jumps on to
 * the real one).  Its unwind entry finds main's registers at glibc's mcontext offsets (checked
 * below) and names the forced unwinding's personality.  It drops makecontext's return address. */
#if UCONTEXT_LINK
/* Where the record lies in S, and the words of S->main it copies. */
#if defined(__x86_64__)
#define RESUMER_FRAME 968 /* sizeof(ucontext_t): right after main */
static_assert(offsetof(ucontext_t, uc_mcontext.gregs) == 40 && REG_R12 == 4 && REG_R15 == 7 && REG_RBP == 10 &&
		      REG_RBX == 11 && REG_RSP == 15 && REG_RIP == 16,
	      "the ucontext entry's unwind entry reads glibc's x86_64 mcontext at these offsets");
#ifdef __CET__
#define UC_ENTRY_MARK "	endbr64\n"
#endif
#else
#define RESUMER_FRAME 4560
static_assert(offsetof(ucontext_t, uc_mcontext.regs) == 184 && offsetof(ucontext_t, uc_mcontext.sp) == 432 &&
		      offsetof(ucontext_t, uc_mcontext.__reserved) == 464,
	      "the ucontext entry's unwind entry reads glibc's aarch64 mcontext at these offsets");
#ifdef __ARM_FEATURE_BTI_DEFAULT
#define UC_ENTRY_MARK "	hint	#34\n" /* bti c: see asm_switch.S */
#endif
#endif
#ifndef UC_ENTRY_MARK
#define UC_ENTRY_MARK
#endif
static_assert(offsetof(struct schedule, resumer_frame) == RESUMER_FRAME, "RESUMER_FRAME is where the record lies");
#define STRINGIFY(x) #x
#define TEXT(x) STRINGIFY(x)

/* The entry's opening (hidden, as asm_switch.S's), unwind entry opening, closing.  UC_SAVED_AT is
 * asm_switch.S's SAVED_AT: main's register col at S + at (reg points at S + RESUMER_FRAME). */
#define UC_ENTRY_OPENS                                                                                        \
	"	.text\n	.globl	coroutine_start_context\n	.hidden	coroutine_start_context\n"                   \
	"	.type	coroutine_start_context, %function\n	.p2align 4\ncoroutine_start_context:\n" UC_ENTRY_MARK
#define UC_UNWIND_ENTRY_OPENS "	.cfi_startproc\n	.cfi_personality 0x1b, coroutine_personality\n"
#define UC_ENTRY_CLOSES "	.cfi_endproc\n	.size	coroutine_start_context, .-coroutine_start_context\n"
/* And the two functions that write the record, then jump to swapcontext and getcontext. */
#define UC_NOTING_OPENS ".macro UC_NOTING name, function\n	.text\n	.globl	\\name\n	.hidden	\\name\n" \
	"	.type	\\name, %function\n	.p2align 4\n\\name:\n	.cfi_startproc\n"
#define UC_NOTING_CLOSES "	.cfi_endproc\n	.size	\\name, .-\\name\n.endm\n" \
	"UC_NOTING coroutine_swapcontext_noting, swapcontext\nUC_NOTING coroutine_getcontext_noting, getcontext\n"
__asm__(".macro UC_SAVED_AT col, reg, at\n"
	"	.cfi_escape 0x10, \\col, 3, 0x70 + \\reg, ((\\at - " TEXT(RESUMER_FRAME) ") & 0x7f) | 0x80, "
	"((\\at - " TEXT(RESUMER_FRAME) ") >> 7) & 0x7f\n"
	".endm\n");

#if defined(__x86_64__)
/* Entered as a function (its return address, the start routine's, dropped), S's halves in edi and
 * esi, passed on; main's registers are S->main's gregs[REG_...]: 40 + 8 * REG_.... */
__asm__(UC_ENTRY_OPENS
	"	pop	%rax\n"
	"	mov	%esi, %eax\n"
	"	shl	$32, %rax\n"
	"	mov	%edi, %ecx\n"
	"	or	%rcx, %rax\n" /* S, from its halves */
	"	lea	" TEXT(RESUMER_FRAME) "(%rax), %rbp\n"
	UC_UNWIND_ENTRY_OPENS
	"	.cfi_def_cfa rsp, 0\n"
	"	UC_SAVED_AT 7, 6, 40+8*15\n" /* rsp */
	"	UC_SAVED_AT 16, 6, 40+8*16\n" /* rip */
	"	UC_SAVED_AT 6, 6, 40+8*10\n"  /* rbp */
	"	UC_SAVED_AT 3, 6, 40+8*11\n"  /* rbx */
	"	.irp n, 12, 13, 14, 15\n"     /* r12-r15 */
	"	UC_SAVED_AT \\n, 6, 40+8*(\\n-8)\n"
	"	.endr\n"
	"	call	run_coroutine_ucontext\n"
	"	ud2\n" UC_ENTRY_CLOSES);

/* The record, from main's frame pointer and the return address atop the stack (from: &S->main). */
__asm__(UC_NOTING_OPENS
	"	mov	%rbp, " TEXT(RESUMER_FRAME) "(%rdi)\n"
	"	mov	(%rsp), %rax\n"
	"	mov	%rax, " TEXT(RESUMER_FRAME) "+8(%rdi)\n"
	"	jmp	\\function@PLT\n" UC_NOTING_CLOSES);
#else
/* Entered with S's halves in w0 and w1 (passed on), the start routine in x30; main's x19-x28 are
 * S->main's regs[] (184 + 8 * n), sp at 432, d8-d15 in __reserved's FP record (480 + 16 * n). */
__asm__(UC_ENTRY_OPENS
	"	mov	w2, w0\n"
	"	orr	x2, x2, x1, lsl #32\n"
	"	mov	x3, #" TEXT(RESUMER_FRAME) "\n"
	"	add	x29, x2, x3\n"
	UC_UNWIND_ENTRY_OPENS
	"	.cfi_def_cfa sp, 0\n"
	"	UC_SAVED_AT 31, 29, 432\n"
	"	UC_SAVED_AT 29, 29, " TEXT(RESUMER_FRAME) "\n"
	"	UC_SAVED_AT 30, 29, " TEXT(RESUMER_FRAME) "+8\n"
	"	.irp n, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28\n"
	"	UC_SAVED_AT \\n, 29, 184+8*\\n\n"
	"	.endr\n"
	"	.irp n, 8, 9, 10, 11, 12, 13, 14, 15\n"
	"	UC_SAVED_AT 64+\\n, 29, 480+16*\\n\n"
	"	.endr\n"
	"	bl	run_coroutine_ucontext\n"
	"	brk	#0x3e8\n" UC_ENTRY_CLOSES);

/* The record, from main's x29 and x30 (its return address), in from's S (from is &S->main). */
__asm__(UC_NOTING_OPENS
	"	mov	x16, #" TEXT(RESUMER_FRAME) "\n"
	"	add	x16, x0, x16\n"
	"	stp	x29, x30, [x16]\n"
	"	b	\\function\n" UC_NOTING_CLOSES);
#endif
static void end_frame_chain(context *) {}
#elif !COROUTINE_ASM && !COROUTINE_FIBER
/* Without the entry a new context's frame pointer is 0: no stale link into main's stack. */
static void end_frame_chain(context *ctx)
{
#if defined(__GLIBC__) && defined(__i386__)
	ctx->uc_mcontext.gregs[REG_EBP] = 0;
#elif defined(__GLIBC__) && defined(__arm__)
	ctx->uc_mcontext.arm_fp = 0; /* r11, ARM code's frame pointer */
	ctx->uc_mcontext.arm_r7 = 0; /* Thumb code's */
#elif defined(__GLIBC__) && defined(__riscv)
	ctx->uc_mcontext.__gregs[REG_S0] = 0;
#else
	(void)ctx;
#endif
}
#endif

/* ---- The context switch: starting a coroutine, per backend -------------- */
#if COROUTINE_ASM
static void start_coroutine(struct schedule *S, struct coroutine *C)
{
	(void)C;
#if defined(_WIN32)
	char *top = top_of(S, C);
	coroutine_start_context(&S->main, top, run_coroutine, finish_coroutine, S, top - STACK_SIZE, mapping_of(S));
#else
	coroutine_start_context(&S->main, top_of(S, C), run_coroutine, finish_coroutine, S);
#endif
}
#elif COROUTINE_FIBER
static void enter_fiber(void *S)
{
	run_coroutine((struct schedule *)S, NULL);
	finish_coroutine((struct schedule *)S);
}

static void start_coroutine(struct schedule *S, struct coroutine *C)
{
	emscripten_fiber_init(&C->ctx.fiber, enter_fiber, S, S->stack, STACK_SIZE, S->frames, ASYNCIFY_SIZE);
	SWITCH_CONTEXT(&S->main, &C->ctx);
}
#else
/* makecontext passes only ints: S goes in halves (via coroutine_start_context with the link). */
extern "C" __attribute__((visibility("hidden"))) void run_coroutine_ucontext(uint32_t low, uint32_t high)
{
	struct schedule *S = (struct schedule *)(((uintptr_t)high << 16 << 16) | low);
	run_coroutine(S, NULL);
	finish_coroutine(S);
}
#if UCONTEXT_LINK
extern "C" void coroutine_start_context(void);
#define UCONTEXT_ENTRY coroutine_start_context
#else
#define UCONTEXT_ENTRY run_coroutine_ucontext
#endif

/* glibc's makecontext on x86 puts words above its entry's return address (uc_link, padding; on i386
 * the arguments), read no more: TOP_ROOM keeps them out of every slice, if they fit. */
static int entry_below_top(const char *top, const context *ctx)
{
#if TOP_ROOM > 0 && defined(__x86_64__)
	return (char *)ctx->uc_mcontext.gregs[REG_RSP] + sizeof(void *) <= top;
#elif TOP_ROOM > 0
	return (char *)ctx->uc_mcontext.gregs[REG_ESP] + sizeof(void *) <= top;
#else
	return (void)top, (void)ctx, 1;
#endif
}

/* A new coroutine starts with main's MXCSR (saved here), as with asm. */
static void start_coroutine(struct schedule *S, struct coroutine *C)
{
	uintptr_t ptr = (uintptr_t)S;
	getcontext(&C->ctx);
	end_frame_chain(&C->ctx);
	save_mxcsr(&C->ctx);
	C->ctx.uc_stack.ss_sp = top_of(S, C) - STACK_SIZE;
	C->ctx.uc_stack.ss_size = (size_t)STACK_SIZE + TOP_ROOM;
	C->ctx.uc_link = NULL;
	makecontext(&C->ctx, (void (*)(void))UCONTEXT_ENTRY, 2, (uint32_t)ptr, (uint32_t)(ptr >> 16 >> 16));
	if (!entry_below_top(top_of(S, C), &C->ctx))
		fail("coroutine_resume: this C library's makecontext puts more than %d bytes above "
		     "its entry (TOP_ROOM in coroutine.cpp)", TOP_ROOM);
	SWITCH_FROM_MAIN(S, &C->ctx);
}
#endif

/* ---- The context of a copy, per backend ------------------------------------
 * coroutine_clone copies a context byte for byte: what points into it must point into the copy. */
#if COROUTINE_ASM
/* Plain words, the copy's too: registers pointing into the run stack (where the copy's slice lies),
 * the heap or the code; on Windows also the TIB's words, its exception list (-1, or its frames). */
static void rebase_copied_context(context *, const context *) {}
#elif COROUTINE_FIBER
/* Pointers into the run stack, or the area where hand_over_frames puts the copy's frames: alike. */
static void rebase_copied_context(context *, const context *) {}
#elif defined(__APPLE__) || (defined(__GLIBC__) && (defined(__x86_64__) || defined(__i386__)))
/* p, if it points into the context *from, at the same place in *to. */
static void *rebased(void *p, const context *from, context *to)
{
	uintptr_t offset = (uintptr_t)p - (uintptr_t)from;
	return offset < sizeof *from ? (char *)to + offset : p;
}

/* swapcontext restores the FP state through a pointer getcontext aims into the context (glibc's on
 * x86: the x87 control word, long double's rounding; macOS's): a copy would use its original's. */
static void rebase_copied_context(context *copy, const context *original)
{
#if defined(__APPLE__)
	copy->uc_mcontext = (mcontext_t)rebased(copy->uc_mcontext, original, copy);
#else
	copy->uc_mcontext.fpregs = (fpregset_t)rebased(copy->uc_mcontext.fpregs, original, copy);
#endif
}
#else
/* glibc keeps the FP state inside uc_mcontext on aarch64, armv7 and riscv64: a copy is right. */
static void rebase_copied_context(context *, const context *) {}
#endif

/* ---- Slices in their blocks, and the quick paths of a shallow one ------- */
/* The stack pointer's alignment at every call: 16 on the 64-bit targets, else a pointer's size. */
#if defined(__x86_64__) || defined(__aarch64__)
#define CALL_ALIGN 16
#else
#define CALL_ALIGN sizeof(void *)
#endif
#define BLOCK 16 /* slices are whole blocks of this many bytes (see copy_shallow) */

/* The bottom of dummy's function's live slice: up to CALL_ALIGN, shedding its frame (dead once it
 * returns), then down to a block.  Laundered: no compiler may assume one byte is read. */
static char *slice_bottom(char *dummy)
{
	uintptr_t rounded = ((uintptr_t)dummy + CALL_ALIGN - 1) & ~(uintptr_t)(CALL_ALIGN - 1);
	return launder((char *)(rounded & ~(uintptr_t)(BLOCK - 1)));
}

static char *saved_slice(struct coroutine *C) { return (char *)(C + 1); }

/* A deep slice lies as far into a 64-byte line as on the run stack: memcpy's ends align alike. */
static char *saved_deep_slice(struct coroutine *C, const char *bottom)
{
	char *start = saved_slice(C);
	return start + (((uintptr_t)bottom - (uintptr_t)start) & (SLICE_ALIGN - 1));
}

/* Whether a slice is shallow (a block to SHALLOW_SLICE); how much of one room bytes hold (room). */
#if SHALLOW_SLICE > 0
static int is_shallow(size_t size) { return size - 1 < SHALLOW_SLICE; }

static unsigned char shallow_room(size_t room)
{
	static_assert(SHALLOW_SLICE <= UCHAR_MAX, "C->room holds up to SHALLOW_SLICE");
	return (unsigned char)(room < SHALLOW_SLICE ? room : SHALLOW_SLICE);
}
#else
static int is_shallow(size_t) { return 0; }
static unsigned char shallow_room(size_t) { return 0; }
#endif

/* Bytes after the struct for a slice of size bytes (a deep one lies up to SLICE_ALIGN - 1 in). */
static size_t room_for_slice(size_t size) { return is_shallow(size) ? size : size + SLICE_ALIGN - 1; }

/* Where C's block holds a slice with that bottom on the run stack: the same at save and restore. */
static char *slice_in_block(struct coroutine *C, const char *bottom, size_t size)
{
	return is_shallow(size) ? saved_slice(C) : saved_deep_slice(C, bottom);
}

/* A block as two words in integer registers: a yielding slice's bottom block, just written a word
 * each by the call to coroutine_yield and its push (a wider load would wait for both). */
static ALWAYS_INLINE void copy_words(char *to, const char *from)
{
	uint64_t low, high;
	static_assert(BLOCK == 2 * sizeof low, "a block is two 64-bit words");
	memcpy(&low, from, sizeof low);
	memcpy(&high, from + sizeof low, sizeof high);
	KEEP_IN_REGISTERS(low, high);
	memcpy(to, &low, sizeof low);
	memcpy(to + sizeof low, &high, sizeof high);
}

/* Any other block, in one move where there is one: its loads read a block store's or old bytes. */
static ALWAYS_INLINE void copy_block(char *to, const char *from)
{
#if defined(HAVE_COPY_16)
	copy_16(to, from);
#else
	copy_words(to, from);
#endif
}

/* A shallow slice, 1 to 6 blocks, with no loop or call (its callers need no frame): a jump into a
 * run of block copies (Duff's device).  Leaving the run stack, the bottom block goes by words. */
static ALWAYS_INLINE void copy_shallow(char *to, const char *from, size_t n, bool bottom_by_words)
{
	static_assert(SHALLOW_SLICE <= 6 * BLOCK, "copy_shallow copies at most 6 blocks");
	switch (n / BLOCK) {
	case 6: copy_block(to + 5 * BLOCK, from + 5 * BLOCK); /* fall through */
	case 5: copy_block(to + 4 * BLOCK, from + 4 * BLOCK); /* fall through */
	case 4: copy_block(to + 3 * BLOCK, from + 3 * BLOCK); /* fall through */
	case 3: copy_block(to + 2 * BLOCK, from + 2 * BLOCK); /* fall through */
	case 2: copy_block(to + BLOCK, from + BLOCK);         /* fall through */
	case 1:
		if (bottom_by_words)
			copy_words(to, from);
		else
			copy_block(to, from);
		break;
	default: UNREACHABLE(); /* the callers see to it: 1 to 6 blocks */
	}
}

/* Any slice, unchecked by ASan (it holds the redzones); volatile, or it becomes memcpy. */
NO_ASAN static void copy_slice(char *to, const char *from, size_t n)
{
#if COROUTINE_ASAN
	const volatile char *src = from;
	for (size_t i = 0; i < n; i++)
		to[i] = src[i];
#else
	memcpy(to, from, n);
#endif
}

/* The owner, its block grown for size bytes of slice, or NULL; realloc moves slot and S->owner. */
NOINLINE static struct coroutine *with_room_for(struct schedule *S, size_t size)
{
	struct coroutine *C = S->owner;
	size_t room = room_for_slice(size);
	if (buffer_capacity(C) - sizeof *C >= room)
		return C;
	C = (struct coroutine *)realloc(C, sizeof *C + room);
	if (C == NULL)
		return NULL;
	C->room = shallow_room(buffer_capacity(C) - sizeof *C);
	S->co[S->running] = C;
	S->owner = C;
	return C;
}

#if SHALLOW_SLICE > 0
/* save_slice's common case: a shallow slice that C's block holds (unsigned, a bottom off the stack
 * never fits), saved with no frame (a block smaller; x86_64's dummy in the red zone); else NULL. */
NOINLINE NO_ASAN static context *save_slice_quickly(struct schedule *S, struct coroutine *C)
{
	char dummy; /* only its address counts */
	char *bottom = slice_bottom(&dummy);
	size_t size = (uintptr_t)top_of(S, C) - (uintptr_t)bottom;
	if (size - 1 >= C->room)
		return NULL;
	C->size = (unsigned)size;
	copy_shallow(saved_slice(C), bottom, size, true);
	return &C->ctx;
}
#else
static context *save_slice_quickly(struct schedule *, struct coroutine *) { return NULL; }
#endif

/* take_run_stack's common case: a shallow slice, no tool watching (S->quick_put_back says both: a
 * slice is never empty); frameless and ending with the switch, so coroutine_resume is too. */
static ALWAYS_INLINE void take_run_stack_quickly(struct schedule *S, struct coroutine *C)
{
	size_t size = C->size; /* as wide as S->quick_put_back: no conversion */
	if (SHALLOW_SLICE == 0 || size > S->quick_put_back) {
		take_run_stack(S, C);
		return;
	}
	copy_shallow(top_of(S, C) - size, saved_slice(C), size, false);
	S->owner = C;
	continue_owner(S);
}

/* ---- AddressSanitizer and valgrind -------------------------------------- */
#if COROUTINE_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>

/* ASan must hear of each move to another stack, or it takes the run stack for a wild overflow. */
static thread_local struct schedule *asan_resumed; /* the schedule this thread resumed last */

static void asan_leave_main(struct schedule *S)
{
	asan_resumed = S;
	__sanitizer_start_switch_fiber(&S->main_fake_stack, S->top - RUN_STACKS_SPAN, RUN_STACKS_SPAN);
}

static void asan_back_in_main(struct schedule *S)
{
	__sanitizer_finish_switch_fiber(S->main_fake_stack, NULL, NULL);
}

/* Main goes on on its own stack after all (asm: see carry_out_from_switch), a leave that the
 * asan_back_in_main after its switch finishes.  A macro: other builds never use it. */
#define ASAN_STAY_IN_MAIN(S) __sanitizer_start_switch_fiber(&(S)->main_fake_stack, (S)->main_bottom, (S)->main_size)

static void asan_enter_coroutine(struct schedule *S, struct coroutine *C)
{
	__sanitizer_finish_switch_fiber(C ? C->fake_stack : NULL, &S->main_bottom, &S->main_size);
}

static void asan_leave_coroutine(struct schedule *S, struct coroutine *C)
{
	__sanitizer_start_switch_fiber(C ? &C->fake_stack : NULL, S->main_bottom, S->main_size);
}

static void asan_back_in_coroutine(void) { asan_enter_coroutine(asan_resumed, asan_resumed->owner); }

/* detect_stack_use_after_return keeps locals in a "fake stack" per fiber, freed when it leaves for
 * good; for a coroutine freed while suspended, announced switches to it and away do that. */
NO_ASAN static void asan_free_fake_stack(struct schedule *S, struct coroutine *C)
{
	void *main_fake_stack;
	const void *bottom;
	size_t size;
	__sanitizer_start_switch_fiber(&main_fake_stack, S->top - RUN_STACKS_SPAN, RUN_STACKS_SPAN);
	__sanitizer_finish_switch_fiber(C->fake_stack, &bottom, &size);
	__sanitizer_start_switch_fiber(NULL, bottom, size);
	__sanitizer_finish_switch_fiber(main_fake_stack, NULL, NULL);
}

/* ASan's shadow byte of address: one describes 8 bytes (1 << scale). */
static unsigned char *shadow_of(const void *address, size_t *scale)
{
	size_t offset;
	__asan_get_shadow_mapping(scale, &offset);
	return (unsigned char *)(((uintptr_t)address >> *scale) + offset);
}

static char *slice_shadow(struct schedule *S, struct coroutine *C, size_t *n)
{
	size_t scale;
	char *top = top_of(S, C), *bottom = top - C->size;
	char *shadow = (char *)shadow_of(bottom, &scale);
	*n = ((uintptr_t)top >> scale) - ((uintptr_t)bottom >> scale);
	return shadow;
}

/* The live slice's shadow goes with its bytes: ASan still sees an overflow of a local that lived
 * across a yield.  Out of memory: 0 if the yield may fail, else it stops. */
NO_ASAN static int asan_save_shadow(struct schedule *S, struct coroutine *C, int may_fail)
{
	size_t n;
	const char *from = slice_shadow(S, C, &n);
	if (C->shadow == NULL || buffer_capacity(C->shadow) < n) {
		char *grown = (char *)malloc(n);
		if (grown == NULL && may_fail)
			return 0;
		if (grown == NULL)
			fail("%s: out of memory saving %zu bytes of ASan shadow", yield_name(may_fail), n);
		free(C->shadow);
		C->shadow = grown;
	}
	copy_slice(C->shadow, from, n);
	return 1;
}

NO_ASAN static void asan_restore_shadow(struct schedule *S, struct coroutine *C)
{
	size_t n;
	char *to = slice_shadow(S, C, &n);
	copy_slice(to, C->shadow, n);
}

static void asan_free_shadow(struct coroutine *C) { free(C->shadow); }

NO_ASAN static int points_into_fake_frame(void *fake_stack, const char *words, size_t size)
{
	uintptr_t word;
	void *begin, *end;
	for (size_t i = 0; i + sizeof word <= size; i += sizeof word) {
		memcpy(&word, words + i, sizeof word);
		if (__asan_addr_is_in_fake_stack(fake_stack, (void *)word, &begin, &end) != NULL)
			return 1;
	}
	return 0;
}

/* Whether suspended C keeps locals in a live frame of its fake stack, which its copy would share: a
 * word of the saved slice or registers points into it until its function returns. */
static int asan_keeps_fake_frames(struct schedule *S, struct coroutine *C)
{
	return C->fake_stack != NULL
	    && (points_into_fake_frame(C->fake_stack, slice_in_block(C, top_of(S, C) - C->size, C->size), C->size)
		|| points_into_fake_frame(C->fake_stack, (const char *)&C->ctx, sizeof C->ctx));
}

/* The copy's own saved shadow (ASan makes its fake stack when needed); 0 when out of memory. */
NO_ASAN static int asan_copy_shadow(struct schedule *S, const struct coroutine *C, struct coroutine *copy)
{
	size_t n;
	slice_shadow(S, copy, &n);
	copy->shadow = (char *)malloc(n);
	if (copy->shadow == NULL)
		return 0;
	copy_slice(copy->shadow, C->shadow, n);
	return 1;
}
#else
static void asan_leave_main(struct schedule *) {}
static void asan_back_in_main(struct schedule *) {}
#define ASAN_STAY_IN_MAIN(S) ((void)(S))
#define ASAN_UNPOISON_MEMORY_REGION(bottom, size) ((void)(bottom), (void)(size)) /* the header's, without ASan */
static void asan_enter_coroutine(struct schedule *, struct coroutine *) {}
static void asan_leave_coroutine(struct schedule *, struct coroutine *) {}
static void asan_back_in_coroutine(void) {}
static void asan_free_fake_stack(struct schedule *, struct coroutine *) {}
static int asan_save_shadow(struct schedule *, struct coroutine *, int) { return 1; }
static void asan_restore_shadow(struct schedule *, struct coroutine *) {}
static void asan_free_shadow(struct coroutine *) {}
static int asan_keeps_fake_frames(struct schedule *, struct coroutine *) { return 0; }
static int asan_copy_shadow(struct schedule *, const struct coroutine *, struct coroutine *) { return 1; }
#endif

/* Whether a tool watches the run stack (forget_run_stack has someone to tell), asked once: a
 * request costs even when nothing answers.  GET_VBITS returns 1 under memcheck, else 0.  The
 * registered stack: so that valgrind tells a switch from a huge frame. */
#if COROUTINE_VALGRIND
static int tools_register_run_stack(struct schedule *S)
{
	S->valgrind_stack_id = VALGRIND_STACK_REGISTER(S->top - RUN_STACKS_SPAN, S->top);
	char probe = 0, vbits;
	S->memcheck = VALGRIND_GET_VBITS(&probe, &vbits, 1) == 1;
	return COROUTINE_ASAN || S->memcheck;
}

/* Out of line: the request builds its arguments in a frame of its own. */
NOINLINE static void memcheck_forget_run_stack(struct schedule *S)
{
	VALGRIND_MAKE_MEM_UNDEFINED(S->top - RUN_STACKS_SPAN, RUN_STACKS_SPAN);
}
#define MEMCHECK_WATCHES(S) ((S)->memcheck)
#define VALGRIND_FORGET_SCHEDULE(S) VALGRIND_STACK_DEREGISTER((S)->valgrind_stack_id)
#else
static int tools_register_run_stack(struct schedule *) { return COROUTINE_ASAN; }
static void memcheck_forget_run_stack(struct schedule *) {}
#define MEMCHECK_WATCHES(S) ((void)(S), 0)
#define VALGRIND_FORGET_SCHEDULE(S) ((void)0)
#endif

/* The run stack's bytes are no one's: ASan's poison or memcheck's popped frames would report.
 * ASan's, span bytes below top: a start or resume's window (a memset of its shadow), close's all. */
static void forget_run_stack(struct schedule *S, char *top, size_t span)
{
	ASAN_UNPOISON_MEMORY_REGION(top - span, span);
	if (MEMCHECK_WATCHES(S))
		memcheck_forget_run_stack(S);
}

/* At close: a later mapping here must inherit no stale poison, nor valgrind's idea of a stack. */
static void tools_forget_schedule(struct schedule *S)
{
	forget_run_stack(S, S->top, RUN_STACKS_SPAN);
	VALGRIND_FORGET_SCHEDULE(S);
}

/* ---- The C++ exception state -----------------------------------------------
 * The runtime keeps the exceptions being handled per thread: main and each coroutine need their
 * own, or a coroutine that yields in a catch handler rethrows what the next one caught.  Until a C
 * program has a runtime, the thread's spare is swapped.  Of two (libstdc++ and libc++abi), the
 * first is swapped on the fast path, the other around the resume (resume_the_long_way). */
static thread_local struct eh_state spare_eh; /* a thread's state while no runtime is found */

#if !EH_MSVC_ABI
static void save_thread_eh(const struct eh_state *thread, struct eh_state *to) { *to = *thread; }
static void load_thread_eh(struct eh_state *thread, const struct eh_state *from) { *thread = *from; }
#else
/* vcruntime keeps three per-thread values: the exception being handled, its CPU context (what
 * `throw;` rethrows), the count not yet caught.  And each running catch handler links a record in
 * its frame into a per-thread chain, searched when a handler ends: a yield would leave a record
 * where another coroutine's bytes will lie, so the chain's head is swapped too. */
struct frame_info { void *exception_object; struct frame_info *next; };
extern "C" void **__cdecl __current_exception(void);
extern "C" void **__cdecl __current_exception_context(void);
extern "C" int *__cdecl __processing_throw(void);
extern "C" struct frame_info *__cdecl _CreateFrameInfo(struct frame_info *record, void *exception_object);
extern "C" void __cdecl _FindAndUnlinkFrame(struct frame_info *record);

/* Where the runtime keeps the thread's state, asked once per thread. */
struct eh_places { void **exception; void **context; int *processing_throw; };
static thread_local struct eh_places eh_places;

/* What linked_runtime returns only names the thread's state: the swaps below go to the places. */
static thread_local struct eh_state runtime_named;

static struct eh_state *linked_runtime(void)
{
	eh_places.exception = __current_exception();
	eh_places.context = __current_exception_context();
	eh_places.processing_throw = __processing_throw();
	return &runtime_named;
}

/* Makes head the head of the thread's chain of handler records, and returns the old one: a record
 * linked in reads the head (into its next), and unlinked, being the head, leaves its next there. */
static struct frame_info *chain_head(struct frame_info *head)
{
	struct frame_info record;
	struct frame_info *old = _CreateFrameInfo(&record, NULL)->next;
	record.next = head;
	_FindAndUnlinkFrame(&record);
	return old;
}

static void save_thread_eh(const struct eh_state *thread, struct eh_state *to)
{
	(void)thread;
	to->exception = *eh_places.exception;
	to->context = *eh_places.context;
	to->processing_throw = *eh_places.processing_throw;
	to->handlers = chain_head(NULL); /* read, by emptying it for a moment */
	chain_head(to->handlers);
}

static void load_thread_eh(struct eh_state *thread, const struct eh_state *from)
{
	(void)thread;
	*eh_places.exception = from->exception;
	*eh_places.context = from->context;
	*eh_places.processing_throw = from->processing_throw;
	chain_head(from->handlers);
}
#endif

/* Adds get to the runtimes found, unless NULL or one of them by another name (the same state). */
static void add_runtime(struct runtimes *found, eh_globals_func get)
{
	struct eh_state *state = get ? get() : NULL;
	if (state == NULL || found->n == MAX_RUNTIMES)
		return;
	for (int i = 0; i < found->n; i++)
		if (found->get[i]() == state)
			return;
	found->get[found->n++] = get;
}

struct more_runtimes { /* after S's first; each coroutine's state: saved[id * (MAX_RUNTIMES - 1) + k] */
	int n;
	eh_globals_func get[MAX_RUNTIMES - 1];
	struct eh_state *state[MAX_RUNTIMES - 1]; /* the schedule's thread's */
	int cap;
	struct eh_state *saved;
};

#define NO_THREAD UINT64_MAX /* no thread's: S with more runtimes takes resume_the_long_way */

/* S keeps runtime get's state, beside those it keeps; 0 when out of memory. */
static int keep_runtime(struct schedule *S, eh_globals_func get)
{
	struct eh_state *state = get();
	if (S->eh_runtime == NULL) {
		S->eh_runtime = get;
		S->eh = state;
		return 1;
	}
	struct more_runtimes *m = S->more;
	if (state == S->eh || (m != NULL && m->n == MAX_RUNTIMES - 1))
		return 1;
	for (int k = 0; m != NULL && k < m->n; k++)
		if (m->state[k] == state)
			return 1;
	if (m == NULL && (m = (struct more_runtimes *)calloc(1, sizeof *m)) == NULL)
		return 0;
	m->get[m->n] = get;
	m->state[m->n++] = state;
	S->more = m;
	S->fast_thread = NO_THREAD;
	return 1;
}

/* Makes S keep every runtime its thread finds (0: no memory).  Only from main, S idle: a runtime S
 * did not keep held main's state, which stays; coroutines' start empty. */
static int take_up_runtimes(struct schedule *S)
{
	const struct runtimes *found = runtimes_here();
	for (int i = 0; i < found->n; i++)
		if (!keep_runtime(S, found->get[i]))
			return 0;
	return 1;
}

/* A late runtime is taken up at a start, its state's first use; 1: S keeps several now. */
static int take_up_late_runtime(struct schedule *S)
{
	if (S->eh_runtime != NULL)
		return 0;
	if (!take_up_runtimes(S))
		fail("coroutine_resume: out of memory keeping a C++ runtime's exception state");
	return S->more != NULL;
}

/* At a resume main's state goes into S, and C's (saved at its last yield; none at its start) takes
 * its place; a yield saves C's and puts main's back.  S->eh is never NULL: no test. */
static void take_eh_state(struct schedule *S, const struct eh_state *own)
{
	save_thread_eh(S->eh, &S->main_eh);
	load_thread_eh(S->eh, own);
}

static void give_back_eh_state(struct schedule *S, struct coroutine *C)
{
	save_thread_eh(S->eh, &C->eh);
	load_thread_eh(S->eh, &S->main_eh);
}

static void drop_eh_state(struct schedule *S) { load_thread_eh(S->eh, &S->main_eh); } /* at a finish */

static int holds_exceptions(const struct eh_state *eh)
{
#if EH_MSVC_ABI
	return eh->exception != NULL || eh->processing_throw != 0 || eh->handlers != NULL;
#elif defined(__arm__) && !defined(__APPLE__)
	return eh->caught != NULL || eh->uncaught != 0 || eh->propagating != NULL;
#else
	return eh->caught != NULL || eh->uncaught != 0;
#endif
}

/* Whether suspended id yielded while handling or unwinding an exception, in any runtime S keeps. */
static int handles_exceptions(const struct schedule *S, int id)
{
	const struct more_runtimes *m = S->more;
	int held = holds_exceptions(&S->co[id]->eh);
	for (int k = 0; m != NULL && id < m->cap && k < m->n; k++)
		held |= holds_exceptions(&m->saved[(size_t)id * (MAX_RUNTIMES - 1) + k]);
	return held;
}

/* Copy id starts with no exception in later runtimes (no realloc: a resume may be under way). */
static void no_exceptions_in_more_runtimes(struct schedule *S, int id)
{
	struct more_runtimes *m = S->more;
	for (int k = 0; m != NULL && id < m->cap && k < MAX_RUNTIMES - 1; k++)
		m->saved[(size_t)id * (MAX_RUNTIMES - 1) + k] = no_exceptions;
}

static void make_room_for_more(struct schedule *S, struct more_runtimes *m)
{
	if (m->cap >= S->cap)
		return;
	size_t row = MAX_RUNTIMES - 1, old = (size_t)m->cap * row, n = (size_t)S->cap * row;
	struct eh_state *saved = (struct eh_state *)realloc(m->saved, n * sizeof *saved);
	if (saved == NULL)
		fail("coroutine_resume: out of memory keeping a C++ runtime's exception state");
	memset(saved + old, 0, (n - old) * sizeof *saved);
	m->saved = saved;
	m->cap = S->cap;
}

/* Later runtimes change hands around C's resume: main's state waits here, on main's stack. */
NOINLINE static void resume_keeping_more_runtimes(struct schedule *S, struct coroutine *C, int id)
{
	struct more_runtimes *m = S->more;
	struct eh_state mains[MAX_RUNTIMES - 1];
	make_room_for_more(S, m);
	struct eh_state *own = &m->saved[(size_t)id * (MAX_RUNTIMES - 1)];
	for (int k = 0; k < m->n; k++) {
		save_thread_eh(m->state[k], &mains[k]);
		load_thread_eh(m->state[k], C->status == COROUTINE_READY ? &no_exceptions : &own[k]);
	}
	if (C->status == COROUTINE_READY)
		start_ready(S, C, id);
	else
		resume_suspended(S, C, id);
	for (int k = 0; k < m->n; k++) {
		if (S->co[id] != &no_coroutine) /* suspended again */
			save_thread_eh(m->state[k], &own[k]);
		load_thread_eh(m->state[k], &mains[k]);
	}
}

static void ask_runtimes_on_this_thread(struct schedule *S)
{
	S->eh = S->eh_runtime ? S->eh_runtime() : &spare_eh;
	for (int k = 0; S->more != NULL && k < S->more->n; k++)
		S->more->state[k] = S->more->get[k]();
}

static void free_more_runtimes(struct schedule *S)
{
	if (S->more != NULL)
		free(S->more->saved);
	free(S->more);
}

/* ---- The process: what every schedule shares --------------------------------
 * A schedule joins the process at open, leaves at close: its thread's number, the C++ runtimes that
 * thread finds, a place on the list of open schedules, which lets a debugger find every schedule
 * and a fault tell whose run stack it hit (only open and close take its spin lock).  The first open
 * and last close start and stop what the process keeps for all (Windows' DLL load count, the
 * checked build's fault handler): a module that closes its schedules leaves nothing registered. */
static struct schedule *open_schedules; /* the last opened first */
static volatile long open_schedules_lock;

static int try_lock_open_schedules(void) { return atomic_swap(&open_schedules_lock, 1) == 0; }

static void lock_open_schedules(void) { while (!try_lock_open_schedules()) continue; }

static void unlock_open_schedules(void) { atomic_release(&open_schedules_lock); }

static void list_open_schedule(struct schedule *S)
{
	lock_open_schedules();
	if (open_schedules == NULL) {
		first_schedule_opened();
		watch_run_stacks();
	}
	S->prev_open = NULL;
	S->next_open = open_schedules;
	if (open_schedules != NULL)
		open_schedules->prev_open = S;
	open_schedules = S;
	unlock_open_schedules();
}

static void unlist_closed_schedule(struct schedule *S)
{
	lock_open_schedules();
	if (S->prev_open != NULL)
		S->prev_open->next_open = S->next_open;
	else
		open_schedules = S->next_open;
	if (S->next_open != NULL)
		S->next_open->prev_open = S->prev_open;
	if (open_schedules == NULL) {
		last_schedule_closed();
		stop_watching_run_stacks();
	}
	unlock_open_schedules();
}

/* S joins (never under Windows' loader lock); 0: out of memory, having left again. */
static int join_process(struct schedule *S)
{
	refuse_under_loader_lock("coroutine_open");
	S->thread = S->fast_thread = this_thread();
	ask_runtimes_on_this_thread(S); /* none yet: the thread's spare */
	list_open_schedule(S); /* before take_up_runtimes looks for them */
	if (take_up_runtimes(S))
		return 1;
	leave_process(S);
	return 0;
}

static void leave_process(struct schedule *S)
{
	refuse_under_loader_lock("coroutine_close");
	unlist_closed_schedule(S);
	free_more_runtimes(S);
}

/* A thread's number, given at its first use and to no other: a later thread may get an ended one's
 * thread-locals.  Aligned to its size, which i386's ABI does not promise a uint64_t. */
alignas(8) static uint64_t threads_numbered;

static uint64_t this_thread(void)
{
	if (thread_number == 0)
		thread_number = atomic_increment(&threads_numbered);
	return thread_number;
}

/* Compilers keep thread-local addresses across a call (errno's __errno_location is const): a
 * coroutine must resume on its thread.  A schedule resumed on another moves there: those suspended
 * on the old one become SUSPENDED_ELSEWHERE, marked with it, those marked with this one SUSPEND. */
NOINLINE static void move_to_this_thread(struct schedule *S)
{
	uint64_t here = this_thread();
	if (S->owner != NULL) { /* suspended on the old thread: resumed there, put back */
		hand_over_frames(S, NULL);
		S->owner = NULL;
	}
	for (int i = 0; i < S->cap; i++) {
		struct coroutine *C = S->co[i]; /* no_coroutine: DEAD */
		if (C->status == COROUTINE_SUSPEND) {
			C->status = SUSPENDED_ELSEWHERE;
			C->thread = S->thread;
		} else if (C->status == SUSPENDED_ELSEWHERE && C->thread == here) {
			C->status = COROUTINE_SUSPEND;
		}
	}
	S->thread = here;
	S->fast_thread = S->more ? NO_THREAD : here;
	ask_runtimes_on_this_thread(S);
	if (!take_up_runtimes(S))
		fail("coroutine_resume: out of memory keeping a C++ runtime's exception state");
}

/* ---- Ending a coroutine early: forced unwinding ----------------------------
 * coroutine_delete ends a suspended coroutine as a thread is cancelled: resumed one last time, its
 * yield calls unwind_coroutine (asm makes the saved context call it; with ucontext, whose contexts
 * are the C library's, the yield tests a flag).  That starts a forced unwind, which runs the
 * destructors and cleanup attributes of the coroutine's frames, innermost first, up to its start,
 * where it finishes as if its function had returned.  The Itanium C++ ABI's unwinder does it with
 * _Unwind_ForcedUnwind and a stop function, as pthread_cancel does: a catch (...) on the way is
 * entered (one that swallows the unwinding ends the coroutine); Windows unwinds with RtlUnwindEx.
 * With no unwinder (a C program that links none), or on wasm, the coroutine is freed where it lies;
 * a frame without unwind tables ends the walk as the start would.  What the unwinding needs lives
 * in coroutine_delete's frame (S->unwinding), on main's stack. */
#define FORCED_UNWIND (!COROUTINE_FIBER) /* WebAssembly: no unwinder the library could call */

#if COROUTINE_ASM
extern "C" void coroutine_call_in_context(void);

/* ctx, when switched to, calls f with that switch's from and to, as if its resume address had
 * (coroutine_call_in_context finds both below its stack pointer): no test on its way back. */
static void call_in_context(context *ctx, void (*f)(void *from, void *to))
{
	void **sp = (void **)ctx->word[CONTEXT_SP] - 2;
	sp[0] = (void *)f;
	sp[1] = ctx->word[CONTEXT_PC];
	ctx->word[CONTEXT_SP] = sp;
	ctx->word[CONTEXT_PC] = (void *)coroutine_call_in_context;
}

/* Main, back from a coroutine's switch (to: &S->main, at S), first carries out the ends asked. */
static void carry_out_from_switch(void *from, void *to)
{
	struct schedule *S = (struct schedule *)to;
	(void)from;
	asan_back_in_main(S);
	carry_out_asked_ends(S);
	ASAN_STAY_IN_MAIN(S); /* the code it goes back to says main is back */
}

static void carry_out_when_main_is_back(struct schedule *S) { call_in_context(&S->main, carry_out_from_switch); }
static void carry_out_if_asked(struct schedule *) {}
#else
static void carry_out_when_main_is_back(struct schedule *S) { S->carry_out_when_back = 1; }

NOINLINE static void carry_out_now_back(struct schedule *S)
{
	S->carry_out_when_back = 0;
	carry_out_asked_ends(S);
}

static ALWAYS_INLINE void carry_out_if_asked(struct schedule *S)
{
	if (S->carry_out_when_back)
		carry_out_now_back(S);
}
#endif

#if FORCED_UNWIND && COROUTINE_ASM
/* The coroutine, resumed (from: &S->main, at S's address), unwinds. */
static void unwind_from_switch(void *from, void *to)
{
	(void)to;
	unwind_coroutine((struct schedule *)from);
}

/* C's context made to unwind; its slice put back first (call_in_context writes below it). */
static void unwind_at_resume(struct schedule *S, struct coroutine *C, int id)
{
	S->running = id;
	run_stack_in_reach(S);
	if (S->owner != C)
		put_back_slice(S, C);
	S->running = -1;
	call_in_context(&C->ctx, unwind_from_switch);
}
#elif FORCED_UNWIND
/* The yield, back from its switch, finds it so (see UNWIND_IF_DELETED): it is the first back. */
static void unwind_at_resume(struct schedule *S, struct coroutine *, int) { resumed_to_unwind = S; }
#endif

#if FORCED_UNWIND && defined(_WIN32)
/* Windows: RtlUnwindEx runs each frame's handler (destructors: vcruntime's, or libgcc's for g++'s
 * frames) up to the start trampoline's frame (top - 48: its null return address at top - 8, then 40
 * bytes; entry's return address just below), where it calls finish(S).  g++'s frames run a cleanup
 * by raising their own exception into it, which resumes the unwinding with _Unwind_Resume: our
 * _Unwind_Exception, as after a throw's search, holds the trampoline's frame as the handler's; a
 * rethrowing catch (...) goes on as a forced unwind (libgcc keeps its stop function).  The code is
 * g++'s: only its handler takes these. */
#if EH_MSVC_ABI
/* longjmp's: vcruntime's handler of a function built with /EHs runs its destructors for it too. */
#define UNWINDING_CODE 0x80000026u /* STATUS_LONGJUMP, with no jump buffer */
#else
#include <unwind.h>
#define UNWINDING_CODE 0x20474343u /* libgcc's STATUS_GCC_THROW */
#endif
#define TRAMPOLINE_FRAME 48

struct unwinding {
#if !EH_MSVC_ABI
	struct _Unwind_Exception exception; /* first: see end_where_swallowed */
#endif
	struct schedule *S;
	int id;
	EXCEPTION_RECORD record;
	CONTEXT context;
};

/* Never returns: the unwinding goes on at the trampoline. */
static void unwind_frames(struct schedule *S, struct unwinding *u)
{
	char *frame = top_of(S, S->co[S->running]) - TRAMPOLINE_FRAME;
	void *returned = *(void **)(frame - sizeof(void *));
	memset(&u->record, 0, sizeof u->record);
	u->record.ExceptionCode = UNWINDING_CODE;
#if !EH_MSVC_ABI
	u->record.NumberParameters = 4;
	u->record.ExceptionInformation[0] = (ULONG_PTR)&u->exception;
	u->exception.private_[1] = (_Unwind_Ptr)frame;
	u->exception.private_[2] = (_Unwind_Ptr)returned;
	u->exception.private_[3] = 0;
	u->exception.private_[4] = (_Unwind_Ptr)S; /* the stop function's argument */
	u->record.ExceptionInformation[1] = (ULONG_PTR)frame;
	u->record.ExceptionInformation[2] = (ULONG_PTR)returned;
#endif
	RtlUnwindEx(frame, returned, &u->record, NULL, &u->context, NULL);
}

/* vcruntime runs a throw's destructors inside its RtlUnwindEx: unwound through that unwinding, a
 * coroutine waiting in one would run it again (Wine's does), so it is freed as it lies. */
static int can_unwind(const struct coroutine *C)
{
#if EH_MSVC_ABI
	return C->eh.processing_throw == 0;
#else
	return (void)C, 1;
#endif
}

#if !EH_MSVC_ABI
static _Unwind_Reason_Code unwind_on(int, _Unwind_Action, _Unwind_Exception_Class, struct _Unwind_Exception *,
				     struct _Unwind_Context *, void *S)
{
	unwind_frames((struct schedule *)S, ((struct schedule *)S)->unwinding);
	return _URC_FATAL_PHASE2_ERROR; /* not reached */
}
#endif
#elif FORCED_UNWIND
/* The Itanium ABI's unwinder: linked (weak reference) or found at run time (Apple: libSystem). */
#include <unwind.h>
#if !defined(__APPLE__)
extern "C" _Unwind_Reason_Code _Unwind_ForcedUnwind(struct _Unwind_Exception *, _Unwind_Stop_Fn, void *) WEAK;
#endif
typedef _Unwind_Reason_Code (*forced_unwind_func)(struct _Unwind_Exception *, _Unwind_Stop_Fn, void *);

static forced_unwind_func unwinder(void)
{
#if !defined(__APPLE__)
	if (!_Unwind_ForcedUnwind)
		return (forced_unwind_func)runtimes_here()->unwind;
#endif
	return _Unwind_ForcedUnwind;
}

struct unwinding {
	struct _Unwind_Exception exception; /* first: see end_where_swallowed */
	struct schedule *S;
	int id;
	forced_unwind_func unwind;
};

/* Called for every frame, and past the last (the stack's end), where the coroutine finishes. */
static _Unwind_Reason_Code finish_at_the_end(int, _Unwind_Action actions, _Unwind_Exception_Class,
					     struct _Unwind_Exception *, struct _Unwind_Context *, void *S)
{
	if (actions & _UA_END_OF_STACK)
		finish_coroutine((struct schedule *)S);
	return _URC_NO_REASON;
}

/* Returns only if the unwinder could not start. */
static void unwind_frames(struct schedule *S, struct unwinding *u) { u->unwind(&u->exception, finish_at_the_end, S); }
static int can_unwind(const struct coroutine *) { return unwinder() != NULL; }
#endif

/* Whether a coroutine's first frame links to main's: asm (not Windows, armv7), ucontext's entry. */
#if (COROUTINE_ASM && !defined(_WIN32) && !defined(__arm__)) || UCONTEXT_LINK
#define LINKS_RESUMER 1
#else
#define LINKS_RESUMER 0
#endif

#if FORCED_UNWIND && LINKS_RESUMER
/* The schedule whose run stacks the caller runs on (locked: one closing elsewhere stays valid). */
static struct schedule *schedule_running_here(void)
{
	const char *here = (const char *)__builtin_frame_address(0);
	lock_open_schedules();
	struct schedule *S = open_schedules;
	while (S != NULL && !(here >= S->top - RUN_STACKS_SPAN && here < S->top))
		S = S->next_open;
	unlock_open_schedules();
	return S;
}

/* The personality routine of every coroutine's first frame, whose caller, through the link, is
 * main: no unwinding may go on there.  coroutine_delete's forced unwinding finishes the coroutine
 * here; an exception leaving its function stops the program with a line, then std::terminate;
 * another forced unwinding (a thread's cancellation or exit), with a line only. */
extern "C" __attribute__((visibility("hidden"))) _Unwind_Reason_Code
coroutine_personality(int, _Unwind_Action actions, _Unwind_Exception_Class, struct _Unwind_Exception *e,
		      struct _Unwind_Context *)
{
	struct schedule *S = schedule_running_here();
	if (S == NULL)
		fail("coroutine_resume: an unwinding reached a coroutine's start off every open schedule's run stack");
	if ((actions & _UA_FORCE_UNWIND) && S->unwinding != NULL && e == &S->unwinding->exception)
		finish_coroutine(S);
	if (actions & _UA_SEARCH_PHASE) {
		fprintf(stderr, "coroutine_resume: an exception escaped coroutine %d's function; "
			"no handler beyond a coroutine's start may catch it\n", S->running);
		return _URC_FATAL_PHASE1_ERROR;
	}
	fail("coroutine_resume: an unwinding that is not coroutine_delete's (a thread's cancellation or exit?) "
	     "reached coroutine %d's start; main's frames cannot be unwound from a coroutine", S->running);
}
#endif

#if FORCED_UNWIND
#if COROUTINE_ASAN
static void asan_unwinding_starts(void) { __asan_handle_no_return(); } /* unpoisons, as at a throw */
#else
static void asan_unwinding_starts(void) {}
#endif

/* The runtime deletes a foreign exception a catch (...) swallowed: the coroutine ends there. */
#if !EH_MSVC_ABI
static void end_where_swallowed(_Unwind_Reason_Code, struct _Unwind_Exception *e)
{
	finish_coroutine(((struct unwinding *)e)->S);
}
#endif

static void start_unwinding(struct unwinding *u, struct schedule *S, int id)
{
	memset(u, 0, sizeof *u);
	u->S = S;
	u->id = id;
#if !EH_MSVC_ABI
	static const char exception_class[8] = { 'c', 'o', 'r', 'o', 'd', 'e', 'l', '\0' };
	memcpy(&u->exception.exception_class, exception_class, sizeof exception_class);
	u->exception.exception_cleanup = end_where_swallowed;
#endif
#if defined(_WIN32) && !EH_MSVC_ABI
	u->exception.private_[0] = (_Unwind_Ptr)unwind_on; /* a forced unwind, if rethrown */
#elif !defined(_WIN32)
	u->unwind = unwinder();
#endif
}

/* The deleted coroutine's yield calls this after its switch; ASan forgets the unwinder's frames. */
NOINLINE static void unwind_coroutine(struct schedule *S)
{
	asan_enter_coroutine(S, S->owner);
	asan_unwinding_starts();
	unwind_frames(S, S->unwinding);
	finish_coroutine(S);
}

/* A frame that an exception may not leave (noexcept, or a destructor run by an exception's
 * unwinding) calls std::terminate when the forced unwinding reaches it.  While deletes unwind, the
 * runtimes' terminate handler is the library's: on the run stack of the coroutine being unwound, it
 * ends the coroutine there, as the original frees it; elsewhere the handler it replaced runs. */
static thread_local struct schedule *unwinding_here; /* the innermost */
/* Kept as the terminate handler is: per thread in Microsoft's runtime, per process in Itanium's. */
#if EH_MSVC_ABI
#define AS_THE_HANDLER thread_local
#else
#define AS_THE_HANDLER
#endif
static AS_THE_HANDLER int terminate_holders;
static AS_THE_HANDLER int terminate_setters_held;
static AS_THE_HANDLER terminate_setter held_setter[MAX_RUNTIMES];
static AS_THE_HANDLER any_function replaced_terminate[MAX_RUNTIMES];

NO_ASAN static void end_at_terminate(void) /* here: on the stack, not in ASan's fake stack */
{
	struct schedule *S = unwinding_here;
	char here; /* where this thread runs */
	if (S != NULL && S->running >= 0 && S->ending == S->co[S->running] && &here < top_of(S, S->ending)
	    && &here >= top_of(S, S->ending) - STACK_SIZE)
		finish_coroutine(S);
	for (int i = 0; i < terminate_setters_held; i++)
		if (replaced_terminate[i] != NULL)
			replaced_terminate[i]();
	abort();
}

static void hold_terminate(void)
{
	const struct runtimes *found = runtimes_here();
	lock_open_schedules();
	for (int i = 0; terminate_holders == 0 && i < found->setters; i++) {
		any_function replaced = found->set_terminate[i](end_at_terminate);
		if (replaced != end_at_terminate) { /* one runtime found twice */
			held_setter[terminate_setters_held] = found->set_terminate[i];
			replaced_terminate[terminate_setters_held++] = replaced;
		}
	}
	terminate_holders++;
	unlock_open_schedules();
}

static void release_terminate(void)
{
	lock_open_schedules();
	for (int i = --terminate_holders == 0 ? terminate_setters_held : 0; i-- > 0;) {
		any_function now = held_setter[i](replaced_terminate[i]);
		if (now != end_at_terminate)
			held_setter[i](now);
	}
	if (terminate_holders == 0)
		terminate_setters_held = 0;
	unlock_open_schedules();
}

/* The resume finds the coroutine made to unwind; a destructor that yields comes back here. */
NOINLINE static void resume_in_forced_unwind(struct schedule *S, int id)
{
	struct unwinding u;
	struct schedule *outer = unwinding_here;
	start_unwinding(&u, S, id);
	unwind_at_resume(S, S->co[id], id);
	S->unwinding = &u;
	unwinding_here = S;
	hold_terminate();
	coroutine_resume(S, id);
	release_terminate();
	unwinding_here = outer;
	S->unwinding = NULL;
}
#else
static int can_unwind(const struct coroutine *) { return 0; }
NOINLINE static void resume_in_forced_unwind(struct schedule *, int) {}
#endif

/* ---- The checked build ---------------------------------------------------- */
#if COROUTINE_CHECKED
#include "coroutine_checked.h"
#else
static void run_stack_in_reach(struct schedule *) {}
static void run_stack_out_of_reach(struct schedule *) {}
static void forget_hidden_frames(struct coroutine *) {}
static void watch_run_stacks(void) {}
static void stop_watching_run_stacks(void) {}
static void place_in_window(struct schedule *, struct coroutine *) {}
#endif

/* ---- The debugger's view ---------------------------------------------------
 * debug/coroutine-gdb.py (and its lldb twin) shows where a suspended coroutine waits, its slice put
 * back and its registers in a thread; it reads here how this build placed them (never the code). */
struct debugger_view {
	char backend[12];            /* "ucontext", "asm" or "fiber": what ctx holds */
	struct schedule **open;      /* &open_schedules */
	struct coroutine *empty;     /* &no_coroutine: an empty slot */
	unsigned coroutine_size;     /* sizeof(struct coroutine): the slice follows */
	unsigned shallow_slice;      /* SHALLOW_SLICE: see slice_in_block */
	unsigned slice_align;        /* SLICE_ALIGN */
	unsigned suspended_elsewhere;
	unsigned stack_size;
	unsigned windows;            /* the checked build's: see top_of; 1 in the others */
	unsigned window_stride;      /* a coroutine's top: S->top - C->window * this */
};

KEPT const struct debugger_view coroutine_debugger_view = {
	BACKEND_NAME, &open_schedules, &no_coroutine, sizeof(struct coroutine),
	SHALLOW_SLICE, SLICE_ALIGN, SUSPENDED_ELSEWHERE, STACK_SIZE,
	WINDOWS, COROUTINE_CHECKED ? (unsigned)WINDOW_STRIDE : 0,
};
