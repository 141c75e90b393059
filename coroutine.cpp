/*
 * coroutine.cpp - asymmetric coroutines that share one run stack.
 *
 * A port of cloudwu's coroutine.c (MIT).  The idea in one paragraph: a
 * schedule owns one big run stack.  Whichever coroutine runs, runs there.
 * When it yields, the part of the run stack it is using (its "live slice",
 * from the deepest frame up to the top) is copied to a heap buffer of its
 * own; when it is resumed, the slice is copied back to the same addresses
 * and execution continues as if nothing happened.  Many coroutines thus cost
 * one stack plus the bytes each one really uses.
 *
 * The file reads in that order: the sizes and the compiler's spellings; the
 * two structures and the types they need; the story, in the order a user
 * meets it (open, new, resume, yield, status, running, next, delete,
 * close); then the machinery it calls, a section per concern.  A reader
 * who stops after the story has seen the whole library; a porter reads one
 * section.
 *
 * The switch is swapcontext(3) by default, the assembly in asm_switch.S
 * with -DCOROUTINE_ASM=1, and Emscripten's fibers on WebAssembly.
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

/* Below the run stack, an inaccessible guard: a coroutine that runs off the
 * end dies of SIGSEGV instead of writing over its neighbours (1 MiB, as
 * Linux's own stack guard gap; size_t, as the sum may not fit in an int). */
#define GUARD_SIZE ((size_t)1024 * 1024)
/* Mapped in whole pages of 64 KiB, the targets' largest, with TOP_ROOM bytes
 * above the top for what glibc's makecontext puts there on x86 (see
 * entry_below_top). */
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

/* The checked build: the run stack out of main's reach while main runs (see
 * "The checked build"); off by default, and then nothing of it is compiled. */
#ifndef COROUTINE_CHECKED
#define COROUTINE_CHECKED 0
#endif
#if COROUTINE_CHECKED && defined(__EMSCRIPTEN__)
#error "COROUTINE_CHECKED=1: WebAssembly has no memory protection, so nothing can keep main off the run stack; build coroutine.cpp without it there"
#endif

/* ---- The compiler: one spelling per idea, GNU's and Microsoft's ------------
 *
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
 *   KEPT                 data kept though no code reads it (a debugger does)
 *   trailing_zeros(x)    the number of trailing zero bits of x, not 0
 *   atomic_increment(n)  adds 1 to *n atomically, returns the sum
 *   atomic_swap(l, v), atomic_release(l)  a lock's take (the old value) and give
 *   current_teb()        x64 Windows' thread environment block (Windows only)
 */
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
#define KEPT __attribute__((used))
static ALWAYS_INLINE int trailing_zeros(uint64_t x) { return __builtin_ctzll(x); }
/* An empty asm that may have changed p: the compiler must take its word. */
static ALWAYS_INLINE char *launder(char *p) { __asm__("" : "+r"(p)); return p; }
#if defined(__x86_64__)
/* 16 bytes in one move, through an SSE register.  In asm: a 16-byte access
 * in C makes gcc lay a frameless function's locals out 8 bytes lower, and
 * save_shallow_stack's slice would grow by a block. */
#define HAVE_COPY_16 1
static ALWAYS_INLINE void copy_16(char *to, const char *from)
{
	__asm__("movdqu %1, %%xmm0\n\tmovdqu %%xmm0, %0" : "=m"(*(char(*)[16])to) : "m"(*(const char(*)[16])from) : "xmm0");
}
#endif
/* Inline on every target for a variable aligned to its size: no libatomic.
 * Relaxed: only the numbers must differ. */
static ALWAYS_INLINE uint64_t atomic_increment(uint64_t *n) { return __atomic_add_fetch(n, 1, __ATOMIC_RELAXED); }
static ALWAYS_INLINE long atomic_swap(volatile long *l, long v) { return __atomic_exchange_n(l, v, __ATOMIC_ACQUIRE); }
static ALWAYS_INLINE void atomic_release(volatile long *l) { __atomic_store_n(l, 0, __ATOMIC_RELEASE); }
#if defined(_WIN32)
/* gs:0x30 holds the TEB's own address (its Self field).  (Not MinGW's
 * NtCurrentTeb, whose inline read of gs makes g++ 12 warn of an
 * out-of-bounds array.) */
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
#define KEPT /* no debugger script reads a cl.exe build */
static ALWAYS_INLINE int trailing_zeros(uint64_t x) { unsigned long i; _BitScanForward64(&i, x); return (int)i; }
/* A volatile's value is whatever its last read finds: the compiler must
 * store p and load it back.  (_ReadWriteBarrier orders memory, not a value
 * kept in a register.) */
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

/* Whether AddressSanitizer or valgrind's memcheck must be told about the
 * switches (see "AddressSanitizer and valgrind"); both add fields. */
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
/* A checked build under ASan also poisons a suspended coroutine's locals
 * that ASan keeps off the run stack (see "The checked build"). */
#define HIDE_FAKE_FRAMES (COROUTINE_CHECKED && COROUTINE_ASAN)
/* valgrind runs no Windows programs (and its header assumes LP64 there). */
#if !defined(NVALGRIND) && !defined(_WIN32) && defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
/* The header defines NVALGRIND itself on targets valgrind does not run on. */
#ifndef NVALGRIND
#define COROUTINE_VALGRIND 1
#endif
#endif
#endif
#ifndef COROUTINE_VALGRIND
#define COROUTINE_VALGRIND 0
#endif

/* Where a switch saves a coroutine or main: each backend's own. */
typedef struct coroutine_context context;

#if defined(_WIN32) && !COROUTINE_ASM
#error "Windows has no ucontext: compile coroutine.cpp with -DCOROUTINE_ASM=1 and link asm_switch.S"
#undef COROUTINE_ASM
#define COROUTINE_ASM 1 /* so that the message above stays the only error */
#endif

#if COROUTINE_ASM
/* asm_switch.S: the callee-saved registers, the stack pointer, the resume
 * address and the FP control state (its layout is documented there). */
#if defined(__x86_64__) && (defined(__ELF__) || defined(__APPLE__)) && !defined(__ILP32__)
#define CONTEXT_WORDS 9  /* rbx rbp r12-r15 rsp rip, MXCSR + x87 control word */
#define NOTED_FP_WORD 8  /* the FP control words: see note_fp_control */
#elif defined(__x86_64__) && defined(_WIN32)
#define CONTEXT_WORDS 35 /* rbx rbp rdi rsi r12-r15 rsp rip, 4 TIB fields, MXCSR + x87 cw, xmm6-15 */
#elif defined(__i386__) && defined(__ELF__)
#define CONTEXT_WORDS 8  /* ebx esi edi ebp esp eip, MXCSR, x87 control word */
#elif defined(__aarch64__) && (defined(__ELF__) || defined(__APPLE__)) && !defined(__ILP32__)
#define CONTEXT_WORDS 22 /* x19-x30, d8-d15, sp, FPCR */
#elif defined(__arm__) && defined(__ELF__) && defined(__ARM_PCS_VFP) && __ARM_ARCH >= 7 && (__ARM_FP & 8)
#define CONTEXT_WORDS 27 /* r4-r11 lr sp, FPSCR, d8-d15 (two words each) */
#elif defined(__riscv) && defined(__ELF__) && __riscv_xlen == 64 && defined(__riscv_float_abi_double)
#define CONTEXT_WORDS 27 /* ra sp s0-s11, fs0-fs11, frm */
#else
#error "COROUTINE_ASM=1 supports x86_64 (System V: Linux, macOS; Microsoft x64: Windows), aarch64 (AAPCS64: Linux, macOS), and on Linux i386 (System V), armv7 (AAPCS, hard float) and riscv64 (LP64D); build without it to use ucontext"
#endif
struct coroutine_context { void *word[CONTEXT_WORDS]; };
extern "C" {
void coroutine_switch_context(context *from, const context *to);
/* Saves the caller in *from, then calls entry(S, NULL) on a fresh stack
 * below top, and finish(S) when entry returns.  On Windows, whose thread
 * block records a stack's bounds, also the lowest addresses of the run
 * stack and of its mapping; elsewhere all arguments go in registers. */
#if defined(_WIN32)
void coroutine_start_context(context *from, char *top, coroutine_func entry, void (*finish)(struct schedule *),
			     struct schedule *S, char *bottom, char *reservation);
#else
void coroutine_start_context(context *from, char *top, coroutine_func entry, void (*finish)(struct schedule *),
			     struct schedule *S);
#endif
}
#elif defined(__EMSCRIPTEN__)
/* Emscripten's fibers: see "WebAssembly" for what a fiber is made of. */
#define COROUTINE_FIBER 1
#include <emscripten.h>
#include <emscripten/fiber.h>
#include <emscripten/stack.h>
struct coroutine_context { emscripten_fiber_t fiber; };
#else
#if defined(__linux__) && !defined(__GLIBC__)
/* musl (and any Linux C library but glibc) has no getcontext/swapcontext. */
#error "this C library has no swapcontext for the ucontext backend: build coroutine.cpp with -DCOROUTINE_ASM=1 and link asm_switch.S"
#endif
#include <ucontext.h>
/* A base class, not a member: riscv64's glibc ucontext_t ends in a
 * zero-size array, which g++ -Wpedantic rejects in a member. */
struct coroutine_context : ucontext_t {
#if defined(__i386__) && defined(__SSE__)
	unsigned int mxcsr; /* glibc's i386 swapcontext leaves MXCSR alone */
#endif
};
#endif
#ifndef COROUTINE_FIBER
#define COROUTINE_FIBER 0
#endif

/* A thread's exceptions being handled, which the switches swap (see "The C++
 * exception state").  The Itanium C++ ABI's, as __cxa_get_globals() returns
 * it: the caught ones (what `throw;` rethrows) and the count of uncaught. */
#if !EH_MSVC_ABI
struct eh_state {
	void *caught;
	unsigned int uncaught;
#if defined(__arm__) && !defined(__APPLE__)
	void *propagating; /* ARM EHABI's runtimes keep a third field */
#endif
};
#else
/* Microsoft's (vcruntime): three per-thread values and the chain of the
 * running catch handlers' records (see save_thread_eh). */
struct frame_info;
struct eh_state {
	void *exception;
	void *context;
	int processing_throw;
	struct frame_info *handlers; /* the head of the chain */
};
#endif
/* A runtime is known by its function that returns a thread's state in it. */
typedef struct eh_state *(*eh_globals_func)(void);
/* What a coroutine starts with, in every runtime: no exception at all. */
static const struct eh_state no_exceptions = {};

/* ---- The two structures ------------------------------------------------- */

struct entry { coroutine_func func; void *ud; }; /* what a coroutine runs */

/* Its size matters: 100,000 suspended coroutines cost 100,000 of these plus
 * their slices.  So the slice follows it in the same malloc block (see
 * saved_slice), malloc knows the block's size (buffer_capacity), the slice's
 * is 32 bits, and what it needs until it starts shares room with the rest. */
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

/* A suspended coroutine whose thread is not the schedule's: only its own
 * thread may resume it.  coroutine_status reports COROUTINE_SUSPEND. */
#define SUSPENDED_ELSEWHERE 4

/* What an empty slot holds: no coroutine, whose status is COROUTINE_DEAD
 * and its size 0, rather than NULL, so that a resume tests the status of
 * what it finds without testing the pointer first.  Never written. */
static struct coroutine no_coroutine;

/* Levels of the tree of bitmaps of the slots in use: 64^6 is more slots
 * than an int id can name. */
#define SLOT_LEVELS 6

struct schedule {
	context main;                /* where coroutine_yield returns to; first, as C->ctx */
	char *stack;                 /* lowest address of the run stack */
	char *top;                   /* stack + STACK_SIZE: where every slice ends */
	size_t quick_put_back;       /* see take_run_stack_quickly */
	struct coroutine **co;       /* cap slots, nco of them in use */
	uint64_t *used[SLOT_LEVELS]; /* which slots are in use: see take_slot */
	uint64_t *nonempty_words;    /* which words of used[0] are not 0 */
	int nco;
	int cap;
	int running;                 /* id of the running coroutine, or -1 */
	struct coroutine *owner;     /* whose bytes are on the run stack now */
	struct unwinding *unwinding; /* coroutine_delete's, while it unwinds the running one */
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
};

/* ---- The switch, per backend -----------------------------------------------
 *
 * SWITCH_CONTEXT(from, to) saves the caller in *from and goes on where *to
 * was saved; LEAVE_CONTEXT(S, to) goes there never to come back (a
 * finished coroutine), saving nothing anyone reads.
 */
#if COROUTINE_ASM
#define SWITCH_CONTEXT(from, to) coroutine_switch_context(from, to)
#define LEAVE_CONTEXT(S, to) (note_fp_control(&(S)->finished_context), SWITCH_CONTEXT(&(S)->finished_context, to))
#elif COROUTINE_FIBER
#define SWITCH_CONTEXT(from, to) emscripten_fiber_swap(&(from)->fiber, &(to)->fiber)
/* A finished coroutine unwinds its last frames into the area from its
 * start: nobody rewinds them, and the area has its full size for the next. */
#define LEAVE_CONTEXT(S, to) \
	((S)->finished_context.fiber.asyncify_data.stack_ptr = (S)->frames, SWITCH_CONTEXT(&(S)->finished_context, to))
#else
#if defined(__i386__) && defined(__SSE__)
/* The switch never touches MXCSR, so loading *to's just before the switch
 * is the same as the switch loading it. */
static ALWAYS_INLINE void save_mxcsr(context *ctx) { __asm__ volatile("stmxcsr %0" : "=m"(ctx->mxcsr)); }
static ALWAYS_INLINE void load_mxcsr(const context *ctx) { __asm__ volatile("ldmxcsr %0" : : "m"(ctx->mxcsr)); }
#else
/* Elsewhere swapcontext switches all of the floating-point environment. */
static ALWAYS_INLINE void save_mxcsr(context *) {}
static ALWAYS_INLINE void load_mxcsr(const context *) {}
#endif
/* setcontext only restores, where swapcontext would first save the whole
 * FP environment. */
#define LEAVE_CONTEXT(S, to) ((void)(S), load_mxcsr(to), setcontext(to))
#if !COROUTINE_ASAN
#define SWITCH_CONTEXT(from, to) (save_mxcsr(from), load_mxcsr(to), swapcontext(from, to))
#else
/* ASan intercepts swapcontext, and the interceptor's frame lies below the
 * slice saved a moment before: lost when the next coroutine runs.  The pair
 * getcontext and setcontext, not intercepted, switches with no frame, and
 * the flag (off the run stack) tells getcontext's two returns apart. */
static thread_local volatile int asan_switching;
#define SWITCH_CONTEXT(from, to) do {                                   \
		asan_switching = 1;                                     \
		save_mxcsr(from), load_mxcsr(to), getcontext(from);     \
		if (asan_switching)                                     \
			asan_switching = 0, setcontext(to);             \
	} while (0)
#endif
#endif

/* The FP control words of the code about to leave, noted in its context
 * for the switch, which compares them with *to's and reloads what differs.
 * On x86_64 (System V) the story notes them at the top of resume and
 * yield, a few dozen instructions before the switch reads them back: read
 * by the switch itself, MXCSR held it up (see asm_switch.S).  Every
 * SWITCH_CONTEXT must find from's noted since they last changed.
 * Elsewhere the switch saves them itself, and this does nothing. */
#if defined(NOTED_FP_WORD)
static ALWAYS_INLINE void note_fp_control(context *ctx)
{
	char *fp = (char *)&ctx->word[NOTED_FP_WORD]; /* MXCSR, then the x87 word */
	__asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(*(char(*)[4])fp), "=m"(*(char(*)[2])(fp + 4)));
}
#else
static ALWAYS_INLINE void note_fp_control(context *) {}
#endif

/* ---- What the machinery supplies -------------------------------------------
 *
 * The story calls these; each is defined in the section its comment names.
 */
