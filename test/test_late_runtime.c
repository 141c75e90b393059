/*
 * test_late_runtime.c - a C program, with no C++ runtime when it starts,
 * loads a C++ library (late_runtime_plugin.cpp) and the runtime with it,
 * whose coroutines yield inside catch handlers: each still rethrows its own
 * exception, and main its own.  The library finds the runtime when it
 * arrives (see runtime_eh_state in coroutine.cpp), not only when the program
 * starts with one.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT, RTLD_NOLOAD */
#include "support.h"

#include <dlfcn.h>

#include "late_runtime.h"

/* The library, beside this program. */
#define PLUGIN "late_runtime_plugin.so"
static char plugin_path[4096];

static int has_cxx_runtime(void)
{
	return dlsym(RTLD_DEFAULT, "__cxa_get_globals") != NULL
	    || dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD) != NULL;
}

/* Linked with the C++ driver (make sanitize), the program has a runtime
 * from the start, and the test below only checks what test_exceptions
 * does. */
static void test_program_starts_without_cxx_runtime(void **state)
{
	(void)state;
	if (has_cxx_runtime()) {
		fprintf(stderr, "this program was linked with a C++ runtime\n");
		skip();
	}
}

static void yield_once(struct schedule *S, void *ud)
{
	(void)ud;
	coroutine_yield(S);
}

/* A function of the plugin, copied out of dlsym's void * (POSIX makes the
 * two convertible; C does not say so). */
static void find_in_plugin(void *plugin, const char *name, void *func, size_t size)
{
	void *found = dlsym(plugin, name);
	assert_non_null(found);
	assert_int_equal(size, sizeof found);
	memcpy(func, &found, size);
}

static void test_coroutines_of_a_library_loaded_later_rethrow_their_own(void **state)
{
	struct schedule *S = coroutine_open(); /* the thread's first use */
	int before = coroutine_new(S, yield_once, NULL);
	struct handler a = { "first", "" }, b = { "second", "" }, m = { "main's", "" };
	new_handler_func new_handler;
	resume_in_handler_func resume_in_handler;
	void *plugin;
	int ia, ib;
	(void)state;
	coroutine_resume(S, before); /* suspended before the runtime comes */
	plugin = dlopen(plugin_path, RTLD_NOW);
	if (plugin == NULL)
		fail_msg("dlopen: %s", dlerror());
	find_in_plugin(plugin, "new_handler", &new_handler, sizeof new_handler);
	find_in_plugin(plugin, "resume_in_handler", &resume_in_handler, sizeof resume_in_handler);
	ia = new_handler(S, &a);
	ib = new_handler(S, &b);
	coroutine_resume(S, ia); /* a yields inside its handler */
	coroutine_resume(S, ib); /* so does b */
	coroutine_resume(S, before);
	resume_in_handler(S, ia, &m); /* a rethrows inside main's handler */
	coroutine_resume(S, ib);
	assert_string_equal(a.rethrown, "first");
	assert_string_equal(b.rethrown, "second");
	assert_string_equal(m.rethrown, "main's");
	assert_int_equal(coroutine_status(S, before), COROUTINE_DEAD);
	coroutine_close(S);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_program_starts_without_cxx_runtime),
		cmocka_unit_test(test_coroutines_of_a_library_loaded_later_rethrow_their_own),
	};
	const char *slash = strrchr(argv[0], '/');
	int dir = slash ? (int)(slash - argv[0] + 1) : 0;
	(void)argc;
	snprintf(plugin_path, sizeof plugin_path, "%.*s%s", dir, argv[0], PLUGIN);
	if (dir == 0) /* dlopen would search the library path */
		snprintf(plugin_path, sizeof plugin_path, "./%s", PLUGIN);
	return run_suite(tests);
}
