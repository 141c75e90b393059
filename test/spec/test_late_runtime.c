/*
 * test_late_runtime.c - a C program, with no C++ runtime when it starts,
 * loads a C++ library (late_runtime_plugin.cpp) and the runtime with it,
 * whose coroutines yield inside catch handlers: each still rethrows its own
 * exception, and main its own.  The library finds the runtime when it
 * arrives (see take_up_late_runtime in coroutine.cpp), not only when the program
 * starts with one.  With two runtimes (libstdc++ and libc++abi), each keeps
 * its own state in each coroutine, however many there are, in reused slots
 * and after the schedule moves to another thread; a copy (coroutine_clone)
 * of one handling an exception in the second is refused, and a copy in a
 * reused slot finds no exception there; and a runtime that leaves the
 * process is let go (unloadable_runtime.c).  coroutine_delete finds the
 * unwinder a runtime brought, and unwinds the library's coroutines with it
 * (with libc++abi, a catch (...) that rethrows ends its coroutine there),
 * and gives the runtime its terminate handler back.
 *
 * On Linux the library is a .so that dlopen loads; on Windows a DLL that
 * LoadLibrary loads, built against MinGW's libstdc++-6.dll.  Built with
 * -DTEST_PLAIN it needs no CMocka (test/support/plain_suite.h): so it runs under
 * wine (make windows-test-runtime-dll).
 */
#define _GNU_SOURCE /* RTLD_DEFAULT, RTLD_NOLOAD */
#ifdef TEST_PLAIN
#include "plain_suite.h"
#else
#include "support.h"
#endif

#include "late_runtime.h"
#include "modules.h"
#include "child.h"
#include "gate.h"

/* Whether the program has a C++ runtime already (modules.h loads the
 * library): what differs between Windows and the others. */
#ifdef _WIN32
#define PLUGIN "late_runtime_plugin.dll"
static int has_cxx_runtime(void)
{
	return GetModuleHandleA("libstdc++-6.dll") != NULL || GetModuleHandleA("libc++.dll") != NULL;
}
#else
#define PLUGIN "late_runtime_plugin.so"
static int has_cxx_runtime(void)
{
	return dlsym(RTLD_DEFAULT, "__cxa_get_globals") != NULL || is_loaded("libstdc++.so.6")
	    || is_loaded("libc++abi.so.1");
}
#endif

/* The library, beside this program; on Linux also the same library built
 * with clang++ against libc++ and libc++abi, another C++ runtime. */
static char plugin_path[4096];
#ifndef _WIN32
#define PLUGIN_LIBCXX "late_runtime_plugin_libcxx.so"
static char plugin_libcxx_path[4096];
#endif

/* A plugin's functions, found by its path. */
struct plugin {
	new_handler_func new_handler;
	resume_in_handler_func resume_in_handler;
	new_noter_func new_noter;
	new_unwinder_func new_unwinder;
	new_waiter_func new_waiter;
	new_counted_waiter_func new_counted_waiter;
	void *module;
};

/* Loads the plugin at path into *p; NULL, or what went wrong. */
static const char *load_plugin(const char *path, struct plugin *p)
{
	void *plugin = load_module(path);
	if (plugin == NULL)
		return load_error();
	p->module = plugin;
	if (!find_in_module(plugin, "new_handler", &p->new_handler, sizeof p->new_handler) ||
	    !find_in_module(plugin, "resume_in_handler", &p->resume_in_handler, sizeof p->resume_in_handler) ||
	    !find_in_module(plugin, "new_noter", &p->new_noter, sizeof p->new_noter) ||
	    !find_in_module(plugin, "new_unwinder", &p->new_unwinder, sizeof p->new_unwinder) ||
	    !find_in_module(plugin, "new_waiter", &p->new_waiter, sizeof p->new_waiter) ||
	    !find_in_module(plugin, "new_counted_waiter", &p->new_counted_waiter, sizeof p->new_counted_waiter))
		return "functions missing";
	return NULL;
}