/* The slots: a doubling array, beside a tree of bitmaps of those in use. */
static int resize_slots(struct schedule *S, size_t cap); /* the new ones empty; 0: out of memory */
static void free_slots(struct schedule *S);
static int first_free_slot(const struct schedule *S);    /* the original's scan from nco; nco < cap */
NOINLINE static int grow_slots(struct schedule *S);      /* doubles them: the first new id, or -1 */
static void take_slot(struct schedule *S, int id, struct coroutine *C);
NOINLINE static void empty_slot(struct schedule *S, int id);
static int next_used_slot(const struct schedule *S, size_t i); /* at or after i < cap, or -1 */
/* The open schedules, on one list that a debugger reads. */
static void list_open_schedule(struct schedule *S);
static void unlist_closed_schedule(struct schedule *S);
/* The platforms: len bytes whose lowest guard bytes fault at any touch (or
 * NULL); what the first open schedule starts and the last one stops (under
 * the list's lock), so that no registration outlives the last. */
static char *map_guarded(size_t guard, size_t len);
static void unmap_guarded(char *base, size_t len);
static size_t buffer_capacity(void *block); /* the usable bytes of a malloc block */
static void first_schedule_opened(void);
static void last_schedule_closed(void);
static void refuse_under_loader_lock(const char *func); /* Windows: DllMain's lock */
/* The checked build: the run stack in reach of main only while the library
 * itself touches it (and, under ASan, a suspended coroutine's fake frames
 * out of everybody's), and a fault handler that names the coroutine whose
 * bytes were touched, from the first open to the last close (no-ops when
 * COROUTINE_CHECKED is 0). */
static void run_stack_in_reach(struct schedule *S);
static void run_stack_out_of_reach(struct schedule *S);
static void watch_run_stacks(void);
static void stop_watching_run_stacks(void);
static void forget_hidden_frames(struct coroutine *C); /* under ASan: see there */
/* The switch: C started on the top of the run stack, main saved in S->main;
 * and WebAssembly's own frames, which move with the run stack. */
static void start_coroutine(struct schedule *S, struct coroutine *C);
static void make_frames(struct schedule *S);
static void hand_over_frames(struct schedule *S, struct coroutine *C);
static void note_main_stack(struct schedule *S);
/* A copy's context and wasm frames (the frames: 0 when out of memory). */
static void rebase_copied_context(context *copy, const context *original);
static int copy_frames(struct schedule *S, const struct coroutine *C, struct coroutine *copy);
/* Slices in their blocks, copied so that the sanitizers accept it; the
 * quick paths of a shallow one, with no stack frame (NULL: not shallow). */
static char *slice_bottom(char *dummy); /* where the live slice of dummy's function ends */
NOINLINE static struct coroutine *with_room_for(struct schedule *S, size_t size); /* the owner, grown; NULL */
static unsigned char shallow_room(size_t room); /* C->room, for room bytes of block */
static size_t room_for_slice(size_t size);     /* bytes of block a slice of size bytes needs */
static char *slice_in_block(struct coroutine *C, const char *bottom, size_t size);
static void copy_stack(char *to, const char *from, size_t n);
static context *save_shallow_stack(struct schedule *S, struct coroutine *C);
static void take_run_stack_quickly(struct schedule *S, struct coroutine *C);
/* AddressSanitizer and valgrind, told of the run stack (1: one watches it)
 * and of every move onto it and off it (C NULL: starts, or has finished). */
static int tools_register_run_stack(struct schedule *S);
static void tools_forget_schedule(struct schedule *S);
static void asan_leave_main(struct schedule *S);
static void asan_back_in_main(struct schedule *S);
static void asan_enter_coroutine(struct schedule *S, struct coroutine *C);
static void asan_leave_coroutine(struct schedule *S, struct coroutine *C);
static int asan_save_shadow(struct schedule *S, struct coroutine *C, const char *func, int may_fail); /* see there */
static void asan_restore_shadow(struct schedule *S, struct coroutine *C);
static void asan_free_shadow(struct coroutine *C);
static void asan_free_fake_stack(struct schedule *S, struct coroutine *C);
static int asan_keeps_fake_frames(struct schedule *S, struct coroutine *C); /* a copy would share them */
static int asan_copy_shadow(struct schedule *S, const struct coroutine *C, struct coroutine *copy); /* 0: no memory */
static void forget_run_stack(struct schedule *S);
/* The C++ exception state, which changes hands at the switches; the
 * runtimes, looked for at open and at a start (1: it keeps several now). */
static void take_eh_state(struct schedule *S, const struct eh_state *own);
static void give_back_eh_state(struct schedule *S, struct coroutine *C);
static void drop_eh_state(struct schedule *S);
static void ask_runtimes_on_this_thread(struct schedule *S);
static int take_up_runtimes(struct schedule *S);
static int take_up_late_runtime(struct schedule *S);
NOINLINE static void resume_keeping_more_runtimes(struct schedule *S, int id);
static void free_more_runtimes(struct schedule *S);
/* Ending a coroutine early: whether a suspended coroutine can be unwound
 * here (this build, and an unwinder in the process), and its unwinding,
 * after which it has finished. */
static int can_unwind(void);
NOINLINE static void resume_in_forced_unwind(struct schedule *S, int id);
/* Whether suspended id is handling or unwinding an exception, in any runtime
 * S keeps; and a copy's state in the runtimes after the first: none. */
static int handles_exceptions(const struct schedule *S, int id);
static void no_exceptions_in_more_runtimes(struct schedule *S, int id);
/* Threads: a number each, never reused; a schedule that moves here. */
static uint64_t this_thread(void);
NOINLINE static void move_to_this_thread(struct schedule *S);
static thread_local uint64_t thread_number; /* 0 until this_thread */

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
	/* As unsigned, a negative id is beyond any cap: one compare for both. */
	if ((unsigned)id >= (unsigned)S->cap)
		fail("%s: id %d is out of range [0, %d)", func, id, S->cap);
}

static void check_in_main(const struct schedule *S, const char *func, const char *what)
{
	if (S->running != -1)
		fail("%s: called from inside coroutine %d%s; %s", func, S->running,
		     S->unwinding != NULL ? ", which coroutine_delete is unwinding" : "", what);
}

/* ---- Opening a schedule ------------------------------------------------- */

/* The run stack, above its guard, as the platform maps it. */
static int map_run_stack(struct schedule *S)
{
	char *base = map_guarded(GUARD_SIZE, GUARD_SIZE + MAPPED_STACK_SIZE);
	if (base == NULL)
		return 0;
	S->stack = base + GUARD_SIZE;
	S->top = S->stack + STACK_SIZE;
	make_frames(S);
	/* Any shallow slice, while no tool watches: see take_run_stack_quickly. */
	S->quick_put_back = tools_register_run_stack(S) ? 0 : shallow_room(STACK_SIZE);
	run_stack_out_of_reach(S);
	return 1;
}

struct schedule *coroutine_open(void)
{
	refuse_under_loader_lock("coroutine_open");
	struct schedule *S = (struct schedule *)calloc(1, sizeof *S);
	if (S == NULL)
		return NULL;
	S->running = -1;
	S->thread = S->fast_thread = this_thread();
	ask_runtimes_on_this_thread(S); /* none yet: the thread's spare */
	list_open_schedule(S); /* before take_up_runtimes looks for them */
	if (!resize_slots(S, DEFAULT_COROUTINE) || !take_up_runtimes(S) || !map_run_stack(S)) {
		unlist_closed_schedule(S);
		free_more_runtimes(S);
		free_slots(S);
		free(S);
		return NULL;
	}
	return S;
}

/* ---- Creating a coroutine ----------------------------------------------- */

/* A shallow slice, at most SHALLOW_SLICE bytes (a yield a few calls deep),
 * is copied by block moves in functions that need no stack frame
 * (save_shallow_stack, take_run_stack_quickly).  A new block has room for
 * NEW_ROOM bytes of slice, so that most yields need no realloc.  None with
 * ucontext, whose slices are larger and switches slower, nor under ASan,
 * whose shadow only save_stack saves. */
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
/* A deep slice lies up to this many bytes further in (see saved_deep_slice). */
#define SLICE_ALIGN 64

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

static struct coroutine *new_coroutine(coroutine_func func, void *ud)
{
	/* malloc rather than calloc: glibc's calloc skips its per-thread cache,
	 * and would clear the context that the first switch writes anyway. */
	struct coroutine *C = (struct coroutine *)malloc(sizeof *C + NEW_ROOM);
	if (C == NULL)
		return NULL;
	C->start.func = func;
	C->start.ud = ud;
	C->size = 0;
	C->status = COROUTINE_READY;
	C->room = shallow_room(NEW_ROOM);
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

/* Puts C in the slot the original's rule gives (see coroutine.h), the
 * slots doubled first if all are taken: its id, or -1 when they cannot grow.
 * Inlined, take_slot with it: coroutine_new costs what it did alone. */
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
	struct coroutine *C = new_coroutine(func, ud);
	if (C == NULL)
		return -1;
	int id = add_coroutine(S, C);
	if (id < 0)
		free(C);
	return id;
}

/* Stops with the line of the first check of coroutine_clone that fails.  A
 * copy would share what lies outside the bytes copied: the exception being
 * handled (the runtime's, freed by whichever handler ends first), and the
 * locals ASan keeps off the run stack. */
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

/* A copy of suspended C, waiting where C waits: a block of its own holds
 * the same bytes of slice, where slice_in_block places them in this block
 * (a deep slice's offset follows the block's address), and the same saved
 * registers; it gets its own of what the backend and the tools keep.  The
 * owner of the run stack is copied from its block too, which its last
 * yield filled: only the owner can change its bytes on the run stack.
 * NULL when out of memory, having kept nothing. */
static struct coroutine *copy_suspended(struct schedule *S, struct coroutine *C)
{
	size_t size = C->size, room = room_for_slice(size);
	struct coroutine *copy = (struct coroutine *)malloc(sizeof *copy + (room > NEW_ROOM ? room : NEW_ROOM));
	if (copy == NULL)
		return NULL;
	*copy = *C; /* the context, the exception state, the thread, size and status */
	copy->room = shallow_room(buffer_capacity(copy) - sizeof *copy);
	rebase_copied_context(&copy->ctx, &C->ctx);
	own_nothing_yet(copy);
	const char *bottom = S->top - size;
	memcpy(slice_in_block(copy, bottom, size), slice_in_block(C, bottom, size), size);
	if (!copy_frames(S, C, copy) || !asan_copy_shadow(S, C, copy)) {
		delete_coroutine(copy);
		return NULL;
	}
	return copy;
}

/* An addition to the original API: see coroutine.h.  A new coroutine is
 * copied as coroutine_new would make it again. */
int coroutine_clone(struct schedule *S, int id)
{
	check_clonable(S, id);
	struct coroutine *C = S->co[id];
	struct coroutine *copy = C->status == COROUTINE_READY ? new_coroutine(C->start.func, C->start.ud)
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

/* ---- Resuming: starting, and putting a slice back ----------------------- */

/* Every coroutine starts here, on the top of the run stack, and ends by
 * calling its function, which the compiler makes a jump: the function's
 * frame starts where this one did, and no frame of the library's is in any
 * slice.  The second argument is unused: on i386, where arguments are on
 * the stack, only a function given as many can jump to its callee. */
static void run_coroutine(struct schedule *S, void *unused)
{
	(void)unused;
	asan_enter_coroutine(S, NULL);
	struct coroutine *C = S->co[S->running];
	C->start.func(S, C->start.ud);
}

/* The coroutine's function has returned: it goes, with its slot, and leaves
 * the run stack for good through the switch (never by returning).  Out of
 * line: inlined into its caller, whose frame is in every slice with
 * ucontext, its registers would be that frame's too. */
NOINLINE static void finish_coroutine(struct schedule *S)
{
	drop_eh_state(S);
	int id = S->running;
	delete_coroutine(S->co[id]);
	empty_slot(S, id);
	--S->nco;
	S->owner = NULL;
	S->running = -1;
	asan_leave_coroutine(S, NULL);
	LEAVE_CONTEXT(S, &S->main);
}

/* Continues the owner of the run stack, a suspended coroutine, until it
 * yields or finishes.  It ends with the switch, as do its callers, so the
 * saved resume address is in coroutine_resume's caller: a yield comes
 * straight back there, with no return whose prediction would be wrong. */
static void continue_owner(struct schedule *S)
{
	struct coroutine *C = S->owner;
	take_eh_state(S, &C->eh);
	asan_leave_main(S);
	note_main_stack(S);
	SWITCH_CONTEXT(&S->main, &C->ctx);
	asan_back_in_main(S);
	run_stack_out_of_reach(S);
}

/* Hands the run stack over to suspended C: the bytes of the last occupant
 * are forgotten, C's put back. */
static ALWAYS_INLINE void put_back_slice(struct schedule *S, struct coroutine *C)
{
	forget_run_stack(S);
	char *bottom = S->top - C->size;
	copy_stack(bottom, slice_in_block(C, bottom, (size_t)C->size), (size_t)C->size);
	asan_restore_shadow(S, C);
	hand_over_frames(S, C);
	S->owner = C;
}

/* And continues it.  Out of line: most resumes resume the coroutine
 * already there. */
NOINLINE static void take_run_stack(struct schedule *S, struct coroutine *C)
{
	put_back_slice(S, C);
	continue_owner(S);
}

/* Starts C, which has never run; refuses one suspended on another thread
 * (see move_to_this_thread); or, for an empty slot, does nothing, as the
 * original.  Out of line: a coroutine starts once. */
NOINLINE static void start_or_refuse(struct schedule *S, struct coroutine *C, int id)
{
	if (C == &no_coroutine) /* an empty slot: nothing to resume */
		return;
	if (C->status == SUSPENDED_ELSEWHERE)
		fail("coroutine_resume: coroutine %d was suspended on another thread; "
		     "resume it on that thread", id);
	if (take_up_late_runtime(S)) { /* it keeps several runtimes now */
		coroutine_resume(S, id);
		return;
	}
	S->running = id;
	run_stack_in_reach(S);
	forget_run_stack(S);
	hand_over_frames(S, NULL);
	S->owner = C;
	C->status = COROUTINE_SUSPEND; /* what it is whenever it does not run */
	take_eh_state(S, &no_exceptions);
	asan_leave_main(S);
	note_main_stack(S);
	start_coroutine(S, C);
	asan_back_in_main(S);
	run_stack_out_of_reach(S);
}

/* The resume of a schedule off its fast path: on another thread than its
 * own, where it moves, or keeping more than one C++ runtime.  Out of line,
 * and the resume made again from the top. */
NOINLINE static void resume_the_long_way(struct schedule *S, int id)
{
	if (S->thread != this_thread())
		move_to_this_thread(S);
	if (S->more != NULL)
		resume_keeping_more_runtimes(S, id);
	else
		coroutine_resume(S, id);
}

/* Tells which of coroutine_resume's checks failed, and stops. */
NOINLINE static void refuse_resume(struct schedule *S, int id)
{
	check_schedule(S, "coroutine_resume");
	check_in_main(S, "coroutine_resume", "only the main program may resume");
	check_id(S, id, "coroutine_resume");
}

void coroutine_resume(struct schedule *S, int id)
{
	/* The checks in one branch, and a jump out of line to tell them apart:
	 * with no call on its way, the common case needs no stack frame. */
	if (S == NULL || S->running != -1 || (unsigned)id >= (unsigned)S->cap) {
		refuse_resume(S, id);
		return;
	}
	if (S->fast_thread != thread_number) { /* 0 on a thread not yet numbered */
		resume_the_long_way(S, id);
		return;
	}
	note_fp_control(&S->main);
	struct coroutine *C = S->co[id];
	/* If C was the last to run on the run stack, its bytes are still there,
	 * exactly as it saved them: copying them back would change nothing.
	 * The owner is suspended, and on this thread: a schedule that moves
	 * forgets it (see move_to_this_thread). */
	if (C == S->owner) {
		S->running = id;
		run_stack_in_reach(S);
		continue_owner(S);
		return;
	}
	if (C->status != COROUTINE_SUSPEND) { /* or an empty slot */
		start_or_refuse(S, C, id);
		return;
	}
	S->running = id;
	run_stack_in_reach(S);
	take_run_stack_quickly(S, C);
}

/* ---- Yielding: the dummy, and the save ---------------------------------- */

/* The fewest bytes a live slice has: a return address at least, but on
 * wasm none, when the coroutine keeps all its frames in wasm locals. */
#define MIN_SLICE (COROUTINE_FIBER ? 0 : 1)

/*
 * The dummy trick.  dummy is a local of this function, so its address lies
 * below every frame of the coroutine that called coroutine_yield: [&dummy,
 * top) is the coroutine's whole live stack, and copying it saves the
 * coroutine.  Never inlined, or dummy would sit inside its caller's frame,
 * whose part below it would not be saved.  It calls nothing, so it needs no
 * frame: dummy lies just below coroutine_yield's stack pointer, and the
 * slice holds nothing of this function.
 */
NOINLINE NO_ASAN static char *slice_start(void)
{
	char dummy; /* only its address counts */
	return slice_bottom(&dummy);
}

/* Saves the yielding coroutine's slice [bottom, top), and returns &C->ctx,
 * where the switch saves the registers, so that only S lives across the call
 * in the yield, whose frame is in every slice.  Out of memory for the slice:
 * NULL, having changed nothing, if the yield may fail; else it stops. */
static ALWAYS_INLINE context *save_slice(struct schedule *S, char *bottom, const char *func, int may_fail)
{
	struct coroutine *C = S->owner;
	char *top = S->top;
	if (bottom < S->stack || top - bottom < MIN_SLICE)
		fail("%s: the caller is not on this schedule's run stack "
		     "(its live stack would be %td bytes; the run stack has %d)",
		     func, top - bottom, STACK_SIZE);
	size_t size = (size_t)(top - bottom), last = C->size;
	/* Only a slice larger than the last can need a larger block. */
	if (size > last && (C = with_room_for(S, size)) == NULL) {
		if (may_fail)
			return NULL;
		fail("%s: out of memory saving %zu bytes of stack", func, size);
	}
	C->size = (unsigned)size;
	copy_stack(slice_in_block(C, bottom, size), bottom, size);
	/* Out of memory for ASan's shadow too: the size as it was, and the
	 * block's bytes unread until a yield succeeds. */
	if (!asan_save_shadow(S, C, func, may_fail)) {
		C->size = (unsigned)last;
		return NULL;
	}
	return &C->ctx;
}

NOINLINE NO_ASAN static context *save_stack(struct schedule *S, char *bottom)
{
	return save_slice(S, bottom, "coroutine_yield", 0);
}

NOINLINE NO_ASAN static context *save_stack_if_room(struct schedule *S, char *bottom)
{
	return save_slice(S, bottom, "coroutine_try_yield", 1);
}

/* Tells which of a yield's checks failed, and stops.  Out of line: the
 * message's arguments would give the yield a frame on WebAssembly's C
 * stack, in every slice. */
[[noreturn]] NOINLINE static void refuse_yield(struct schedule *S, const char *func)
{
	check_schedule(S, func);
	fail("%s: called from outside any coroutine", func);
}

/* The slice saved at *saved, the coroutine leaves the run stack for main,
 * and comes back here when resumed.  A macro: the switch must be in the
 * yield's own frame, which is in the slice (and ASan's getcontext returns
 * twice, which no compiler inlines). */
#define SWITCH_TO_MAIN(S, saved) do {                           \
		(S)->running = -1; /* only now: growing it needs its slot */ \
		asan_leave_coroutine(S, (S)->owner);            \
		SWITCH_CONTEXT(saved, &(S)->main);              \
		asan_enter_coroutine(S, (S)->owner);            \
	} while (0)

