/*
 * coroutine.h - asymmetric coroutines that share one run stack.
 *
 * A C++ port of cloudwu's coroutine library (MIT).  Every coroutine of a
 * schedule runs on the schedule's single run stack; when one yields, the
 * part of the run stack it uses is copied out to the heap, and copied back
 * when it is resumed.  Only the main program resumes; only a coroutine yields.
 *
 * The shared-stack rule: while a coroutine is suspended its locals do not
 * live at their old addresses (the bytes were copied to the heap, and the
 * run stack now belongs to whichever coroutine runs next).  Never keep a
 * pointer to a coroutine's local across its yield for anyone else to use.
 *
 * Misuse (a NULL schedule, a wrong id, resuming from inside a coroutine,
 * yielding from outside one, resuming on another thread, ...) is not
 * undefined here: it prints one line naming the function and the fault on
 * stderr and calls abort(), with or without NDEBUG.
 *
 * Threads: a suspended coroutine must be resumed on the thread it was
 * suspended on (compilers keep the addresses of thread-local data, errno's
 * included, across its yield).  A coroutine that never ran may start on any
 * thread, and a schedule with no suspended coroutine may move to another.
 * Coroutines of one schedule may be suspended on different threads.  The
 * first resume on another thread than the last walks the schedule's slots.
 *
 * C++: the exceptions being handled are each coroutine's own (and main's):
 * a coroutine may yield inside a catch handler or a destructor run by
 * unwinding, and `throw;` and std::uncaught_exceptions() still see its own.
 * An exception must not propagate out of a coroutine's function.
 *
 * Floating point: a coroutine's rounding mode and the other control bits
 * (flush-to-zero, trap masks) are its own: what it sets with fesetround
 * survives its yields and does not leak into main.  The sticky exception
 * flags (fetestexcept) depend on the backend: with the assembly switch they
 * belong to the thread, so a flag raised in main is set in its coroutines
 * and the other way round; with ucontext they switch with the coroutine.
 *
 * This header is plain C89 and may be included from C or C++.
 */
#ifndef C_COROUTINE_H
#define C_COROUTINE_H

/*
 * The library's version.  The build files (CMakeLists.txt, meson.build, the
 * Makefile and so coroutine.pc) read it from these three lines: change it
 * here only.  COROUTINE_VERSION is one number a program can test with #if.
 */
#define COROUTINE_VERSION_MAJOR 1
#define COROUTINE_VERSION_MINOR 0
#define COROUTINE_VERSION_PATCH 0
#define COROUTINE_VERSION \
	(COROUTINE_VERSION_MAJOR * 10000 + COROUTINE_VERSION_MINOR * 100 + COROUTINE_VERSION_PATCH)

/*
 * COROUTINE_API marks the functions a shared library exports.  ELF and
 * Mach-O: the shared library is built with -fvisibility=hidden, so that it
 * exports the functions marked here and nothing else.  Windows: a DLL
 * exports what is __declspec(dllexport) (Microsoft's linker exports
 * nothing else), and a program calls into a DLL through
 * __declspec(dllimport).  Two macros say which, defined by the build:
 *   COROUTINE_BUILD_DLL  while compiling coroutine.cpp into libcoroutine.dll;
 *   COROUTINE_DLL        while compiling code that calls libcoroutine.dll.
 * CMake's and Meson's shared builds define both for you.  Neither is
 * defined for the static library, nor when coroutine.cpp is built into a
 * program or into a DLL of your own: there the mark is empty.
 */
#if defined(_WIN32) || defined(__CYGWIN__)
#if defined(COROUTINE_BUILD_DLL)
#define COROUTINE_API __declspec(dllexport)
#elif defined(COROUTINE_DLL)
#define COROUTINE_API __declspec(dllimport)
#else
#define COROUTINE_API
#endif
#elif defined(__GNUC__) && __GNUC__ >= 4
#define COROUTINE_API __attribute__((visibility("default")))
#else
#define COROUTINE_API
#endif

#define COROUTINE_DEAD 0
#define COROUTINE_READY 1
#define COROUTINE_RUNNING 2
#define COROUTINE_SUSPEND 3