static void yield_once(struct schedule *S, void *ud)
{
	(void)ud;
	coroutine_yield(S);
}

/* Looking for a runtime must not load one: only what is loaded counts.
 * Linked with the C++ driver (make sanitize), the program has a runtime
 * from the start: this test skips, and the tests after it only check what
 * test_exceptions does. */
static void test_program_starts_without_cxx_runtime(void **state)
{
	struct schedule *S;
	(void)state;
	if (has_cxx_runtime()) {
		fprintf(stderr, "this program was linked with a C++ runtime\n");
		skip();
	}
	S = coroutine_open();
	coroutine_resume(S, coroutine_new(S, yield_once, NULL)); /* a start looks */
	coroutine_close(S);
	assert_false(has_cxx_runtime());
}

static void test_coroutines_of_a_library_loaded_later_rethrow_their_own(void **state)
{
	struct schedule *S = coroutine_open(); /* the thread's first use */
	int before = coroutine_new(S, yield_once, NULL);
	struct handler a = { "first", "" }, b = { "second", "" }, m = { "main's", "" };
	struct plugin p = { NULL, NULL, NULL, NULL, NULL, NULL, NULL }; /* found in the plugin, loaded below */
	const char *why;
	int ia, ib;
	(void)state;
	coroutine_resume(S, before); /* suspended before the runtime comes */
	why = load_plugin(plugin_path, &p);
	if (why != NULL)
		fail_msg("loading %s: %s", plugin_path, why);
	ia = p.new_handler(S, &a);
	ib = p.new_handler(S, &b);
	coroutine_resume(S, ia); /* a yields inside its handler */
	coroutine_resume(S, ib); /* so does b */
	coroutine_resume(S, before);
	p.resume_in_handler(S, ia, &m); /* a rethrows inside main's handler */
	coroutine_resume(S, ib);
	assert_string_equal(a.rethrown, "first");
	assert_string_equal(b.rethrown, "second");
	assert_string_equal(m.rethrown, "main's");
	assert_int_equal(coroutine_status(S, before), COROUTINE_DEAD);
	coroutine_close(S);
}

#ifndef _WIN32
/* ---- In a child: the process's runtimes come and stay --------------------- */

static void load_or_die(const char *path, struct plugin *p)
{
	const char *why = load_plugin(path, p);
	if (why != NULL) {
		fprintf(stderr, "loading %s: %s\n", path, why);
		exit(2);
	}
}

/* Two coroutines of plugin p yield inside their handlers; main, in p's own
 * handler, resumes the first; each then rethrows, after the other plugin's
 * did the same in between (rethrow_in_main_then_b). */
struct handlers {
	struct plugin p;
	struct handler a, b, m;
	int ia, ib;
};

static void start_handlers(struct schedule *S, struct handlers *h, const char *a, const char *b, const char *m)
{
	h->a.throws = a, h->b.throws = b, h->m.throws = m;
	h->ia = h->p.new_handler(S, &h->a);
	h->ib = h->p.new_handler(S, &h->b);
	coroutine_resume(S, h->ia); /* a yields inside its handler */
	coroutine_resume(S, h->ib); /* so does b */
}

static void rethrow_in_main_then_b(struct schedule *S, struct handlers *h)
{
	h->p.resume_in_handler(S, h->ia, &h->m); /* a rethrows inside main's handler */
	coroutine_resume(S, h->ib);
}

/* Exits 0 when every handler rethrew its own, else says who rethrew what. */
static void exit_with_what_was_rethrown(struct handlers *h, int n)
{
	int i, wrong = 0;
	for (i = 0; i < n; i++) {
		wrong |= strcmp(h[i].a.rethrown, h[i].a.throws) || strcmp(h[i].b.rethrown, h[i].b.throws) ||
			 strcmp(h[i].m.rethrown, h[i].m.throws);
		fprintf(stderr, "a=%s b=%s main=%s; ", h[i].a.rethrown, h[i].b.rethrown, h[i].m.rethrown);
	}
	fflush(stderr);
	_exit(wrong);
}