/*
 * Saves the slice, then leaves the run stack.  Why this is safe: the slice
 * starts in a call below this frame, so this frame (saved registers, return
 * address, canary, spills) is inside it wherever the compiler put them.
 * Between the save and the switch this function only computes arguments and
 * writes to the heap; after the switch it only returns.  The switch's return
 * address, written after the save, is not in the copy: hence the resume
 * address lives in the context.  Never inlined (LTO included), or the
 * caller's code after the switch could depend on stores after the save.
 */
NOINLINE void coroutine_yield(struct schedule *S)
{
	if (S == NULL || S->running == -1)
		refuse_yield(S, "coroutine_yield");
	/* The running coroutine is the owner of the run stack; the save may
	 * move it (see with_room_for), so it is looked up again after. */
	struct coroutine *C = S->owner;
	note_fp_control(&C->ctx);
	give_back_eh_state(S, C);
	context *saved = save_shallow_stack(S, C);
	if (saved == NULL)
		saved = save_stack(S, slice_start());
	SWITCH_TO_MAIN(S, saved);
}

/* An addition to the original API: see coroutine.h.  The same yield, but
 * with no memory for the slice it takes its exception state back (its block
 * is where it was: a failed realloc moves nothing) and returns. */
NOINLINE int coroutine_try_yield(struct schedule *S)
{
	if (S == NULL || S->running == -1)
		refuse_yield(S, "coroutine_try_yield");
	note_fp_control(&S->owner->ctx);
	give_back_eh_state(S, S->owner);
	context *saved = save_shallow_stack(S, S->owner);
	if (saved == NULL)
		saved = save_stack_if_room(S, slice_start());
	if (saved == NULL) {
		take_eh_state(S, &S->owner->eh);
		return -1;
	}
	SWITCH_TO_MAIN(S, saved);
	return 0;
}

/* ---- Asking about coroutines -------------------------------------------- */

/* The running coroutine is S->running: its own status says SUSPEND, what
 * it is whenever it does not run, so that no switch has to change it. */
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

/* An addition to the original API: see coroutine.h. */
long coroutine_stack_size(struct schedule *S, int id)
{
	check_schedule(S, "coroutine_stack_size");
	check_id(S, id, "coroutine_stack_size");
	return (long)S->co[id]->size; /* no_coroutine's is 0 */
}

/* An addition to the original API: see coroutine.h. */
int coroutine_next(struct schedule *S, int id)
{
	check_schedule(S, "coroutine_next");
	if (id < -1)
		fail("coroutine_next: id %d is below -1 (-1 asks for the first coroutine)", id);
	/* Read afresh at every call: coroutines made since the last one count. */
	if (id >= S->cap - 1)
		return -1;
	return next_used_slot(S, (size_t)id + 1);
}

/* ---- Deleting a coroutine ----------------------------------------------- */

/* Frees coroutine id where it lies, never to run again: one that never
 * started, or a suspended one that nothing can unwind here (its
 * destructors do not run, as at a close). */
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

/* An addition to the original API: see coroutine.h.  A suspended
 * coroutine is resumed one last time, into a forced unwind that starts in
 * the yield where it waits (see "Ending a coroutine early"): its
 * destructors run, innermost first, and it finishes as if its function
 * had returned.  Resumed, it must be on the thread it yielded on. */
void coroutine_delete(struct schedule *S, int id)
{
	check_schedule(S, "coroutine_delete");
	check_in_main(S, "coroutine_delete", "only the main program may delete");
	check_id(S, id, "coroutine_delete");
	if (S->thread != this_thread())
		move_to_this_thread(S);
	struct coroutine *C = S->co[id];
	if (C == &no_coroutine) /* an empty slot: nothing to delete */
		return;
	if (C->status == SUSPENDED_ELSEWHERE)
		fail("coroutine_delete: coroutine %d was suspended on another thread; "
		     "delete it on that thread", id);
	if (C->status == COROUTINE_SUSPEND && can_unwind())
		resume_in_forced_unwind(S, id);
	else
		free_coroutine(S, id);
}

/* ---- Closing a schedule ------------------------------------------------- */

/* Whether C waits at a yield made on the calling thread: only there can
 * it be unwound. */
static int suspended_here(const struct schedule *S, const struct coroutine *C)
{
	uint64_t here = this_thread();
	if (C->status == COROUTINE_SUSPEND)
		return S->thread == here;
	return C->status == SUSPENDED_ELSEWHERE && C->thread == here;
}

/* Deletes every coroutine suspended on this thread, in id order, so that
 * their destructors run; then frees the rest, which cannot run here (never
 * started, or suspended on another thread), without running them.  A
 * destructor may make new coroutines meanwhile: they never start. */
void coroutine_close(struct schedule *S)
{
	if (S == NULL)
		return;
	refuse_under_loader_lock("coroutine_close");
	check_in_main(S, "coroutine_close", "close the schedule from the main program");
	for (int id = 0; id < S->cap; id++)
		if (suspended_here(S, S->co[id]))
			coroutine_delete(S, id);
	for (int i = 0; i < S->cap; i++) {
		struct coroutine *C = S->co[i];
		if (C == &no_coroutine)
			continue;
		if (C->status != COROUTINE_READY) /* suspended, here or elsewhere */
			asan_free_fake_stack(S, C);
		delete_coroutine(C);
	}
	unlist_closed_schedule(S);
	free_slots(S);
	free_more_runtimes(S);
	tools_forget_schedule(S);
	unmap_guarded(S->stack - GUARD_SIZE, GUARD_SIZE + MAPPED_STACK_SIZE);
	free(S);
}

/* ==== The machinery ====================================================== */

/* ---- The slots: a doubling array and a tree of bitmaps ------------------ */

/* Words of a bitmap of n bits. */
static size_t bitmap_words(size_t n)
{
	return (n + 63) / 64;
}

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

/* Makes cap slots, the new ones empty; 0 when an allocation fails, and the
 * schedule keeps its S->cap slots. */
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

/* The clear bits of word w of a bitmap of n bits. */
static uint64_t clear_bits(const uint64_t *bits, size_t n, size_t w)
{
	uint64_t clear = ~bits[w];
	if (n < 64) /* a single, partial word: the bits past n stand for nothing */
		clear &= (UINT64_C(1) << n) - 1;
	return clear;
}

/* The first empty slot at or after slot i, or cap when there is none.  Up
 * the tree until a word has a clear bit at or after the bit we stand on
 * (each step up skips the rest of a full word), then down along the first
 * clear bits: a few steps, whatever the slots in use. */
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

/* The original's scan: the first empty slot at or after index nco,
 * wrapping around, without testing the slots one at a time. */
static int first_free_slot(const struct schedule *S)
{
	size_t id = next_free_slot(S, (size_t)S->nco);
	if (id == (size_t)S->cap)
		id = next_free_slot(S, 0);
	return (int)id;
}

/* Puts C in the empty slot id.  At level 0 of the tree a bit per slot, set
 * while the slot is in use; at each level above, a bit per word of the
 * level below, set while all its 64 bits are: a bit that fills its word
 * fills a bit of the level above.  Beside the tree, for coroutine_next,
 * nonempty_words has a bit per word of level 0, set while the word is not 0. */
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

/* Empties slot id.  A bit cleared in a full word clears a bit above.  Out
 * of line: inlined, it would cost coroutine_resume's common case a register. */
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

/* The first slot in use at or after slot i: in i's own word of used[0],
 * else in the next word that nonempty_words says is not 0. */
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

/* ---- The open schedules ---------------------------------------------------
 *
 * Every open schedule of the process, whatever its thread, is on one list,
 * so that a debugger finds them all (debug/coroutine-gdb.py reads it, from a
 * core file too) and a fault can be told whose run stack it hit.  Only open
 * and close touch it, under a lock of its own: resume and yield pay nothing.
 * A spin lock, as it is held for a few stores (and, on Windows, the first
 * registration), and needs no threads library.
 */
static struct schedule *open_schedules; /* the last opened first */
static volatile long open_schedules_lock;

/* Whether this try took the lock. */
static int try_lock_open_schedules(void)
{
	return atomic_swap(&open_schedules_lock, 1) == 0;
}

static void lock_open_schedules(void)
{
	while (!try_lock_open_schedules())
		continue;
}

static void unlock_open_schedules(void)
{
	atomic_release(&open_schedules_lock);
}

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

/* Reserved but never committed, the guard faults like a PROT_NONE page,
 * and costs no commit charge. */
static char *map_guarded(size_t guard, size_t len)
{
	char *base = (char *)VirtualAlloc(NULL, len, MEM_RESERVE, PAGE_NOACCESS);
	if (base == NULL)
		return NULL;
	if (VirtualAlloc(base + guard, len - guard, MEM_COMMIT, PAGE_READWRITE) == NULL) {
		VirtualFree(base, 0, MEM_RELEASE);
		return NULL;
	}
	return base;
}

static void unmap_guarded(char *base, size_t len)
{
	(void)len; /* MEM_RELEASE frees the whole reservation */
	VirtualFree(base, 0, MEM_RELEASE);
}
#elif defined(__EMSCRIPTEN__)

/* WebAssembly has no memory protection: the guard is plain memory, which a
 * coroutine that runs off the end writes over, up to the asyncify areas at
 * its bottom (see make_frames).  What stops it is -sSTACK_OVERFLOW_CHECK=2:
 * every function compares the stack pointer with the fiber's limits. */
static char *map_guarded(size_t guard, size_t len)
{
	(void)guard;
	return (char *)aligned_alloc(16, len);
}

static void unmap_guarded(char *base, size_t len)
{
	(void)len;
	free(base);
}
#else
#include <sys/mman.h>

/* All of it reserved inaccessible, then the run stack mapped read-write
 * over its part (two steps keep the guard visible to qemu-user), with
 * MAP_NORESERVE: Linux would otherwise charge the whole run stack against
 * RAM and swap, and refuse a large one on a small machine. */
#ifndef MAP_NORESERVE
#define MAP_NORESERVE 0
#endif

static char *map_guarded(size_t guard, size_t len)
{
	char *base = (char *)mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	if (mmap(base + guard, len - guard, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED) {
		munmap(base, len);
		return NULL;
	}
	return base;
}

static void unmap_guarded(char *base, size_t len)
{
	munmap(base, len);
}
#endif

/* ---- The platforms: finding the C++ runtimes -------------------------------
 *
 * find_runtimes adds each runtime in the process; modules_changed says
 * whether modules were loaded or unloaded since the calling thread last
 * asked.  A runtime that a library brings later (dlopen, LoadLibrary) is
 * found by its file name on ELF, Apple and MinGW; elsewhere none comes later.
 */
#define MAX_RUNTIMES 3
struct runtimes {
	int n; /* -1 until the thread looks */
	eh_globals_func get[MAX_RUNTIMES];
};
static void add_runtime(struct runtimes *found, eh_globals_func get);

#if EH_MSVC_ABI
/* vcruntime, which every program built with Microsoft's ABI links (see
 * "The C++ exception state"). */
static struct eh_state *linked_runtime(void);
#elif !defined(__APPLE__)
/* A program that catches has a runtime linked in: a weak reference finds
 * it (a static one too, which no lookup at run time sees).  Called
 * directly: MinGW marks the reference weak only for a call.  Not on Apple,
 * where ld64 wants a definition even for a weak reference. */
extern "C" struct eh_state *__cxa_get_globals(void) WEAK;

static struct eh_state *linked_runtime(void)
{
	return __cxa_get_globals ? __cxa_get_globals() : NULL;
}
#endif

#if defined(_WIN32) && !EH_MSVC_ABI
/* Windows keeps no count of the DLLs loaded: ntdll is asked to call
 * count_dll_load at each load and unload.  That callback is code of the
 * module the library is in, which an engine may free and load again, so it
 * is registered only from the process's first coroutine_open to its last
 * coroutine_close: a plugin that closes its schedules before it is freed
 * leaves nothing behind.  Loads while none is open go uncounted, so
 * registering counts one more.  Where ntdll cannot be asked, every call looks. */
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

/* The first schedule opened: DLL loads are counted from now on. */
static void first_schedule_opened(void)
{
	FARPROC found = ntdll_function("LdrRegisterDllNotification");
	InterlockedIncrement(&dll_loads); /* for the loads nobody counted */
	if (found == NULL
	    || ((register_dll_notification)(void (*)(void))found)(0, count_dll_load, NULL, &registration) != 0)
		registration = NULL;
}

/* The last schedule closed: ntdll forgets count_dll_load. */
static void last_schedule_closed(void)
{
	if (registration == NULL)
		return;
	FARPROC found = ntdll_function("LdrUnregisterDllNotification");
	if (found != NULL)
		((unregister_dll_notification)(void (*)(void))found)(registration);
	registration = NULL;
}

/* Called with a schedule open (the caller's), so the registration stands
 * still meanwhile. */
static int modules_changed(void)
{
	static thread_local LONG seen = -1;
	LONG loads = dll_loads;
	if (registration != NULL && loads == seen)
		return 0;
	seen = loads;
	return 1;
}

/* A weak reference resolves only to a definition linked in statically: a
 * runtime in a DLL is found by the DLL's name. */
static void find_runtimes(struct runtimes *found)
{
	static const char *const names[] = { "libstdc++-6.dll", "libc++.dll" };
	add_runtime(found, linked_runtime);
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		HMODULE module = GetModuleHandleA(names[i]);
		FARPROC get = module ? GetProcAddress(module, "__cxa_get_globals") : NULL;
		add_runtime(found, (eh_globals_func)(void (*)(void))get);
	}
}
#elif (defined(__ELF__) || defined(__APPLE__)) && !defined(__EMSCRIPTEN__)
#include <dlfcn.h>
#if defined(__APPLE__)
#include <mach-o/dyld.h>
/* No weak reference (see above).  libc++abi, loaded in every process
 * (libSystem needs it), is found at the first look. */