#ifdef __cplusplus
extern "C" {
#endif

struct schedule;

/* The body of a coroutine.  It runs on the run stack; returning ends it. */
typedef void (*coroutine_func)(struct schedule *, void *ud);

/*
 * Creates a schedule: one run stack (1 MiB unless the library was built with
 * -DCOROUTINE_STACK_SIZE=...) with a 1 MiB inaccessible guard below it, and
 * 16 empty slots.  A coroutine that overflows the run stack dies of SIGSEGV
 * at its first touch of the guard.  A frame that touches only some of its
 * bytes is stopped if it is at most the run stack's size plus 1 MiB; build
 * code that runs in coroutines with -fstack-clash-protection (which touches
 * every page of a large frame) to stop frames of any size.  Returns NULL
 * when memory runs out.
 */
COROUTINE_API struct schedule *coroutine_open(void);

/*
 * Frees the schedule and every coroutine in it.  First the coroutines
 * suspended on the calling thread are ended, in id order, as
 * coroutine_delete ends them (the destructors of the C++ objects on their
 * frames run; a coroutine that cannot be unwound is freed as the original
 * frees it).  Then the rest, which cannot run here (never started, or
 * suspended on another thread), are freed without running anything.  NULL
 * is ignored.  Calling it from inside one of the schedule's own coroutines
 * aborts.
 */
COROUTINE_API void coroutine_close(struct schedule *);

/*
 * Adds a coroutine that will run func(S, ud) when first resumed, and returns
 * its id: the old slot count when all slots are taken (the slots then
 * double), otherwise the first empty slot at or after index nco, wrapping
 * around, where nco is the number of live coroutines.  May be called from
 * main or from inside a coroutine.  Returns -1 when memory runs out, leaving
 * the schedule as it was.  A NULL func aborts.
 */
COROUTINE_API int coroutine_new(struct schedule *, coroutine_func func, void *ud);

/*
 * Runs coroutine id until it yields or returns.  A finished coroutine is
 * freed and its slot emptied; resuming an empty slot returns at once.
 * Only the main program may resume: calling it from inside one of the
 * schedule's coroutines, or with an id outside [0, slot count), aborts, and
 * so does resuming a suspended coroutine on another thread than the one it
 * was suspended on.
 * (A coroutine may resume the coroutines of another schedule: it is that
 * schedule's main program.)
 */
COROUTINE_API void coroutine_resume(struct schedule *, int id);

/*
 * COROUTINE_READY (never run), COROUTINE_RUNNING, COROUTINE_SUSPEND, or
 * COROUTINE_DEAD for an empty slot.  An id outside [0, slot count) aborts.
 */
COROUTINE_API int coroutine_status(struct schedule *, int id);

/* The id of the running coroutine, or -1 when the main program runs. */
COROUTINE_API int coroutine_running(struct schedule *);

/*
 * Suspends the running coroutine and returns to the main program's
 * coroutine_resume.  When the coroutine is resumed, yield returns with the
 * coroutine's locals back at their addresses.  Calling it from outside a
 * coroutine of this schedule (from main, or from a coroutine of another
 * schedule) aborts.
 */
COROUTINE_API void coroutine_yield(struct schedule *);

/*
 * The additions to the original API, whose seven functions are above: each
 * for a need that the original leaves to its users.
 */

/*
 * For tools and learners who want to watch the stack copying.
 *
 * The number of bytes of run stack that coroutine id held at its last
 * yield: what that yield copied out to the coroutine's heap buffer, and
 * what the next coroutine_resume(S, id) copies back to the top of the run
 * stack (unless id was the last coroutine to run on S: then its bytes are
 * still in place and nothing is copied).  0 for a coroutine that has never
 * yielded and for an empty slot.  An id outside [0, slot count) aborts.
 */
COROUTINE_API long coroutine_stack_size(struct schedule *, int id);

/*
 * For a main loop that drives the coroutines itself and needs to walk the
 * slots (the original's users read S->cap and S->co[i]; here the struct is
 * opaque).
 *
 * The smallest id greater than id whose slot holds a coroutine (ready,
 * running or suspended), or -1 when there is none: coroutine_next(S, -1)
 * is the first, and an id at or past the slot count gives -1.  Empty slots
 * cost little to skip, 4096 at a time.  Made for the loop
 *
 *     for (id = coroutine_next(S, -1); id != -1; id = coroutine_next(S, id))
 *         coroutine_resume(S, id);
 *
 * which stays right while coroutines finish or make others during the walk:
 * a new coroutine with a higher id than the current one is met in the same
 * pass, one with a lower id in the next.  An id below -1 aborts.
 */
COROUTINE_API int coroutine_next(struct schedule *, int id);

/*
 * For hosts that must survive running out of memory (a script engine whose
 * error ends one script only), and for code that must end in its own way
 * when it is deleted (code built without exceptions).
 *
 * coroutine_yield, except when there is no memory to save the coroutine's
 * stack (a yield deeper than any before may need a larger buffer): then it
 * returns -1 at once, and the coroutine goes on running where it was, as if
 * it had not been called.  Otherwise it returns 0, once the coroutine is
 * resumed, or COROUTINE_ENDING when coroutine_delete or coroutine_close
 * ends the coroutine while it waits here: it should then return from its
 * function, closing its scopes the ordinary way (if it waits again
 * instead, it is ended there as coroutine_delete says).  coroutine_yield,
 * out of memory, prints a line and aborts.  Misuse aborts as
 * coroutine_yield's does.
 */
#define COROUTINE_ENDING 1
COROUTINE_API int coroutine_try_yield(struct schedule *);

/*
 * Ends one coroutine without finishing it, as an engine despawns an entity
 * in the middle of its behaviour.
 *
 * A never-started coroutine is freed.  A suspended one is ended where it
 * waits, then freed: in coroutine_try_yield, which returns COROUTINE_ENDING
 * for it to return from its function; in coroutine_yield, by unwinding it
 * as a thread is cancelled, as the running coroutine, with its own
 * exceptions being handled: the destructors of the C++ objects on its
 * frames (and C cleanup attributes) run, innermost first.  Code built
 * without exceptions (C++ with -fno-exceptions, C without -fexceptions) has
 * nothing to run: its objects are not destroyed, and it is freed as the
 * original frees a coroutine.  So is a coroutine whose unwinding cannot go
 * on: a catch (...) that does not rethrow it ends it there, and so does a
 * frame that may not be left by an exception (a noexcept function, a
 * destructor run by an exception's unwinding), or a destructor that waits;
 * what was unwound before stays done.  Where nothing can be unwound
 * (docs/api.md says where: a C program that links no unwinder,
 * WebAssembly), nothing of it runs.  Its slot is emptied (ids are then
 * handed out as after a coroutine finishes), and the other coroutines are
 * untouched.  An empty slot is left as it is.
 *
 * May be called from inside a coroutine, also for itself and from a
 * destructor that another delete runs: the coroutine is then ended when
 * control is back in main, before main's coroutine_resume or
 * coroutine_delete returns, in id order (a coroutine that deletes itself
 * goes on until it waits, and is ended there); until then it is there as
 * before.  An id outside [0, slot count), or a coroutine suspended on
 * another thread, aborts.
 */
COROUTINE_API void coroutine_delete(struct schedule *, int id);

/*
 * What only a copying design can give: a second coroutine that waits
 * exactly where coroutine id waits, with its own copy of id's stack and
 * registers, so that the two go on independently from there (a
 * never-started coroutine's copy will start the same function with the same
 * ud).  Returns the copy's id, assigned as
 * coroutine_new assigns it, or -1 when memory runs out, leaving the schedule
 * as it was.  May be called from main or from inside a coroutine.
 *
 * The copy shares everything outside its frames: heap objects, globals,
 * what ud points to.  So a C++ object on the frames that owns something
 * (a std::string's buffer, a std::unique_ptr) would be owned twice: clone
 * only coroutines whose frames hold plain values and pointers they do not
 * own (docs/api.md: the clone rule).  Copying the running coroutine, an empty
 * slot or an id outside [0, slot count) aborts, and so does copying one
 * suspended on another thread than the caller's, one that yielded inside a
 * catch handler or while an exception unwound its frames (the copy would
 * share that exception), and, under AddressSanitizer with
 * detect_stack_use_after_return=1, one whose locals ASan keeps in its fake
 * stack, off the run stack (the copy would share them).
 */
COROUTINE_API int coroutine_clone(struct schedule *, int id);

#ifdef __cplusplus
}
#endif

#endif