/* Both plugins, libstdc++'s and libc++abi's, in the order given, after a
 * schedule opened with neither: their coroutines interleave. */
static void two_runtimes(const char *first, const char *second)
{
	struct schedule *S = coroutine_open();
	int before = coroutine_new(S, yield_once, NULL);
	struct handlers h[2];
	coroutine_resume(S, before); /* suspended before the runtimes come */
	/* Debian 12's libc++abi brings LLVM's libunwind, whose _Unwind_*
	 * functions libgcc_s, loaded after it in the same scope, would call:
	 * g++'s next throw crashes, coroutines or not.  Loaded first, libgcc_s
	 * keeps its own (see README). */
	dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_GLOBAL);
	load_or_die(first, &h[0].p);
	load_or_die(second, &h[1].p);
	start_handlers(S, &h[0], "first a", "first b", "first main");
	start_handlers(S, &h[1], "second a", "second b", "second main");
	coroutine_resume(S, before);
	rethrow_in_main_then_b(S, &h[0]);
	rethrow_in_main_then_b(S, &h[1]);
	coroutine_close(S);
	exit_with_what_was_rethrown(h, 2);
}

static void libstdcxx_then_libcxx(void *arg)
{
	(void)arg;
	two_runtimes(plugin_path, plugin_libcxx_path);
}

static void libcxx_then_libstdcxx(void *arg)
{
	(void)arg;
	two_runtimes(plugin_libcxx_path, plugin_path);
}

static void assert_child_succeeds(void (*body)(void *), void *arg)
{
	struct child_result r = run_in_child(body, arg);
	if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0)
		fail_msg("status %d: %s", r.status, r.err);
}

static void skip_without_libcxx_plugin(void)
{
	if (access(plugin_libcxx_path, R_OK) != 0) {
		fprintf(stderr, "no %s (built where clang++ -stdlib=libc++ links)\n", PLUGIN_LIBCXX);
		skip();
	}
}

static void test_two_runtimes_libstdcxx_first_each_keep_their_own(void **state)
{
	(void)state;
	skip_without_libcxx_plugin();
	assert_child_succeeds(libstdcxx_then_libcxx, NULL);
}

static void test_two_runtimes_libcxx_first_each_keep_their_own(void **state)
{
	(void)state;
	skip_without_libcxx_plugin();
	assert_child_succeeds(libcxx_then_libstdcxx, NULL);
}

/*
 * A thread that opened a schedule before another thread loaded the runtime
 * finds it at its own next start: each thread knows what it looked at.
 */
struct second_thread {
	struct schedule *S;
	struct handlers h;
	gate opened; /* by the second thread, once its schedule has looked */
	gate loaded; /* by the first, once it has used the plugin */
};

static void open_then_use_the_plugin(void *arg)
{
	struct second_thread *t = arg;
	t->S = coroutine_open(); /* looks, before the load */
	open_gate(&t->opened);
	wait_at_gate(&t->loaded);
	start_handlers(t->S, &t->h, "second thread's a", "second thread's b", "second thread's main");
	rethrow_in_main_then_b(t->S, &t->h);
	coroutine_close(t->S);
}

static void runtime_found_by_another_thread_first(void *arg)
{
	struct second_thread t;
	struct handlers mine;
	struct thread second;
	struct schedule *S = coroutine_open();
	(void)arg;
	if (!make_gate(&t.opened) || !make_gate(&t.loaded) || !start_thread(&second, open_then_use_the_plugin, &t))
		exit(3);
	wait_at_gate(&t.opened);
	load_or_die(plugin_path, &mine.p);
	t.h.p = mine.p;
	start_handlers(S, &mine, "first thread's a", "first thread's b", "first thread's main");
	rethrow_in_main_then_b(S, &mine);
	open_gate(&t.loaded);
	join_thread(&second);
	remove_gate(&t.opened);
	remove_gate(&t.loaded);
	coroutine_close(S);
	exit_with_what_was_rethrown(&t.h, 1);
}

