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
 * -DTEST_PLAIN it needs no CMocka (test/plain_suite.h): so it runs under
 * wine (make windows-test-runtime-dll).
 */
#define _GNU_SOURCE /* RTLD_DEFAULT, RTLD_NOLOAD */
#ifdef TEST_PLAIN
#include "plain_suite.h"
#else
#include "support.h"
#endif

#include "late_runtime.h"

/* Loading the library, finding its functions, and whether the program has
 * a C++ runtime already: what differs between Windows and the others. */
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#define PLUGIN "late_runtime_plugin.dll"
typedef FARPROC plugin_function;

static void *load_plugin(const char *path)
{
	return LoadLibraryA(path);
}

static const char *load_error(void)
{
	static char why[32];
	snprintf(why, sizeof why, "error %lu", (unsigned long)GetLastError());
	return why;
}

static plugin_function find_function(void *plugin, const char *name)
{
	return GetProcAddress((HMODULE)plugin, name);
}

static int has_cxx_runtime(void)
{
	return GetModuleHandleA("libstdc++-6.dll") != NULL || GetModuleHandleA("libc++.dll") != NULL;
}

/* LoadLibrary looks in the program's folder first. */
static void plugin_beside(char *path, size_t size, const char *argv0)
{
	(void)argv0;
	snprintf(path, size, "%s", PLUGIN);
}
#else
#include <dlfcn.h>

#define PLUGIN "late_runtime_plugin.so"
typedef void *plugin_function; /* POSIX makes it convertible; C does not */

static void *load_plugin(const char *path)
{
	return dlopen(path, RTLD_NOW);
}

static const char *load_error(void)
{
	return dlerror();
}

static plugin_function find_function(void *plugin, const char *name)
{
	return dlsym(plugin, name);
}

static int has_cxx_runtime(void)
{
	return dlsym(RTLD_DEFAULT, "__cxa_get_globals") != NULL
	    || dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD) != NULL;
}

static void plugin_beside(char *path, size_t size, const char *argv0)
{
	const char *slash = strrchr(argv0, '/');
	int dir = slash ? (int)(slash - argv0 + 1) : 0;
	snprintf(path, size, "%.*s%s", dir, argv0, PLUGIN);
	if (dir == 0) /* dlopen would search the library path */
		snprintf(path, size, "./%s", PLUGIN);
}
#endif

/* The library, beside this program. */
static char plugin_path[4096];

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

/* Copies the plugin's function called name, as find_function returns it,
 * into *func (size bytes): 0 if the plugin has none, or not of that size. */
static int find_in_plugin(void *plugin, const char *name, void *func, size_t size)
{
	plugin_function found = find_function(plugin, name);
	if (found == NULL || size != sizeof found)
		return 0;
	memcpy(func, &found, size);
	return 1;
}

static void test_coroutines_of_a_library_loaded_later_rethrow_their_own(void **state)
{
	struct schedule *S = coroutine_open(); /* the thread's first use */
	int before = coroutine_new(S, yield_once, NULL);
	struct handler a = { "first", "" }, b = { "second", "" }, m = { "main's", "" };
	new_handler_func new_handler = NULL; /* found in the plugin below */
	resume_in_handler_func resume_in_handler = NULL;
	void *plugin;
	int ia, ib;
	(void)state;
	coroutine_resume(S, before); /* suspended before the runtime comes */
	plugin = load_plugin(plugin_path);
	if (plugin == NULL)
		fail_msg("loading %s: %s", plugin_path, load_error());
	assert_true(find_in_plugin(plugin, "new_handler", &new_handler, sizeof new_handler));
	assert_true(find_in_plugin(plugin, "resume_in_handler", &resume_in_handler, sizeof resume_in_handler));
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
	(void)argc;
	plugin_beside(plugin_path, sizeof plugin_path, argv[0]);
	return run_suite(tests);
}