static const char *const runtime_names[] = { "/usr/lib/libc++abi.dylib" };

static int modules_changed(void)
{
	static thread_local uint32_t seen;
	uint32_t images = _dyld_image_count();
	if (images == seen)
		return 0;
	seen = images;
	return 1;
}
#else
#include <link.h>

static const char *const runtime_names[] = { "libstdc++.so.6", "libc++abi.so.1" };

/* How many modules have ever been loaded and unloaded (glibc and musl
 * count them): the first module's entry says, and the walk stops there. */
static int count_loads(struct dl_phdr_info *info, size_t size, void *loads)
{
	(void)size;
	*(unsigned long long *)loads = info->dlpi_adds + info->dlpi_subs;
	return 1;
}

static int modules_changed(void)
{
	static thread_local unsigned long long seen;
	unsigned long long loads = 0;
	dl_iterate_phdr(count_loads, &loads);
	if (loads == seen)
		return 0;
	seen = loads;
	return 1;
}
#endif

/* dlopen with RTLD_NOLOAD opens only what is loaded already: looking
 * never loads a runtime. */
static eh_globals_func find_in_runtime(const char *name)
{
	void *module = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
	if (module == NULL)
		return NULL;
	void *found = dlsym(module, "__cxa_get_globals");
	dlclose(module);
	return (eh_globals_func)found;
}

/* In the global scope (dlsym), which misses a library loaded RTLD_LOCAL
 * (dlopen's default) and the runtime it brought, so also by file name. */
static void find_runtimes(struct runtimes *found)
{
#if !defined(__APPLE__)
	add_runtime(found, linked_runtime);
#endif
	add_runtime(found, (eh_globals_func)dlsym(RTLD_DEFAULT, "__cxa_get_globals"));
	for (size_t i = 0; i < sizeof runtime_names / sizeof runtime_names[0]; i++)
		add_runtime(found, find_in_runtime(runtime_names[i]));
}
#else
/* Microsoft's ABI or WebAssembly: only the runtime linked in, and nothing
 * arrives later. */
static int modules_changed(void)
{
	return 0;
}

static void find_runtimes(struct runtimes *found)
{
	add_runtime(found, linked_runtime);
}
#endif

/* Only Windows with the Itanium C++ ABI registers something while a
 * schedule is open (see modules_changed there). */
#if !defined(_WIN32) || EH_MSVC_ABI
static void first_schedule_opened(void) {}
static void last_schedule_closed(void) {}
#endif

/* Windows runs DllMain, and the constructors and destructors of a DLL's
 * statics, under the loader lock, which ntdll may take (Wine's does) to
 * register or drop a DLL notification: coroutine_open or coroutine_close
 * there would wait for the open schedules' lock while a thread holding it
 * waits for the loader lock.  So both refuse there, with either C++ ABI (a
 * program behaves the same on both).  The lock is a critical section, which
 * names the thread owning it; on x64 the TEB holds the PEB's address at
 * 0x60, and the PEB the lock's at 0x110 (SDKs' winternl.h name them
 * differently). */
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
static void refuse_under_loader_lock(const char *func)
{
	(void)func;
}
#endif

/* ---- WebAssembly's frames (Emscripten's fibers) ----------------------------
 *
 * Wasm code cannot reach its own call stack: Asyncify (-sASYNCIFY) rewrites
 * every function that may reach a switch so that it can save its locals and
 * where it stands ("unwind") and later go on from there ("rewind").  A fiber
 * is then two stacks: its C stack in linear memory (the run stack, copied at
 * a yield as on every backend), and its wasm frames, unwound into an
 * asyncify area, which a coroutine uses while it owns the run stack.
 */
#if COROUTINE_FIBER
#ifndef COROUTINE_ASYNCIFY_SIZE
#define COROUTINE_ASYNCIFY_SIZE (64 * 1024) /* main's and the coroutines' */
#endif
#define ASYNCIFY_SIZE ((size_t)(COROUTINE_ASYNCIFY_SIZE))

/* Two things Emscripten's fibers (3.1.6) leave undone, done once in the
 * JavaScript that runs the module: main's return value, which the fiber
 * trampoline that rewound main would drop, goes to exit(); and an area
 * overflow, which Asyncify stops with "unreachable", is reported first. */