static void test_thread_that_looked_before_the_load_finds_the_runtime(void **state)
{
	(void)state;
	assert_child_succeeds(runtime_found_by_another_thread_first, NULL);
}

/* ---- In a child: a schedule that keeps two runtimes ----------------------- */

/* Both plugins: libstdc++ is the runtime a schedule keeps first (swapped on
 * the fast path), libc++abi the second (swapped around the whole resume, its
 * states in the schedule's own array: see resume_keeping_more_runtimes). */
struct two_plugins {
	struct plugin libstdcxx, libcxx;
};

/* A schedule opened before the runtimes came, which takes both up at the
 * first start after (see take_up_late_runtime), with 16 slots then. */
static struct schedule *open_keeping_two_runtimes(struct two_plugins *p)
{
	struct schedule *S = coroutine_open();
	struct exceptions_seen seen;
	dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_GLOBAL); /* see two_runtimes */
	load_or_die(plugin_path, &p->libstdcxx);
	load_or_die(plugin_libcxx_path, &p->libcxx);
	coroutine_resume(S, p->libcxx.new_noter(S, &seen));
	return S;
}

/* Whether a coroutine of p, new in the slot of one that yielded while an
 * exception unwound through it and then finished, finds no exception at
 * its start (1), or says what it found (0). */
static int starts_clean_in_a_used_slot(struct schedule *S, const struct plugin *p, const char *runtime)
{
	struct exceptions_seen seen = { -1, -1 };
	int id = p->new_unwinder(S), again;
	coroutine_resume(S, id); /* yields while its exception unwinds */
	coroutine_resume(S, id); /* catches it and finishes */
	again = p->new_noter(S, &seen);
	coroutine_resume(S, again);
	if (again == id && seen.handling == 0 && seen.unwinding == 0)
		return 1;
	fprintf(stderr, "%s: in slot %d after slot %d: handling %d, unwinding %d; ", runtime, again, id,
		seen.handling, seen.unwinding);
	return 0;
}

static void new_coroutines_in_used_slots(void *arg)
{
	struct two_plugins p;
	struct schedule *S = open_keeping_two_runtimes(&p);
	int clean;
	(void)arg;
	clean = starts_clean_in_a_used_slot(S, &p.libstdcxx, "libstdc++");
	clean &= starts_clean_in_a_used_slot(S, &p.libcxx, "libc++abi");
	coroutine_close(S);
	fflush(stderr);
	_exit(!clean);
}

static void test_two_runtimes_new_coroutine_in_a_used_slot_finds_no_exception(void **state)
{
	(void)state;
	skip_without_libcxx_plugin();
	assert_child_succeeds(new_coroutines_in_used_slots, NULL);
}

/* More coroutines of the second runtime than the schedule had slots when it
 * took that runtime up: each keeps its own state there all the same. */
#define MANY 40

static void many_coroutines_of_the_second_runtime(void *arg)
{
	static struct handler h[MANY], m[MANY];
	static char throws[MANY][16], mains[MANY][16];
	struct two_plugins p;
	struct schedule *S = open_keeping_two_runtimes(&p);
	int id[MANY], i, wrong = 0;
	(void)arg;
	for (i = 0; i < MANY; i++) {
		snprintf(throws[i], sizeof throws[i], "coroutine %d", i);
		snprintf(mains[i], sizeof mains[i], "main %d", i);
		h[i].throws = throws[i];
		m[i].throws = mains[i];
		id[i] = p.libcxx.new_handler(S, &h[i]);
		coroutine_resume(S, id[i]); /* yields inside its handler */
	}
	for (i = 0; i < MANY; i++)
		p.libcxx.resume_in_handler(S, id[i], &m[i]); /* each rethrows inside main's handler */
	coroutine_close(S);
	for (i = 0; i < MANY; i++) {
		if (strcmp(h[i].rethrown, h[i].throws) == 0 && strcmp(m[i].rethrown, m[i].throws) == 0)
			continue;
		if (wrong++ < 3)
			fprintf(stderr, "%s rethrew \"%s\", %s \"%s\"; ", h[i].throws, h[i].rethrown, m[i].throws,
				m[i].rethrown);
	}
	fflush(stderr);
	_exit(wrong != 0);
}

