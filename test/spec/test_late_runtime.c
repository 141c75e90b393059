/*
 * test_late_runtime.c - a C program, with no C++ runtime when it starts,
 * loads a C++ library (late_runtime_plugin.cpp) and the runtime with it,
 * whose coroutines yield inside catch handlers: each still rethrows its own
 * exception, and main its own.  The library finds the runtime when it
 * arrives (see runtime_eh_state in coroutine.cpp), not only when the program
 * starts with one.
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

/* A plugin's two functions, found by its path. */
struct plugin {
	new_handler_func new_handler;
	resume_in_handler_func resume_in_handler;
};

/* Loads the plugin at path into *p; NULL, or what went wrong. */
static const char *load_plugin(const char *path, struct plugin *p)
{
	void *plugin = load_module(path);
	if (plugin == NULL)
		return load_error();
	if (!find_in_module(plugin, "new_handler", &p->new_handler, sizeof p->new_handler) ||
	    !find_in_module(plugin, "resume_in_handler", &p->resume_in_handler, sizeof p->resume_in_handler))
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
	struct plugin p = { NULL, NULL }; /* found in the plugin, loaded below */
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

static void assert_rethrew_their_own(void (*body)(void *), void *arg)
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
	assert_rethrew_their_own(libstdcxx_then_libcxx, NULL);
}

static void test_two_runtimes_libcxx_first_each_keep_their_own(void **state)
{
	(void)state;
	skip_without_libcxx_plugin();
	assert_rethrew_their_own(libcxx_then_libstdcxx, NULL);
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
	assert_rethrew_their_own(runtime_found_by_another_thread_first, NULL);
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
#endif
		cmocka_unit_test(test_coroutines_of_a_library_loaded_later_rethrow_their_own),
	};
	(void)argc;
	beside_program(plugin_path, sizeof plugin_path, PLUGIN, argv[0]);
#ifndef _WIN32
	beside_program(plugin_libcxx_path, sizeof plugin_libcxx_path, PLUGIN_LIBCXX, argv[0]);
#endif
	return run_suite(tests);
}