EM_JS(void, fiber_hooks, (size_t area_size), {
	if (Fibers.coroutineHooks)
		return;
	Fibers.coroutineHooks = true;
	var rewind = Asyncify.doRewind;
	Asyncify.doRewind = function(data) {
		var status = rewind(data);
		/* Until main has returned for good, everything runs inside the
		 * first call of main, and a rewound call that returns with no
		 * switch to follow is main's: a coroutine never returns. */
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

/* Bytes of wasm frames that C's last unwind left in the area. */
static size_t unwound_bytes(const struct schedule *S, const struct coroutine *C)
{
	return (size_t)((char *)C->ctx.fiber.asyncify_data.stack_ptr - S->frames);
}

/* Hands the asyncify area over to C, or to a coroutine that starts (NULL),
 * with the run stack.  Every fiber unwinds into the schedule's area, and the
 * owner's frames stay there: resuming it copies nothing.  When the run stack
 * changes hands, the owner's go to a buffer of its own, and C's come back. */
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

/* The copy's own wasm frames: the owner's are in the schedule's area, the
 * others' in their buffers.  0 when out of memory. */
static int copy_frames(struct schedule *S, const struct coroutine *C, struct coroutine *copy)
{
	size_t n = unwound_bytes(S, C);
	copy->frames = (char *)malloc(n > 0 ? n : 1);
	if (copy->frames == NULL)
		return 0;
	memcpy(copy->frames, C == S->owner ? S->frames : C->frames, n);
	return 1;
}

/* The bounds of the C stack main's fiber runs on, which each switch back
 * to main restores (-sSTACK_OVERFLOW_CHECK=2 checks against them): the
 * resumer's, a coroutine of another schedule when schedules nest. */
static void note_main_stack(struct schedule *S)
{
	S->main.fiber.stack_base = (void *)emscripten_stack_get_base();
	S->main.fiber.stack_limit = (void *)emscripten_stack_get_end();
}

/* The asyncify areas, the coroutines' then main's, in the lowest bytes of
 * the guard: Asyncify writes a switch's frames first and checks the area's
 * end after, so an area that overflows must overwrite nothing that the
 * report of the overflow reads. */
static_assert(2 * ASYNCIFY_SIZE <= GUARD_SIZE / 2,
	      "the asyncify areas must leave most of the guard free");

static void make_frames(struct schedule *S)
{
	S->frames = S->stack - GUARD_SIZE;
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

/* ---- The context switch: starting a coroutine, per backend -------------- */

#if COROUTINE_ASM
static void start_coroutine(struct schedule *S, struct coroutine *C)
{
	(void)C;
#if defined(_WIN32)
	coroutine_start_context(&S->main, S->top, run_coroutine, finish_coroutine, S, S->stack, S->stack - GUARD_SIZE);
#else
	coroutine_start_context(&S->main, S->top, run_coroutine, finish_coroutine, S);
#endif
}
#elif COROUTINE_FIBER
static void enter_fiber(void *S)
{
	run_coroutine((struct schedule *)S, NULL);
	finish_coroutine((struct schedule *)S);
}

/* Its C stack is the run stack; its wasm frames go to the schedule's area. */
static void start_coroutine(struct schedule *S, struct coroutine *C)
{
	emscripten_fiber_init(&C->ctx.fiber, enter_fiber, S, S->stack, STACK_SIZE, S->frames, ASYNCIFY_SIZE);
	SWITCH_CONTEXT(&S->main, &C->ctx);
}
#else
/* makecontext passes int arguments only, so the pointer travels in halves. */
static void run_coroutine_ucontext(uint32_t low, uint32_t high)
{
	struct schedule *S = (struct schedule *)(((uintptr_t)high << 16 << 16) | low);
	run_coroutine(S, NULL);
	finish_coroutine(S);
}

/* glibc's makecontext on x86 puts words above its entry's return address
 * (uc_link, padding; on i386 the arguments), which no coroutine reads again:
 * given a stack that ends TOP_ROOM bytes above the top, they lie out of
 * every slice.  Whether the entry's return address is below the top. */
static int entry_below_top(const struct schedule *S, const context *ctx)
{
#if TOP_ROOM > 0 && defined(__x86_64__)
	return (char *)ctx->uc_mcontext.gregs[REG_RSP] + sizeof(void *) <= S->top;
#elif TOP_ROOM > 0
	return (char *)ctx->uc_mcontext.gregs[REG_ESP] + sizeof(void *) <= S->top;
#else
	return (void)S, (void)ctx, 1;
#endif
}

/* A new coroutine starts with main's MXCSR (saved here), as with asm. */
static void start_coroutine(struct schedule *S, struct coroutine *C)
{
	uintptr_t ptr = (uintptr_t)S;
	getcontext(&C->ctx);
	save_mxcsr(&C->ctx);
	C->ctx.uc_stack.ss_sp = S->stack;
	C->ctx.uc_stack.ss_size = (size_t)STACK_SIZE + TOP_ROOM;
	C->ctx.uc_link = NULL;
	makecontext(&C->ctx, (void (*)(void))run_coroutine_ucontext, 2,
		    (uint32_t)ptr, (uint32_t)(ptr >> 16 >> 16));
	if (!entry_below_top(S, &C->ctx))
		fail("coroutine_resume: this C library's makecontext puts more than %d bytes above "
		     "its entry (TOP_ROOM in coroutine.cpp)", TOP_ROOM);
	SWITCH_CONTEXT(&S->main, &C->ctx);
}
#endif

/* ---- The context of a copy, per backend ------------------------------------
 *
 * coroutine_clone copies a suspended coroutine's context byte for byte; what
 * in it points into the context itself must then point into the copy's.
 */
#if COROUTINE_ASM
/* Plain words: registers, which point into the run stack (where the copy's
 * slice lies at the same addresses), into the heap or the code; on Windows
 * also the TIB's words, the run stack's bounds and the head of the
 * coroutine's exception list (-1, or a record in its frames): the same. */
static void rebase_copied_context(context *, const context *) {}
#elif COROUTINE_FIBER
/* The C stack's pointers are into the run stack, the asyncify data's into
 * the schedule's area, where hand_over_frames puts the copy's own frames
 * back (see copy_frames): the same. */
static void rebase_copied_context(context *, const context *) {}
#elif defined(__APPLE__) || (defined(__GLIBC__) && (defined(__x86_64__) || defined(__i386__)))
/* p, if it points into the context *from, at the same place in *to. */
static void *rebased(void *p, const context *from, context *to)
{
	uintptr_t offset = (uintptr_t)p - (uintptr_t)from;
	return offset < sizeof *from ? (char *)to + offset : p;
}

/* swapcontext restores the FP state through a pointer that getcontext aims
 * into the context itself: glibc's on x86 (uc_mcontext.fpregs, at
 * __fpregs_mem: the x87 control word, the rounding mode of long double)
 * and macOS's (uc_mcontext, at __mcontext_data).  Left alone, a copy would
 * take its original's, and read freed memory once the original is gone. */
static void rebase_copied_context(context *copy, const context *original)
{
#if defined(__APPLE__)
	copy->uc_mcontext = (mcontext_t)rebased(copy->uc_mcontext, original, copy);
#else
	copy->uc_mcontext.fpregs = (fpregset_t)rebased(copy->uc_mcontext.fpregs, original, copy);
#endif
}
#else
/* glibc keeps the FP state inside uc_mcontext on aarch64, armv7 and
 * riscv64, with no pointer to it: a copy of the words is right. */
static void rebase_copied_context(context *, const context *) {}
#endif

/* ---- Slices in their blocks, and the quick paths of a shallow one ------- */

/* What the ABI guarantees of the stack pointer at every call: 16 bytes on
 * the 64-bit targets; otherwise assume no more than a pointer's size. */
#if defined(__x86_64__) || defined(__aarch64__)
#define CALL_ALIGN 16
#else
#define CALL_ALIGN sizeof(void *)
#endif
/* Slices are whole blocks of this many bytes (see copy_shallow). */
#define BLOCK 16

/* The bottom of the live slice of the function whose local dummy is: up to
 * CALL_ALIGN, shedding that function's own frame (dead once it returns),
 * then down to a whole block.  Laundered, so that the compiler cannot trace
 * it back to dummy and assume that only one byte is read. */
static char *slice_bottom(char *dummy)
{
	uintptr_t rounded = ((uintptr_t)dummy + CALL_ALIGN - 1) & ~(uintptr_t)(CALL_ALIGN - 1);
	return launder((char *)(rounded & ~(uintptr_t)(BLOCK - 1)));
}

/* The saved shallow slice: right after the struct, in the coroutine's own block. */
static char *saved_slice(struct coroutine *C)
{
	return (char *)(C + 1);
}

/* A deep slice lies as far into a 64-byte line as its bottom on the run
 * stack (less than SLICE_ALIGN bytes further): memcpy then finds both ends
 * of each copy aligned alike. */
static char *saved_deep_slice(struct coroutine *C, const char *bottom)
{
	char *start = saved_slice(C);
	return start + (((uintptr_t)bottom - (uintptr_t)start) & (SLICE_ALIGN - 1));
}

/* Whether a slice of size bytes is shallow: at least a block, at most
 * SHALLOW_SLICE; and the most of one that a block with room bytes after the
 * struct holds (C->room). */
#if SHALLOW_SLICE > 0
static int is_shallow(size_t size)
{
	return size - 1 < SHALLOW_SLICE;
}

static unsigned char shallow_room(size_t room)
{
	static_assert(SHALLOW_SLICE <= UCHAR_MAX, "C->room holds up to SHALLOW_SLICE");
	return (unsigned char)(room < SHALLOW_SLICE ? room : SHALLOW_SLICE);
}
#else
static int is_shallow(size_t) { return 0; }
static unsigned char shallow_room(size_t) { return 0; }
#endif

/* Bytes of block after the struct that hold a slice of size bytes: a deep
 * slice lies up to SLICE_ALIGN - 1 bytes in (see saved_deep_slice). */
static size_t room_for_slice(size_t size)
{
	return is_shallow(size) ? size : size + SLICE_ALIGN - 1;
}

/* Where C's block holds a slice of size bytes whose bottom on the run stack
 * is bottom: the same place at the save and at the restore. */
static char *slice_in_block(struct coroutine *C, const char *bottom, size_t size)
{
	return is_shallow(size) ? saved_slice(C) : saved_deep_slice(C, bottom);
}

/* A block as two 64-bit words, through integer registers: the bottom block
 * of a yielding slice, which the call to coroutine_yield and its push wrote
 * a moment ago, a word each (a wider load across both would wait for them to
 * reach the cache).  The empty asm keeps the compiler from merging them. */
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

/* Any other block, in one move where the target has one (two words take
 * four instructions on x86_64): what its loads read, a block store wrote
 * (the quick restore's) or the stack holds since long before. */
static ALWAYS_INLINE void copy_block(char *to, const char *from)
{
#if defined(HAVE_COPY_16)
	copy_16(to, from);
#else
	copy_words(to, from);
#endif
}

/* A shallow slice, 1 to 6 whole blocks, with no loop and no call, so that
 * its callers need no stack frame: a jump into a run of block copies, the
 * last ones first (Duff's device, without the loop).  Leaving the run stack
 * (bottom_by_words), the bottom block goes word by word. */
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

/* Any slice.  Under ASan it holds the redzones between locals, so code ASan
 * does not check copies it; the volatile keeps the compiler from turning the
 * loop back into a (checked) memcpy. */
NO_ASAN static void copy_stack(char *to, const char *from, size_t n)
{
#if COROUTINE_ASAN
	const volatile char *src = from;
	for (size_t i = 0; i < n; i++)
		to[i] = src[i];
#else
	memcpy(to, from, n);
#endif
}

/* The yielding coroutine (the owner), its block made to hold a slice of
 * size bytes, or NULL when out of memory: realloc may move it, and its slot
 * and S->owner follow (nothing else holds its address across a yield).  Out
 * of the common case's way. */
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
/* save_stack's common case: a shallow slice that C's block holds (C->room),
 * saved with no stack frame, so that the slice is smaller by one (on x86_64
 * dummy sits in the red zone).  Else NULL, for save_stack.  As unsigned, a
 * bottom off the run stack makes a size that never fits. */
NOINLINE NO_ASAN static context *save_shallow_stack(struct schedule *S, struct coroutine *C)
{
	char dummy; /* only its address counts */
	char *bottom = slice_bottom(&dummy);
	size_t size = (uintptr_t)S->top - (uintptr_t)bottom;
	if (size - 1 >= C->room)
		return NULL;
	C->size = (unsigned)size;
	copy_shallow(saved_slice(C), bottom, size, true);
	return &C->ctx;
}
#else
static context *save_shallow_stack(struct schedule *, struct coroutine *) { return NULL; }
#endif

/* take_run_stack's common case: a shallow slice, and no tool watching
 * (S->quick_put_back, SHALLOW_SLICE or 0, says both in one compare: a
 * suspended coroutine's slice is never empty).  It
 * needs no stack frame and ends with the switch, like take_run_stack, so
 * that coroutine_resume, into which it is inlined, needs none either. */
static void take_run_stack_quickly(struct schedule *S, struct coroutine *C)
{
	size_t size = C->size; /* as wide as S->quick_put_back: no conversion */
	if (SHALLOW_SLICE == 0 || size > S->quick_put_back) {
		take_run_stack(S, C);
		return;
	}
	copy_shallow(S->top - size, saved_slice(C), size, false);
	S->owner = C;
	continue_owner(S);
}

/* ---- AddressSanitizer and valgrind -------------------------------------- */

#if COROUTINE_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>

/* ASan must be told when the stack pointer moves to another stack (the
 * "fiber switch" calls), or it takes the run stack for a wild overflow of
 * the main stack.  C is NULL at a coroutine's first entry (no bookkeeping
 * yet) and once it has finished (its bookkeeping can go). */
static void asan_leave_main(struct schedule *S)
{
	__sanitizer_start_switch_fiber(&S->main_fake_stack, S->stack, STACK_SIZE);
}

static void asan_back_in_main(struct schedule *S)
{
	__sanitizer_finish_switch_fiber(S->main_fake_stack, NULL, NULL);
}

static void asan_enter_coroutine(struct schedule *S, struct coroutine *C)
{
	__sanitizer_finish_switch_fiber(C ? C->fake_stack : NULL, &S->main_bottom, &S->main_size);
}

static void asan_leave_coroutine(struct schedule *S, struct coroutine *C)
{
	__sanitizer_start_switch_fiber(C ? &C->fake_stack : NULL, S->main_bottom, S->main_size);
}

/* detect_stack_use_after_return keeps locals in a "fake stack" per fiber,
 * freed when the fiber leaves its stack for good.  A coroutine closed while
 * suspended never does, so it is made to, by announced switches to its
 * fiber and away for good, with no real switch. */
NO_ASAN static void asan_free_fake_stack(struct schedule *S, struct coroutine *C)
{
	void *main_fake_stack;
	const void *bottom;
	size_t size;
	__sanitizer_start_switch_fiber(&main_fake_stack, S->stack, STACK_SIZE);
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

/* ASan's shadow of the live slice of C, n bytes of it. */
static char *slice_shadow(struct schedule *S, struct coroutine *C, size_t *n)
{
	size_t scale;
	char *bottom = S->top - C->size;
	char *shadow = (char *)shadow_of(bottom, &scale);
	*n = ((uintptr_t)S->top >> scale) - ((uintptr_t)bottom >> scale);
	return shadow;
}

/* The shadow of the live slice (the redzones around the locals of frames
 * that have not returned) is saved and put back with its bytes, so that
 * ASan still sees an overflow of a local that lived across a yield.  Out of
 * memory: 0 if the yield may fail, else it stops, naming func.  The shadow
 * is memory ASan does not let checked code touch. */
NO_ASAN static int asan_save_shadow(struct schedule *S, struct coroutine *C, const char *func, int may_fail)
{
	size_t n;
	const char *from = slice_shadow(S, C, &n);
	if (C->shadow == NULL || buffer_capacity(C->shadow) < n) {
		char *grown = (char *)malloc(n);
		if (grown == NULL && may_fail)
			return 0;
		if (grown == NULL)
			fail("%s: out of memory saving %zu bytes of ASan shadow", func, n);
		free(C->shadow);
		C->shadow = grown;
	}
	copy_stack(C->shadow, from, n);
	return 1;
}

NO_ASAN static void asan_restore_shadow(struct schedule *S, struct coroutine *C)
{
	size_t n;
	char *to = slice_shadow(S, C, &n);
	copy_stack(to, C->shadow, n);
}

static void asan_free_shadow(struct coroutine *C)
{
	free(C->shadow);
}

/* Whether a word of size bytes at words points into a live frame of fake_stack. */
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

/* Whether suspended C keeps locals in a live frame of its fake stack: a
 * function whose frame is there keeps the frame's address until it returns
 * (to free the frame then), so a word of the saved slice or registers
 * points into it, as a conservative collector finds its roots.  The copy's
 * frames would point into the same frames. */
static int asan_keeps_fake_frames(struct schedule *S, struct coroutine *C)
{
	return C->fake_stack != NULL
	    && (points_into_fake_frame(C->fake_stack, slice_in_block(C, S->top - C->size, C->size), C->size)
		|| points_into_fake_frame(C->fake_stack, (const char *)&C->ctx, sizeof C->ctx));
}

/* The copy's own saved shadow; its fake stack is none yet (ASan makes one
 * when it first needs one).  0 when out of memory. */
NO_ASAN static int asan_copy_shadow(struct schedule *S, const struct coroutine *C, struct coroutine *copy)
{
	size_t n;
	slice_shadow(S, copy, &n);
	copy->shadow = (char *)malloc(n);
	if (copy->shadow == NULL)
		return 0;
	copy_stack(copy->shadow, C->shadow, n);
	return 1;
}
#else
static void asan_leave_main(struct schedule *) {}
static void asan_back_in_main(struct schedule *) {}
static void asan_enter_coroutine(struct schedule *, struct coroutine *) {}
static void asan_leave_coroutine(struct schedule *, struct coroutine *) {}
static void asan_free_fake_stack(struct schedule *, struct coroutine *) {}
static int asan_save_shadow(struct schedule *, struct coroutine *, const char *, int) { return 1; }
static void asan_restore_shadow(struct schedule *, struct coroutine *) {}
static void asan_free_shadow(struct coroutine *) {}
static int asan_keeps_fake_frames(struct schedule *, struct coroutine *) { return 0; }
static int asan_copy_shadow(struct schedule *, const struct coroutine *, struct coroutine *) { return 1; }
#endif

/* Whether a tool watches the run stack (forget_run_stack has someone to
 * tell), asked once: a request costs even when nothing answers.  GET_VBITS
 * returns 1 under memcheck, 0 under no valgrind or another tool (callgrind). */
#if COROUTINE_VALGRIND
static int tools_register_run_stack(struct schedule *S)
{
	/* So that valgrind tells a switch from a huge frame. */
	S->valgrind_stack_id = VALGRIND_STACK_REGISTER(S->stack, S->stack + STACK_SIZE);
	char probe = 0, vbits;
	S->memcheck = VALGRIND_GET_VBITS(&probe, &vbits, 1) == 1;
	return COROUTINE_ASAN || S->memcheck;
}

/* Out of line: the request builds its arguments in a frame of its own. */
NOINLINE static void memcheck_forget_run_stack(struct schedule *S)
{
	VALGRIND_MAKE_MEM_UNDEFINED(S->stack, STACK_SIZE);
}
#define MEMCHECK_WATCHES(S) ((S)->memcheck)
#define VALGRIND_FORGET_SCHEDULE(S) VALGRIND_STACK_DEREGISTER((S)->valgrind_stack_id)
#else
static int tools_register_run_stack(struct schedule *) { return COROUTINE_ASAN; }
static void memcheck_forget_run_stack(struct schedule *) {}
#define MEMCHECK_WATCHES(S) ((void)(S), 0)
#define VALGRIND_FORGET_SCHEDULE(S) ((void)0)
#endif

/* The bytes on the run stack belong to a coroutine that is not coming back
 * to them: ASan may hold the poison of its frames, memcheck may hold popped
 * frames as inaccessible, and both would report the next occupant. */
static void forget_run_stack(struct schedule *S)
{
#if COROUTINE_ASAN
	ASAN_UNPOISON_MEMORY_REGION(S->stack, STACK_SIZE);
#endif
	if (MEMCHECK_WATCHES(S))
		memcheck_forget_run_stack(S);
}

/* At close: a later mapping at these addresses must not inherit stale
 * poison, nor valgrind's idea of a stack. */
static void tools_forget_schedule(struct schedule *S)
{
	forget_run_stack(S);
	VALGRIND_FORGET_SCHEDULE(S);
}

/* ---- The checked build: the run stack out of main's reach ------------------
 *
 * With -DCOROUTINE_CHECKED=1, main cannot touch the run stack: it is made
 * inaccessible at open and at every return to main (a yield, a finish), and
 * accessible again only while the library itself works on it, from the top
 * of a resume.  So a pointer that main kept to a suspended coroutine's local
 * faults at its first use, and a fault handler, installed from the first
 * open to the last close, finds on the list of open schedules whose run
 * stack was hit, and says whose bytes may lie there.  Then the fault goes
 * where it would have gone with no check, as the kernel would have sent it:
 * to the program's own handler, or the default action, which ends the
 * process on the faulting access itself (a core file and a debugger see
 * that access, not a handler calling abort).  Every other fault, and the
 * guard's, is passed on untouched.
 *
 * Two system calls per round trip: microseconds, for debugging builds.  Each
 * schedule protects only its own run stack, so schedules on other threads
 * never trip, and a running coroutine's run stack is never protected.  Under
 * AddressSanitizer, a suspended coroutine's locals that ASan keeps off the
 * run stack are poisoned besides (at the end of the section), so that a
 * coroutine's use of another's is stopped too.
 */
#if COROUTINE_CHECKED
/* The line that names the fault, built without stdio (a signal handler may
 * call only async-signal-safe functions): text, a decimal, a hexadecimal. */
struct report_line {
	char text[512];
	size_t n;
};

static void add_text(struct report_line *line, const char *text)
{
	while (*text != '\0' && line->n < sizeof line->text - 1)
		line->text[line->n++] = *text++;
}

static void add_number(struct report_line *line, uintmax_t value, unsigned base)
{
	char digits[24];
	size_t n = 0;
	do
		digits[n++] = "0123456789abcdef"[value % base];
	while ((value /= base) != 0);
	while (n > 0 && line->n < sizeof line->text - 1)
		line->text[line->n++] = digits[--n];
}

/* The open schedule whose run stack (with the room above its top) holds
 * address, or NULL.  Only a real fault asks, never inside the list's lock
 * (which does no memory access that can fault), so the lock is taken: a
 * schedule being closed on another thread stays readable until we are done. */
static struct schedule *schedule_whose_run_stack(const char *address)
{
	struct schedule *S = open_schedules;
	while (S != NULL && !(S->stack != NULL && address >= S->stack && address < S->stack + MAPPED_STACK_SIZE))
		S = S->next_open;
	return S;
}

static void add_coroutine(struct report_line *line, int id)
{
	add_text(line, "coroutine ");
	add_number(line, (uintmax_t)id, 10);
}

static void add_schedule(struct report_line *line, const struct schedule *S)
{
	add_text(line, "schedule 0x");
	add_number(line, (uintmax_t)(uintptr_t)S, 16);
}

static uintmax_t system_thread_id(void); /* per platform, below: 0 if none */

/* "main read", "coroutine 1 wrote to" or, of another schedule than S whose
 * run stack or locals were touched, "coroutine 1 (schedule 0x...) read":
 * whatever runs on this thread, an open schedule's coroutine; else main,
 * on S's thread; else "another thread (id 1234)", by the system's number
 * (gdb's LWP).  A thread that never used the library has no number (and
 * runs none). */
static void add_toucher(struct report_line *line, const struct schedule *S, const char *verb)
{
	const struct schedule *R = open_schedules;
	while (R != NULL && !(R->running >= 0 && R->thread == thread_number && thread_number != 0))
		R = R->next_open;
	if (R != NULL) {
		add_coroutine(line, R->running);
		if (R != S) {
			add_text(line, " (");
			add_schedule(line, R);
			add_text(line, ")");
		}
	} else if (S->thread == thread_number && thread_number != 0) {
		add_text(line, "main");
	} else {
		uintmax_t id = system_thread_id();
		add_text(line, "another thread");
		if (id != 0) {
			add_text(line, " (id ");
			add_number(line, id, 10);
			add_text(line, ")");
		}
	}
	add_text(line, " ");
	add_text(line, verb);
}

static void add_rule(struct report_line *line, int suspended)
{
	if (suspended >= 0) {
		add_text(line, ") while ");
		add_coroutine(line, suspended);
		add_text(line, " is suspended: a suspended coroutine's locals have no address");
	} else {
		add_text(line, ") while no coroutine is on it: a finished coroutine's locals have no address");
	}
	add_text(line, " (the shared-stack rule)\n");
}

/* C's id in S, or -1. */
static int slot_of(const struct schedule *S, const struct coroutine *C)
{
	for (int id = 0; id < S->cap; id++)
		if (S->co[id] == C)
			return id;
	return -1;
}

/* The suspended coroutines of S whose saved slices reach below_top bytes
 * under the top (top - address <= size): a local there is one of theirs.
 * How many, and the first NAMED ids, which the line lists. */
#define NAMED 4
struct covering {
	int id[NAMED];
	int n;
};

static void find_covering(const struct schedule *S, size_t below_top, struct covering *c)
{
	c->n = 0;
	/* An empty slot's size is 0, as a coroutine's that has not run. */
	for (int id = 0; id < S->cap && below_top > 0; id++)
		if (below_top <= S->co[id]->size && id != S->running) {
			if (c->n < NAMED)
				c->id[c->n] = id;
			c->n++;
		}
}

/* "coroutine 0, 1, 2, 3 or 996 others" */
static void add_ids(struct report_line *line, const struct covering *c)
{
	int listed = c->n <= NAMED ? c->n : NAMED;
	add_coroutine(line, c->id[0]);
	for (int k = 1; k < listed; k++) {
		add_text(line, k + 1 < listed || c->n > NAMED ? ", " : " or ");
		add_number(line, (uintmax_t)c->id[k], 10);
	}
	if (c->n > NAMED) {
		add_text(line, " or ");
		add_number(line, (uintmax_t)(c->n - NAMED), 10);
		add_text(line, c->n - NAMED == 1 ? " other" : " others");
	}
}

static void add_offset(struct report_line *line, const struct schedule *S, const char *address)
{
	add_text(line, address < S->top ? " (top-" : " (top+");
	add_number(line, address < S->top ? (uintmax_t)(S->top - address) : (uintmax_t)(address - S->top), 10);
	add_text(line, ", ");
	add_schedule(line, S);
}

/* "main read coroutine 0's stack (top-40, schedule 0x...) while coroutine 0
 * is suspended: ...": whose locals may lie at address.  Those of the
 * suspended coroutines whose saved slices reach it, all of them (any may
 * have handed out the pointer); else bytes of a call that has returned, of
 * whichever coroutine ran there, which nothing records: the line names the
 * last to run, and says so.  With none (none has run, or the last one
 * finished), nobody's. */
static void describe_touch(struct report_line *line, struct schedule *S, const char *address, const char *verb)
{
	struct covering c;
	find_covering(S, address < S->top ? (size_t)(S->top - address) : 0, &c);
	int last = S->owner != NULL ? slot_of(S, S->owner) : -1;
	add_toucher(line, S, verb);
	if (address >= S->top) {
		add_text(line, " the run stack's room above its top");
		add_offset(line, S, address);
		add_text(line, "), where no coroutine's locals lie (the shared-stack rule)\n");
	} else if (c.n == 1) {
		add_text(line, " ");
		add_coroutine(line, c.id[0]);
		add_text(line, "'s stack");
		add_offset(line, S, address);
		add_rule(line, c.id[0]);
	} else if (c.n > 1) {
		add_text(line, " the stack of ");
		add_ids(line, &c);
		add_offset(line, S, address);
		add_text(line, ") while they are suspended: a suspended coroutine's locals have no address "
			 "(the shared-stack rule); the saved slices of all ");
		add_number(line, (uintmax_t)c.n, 10);
		add_text(line, " reach there, and gdb's coroutine bt ID shows which of their functions "
			 "has a local at top-");
		add_number(line, (uintmax_t)(S->top - address), 10);
		add_text(line, "\n");
	} else if (last >= 0) {
		add_text(line, " the run stack");
		add_offset(line, S, address);
		add_text(line, ") below every suspended coroutine's slice, where ");
		add_coroutine(line, last);
		add_text(line, " ran last: the locals of a call that has returned have no address (the shared-stack rule)\n");
	} else {
		add_text(line, " the run stack");
		add_offset(line, S, address);
		add_rule(line, -1);
	}
}

static void print_to_stderr(const char *text, size_t n); /* per platform, below */
static void describe_fake_touch(struct report_line *line, const char *address, const char *verb);

/* If a touch of address, an access of kind verb, was on a protected run
 * stack (a fault), or on a suspended coroutine's fake frames (ASan's
 * report), the line that says so.  The lock is tried for a bounded time:
 * only a bug of the library's own could fault while holding it. */
static void report_touch(const void *address, const char *verb, int in_fake_frames)
{
	int locked = 0;
	for (long tries = 0; !locked && tries < 100000000; tries++)
		locked = try_lock_open_schedules();
	struct report_line line;
	line.n = 0;
	if (in_fake_frames) {
		describe_fake_touch(&line, (const char *)address, verb);
	} else {
		struct schedule *S = schedule_whose_run_stack((const char *)address);
		if (S != NULL)
			describe_touch(&line, S, (const char *)address, verb);
	}
	if (locked)
		unlock_open_schedules();
	print_to_stderr(line.text, line.n);
}

#if defined(_WIN32)
/* VirtualProtect, and a vectored exception handler, which sees each access
 * violation first and passes it on (EXCEPTION_CONTINUE_SEARCH) to the
 * program's handlers, or to the end of the process. */
static void *fault_watcher; /* AddVectoredExceptionHandler's, under the list's lock */

static void set_run_stack_access(struct schedule *S, DWORD access)
{
	DWORD old;
	if (!VirtualProtect(S->stack, MAPPED_STACK_SIZE, access, &old))
		fail("the checked build: VirtualProtect of the run stack failed (error %lu)", (unsigned long)GetLastError());
}

static void unprotect_run_stack(struct schedule *S) { set_run_stack_access(S, PAGE_READWRITE); }
static void protect_run_stack(struct schedule *S) { set_run_stack_access(S, PAGE_NOACCESS); }

static void print_to_stderr(const char *text, size_t n)
{
	fwrite(text, 1, n, stderr);
	fflush(stderr);
}

static uintmax_t system_thread_id(void)
{
	return GetCurrentThreadId();
}

/* ExceptionInformation: what the access was (0 read, 1 write, 8 execute), and where. */
static LONG CALLBACK on_access_violation(EXCEPTION_POINTERS *e)
{
	const EXCEPTION_RECORD *r = e->ExceptionRecord;
	if (r->ExceptionCode == EXCEPTION_ACCESS_VIOLATION && r->NumberParameters >= 2) {
		ULONG_PTR kind = r->ExceptionInformation[0];
		report_touch((const void *)r->ExceptionInformation[1],
			     kind == 0 ? "read" : kind == 1 ? "wrote to" : "touched", 0);
	}
	return EXCEPTION_CONTINUE_SEARCH;
}

static void watch_faults(void)
{
	fault_watcher = AddVectoredExceptionHandler(1, on_access_violation);
	if (fault_watcher == NULL)
		fail("coroutine_open: AddVectoredExceptionHandler failed (the checked build)");
}

/* A module that is freed must leave no handler of its code behind. */
static void stop_watching_faults(void)
{
	RemoveVectoredExceptionHandler(fault_watcher);
	fault_watcher = NULL;
}
#else
#include <errno.h>
#include <signal.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#elif defined(__APPLE__)
#include <pthread.h>
#endif

static void set_run_stack_access(struct schedule *S, int access)
{
	if (mprotect(S->stack, MAPPED_STACK_SIZE, access) != 0)
		fail("the checked build: mprotect of the run stack failed (%s)", strerror(errno));
}

static void unprotect_run_stack(struct schedule *S) { set_run_stack_access(S, PROT_READ | PROT_WRITE); }
static void protect_run_stack(struct schedule *S) { set_run_stack_access(S, PROT_NONE); }

static void print_to_stderr(const char *text, size_t n)
{
	while (n > 0) {
		ssize_t written = write(2, text, n);
		if (written <= 0)
			return;
		text += written, n -= (size_t)written;
	}
}

static uintmax_t system_thread_id(void)
{
#if defined(__linux__)
	return (uintmax_t)syscall(SYS_gettid);
#elif defined(__APPLE__)
	uint64_t id = 0;
	pthread_threadid_np(NULL, &id);
	return id;
#else
	return 0;
#endif
}

/* Whether the access was a write, as far as the CPU says: x86_64's page
 * fault error code (bit 1), aarch64's fault syndrome (a data abort's WnR
 * bit), which Linux puts in the signal context.  Elsewhere: "touched". */
static const char *access_kind(const void *context)
{
#if defined(__linux__) && defined(__x86_64__)
	const ucontext_t *uc = (const ucontext_t *)context;
	return uc->uc_mcontext.gregs[REG_ERR] & 2 ? "wrote to" : "read";
#elif defined(__linux__) && defined(__aarch64__)
	/* Records of {magic, size} in __reserved, ended by a magic of 0. */
	const unsigned char *record = ((const ucontext_t *)context)->uc_mcontext.__reserved;
	const unsigned char *end = record + sizeof ((const ucontext_t *)context)->uc_mcontext.__reserved;
	while (record + 16 <= end) {
		uint32_t magic, size;
		uint64_t esr;
		memcpy(&magic, record, 4);
		memcpy(&size, record + 4, 4);
		if (magic == 0 || size < 8)
			break;
		if (magic == 0x45535201) { /* ESR_MAGIC */
			memcpy(&esr, record + 8, 8);
			unsigned ec = (unsigned)(esr >> 26) & 0x3f;
			if (ec == 0x24 || ec == 0x25) /* a data abort, from EL0 or EL1 */
				return esr & (1u << 6) ? "wrote to" : "read";
			break;
		}
		record += size;
	}
	return "touched";
#else
	(void)context;
	return "touched";
#endif
}

/* What this copy of the library keeps of the fault handlers: its own, and
 * the actions it replaced, which it passes faults on to (the program's, the
 * sanitizers', another copy's).  Other copies read and write it: see
 * "Several copies of the library", below. */
#if defined(__APPLE__)
static const int fault_signals[] = { SIGSEGV, SIGBUS }; /* macOS: SIGBUS for a protected page */
#else
static const int fault_signals[] = { SIGSEGV };
#endif
#define FAULT_SIGNALS (sizeof fault_signals / sizeof fault_signals[0])
typedef void (*fault_handler)(int, siginfo_t *, void *);
struct fault_chain_link {
	uint32_t size;          /* sizeof (struct fault_chain_link): the same layout */
	fault_handler handler;  /* on_fault */
	struct sigaction earlier[FAULT_SIGNALS];
};
static void on_fault(int sig, siginfo_t *info, void *context);
/* Named for the note that leads to it on ELF (see there). */
#if defined(__APPLE__)
#define NAMED_FOR_THE_NOTE
#else
#define CHAIN_LINK_NAME "coroutine_fault_chain_link"
#define NAMED_FOR_THE_NOTE __asm__(CHAIN_LINK_NAME)
#endif
KEPT static struct fault_chain_link this_copy NAMED_FOR_THE_NOTE = { sizeof(struct fault_chain_link), on_fault, {} };

static int is_ours(const struct sigaction *action)
{
	return (action->sa_flags & SA_SIGINFO) && action->sa_sigaction == on_fault;
}

static const struct sigaction *earlier_action(int sig)
{
	size_t i = 0;
	while (i < FAULT_SIGNALS - 1 && fault_signals[i] != sig)
		i++;
	return &this_copy.earlier[i];
}

/* The signal goes where it went before ours was installed, as the kernel
 * would have sent it there: ours was installed with that action's flags
 * and mask (see watch_faults), so the thread's mask, the stack, a reset to
 * the default are already what the kernel would have made them; only
 * SA_NODEFER is left to do, as ours keeps the signal blocked while it
 * reports.  The default action, and an ignored fault (which the kernel
 * would not ignore), are had by returning with the default in place: the
 * access faults again.  A signal that was sent, not a fault, is sent again,
 * or ignored if it was. */
static void pass_on(int sig, siginfo_t *info, void *context)
{
	const struct sigaction *earlier = earlier_action(sig);
	int sent = info == NULL || info->si_code <= 0;
	if (earlier->sa_handler == SIG_DFL || earlier->sa_handler == SIG_IGN) {
		if (earlier->sa_handler == SIG_IGN && sent)
			return;
		signal(sig, SIG_DFL);
		if (sent)
			raise(sig); /* delivered when this handler returns */
		return;
	}
	if ((earlier->sa_flags & SA_NODEFER) && !sigismember(&earlier->sa_mask, sig)) {
		sigset_t deferred;
		sigemptyset(&deferred);
		sigaddset(&deferred, sig);
		sigprocmask(SIG_UNBLOCK, &deferred, NULL);
	}
	if (earlier->sa_flags & SA_SIGINFO)
		earlier->sa_sigaction(sig, info, context);
	else
		earlier->sa_handler(sig);
}

static void on_fault(int sig, siginfo_t *info, void *context)
{
	int saved_errno = errno;
	if (info != NULL && info->si_code > 0) /* a fault, not a signal sent */
		report_touch(info->si_addr, access_kind(context), 0);
	errno = saved_errno;
	pass_on(sig, info, context);
}

/* Ours goes in place of each action with its flags and mask, SA_SIGINFO
 * added and SA_NODEFER left to pass_on: the kernel then sets the fault up
 * for ours as it would for theirs (SA_ONSTACK: a guard overflow reaches a
 * handler on the program's alternate stack; SA_RESETHAND: the default is
 * back at the first fault). */
static void watch_faults(void)
{
	for (size_t i = 0; i < FAULT_SIGNALS; i++) {
		struct sigaction now, ours;
		memset(&ours, 0, sizeof ours);
		if (sigaction(fault_signals[i], NULL, &now) != 0)
			fail("coroutine_open: sigaction failed (%s; the checked build)", strerror(errno));
		ours.sa_sigaction = on_fault;
		ours.sa_flags = SA_SIGINFO | (now.sa_flags & (SA_ONSTACK | SA_RESETHAND | SA_RESTART));
		ours.sa_mask = now.sa_mask;
		if (sigaction(fault_signals[i], &ours, &this_copy.earlier[i]) != 0)
			fail("coroutine_open: sigaction failed (%s; the checked build)", strerror(errno));
	}
}

/* ---- Several copies of the library in one process
 *
 * Plugins may each have a copy of the library.  Each installs its handler
 * over whatever was there, another copy's too, and passes faults on to
 * that.  A copy whose last schedule closes, and which may then be unloaded,
 * must leave no handler of its code behind in that chain: if its own is
 * installed, the earlier action comes back; if another copy's was installed
 * over it (a new build opens before the old one closes), that copy passes
 * faults to our earlier action from then on.  Copies share no symbol
 * (plugins are loaded RTLD_LOCAL and built -fvisibility=hidden), so each
 * image has a note (a section on Mach-O) that leads to its copy's link, and
 * the loader lists the images.  A handler of the program's installed over
 * ours is left alone; so is one of a library copy with no note (older).
 */
#define MAX_COPIES 64
struct copies {
	struct fault_chain_link *link[MAX_COPIES];
	size_t n;
};

static void add_copy(struct copies *c, struct fault_chain_link *link)
{
	if (link->size == sizeof *link && c->n < MAX_COPIES)
		c->link[c->n++] = link;
}

#if defined(__APPLE__)
#include <mach-o/dyld.h>
#include <mach-o/getsect.h>

KEPT static struct fault_chain_link *const chain_link_note __attribute__((section("__DATA,__coroutine_chn"))) = &this_copy;

static void find_copies(struct copies *c)
{
	c->n = 0;
	for (uint32_t i = 0; i < _dyld_image_count(); i++) {
		unsigned long size = 0;
		const struct mach_header_64 *image = (const struct mach_header_64 *)_dyld_get_image_header(i);
		struct fault_chain_link **links = image == NULL ? NULL
			: (struct fault_chain_link **)getsectiondata(image, "__DATA", "__coroutine_chn", &size);
		for (unsigned long k = 0; links != NULL && k < size / sizeof *links; k++)
			add_copy(c, links[k]);
	}
}
#else
#include <link.h>

/* The note: name "coroutine", type 1 (this layout of the link), and the
 * link's offset from the note's descriptor, which the static linker works
 * out (no relocation at load, in a read-only segment). */
__asm__(".pushsection .note.coroutine, \"a\", %note\n"
	"\t.balign 4\n"
	"\t.long 10, 4, 1\n"
	"\t.asciz \"coroutine\"\n"
	"\t.balign 4\n"
	"\t.long " CHAIN_LINK_NAME " - .\n"
	"\t.popsection");

static size_t note_round(size_t n, size_t align)
{
	return (n + align - 1) & ~(align - 1);
}

static int find_copies_in_image(struct dl_phdr_info *image, size_t, void *copies)
{
	for (int i = 0; i < image->dlpi_phnum; i++) {
		const ElfW(Phdr) *segment = &image->dlpi_phdr[i];
		size_t align = segment->p_align == 8 ? 8 : 4, at = 0, size = segment->p_memsz;
		const char *notes = (const char *)(image->dlpi_addr + segment->p_vaddr);
		uint32_t head[3]; /* name's size, descriptor's size, type */
		while (segment->p_type == PT_NOTE && size - at >= sizeof head) {
			memcpy(head, notes + at, sizeof head);
			size_t desc = at + sizeof head + note_round(head[0], align);
			if (desc > size || note_round(head[1], align) > size - desc)
				break;
			if (head[0] == 10 && head[1] == 4 && head[2] == 1 && memcmp(notes + at + sizeof head, "coroutine", 10) == 0) {
				int32_t offset;
				memcpy(&offset, notes + desc, sizeof offset);
				add_copy((struct copies *)copies, (struct fault_chain_link *)(notes + desc + offset));
			}
			at = desc + note_round(head[1], align);
		}
	}
	return 0;
}

static void find_copies(struct copies *c)
{
	c->n = 0;
	dl_iterate_phdr(find_copies_in_image, c);
}
#endif

/* The copy whose handler action is, if any. */
static struct fault_chain_link *copy_installed_as(const struct copies *c, const struct sigaction *action)
{
	for (size_t k = 0; k < c->n && (action->sa_flags & SA_SIGINFO); k++)
		if (c->link[k]->handler == action->sa_sigaction)
			return c->link[k];
	return NULL;
}

/* This copy leaves the chain of each signal, wherever it sits in it. */
static void stop_watching_faults(void)
{
	struct copies c;
	find_copies(&c);
	for (size_t i = 0; i < FAULT_SIGNALS; i++) {
		struct sigaction now;
		if (sigaction(fault_signals[i], NULL, &now) != 0)
			continue;
		if (is_ours(&now)) {
			sigaction(fault_signals[i], &this_copy.earlier[i], NULL);
			continue;
		}
		struct fault_chain_link *above = copy_installed_as(&c, &now);
		for (size_t steps = 0; above != NULL && above != &this_copy && steps < c.n; steps++) {
			if (is_ours(&above->earlier[i])) {
				above->earlier[i] = this_copy.earlier[i];
				break;
			}
			above = copy_installed_as(&c, &above->earlier[i]);
		}
	}
}
#endif

/* Under AddressSanitizer, a local whose address is taken lives in a "fake
 * stack" that ASan keeps per coroutine (detect_stack_use_after_return=1),
 * off the run stack, and a pointer to it goes on working there.  So while
 * its coroutine is suspended, the locals of its live fake frames are
 * poisoned: ASan stops whoever uses such a pointer, main or another
 * coroutine, and our line follows its report.  Nobody else has any business
 * there, so no valid program trips.  The frames are found the way a
 * conservative collector finds its roots: the words of the saved slice and
 * registers that point into a live frame of the coroutine's fake stack. */
#if HIDE_FAKE_FRAMES
struct fake_frame {
	char *begin, *end;
	size_t shadow_at; /* where its shadow as it was lies in hidden->shadow */
};

struct hidden_frames {
	struct fake_frame *frame;
	size_t n, room;
	unsigned char *shadow;
	size_t shadow_n, shadow_room;
};

/* array (room elements of size bytes), or where realloc moved it to hold
 * need, doubling; NULL when out of memory, array as it was (the frame is
 * then left unpoisoned: a check missed, nothing more). */
static void *grown_to(void *array, size_t *room, size_t need, size_t size)
{
	if (need <= *room)
		return array;
	size_t more = need > 2 * *room ? need : 2 * *room;
	void *grown = realloc(array, more * size);
	if (grown != NULL)
		*room = more;
	return grown;
}

/* If word points into a live fake frame of C's not yet hidden, its shadow
 * is kept and the bytes of its locals (shadow 0 to 7) poisoned. */
NO_ASAN static void hide_frame_at(struct coroutine *C, uintptr_t word)
{
	void *begin, *end;
	if (__asan_addr_is_in_fake_stack(C->fake_stack, (void *)word, &begin, &end) == NULL)
		return;
	struct hidden_frames *h = C->hidden;
	for (size_t i = 0; i < h->n; i++)
		if (h->frame[i].begin == begin)
			return;
	size_t scale;
	unsigned char *shadow = shadow_of(begin, &scale);
	size_t n = ((uintptr_t)end - (uintptr_t)begin) >> scale;
	struct fake_frame *frames = (struct fake_frame *)grown_to(h->frame, &h->room, h->n + 1, sizeof *frames);
	if (frames == NULL)
		return;
	h->frame = frames;
	unsigned char *saved = (unsigned char *)grown_to(h->shadow, &h->shadow_room, h->shadow_n + n, 1);
	if (saved == NULL)
		return;
	h->shadow = saved;
	struct fake_frame f = { (char *)begin, (char *)end, h->shadow_n };
	h->frame[h->n++] = f;
	copy_stack((char *)h->shadow + h->shadow_n, (const char *)shadow, n); /* no memcpy: ASan would check it */
	h->shadow_n += n;
	for (size_t i = 0; i < n; i++)
		if (shadow[i] < 8) /* addressable, all 8 bytes or the first few */
			shadow[i] = 0xf7; /* ASan's "poisoned by the user" */
}

/* C has just yielded (its fake stack is known once it has left). */
NO_ASAN static void hide_fake_frames(struct schedule *S, struct coroutine *C)
{
	if (C->fake_stack == NULL)
		return; /* ASan keeps its locals on the run stack */
	if (C->hidden == NULL && (C->hidden = (struct hidden_frames *)calloc(1, sizeof *C->hidden)) == NULL)
		return;
	const char *slice = slice_in_block(C, S->top - C->size, (size_t)C->size);
	uintptr_t word;
	for (size_t i = 0; i + sizeof word <= (size_t)C->size; i += sizeof word)
		hide_frame_at(C, (memcpy(&word, slice + i, sizeof word), word));
	for (size_t i = 0; i + sizeof word <= sizeof C->ctx; i += sizeof word)
		hide_frame_at(C, (memcpy(&word, (const char *)&C->ctx + i, sizeof word), word));
}

/* C is about to run again. */
NO_ASAN static void show_fake_frames(struct coroutine *C)
{
	struct hidden_frames *h = C->hidden;
	if (h == NULL)
		return;
	size_t scale;
	for (size_t i = 0; i < h->n; i++) {
		const struct fake_frame *f = &h->frame[i];
		unsigned char *shadow = shadow_of(f->begin, &scale);
		copy_stack((char *)shadow, (const char *)h->shadow + f->shadow_at, (size_t)(f->end - f->begin) >> scale);
	}
	h->n = h->shadow_n = 0;
}

/* C goes.  Its fake frames need not be shown first: ASan clears the shadow
 * of a fake stack that it frees (gcc 12's and clang 14's runtimes). */
static void forget_hidden_frames(struct coroutine *C)
{
	if (C->hidden != NULL) {
		free(C->hidden->frame);
		free(C->hidden->shadow);
		free(C->hidden);
		C->hidden = NULL;
	}
}

/* The line, if address is in a hidden frame of a suspended coroutine of an
 * open schedule. */
static void describe_fake_touch(struct report_line *line, const char *address, const char *verb)
{
	for (struct schedule *S = open_schedules; S != NULL; S = S->next_open)
		for (int id = 0; id < S->cap; id++) {
			const struct hidden_frames *h = S->co[id] != &no_coroutine ? S->co[id]->hidden : NULL;
			for (size_t i = 0; h != NULL && i < h->n; i++)
				if (address >= h->frame[i].begin && address < h->frame[i].end) {
					add_toucher(line, S, verb);
					add_text(line, " ");
					add_coroutine(line, id);
					add_text(line, "'s stack (a local that ASan keeps off the run stack, ");
					add_schedule(line, S);
					add_rule(line, id);
					return;
				}
		}
}

/* Called by ASan after each of its reports, before the process ends. */
static void on_asan_report(const char *)
{
	if (strcmp(__asan_get_report_description(), "use-after-poison") == 0)
		report_touch(__asan_get_report_address(), __asan_get_report_access_type() ? "wrote to" : "read", 1);
}

/* ASan keeps one callback, and tells nobody which: a program's own, set
 * before the first open, is replaced (after it, it replaces ours).  With no
 * fake stacks, locals stay on the run stack where nothing can poison them
 * (the frames of the running coroutine grow there): the check would miss
 * them silently, so the first open says so. */
static void watch_asan_reports(void)
{
	static const char notice[] = "coroutine_open: the checked build stops a use of a suspended "
		"coroutine's local under AddressSanitizer only with ASAN_OPTIONS=detect_stack_use_after_return=1 "
		"(without it, ASan keeps such locals on the run stack)\n";
	if (__asan_get_current_fake_stack() == NULL)
		print_to_stderr(notice, sizeof notice - 1);
	__asan_set_error_report_callback(on_asan_report);
}

static void stop_watching_asan_reports(void) { __asan_set_error_report_callback(NULL); }
#else
static void hide_fake_frames(struct schedule *, struct coroutine *) {}
static void show_fake_frames(struct coroutine *) {}
static void forget_hidden_frames(struct coroutine *) {}
static void describe_fake_touch(struct report_line *, const char *, const char *) {}
static void watch_asan_reports(void) {}
static void stop_watching_asan_reports(void) {}
#endif

/* From the top of a resume: the run stack, and the coroutine's locals. */
static void run_stack_in_reach(struct schedule *S)
{
	unprotect_run_stack(S);
	show_fake_frames(S->co[S->running]);
}

/* Back in main: the coroutine that yielded, if any, is its owner. */
static void run_stack_out_of_reach(struct schedule *S)
{
	protect_run_stack(S);
	if (S->owner != NULL)
		hide_fake_frames(S, S->owner);
}

static void watch_run_stacks(void)
{
	watch_faults();
	watch_asan_reports();
}

static void stop_watching_run_stacks(void)
{
	stop_watching_asan_reports();
	stop_watching_faults();
}
#else
static void run_stack_in_reach(struct schedule *) {}
static void run_stack_out_of_reach(struct schedule *) {}
static void watch_run_stacks(void) {}
static void stop_watching_run_stacks(void) {}
static void forget_hidden_frames(struct coroutine *) {}
#endif

/* ---- The C++ exception state -----------------------------------------------
 *
 * The runtime keeps the exceptions being handled per thread, so main and
 * each coroutine need their own, or a coroutine that yields inside a catch
 * handler rethrows whatever the next one caught.  It changes hands at every
 * switch.  A C program may have no runtime until a library brings one:
 * until then a spare of the thread's own is swapped.  Of two runtimes
 * (libstdc++ and libc++abi), the first is swapped on the fast path, the
 * other on resume_the_long_way.
 */

/* The runtimes as this thread last found them, and its spare state. */
static thread_local struct runtimes thread_runtimes = { -1, {} };
static thread_local struct eh_state spare_eh;

#if !EH_MSVC_ABI
/* *to = the state of the thread whose state in a runtime is thread. */
static void save_thread_eh(const struct eh_state *thread, struct eh_state *to)
{
	*to = *thread;
}

static void load_thread_eh(struct eh_state *thread, const struct eh_state *from)
{
	*thread = *from;
}
#else
/* Microsoft's runtime (vcruntime) keeps three per-thread values, each found
 * by a function: the exception being handled and its CPU context (what
 * `throw;` rethrows), and the count of exceptions not yet caught.  And each
 * running catch handler links a record in its frame into a per-thread
 * chain, searched from its head when a handler ends: a handler that yields
 * would leave a record where another coroutine's bytes will lie.  So the
 * chain's head is swapped too (see chain_head). */
struct frame_info {
	void *exception_object;
	struct frame_info *next;
};
extern "C" void **__cdecl __current_exception(void);
extern "C" void **__cdecl __current_exception_context(void);
extern "C" int *__cdecl __processing_throw(void);
extern "C" struct frame_info *__cdecl _CreateFrameInfo(struct frame_info *record, void *exception_object);
extern "C" void __cdecl _FindAndUnlinkFrame(struct frame_info *record);

/* Where the runtime keeps the running thread's state, asked once per thread. */
struct eh_places {
	void **exception;
	void **context;
	int *processing_throw;
};
static thread_local struct eh_places eh_places;

/* The places are the runtime's: what linked_runtime returns only names the
 * thread's state for the swaps below, which go to the places. */
static thread_local struct eh_state runtime_named;

static struct eh_state *linked_runtime(void)
{
	eh_places.exception = __current_exception();
	eh_places.context = __current_exception_context();
	eh_places.processing_throw = __processing_throw();
	return &runtime_named;
}

/* Makes head the head of the thread's chain of handler records, and returns
 * the one it replaces: a record linked in reads the head (into its next),
 * and unlinked, being the head, leaves its next as the head. */
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

/* Adds get to the runtimes found, unless there is none (NULL) or it is one
 * of them under another name (the same state on this thread). */
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

/* The runtimes a schedule keeps after its first, with each coroutine's
 * state in them: saved[id * (MAX_RUNTIMES - 1) + k], for cap slots. */
struct more_runtimes {
	int n;
	eh_globals_func get[MAX_RUNTIMES - 1];
	struct eh_state *state[MAX_RUNTIMES - 1]; /* the schedule's thread's */
	int cap;
	struct eh_state *saved;
};

/* No thread has this number: a schedule with more runtimes always takes
 * resume_the_long_way. */
#define NO_THREAD UINT64_MAX

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

/* Makes S keep every runtime its thread finds (looked for again when modules
 * came or went since it last looked); 0 when out of memory.  Only from main
 * with no coroutine of S running: a runtime that S did not keep has held
 * main's state, which goes on there, and each coroutine's starts empty. */
static int take_up_runtimes(struct schedule *S)
{
	struct runtimes *found = &thread_runtimes;
	if (modules_changed() || found->n < 0) {
		found->n = 0;
		find_runtimes(found);
	}
	for (int i = 0; i < found->n; i++)
		if (!keep_runtime(S, found->get[i]))
			return 0;
	return 1;
}

/* A runtime that arrived while S kept none is taken up when a coroutine
 * starts, the first moment its own state matters.  Returns 1 when S now
 * keeps more than one: the resume must then take the long way. */
static int take_up_late_runtime(struct schedule *S)
{
	if (S->eh_runtime != NULL)
		return 0;
	if (!take_up_runtimes(S))
		fail("coroutine_resume: out of memory keeping a C++ runtime's exception state");
	return S->more != NULL;
}

/* At a resume, main's state goes into the schedule and C's, saved at its
 * last yield (none, at its start), takes its place; when C yields, it saves
 * its own and puts main's back.  S->eh is never NULL: the swaps need no test. */
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

/* When it finishes, it only puts main's back. */
static void drop_eh_state(struct schedule *S)
{
	load_thread_eh(S->eh, &S->main_eh);
}

/* Whether eh holds an exception being handled or one unwinding. */
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

/* Whether suspended coroutine id yielded while handling or unwinding an
 * exception, in the first runtime S keeps or in the others (a row of
 * m->saved, if it has one yet: see make_room_for_more). */
static int handles_exceptions(const struct schedule *S, int id)
{
	const struct more_runtimes *m = S->more;
	int held = holds_exceptions(&S->co[id]->eh);
	for (int k = 0; m != NULL && id < m->cap && k < m->n; k++)
		held |= holds_exceptions(&m->saved[(size_t)id * (MAX_RUNTIMES - 1) + k]);
	return held;
}

/* Copy id starts with no exception in the runtimes after the first.  Its
 * row may hold what the last coroutine of its slot saved before it finished
 * (a new coroutine ignores it); a row made later starts empty.  No realloc:
 * a resume keeping more runtimes may be on its way. */
static void no_exceptions_in_more_runtimes(struct schedule *S, int id)
{
	struct more_runtimes *m = S->more;
	for (int k = 0; m != NULL && id < m->cap && k < MAX_RUNTIMES - 1; k++)
		m->saved[(size_t)id * (MAX_RUNTIMES - 1) + k] = no_exceptions;
}

/* Room in m->saved for every slot of S. */
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

/* The runtimes after the first change hands around the whole resume, on
 * main's side: main's state waits in this frame (on main's stack, never
 * copied), the coroutine's in m->saved while it is suspended. */
NOINLINE static void resume_keeping_more_runtimes(struct schedule *S, int id)
{
	struct more_runtimes *m = S->more;
	struct eh_state mains[MAX_RUNTIMES - 1];
	struct coroutine *C = S->co[id];
	if (C == &no_coroutine)
		return;
	make_room_for_more(S, m);
	struct eh_state *own = &m->saved[(size_t)id * (MAX_RUNTIMES - 1)];
	for (int k = 0; k < m->n; k++) {
		save_thread_eh(m->state[k], &mains[k]);
		load_thread_eh(m->state[k], C->status == COROUTINE_READY ? &no_exceptions : &own[k]);
	}
	S->fast_thread = S->thread;
	coroutine_resume(S, id);
	S->fast_thread = NO_THREAD;
	for (int k = 0; k < m->n; k++) {
		if (S->co[id] != &no_coroutine) /* suspended again */
			save_thread_eh(m->state[k], &own[k]);
		load_thread_eh(m->state[k], &mains[k]);
	}
}

/* The schedule's runtimes, asked for the calling thread's state in each. */
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

/* ---- Ending a coroutine early: forced unwinding ----------------------------
 *
 * coroutine_delete ends a suspended coroutine as a thread is cancelled: it
 * resumes the coroutine one last time, in a function of ours that its
 * yield seems to have called (call_in_context makes its saved context call
 * unwind_coroutine from where it waits, as a signal frame is made), so
 * that the yield's own way back tests nothing.  There a forced unwind
 * starts, which the C++ runtime and the C compiler's cleanups treat as a
 * thread's cancellation: it walks up from the yield through the
 * coroutine's frames, running their destructors and cleanup attributes,
 * innermost first, until the frame its start made ends the chain
 * (asm_switch.S's trampolines, ucontext's __start_context).  There the
 * coroutine finishes, as if its function had returned (finish_coroutine),
 * and main's coroutine_delete returns.  The coroutine runs as in any
 * resume: its own exception state, ASan, valgrind and the checked build
 * told of the switches as at a finish.
 *
 * The Itanium C++ ABI's unwinder (glibc, musl and Apple; libgcc's and
 * LLVM's) does it with _Unwind_ForcedUnwind and a stop function, as
 * pthread_cancel does: a catch (...) in the coroutine is entered, and
 * must rethrow.  If the process has no unwinder (a C program that links
 * none), or this build cannot make the call (WebAssembly, ucontext other
 * than glibc's), the coroutine is freed where it lies, as at a close.  A
 * frame without unwind tables ends the walk as the start would: the
 * frames above it are not unwound.  Windows unwinds with RtlUnwindEx, to
 * the trampoline's frame, where the coroutine's function would have
 * returned to.
 *
 * What the unwinding needs lives in main's coroutine_delete frame, which
 * outlives the frames the unwinder makes and drops on the run stack; while
 * the coroutine runs, S->unwinding points to it.
 */
#if COROUTINE_FIBER
#define FORCED_UNWIND 0 /* no unwinder the library could call */
#elif COROUTINE_ASM
#define FORCED_UNWIND 1
#elif defined(__GLIBC__) && (defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || defined(__arm__) \
			     || (defined(__riscv) && __riscv_xlen == 64))
#define FORCED_UNWIND 1
#else
#define FORCED_UNWIND 0 /* a ucontext whose layout is not known here */
#endif

#if FORCED_UNWIND && COROUTINE_ASM
extern "C" void coroutine_call_in_context(void);

/* The words of a context that hold the stack pointer and the resume
 * address (asm_switch.S's layout tables). */
#if defined(__x86_64__) && defined(_WIN32)
#define CONTEXT_SP 8
#define CONTEXT_PC 9
#elif defined(__x86_64__)
#define CONTEXT_SP 6
#define CONTEXT_PC 7
#elif defined(__i386__)
#define CONTEXT_SP 4
#define CONTEXT_PC 5
#elif defined(__aarch64__)
#define CONTEXT_SP 20
#define CONTEXT_PC 11 /* x30 */
#elif defined(__arm__)
#define CONTEXT_SP 9
#define CONTEXT_PC 8 /* lr */
#elif defined(__riscv)
#define CONTEXT_SP 1
#define CONTEXT_PC 0 /* ra */
#endif

/* ctx, when switched to, calls f(S) as if the code at its resume address
 * had: coroutine_call_in_context finds f and the resume address on top of
 * its stack, and S as the switch's from (&S->main, at S's address). */
static void call_in_context(struct schedule *S, context *ctx, void (*f)(struct schedule *))
{
	(void)S;
	void **sp = (void **)ctx->word[CONTEXT_SP] - 2;
	sp[0] = (void *)f;
	sp[1] = ctx->word[CONTEXT_PC];
	ctx->word[CONTEXT_SP] = sp;
	ctx->word[CONTEXT_PC] = (void *)coroutine_call_in_context;
}
#elif FORCED_UNWIND
#if defined(__aarch64__)
/* Where a context saved on aarch64 resumes: where its pc says, except that
 * glibc's swapcontext (2.32 on) resumes in a stub of its own, "mov x30, x1;
 * ret" after a BTI landing pad, with its caller's return address in x1. */
static uint64_t aarch64_resume_address(const mcontext_t *m)
{
	const uint32_t mov_x30_x1 = 0xaa0103fe;
	const uint32_t *code = (const uint32_t *)m->pc;
	return code[0] == mov_x30_x1 || code[1] == mov_x30_x1 ? m->regs[1] : m->pc;
}
#endif

/* glibc's setcontext loads every register of the context: S goes in the
 * first argument's, the resume address becomes the return address (pushed
 * on x86; in the link register elsewhere), and f the place to go. */
static void call_in_context(struct schedule *S, context *ctx, void (*f)(struct schedule *))
{
	mcontext_t *m = &ctx->uc_mcontext;
#if defined(__x86_64__)
	greg_t *sp = (greg_t *)m->gregs[REG_RSP] - 1;
	*sp = m->gregs[REG_RIP];
	m->gregs[REG_RSP] = (greg_t)sp;
	m->gregs[REG_RIP] = (greg_t)f;
	m->gregs[REG_RDI] = (greg_t)S;
#elif defined(__i386__)
	/* The argument's slot was swapcontext's from: a callee's to change. */
	greg_t *sp = (greg_t *)m->gregs[REG_ESP] - 1;
	sp[0] = m->gregs[REG_EIP];
	sp[1] = (greg_t)S;
	m->gregs[REG_ESP] = (greg_t)sp;
	m->gregs[REG_EIP] = (greg_t)f;
#elif defined(__aarch64__)
	m->regs[30] = aarch64_resume_address(m);
	m->pc = (uintptr_t)f;
	m->regs[0] = (uintptr_t)S;
#elif defined(__arm__)
	m->arm_lr = m->arm_pc;
	m->arm_pc = (uintptr_t)f;
	m->arm_r0 = (uintptr_t)S;
#else
	m->__gregs[REG_RA] = m->__gregs[REG_PC];
	m->__gregs[REG_PC] = (uintptr_t)f;
	m->__gregs[REG_A0] = (uintptr_t)S;
#endif
}
#endif

#if FORCED_UNWIND && defined(_WIN32)
/* Windows: RtlUnwindEx walks the frames by their unwind tables, calling
 * each frame's handler, which runs its destructors (vcruntime's, or
 * libgcc's for g++'s frames), up to the start trampoline's frame, and goes
 * on there where entry returns to (asm_switch.S, Win64: its null return
 * address at top - 8, then 40 bytes: the frame is at top - 48, and entry's
 * return address just below it).  It calls finish(S) there.
 *
 * g++'s frames (MinGW) run a cleanup by raising an exception of their own
 * that lands in it, which then resumes the unwinding it was part of with
 * _Unwind_Resume: given our _Unwind_Exception, as a throw's would be after
 * its search, found the handler in the trampoline's frame; and in a
 * catch (...) that rethrows, with a forced unwind (libgcc keeps the stop
 * function in it), whose first stop goes on to the trampoline again.  The
 * exception code is g++'s, whose handler alone takes these up. */
#if EH_MSVC_ABI
/* longjmp's: vcruntime's handler of a function built with /EHs (C++
 * exceptions only) runs its destructors for an unwinding of this code too. */
#define UNWINDING_CODE 0x80000026u /* STATUS_LONGJUMP, with no jump buffer */
#else
#include <unwind.h>
#define UNWINDING_CODE 0x20474343u /* libgcc's STATUS_GCC_THROW */
#endif
#define TRAMPOLINE_FRAME 48

struct unwinding {
#if !EH_MSVC_ABI
	struct _Unwind_Exception exception; /* first: see refuse_swallowed_unwinding */
#endif
	int id;
	EXCEPTION_RECORD record;
	CONTEXT context;
};

/* Never returns: the unwinding goes on at the trampoline. */
static void unwind_frames(struct schedule *S, struct unwinding *u)
{
	char *frame = S->top - TRAMPOLINE_FRAME;
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

static int can_unwind(void)
{
	return 1;
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
/* The Itanium C++ ABI's unwinder, found as the C++ runtime is (see
 * linked_runtime): by a weak reference to it, linked into any program
 * with C++ or C built with -fexceptions; else in the global scope; else as
 * a runtime that a plugin brought sees it (dlsym searches a module and what
 * it loaded), the unwinder whose contexts its personality reads.  A lookup
 * costs thousands of instructions: what this thread found is kept until
 * modules come or go (counted as modules_changed counts them).  Apple: in
 * libSystem. */
#include <unwind.h>
typedef _Unwind_Reason_Code (*forced_unwind_func)(struct _Unwind_Exception *, _Unwind_Stop_Fn, void *);
#if !defined(__APPLE__)
extern "C" _Unwind_Reason_Code _Unwind_ForcedUnwind(struct _Unwind_Exception *, _Unwind_Stop_Fn, void *) WEAK;
static thread_local forced_unwind_func unwinder_found;
static thread_local unsigned long long unwinder_loads; /* the count at the last look; 0: none yet */
#endif

static forced_unwind_func find_unwinder(void)
{
#if defined(__APPLE__)
	return _Unwind_ForcedUnwind;
#else
	if (_Unwind_ForcedUnwind)
		return _Unwind_ForcedUnwind;
	unsigned long long loads = 0;
	dl_iterate_phdr(count_loads, &loads);
	if (loads == unwinder_loads)
		return unwinder_found;
	unwinder_loads = loads;
	void *found = dlsym(RTLD_DEFAULT, "_Unwind_ForcedUnwind");
	for (size_t i = 0; found == NULL && i < sizeof runtime_names / sizeof runtime_names[0]; i++) {
		void *runtime = dlopen(runtime_names[i], RTLD_LAZY | RTLD_NOLOAD);
		if (runtime != NULL) {
			found = dlsym(runtime, "_Unwind_ForcedUnwind");
			dlclose(runtime);
		}
	}
	return unwinder_found = (forced_unwind_func)found;
#endif
}

struct unwinding {
	struct _Unwind_Exception exception; /* first: see refuse_swallowed_unwinding */
	int id;
	forced_unwind_func unwind;
};

/* Called for every frame, and once more past the last one (the end of
 * the stack): there the coroutine finishes, and never comes back. */
static _Unwind_Reason_Code finish_at_the_end(int, _Unwind_Action actions, _Unwind_Exception_Class,
					     struct _Unwind_Exception *, struct _Unwind_Context *, void *S)
{
	if (actions & _UA_END_OF_STACK)
		finish_coroutine((struct schedule *)S);
	return _URC_NO_REASON;
}

/* Returns only if the unwinder could not start. */
static void unwind_frames(struct schedule *S, struct unwinding *u)
{
	u->unwind(&u->exception, finish_at_the_end, S);
}

static int can_unwind(void)
{
	return find_unwinder() != NULL;
}
#endif

#if FORCED_UNWIND
#if COROUTINE_ASAN
/* Unpoisons the run stack from here up, as ASan's interceptor of a throw does. */
static void asan_unwinding_starts(void) { __asan_handle_no_return(); }
#else
static void asan_unwinding_starts(void) {}
#endif

/* The C++ runtime deletes a foreign exception that a catch (...) caught
 * when the handler ends without rethrowing it: the coroutine would go on. */
#if !EH_MSVC_ABI
static void refuse_swallowed_unwinding(_Unwind_Reason_Code, struct _Unwind_Exception *e)
{
	fail("coroutine_delete: coroutine %d caught its unwinding in a catch (...) that did not rethrow it",
	     ((struct unwinding *)e)->id);
}
#endif

static void start_unwinding(struct unwinding *u, int id)
{
	memset(u, 0, sizeof *u);
	u->id = id;
#if !EH_MSVC_ABI
	static const char exception_class[8] = { 'c', 'o', 'r', 'o', 'd', 'e', 'l', '\0' };
	memcpy(&u->exception.exception_class, exception_class, sizeof exception_class);
	u->exception.exception_cleanup = refuse_swallowed_unwinding;
#endif
#if defined(_WIN32) && !EH_MSVC_ABI
	u->exception.private_[0] = (_Unwind_Ptr)unwind_on; /* a forced unwind, if rethrown */
#elif !defined(_WIN32)
	u->unwind = find_unwinder();
#endif
}

/* Where the coroutine's yield seems to have called it from (S arrives as
 * the switch's from, &S->main).  The unwinder's frames, below, are
 * dropped as it jumps to the coroutine's cleanups: ASan must forget their
 * poison, as at a throw. */
NOINLINE static void unwind_coroutine(struct schedule *S)
{
	asan_enter_coroutine(S, S->owner); /* what the yield does first when resumed */
	asan_unwinding_starts();
	unwind_frames(S, S->unwinding);
	finish_coroutine(S);
}

/* The slice goes back on the run stack as at a resume (with the checked
 * build's access, for the words that call_in_context puts below it), and
 * the resume finds the coroutine there: it continues it, in
 * unwind_coroutine.  A destructor that yielded comes back here. */
NOINLINE static void resume_in_forced_unwind(struct schedule *S, int id)
{
	struct coroutine *C = S->co[id];
	struct unwinding u;
	start_unwinding(&u, id);
	S->running = id;
	run_stack_in_reach(S);
	if (S->owner != C)
		put_back_slice(S, C);
	S->running = -1;
	call_in_context(S, &C->ctx, unwind_coroutine);
	S->unwinding = &u;
	coroutine_resume(S, id);
	S->unwinding = NULL;
	if (S->co[id] != &no_coroutine)
		fail("coroutine_delete: coroutine %d yielded while it was being unwound (from a destructor?)", id);
}
#else
static int can_unwind(void)
{
	return 0;
}

NOINLINE static void resume_in_forced_unwind(struct schedule *, int) {}
#endif

/* ---- Threads ------------------------------------------------------------ */

/* A thread is named by a number no other thread of the process ever gets,
 * given at its first use (0 until then): a later thread may get an ended
 * one's addresses for its thread-locals.  The counter is aligned to its
 * size, which i386's ABI does not promise a uint64_t (see atomic_increment). */
alignas(8) static uint64_t threads_numbered;

static uint64_t this_thread(void)
{
	if (thread_number == 0)
		thread_number = atomic_increment(&threads_numbered);
	return thread_number;
}

/* Compilers keep the address of thread-local data across a call (errno's
 * __errno_location is a const function), so a coroutine suspended on one
 * thread must not resume on another.  A schedule belongs to one thread at a
 * time (S->thread); resumed on another, it moves there: the coroutines
 * suspended on the old thread become SUSPENDED_ELSEWHERE, marked with it,
 * and those marked with this one are COROUTINE_SUSPEND again. */
NOINLINE static void move_to_this_thread(struct schedule *S)
{
	uint64_t here = this_thread();
	/* The owner, suspended on the old thread, is no longer one that a
	 * resume here may continue: its slice (saved at its yield) comes back
	 * when it is resumed on its own thread. */
	if (S->owner != NULL) {
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

/* ---- The debugger's view ---------------------------------------------------
 *
 * debug/coroutine-gdb.py (and its lldb twin) shows where a suspended
 * coroutine waits by putting its saved slice back on the run stack and its
 * saved registers into a thread.  What it needs beyond the structures' debug
 * information is how this build placed them: one constant per copy of the
 * library, read from memory or from a core file, never by the library.
 */
#if COROUTINE_ASM
#define BACKEND_NAME "asm"
#elif COROUTINE_FIBER
#define BACKEND_NAME "fiber"
#else
#define BACKEND_NAME "ucontext"
#endif
struct debugger_view {
	char backend[12];            /* "ucontext", "asm" or "fiber": what ctx holds */
	struct schedule **open;      /* &open_schedules */
	struct coroutine *empty;     /* &no_coroutine: an empty slot */
	unsigned coroutine_size;     /* sizeof(struct coroutine): the slice follows */
	unsigned shallow_slice;      /* SHALLOW_SLICE: see slice_in_block */
	unsigned slice_align;        /* SLICE_ALIGN */
	unsigned suspended_elsewhere;
	unsigned stack_size;
};

KEPT static const struct debugger_view coroutine_debugger_view = {
	BACKEND_NAME,
	&open_schedules, &no_coroutine, sizeof(struct coroutine),
	SHALLOW_SLICE, SLICE_ALIGN, SUSPENDED_ELSEWHERE, STACK_SIZE,
};