static void test_two_runtimes_many_coroutines_keep_their_own(void **state)
{
	(void)state;
	skip_without_libcxx_plugin();
	assert_child_succeeds(many_coroutines_of_the_second_runtime, NULL);
}

/* A schedule that keeps both runtimes moves to another thread when it is
 * resumed there, here by resuming an empty slot (no coroutine's resume
 * then follows on the long way): both runtimes still change hands there,
 * each once. */
struct moved_schedule {
	struct schedule *S;
	struct handlers h[2];
};

static void move_then_use_both_plugins(void *arg)
{
	struct moved_schedule *t = arg;
	coroutine_resume(t->S, 0); /* an empty slot: its coroutine finished */
	start_handlers(t->S, &t->h[0], "libstdc++'s a", "libstdc++'s b", "libstdc++'s main");
	start_handlers(t->S, &t->h[1], "libc++abi's a", "libc++abi's b", "libc++abi's main");
	rethrow_in_main_then_b(t->S, &t->h[0]);
	rethrow_in_main_then_b(t->S, &t->h[1]);
	coroutine_close(t->S);
}

static void schedule_moved_by_an_empty_slot(void *arg)
{
	struct moved_schedule t;
	struct two_plugins p;
	(void)arg;
	memset(&t, 0, sizeof t);
	t.S = open_keeping_two_runtimes(&p);
	t.h[0].p = p.libstdcxx;
	t.h[1].p = p.libcxx;
	if (!run_thread(move_then_use_both_plugins, &t))
		exit(3);
	exit_with_what_was_rethrown(t.h, 2);
}

static void test_two_runtimes_schedule_moved_to_another_thread_swaps_each_once(void **state)
{
	(void)state;
	skip_without_libcxx_plugin();
	assert_child_succeeds(schedule_moved_by_an_empty_slot, NULL);
}

/* ---- In a child: copies, with two runtimes --------------------------------- */

/* A coroutine of the second runtime yields inside its handler: its state
 * there, in the schedule's array, is not empty, and a copy would share the
 * exception. */
static void clone_a_handler_of_the_second_runtime(void *arg)
{
	struct two_plugins p;
	struct schedule *S = open_keeping_two_runtimes(&p);
	struct handler h = { "the second runtime's", "" };
	int id = p.libcxx.new_handler(S, &h);
	(void)arg;
	coroutine_resume(S, id);
	coroutine_clone(S, id);
}

static void test_two_runtimes_clone_in_a_handler_of_the_second_aborts(void **state)
{
	struct child_result r;
	(void)state;
	skip_without_libcxx_plugin();
	r = run_in_child(clone_a_handler_of_the_second_runtime, NULL);
	assert_aborted_with(&r, "coroutine_clone: coroutine 0 yielded inside a catch handler or while an "
				"exception unwound its frames; its copy would share that exception");
}

/* A copy takes the slot of a coroutine that yielded while an exception
 * unwound through it, then finished: the schedule's array still holds that
 * one's last state in the second runtime.  The copy, and its original,
 * find no exception there. */
static void copy_in_a_used_slot(void *arg)
{
	static struct exceptions_seen seen[16];
	struct two_plugins p;
	struct schedule *S = open_keeping_two_runtimes(&p);
	int waiter, unwinder, copy, clean;
	(void)arg;
	memset(seen, 0xff, sizeof seen);
	waiter = p.libcxx.new_waiter(S, seen);
	unwinder = p.libcxx.new_unwinder(S);
	coroutine_resume(S, waiter);   /* yields, handling nothing */
	coroutine_resume(S, unwinder); /* yields while its exception unwinds */
	coroutine_resume(S, unwinder); /* catches it and finishes */
	copy = coroutine_clone(S, waiter);
	coroutine_resume(S, copy);
	coroutine_resume(S, waiter);
	clean = copy == unwinder && seen[copy].handling == 0 && seen[copy].unwinding == 0 &&
		seen[waiter].handling == 0 && seen[waiter].unwinding == 0;
	if (!clean)
		fprintf(stderr, "copy %d, in slot %d: handling %d, unwinding %d; its original: %d, %d", copy, unwinder,
			seen[copy].handling, seen[copy].unwinding, seen[waiter].handling, seen[waiter].unwinding);
	coroutine_close(S);
	fflush(stderr);
	_exit(!clean);
}

static void test_two_runtimes_copy_in_a_used_slot_finds_no_exception(void **state)
{
	(void)state;
	skip_without_libcxx_plugin();
	assert_child_succeeds(copy_in_a_used_slot, NULL);
}

/* ---- In a child: a runtime that leaves ------------------------------------- */

/*
 * A runtime found in a plugin's scope must be free to go with it: looking
 * for it keeps no hold on it.  And once it is gone the library must not
 * call it again: a schedule opened after looks afresh.  The runtime is
 * unloadable_runtime.so, which can leave (Debian's cannot).
 */
#define UNLOADABLE_RUNTIME "unloadable_runtime.so"
static char unloadable_runtime_path[4096];

static void take_up_a_runtime_then_unload_it(void *arg)
{
	struct schedule *S;
	int (*times_asked)(void);
	void *runtime = load_module(unloadable_runtime_path);
	(void)arg;
	if (runtime == NULL || !find_in_module(runtime, "times_asked", &times_asked, sizeof times_asked)) {
		fprintf(stderr, "loading %s: %s", unloadable_runtime_path, runtime ? "no times_asked" : load_error());
		_exit(2);
	}
	S = coroutine_open(); /* looks, and keeps it */
	coroutine_resume(S, coroutine_new(S, yield_once, NULL));
	if (times_asked() == 0) {
		fprintf(stderr, "the library did not find %s", UNLOADABLE_RUNTIME);
		_exit(1);
	}
	coroutine_close(S);
	unload_module(runtime);
	if (is_loaded(unloadable_runtime_path)) {
		fprintf(stderr, "%s stays loaded after it was unloaded", UNLOADABLE_RUNTIME);
		_exit(1);
	}
	S = coroutine_open(); /* looks for the runtimes again */
	coroutine_resume(S, coroutine_new(S, yield_once, NULL));
	coroutine_close(S);
}

static void test_runtime_unloaded_is_let_go(void **state)
{
	(void)state;
	assert_child_succeeds(take_up_a_runtime_then_unload_it, NULL);
}

/* ---- In a child: coroutine_delete with the unwinder a plugin brought ---------- */

/* This program links no unwinder: the delete finds the one the plugin's
 * runtime uses (libgcc's, or LLVM's libunwind that Debian's libc++abi
 * brings), and its coroutine's object is destroyed; with catch_all, its
 * catch (...) is entered first, and rethrows.  The runtime's terminate
 * handler, the library's while the delete unwinds, is the program's again
 * after it. */
struct waiter {
	const char *plugin;
	const char *runtime; /* the plugin's C++ runtime, by its soname */
	int catch_all;
	int destroyed; /* the times the delete destroys the object: 1, or 0 */
};

/* What std::get_terminate() of the runtime named soname returns. */
static void *terminate_handler_of(const char *soname)
{
	void *(*get_terminate)(void);
	void *handler = NULL, *runtime = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
	if (runtime != NULL && find_in_module(runtime, "_ZSt13get_terminatev", &get_terminate, sizeof get_terminate))
		handler = get_terminate();
	if (runtime != NULL)
		dlclose(runtime);
	return handler;
}

static void delete_a_waiter(void *arg)
{
	struct waiter *w = (struct waiter *)arg;
	struct plugin p;
	struct schedule *S = coroutine_open();
	int seen[2] = { 0, 0 }, id, status;
	void *handler;
	load_or_die(w->plugin, &p);
	handler = terminate_handler_of(w->runtime);
	id = p.new_counted_waiter(S, seen, w->catch_all);
	coroutine_resume(S, id);
	coroutine_delete(S, id);
	status = coroutine_status(S, id);
	coroutine_close(S);
	fprintf(stderr, "destroyed %d, catch (...) entered %d, status %d, terminate handler %s\n", seen[0], seen[1],
		status, handler == NULL ? "not found" : handler == terminate_handler_of(w->runtime) ? "kept" : "changed");
	_exit(seen[0] != w->destroyed || seen[1] != w->catch_all || status != COROUTINE_DEAD || handler == NULL ||
	      handler != terminate_handler_of(w->runtime));
}

static void test_delete_unwinds_with_the_unwinder_a_plugin_brought(void **state)
{
	struct waiter w = { plugin_path, "libstdc++.so.6", 1, 1 };
	(void)state;
	assert_child_succeeds(delete_a_waiter, &w);
}

/* Only where libc++abi's unwinder is the only one: a program linked with a
 * runtime (make sanitize) has libgcc's in its global scope, which comes first. */
static void skip_unless_libcxx_brings_the_only_unwinder(void)
{
	skip_without_libcxx_plugin();
	if (has_cxx_runtime()) {
		fprintf(stderr, "this program was linked with a C++ runtime, and its unwinder\n");
		skip();
	}
}

static void test_delete_unwinds_with_the_unwinder_libcxx_brought(void **state)
{
	struct waiter w = { plugin_libcxx_path, "libc++abi.so.1", 0, 1 };
	(void)state;
	skip_unless_libcxx_brings_the_only_unwinder();
	assert_child_succeeds(delete_a_waiter, &w);
}

/* libc++abi enters a catch (...) too, but its `throw;` raises the unwinding
 * anew, as an exception that no handler catches: std::terminate, which
 * ends the coroutine there, in its handler; the object outside the try is
 * not destroyed. */
static void test_catch_all_rethrowing_a_delete_ends_the_coroutine_there_with_libcxx(void **state)
{
	struct waiter w = { plugin_libcxx_path, "libc++abi.so.1", 1, 0 };
	(void)state;
	skip_unless_libcxx_brings_the_only_unwinder();
	assert_child_succeeds(delete_a_waiter, &w);
}
#endif

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_program_starts_without_cxx_runtime),
#ifndef _WIN32
		/* In children, before this process loads a runtime itself. */
		cmocka_unit_test(test_two_runtimes_libstdcxx_first_each_keep_their_own),
		cmocka_unit_test(test_two_runtimes_libcxx_first_each_keep_their_own),
		cmocka_unit_test(test_thread_that_looked_before_the_load_finds_the_runtime),
		cmocka_unit_test(test_two_runtimes_new_coroutine_in_a_used_slot_finds_no_exception),
		cmocka_unit_test(test_two_runtimes_many_coroutines_keep_their_own),
		cmocka_unit_test(test_two_runtimes_schedule_moved_to_another_thread_swaps_each_once),
		cmocka_unit_test(test_two_runtimes_clone_in_a_handler_of_the_second_aborts),
		cmocka_unit_test(test_two_runtimes_copy_in_a_used_slot_finds_no_exception),
		cmocka_unit_test(test_runtime_unloaded_is_let_go),
		cmocka_unit_test(test_delete_unwinds_with_the_unwinder_a_plugin_brought),
		cmocka_unit_test(test_delete_unwinds_with_the_unwinder_libcxx_brought),
		cmocka_unit_test(test_catch_all_rethrowing_a_delete_ends_the_coroutine_there_with_libcxx),
#endif
		cmocka_unit_test(test_coroutines_of_a_library_loaded_later_rethrow_their_own),
	};
	(void)argc;
	beside_program(plugin_path, sizeof plugin_path, PLUGIN, argv[0]);
#ifndef _WIN32
	beside_program(plugin_libcxx_path, sizeof plugin_libcxx_path, PLUGIN_LIBCXX, argv[0]);
	beside_program(unloadable_runtime_path, sizeof unloadable_runtime_path, UNLOADABLE_RUNTIME, argv[0]);
#endif
	return run_suite(tests);
}
