/*
 * test_reload.c - a game engine reloads its game code many times a
 * session: it unloads the module that holds the code (dlclose,
 * FreeLibrary) and loads the new one.  Here the module has the library in
 * it (reload_plugin.c, built with coroutine.cpp; on Windows also
 * libcoroutine.dll itself, its functions found with GetProcAddress), and
 * each of CYCLES reloads goes as in an engine:
 *
 *   1. the module is loaded, and is fresh (its static data starts afresh);
 *   2. the loading thread and a second one drive coroutines, each on a
 *      schedule of its own: some run to their end, some stay suspended;
 *   3. both close their schedules, and the module is unloaded while the
 *      second thread still lives; that thread ends once the module is gone;
 *   4. another module is loaded.
 *
 * An engine more often loads the new build first, hands over, and only then
 * unloads the old one: OVERLAPPING_CYCLES reloads go that way, between two
 * files (an engine builds each version under a new name).  There the old
 * copy's thread-local data is freed while the new copy's is in use, which
 * glibc takes back only for the module loaded last: a library whose
 * thread-locals took the room that glibc keeps for initial-exec ones ran
 * out of it at the 26th such reload.
 *
 * Nothing that the library registers or caches may outlive its module: a
 * callback left with Windows' loader would run code that is gone at the
 * next load (step 4, or step 1 of the next reload), a thread's exit would
 * call into it (step 3), and a module that pinned itself would never go
 * (step 3 checks that it is gone, step 1 that the next copy is fresh).
 *
 * On Windows with the Itanium C++ ABI (MinGW-w64) the library counts DLL
 * loads while schedules are open, to look for a C++ runtime after each
 * one: the last test checks that it looks then, and only then.
 *
 * Built with -DTEST_PLAIN it needs no CMocka (plain_suite.h): so it runs
 * under wine (make windows-test, and windows-msvc-test for the MSVC ABI).
 */
#define _GNU_SOURCE /* RTLD_NOLOAD */
#ifdef TEST_PLAIN
#include "plain_suite.h"
#include "child.h"
#else
#include "support.h"
#endif

#include "gate.h"
#include "modules.h"
#include "reload.h"

enum {
	CYCLES = 12,
	COROUTINES = 6, /* on each thread */
	FINISHING = 3,  /* of which these run to their end, the others halfway */
	STEPS = 5,      /* a coroutine's steps, with a yield between each two */
};

/* The modules' names, and faults reported: what differs between Windows
 * and the others (modules.h loads the modules, gate.h the gates). */
#ifdef _WIN32
#define PLUGIN "reload_plugin.dll"
#define NEXT_PLUGIN "reload_plugin_next.dll"
#if defined(__GNUC__) && !defined(__clang__)
/* MinGW's gcc keeps thread-locals in emutls, which loses one of the
 * process's 1,088 TLS indexes at each unload: fewer here. */
#define OVERLAPPING_RELOADS 200
#else
#define OVERLAPPING_RELOADS 1000
#endif
#define LIBRARY "libcoroutine.dll"
#define OTHER "ws2_32.dll" /* one of Windows' own, which nothing here uses */

/*
 * A fault ends the program at once, saying where (code left behind faults
 * at an address of the freed module), instead of starting wine's debugger,
 * which may wait forever.  Seen first: a fault in a loader callback, such
 * as a thread's exit, would be caught and the thread left hanging.
 */
static LONG WINAPI report_fault(EXCEPTION_POINTERS *e)
{
	DWORD code = e->ExceptionRecord->ExceptionCode;
	if (code != EXCEPTION_ACCESS_VIOLATION && code != EXCEPTION_ILLEGAL_INSTRUCTION)
		return EXCEPTION_CONTINUE_SEARCH;
	fprintf(stderr, "exception %08lx at %p\n", (unsigned long)code, e->ExceptionRecord->ExceptionAddress);
	fflush(stderr);
	TerminateProcess(GetCurrentProcess(), code);
	return EXCEPTION_CONTINUE_SEARCH;
}

static void report_faults(void)
{
	SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX);
	AddVectoredExceptionHandler(1, report_fault);
}

/* An exception raised once the module is gone must reach no handler of its
 * code (a checked build registers one from the first open to the last
 * close): this one, last in line, takes it, and a handler left behind
 * faults first. */
#define EXCEPTION_AFTER_UNLOAD 0xE0C0DE01u

static LONG WINAPI take_exception_after_unload(EXCEPTION_POINTERS *e)
{
	return e->ExceptionRecord->ExceptionCode == EXCEPTION_AFTER_UNLOAD ? EXCEPTION_CONTINUE_EXECUTION
									   : EXCEPTION_CONTINUE_SEARCH;
}

static void raise_after_unload(void)
{
	void *taker = AddVectoredExceptionHandler(0, take_exception_after_unload);
	RaiseException(EXCEPTION_AFTER_UNLOAD, 0, 0, NULL);
	RemoveVectoredExceptionHandler(taker);
}
#else
#define PLUGIN "reload_plugin.so"
#define NEXT_PLUGIN "reload_plugin_next.so"
#ifndef OVERLAPPING_RELOADS /* the build gives fewer under an emulator */
#define OVERLAPPING_RELOADS 1000
#endif
#define OTHER "reload_other.so"

static void report_faults(void)
{
}

static void raise_after_unload(void)
{
}
#endif

enum { OVERLAPPING_CYCLES = OVERLAPPING_RELOADS };

/* The modules, beside this program. */
#define PATH_SIZE 1024
static char plugin_path[PATH_SIZE], next_plugin_path[PATH_SIZE], other_path[PATH_SIZE];

/* ---- What the game does with the module loaded ------------------------- */

struct walk {
	const struct coroutine_api *api;
	int steps;
};

/* Takes STEPS steps, yielding between each two. */
static void walk(struct schedule *S, void *ud)
{
	struct walk *w = (struct walk *)ud;
	while (++w->steps < STEPS)
		w->api->yield(S);
}

/* Opens a schedule, runs FINISHING coroutines to their end and the others
 * halfway, and closes the schedule with those suspended: 1 if each got
 * exactly where it should. */
static int play(const struct coroutine_api *api)
{
	struct walk walks[COROUTINES];
	int ids[COROUTINES], i, round, ok = 1;
	struct schedule *S = api->open();
	if (S == NULL)
		return 0;
	for (i = 0; i < COROUTINES; i++) {
		walks[i].api = api;
		walks[i].steps = 0;
		ids[i] = api->new_coroutine(S, walk, &walks[i]);
	}
	for (round = 0; round < STEPS; round++) {
		for (i = 0; i < COROUTINES; i++) {
			if (i < FINISHING || round < STEPS / 2)
				api->resume(S, ids[i]);
		}
	}
	for (i = 0; i < COROUTINES; i++) {
		int finished = i < FINISHING;
		ok = ok && walks[i].steps == (finished ? STEPS : STEPS / 2)
		     && api->status(S, ids[i]) == (finished ? COROUTINE_DEAD : COROUTINE_SUSPEND);
	}
	api->close(S);
	return ok;
}

/* The second thread plays, then lives on until the module has gone. */
struct second_thread {
	const struct coroutine_api *api;
	gate played, unloaded;
	int ok;
};

static void play_then_outlive_the_module(void *arg)
{
	struct second_thread *t = (struct second_thread *)arg;
	t->ok = play(t->api);
	open_gate(&t->played);
	wait_at_gate(&t->unloaded);
}

/* ---- Reloading ---------------------------------------------------------- */

/* Finds the library in a module just loaded: NULL, or what went wrong. */
typedef const char *(*library_finder)(void *module, struct coroutine_api *api);

/* The plugin's, through its one export, which must find it fresh. */
static const char *plugin_library(void *module, struct coroutine_api *api)
{
	plugin_start_func start;
	if (!find_in_module(module, "plugin_start", &start, sizeof start))
		return "the plugin has no plugin_start";
	if (start(api) != 1)
		return "the plugin's static data is not fresh: the last copy was never unloaded";
	return NULL;
}

/* A copy of the module, loaded and playing (steps 1 and 2 above), its
 * second thread waiting for the unload of an older copy or of this one. */
struct loaded {
	void *module;
	struct coroutine_api api;
	struct second_thread second;
	struct thread thread;
	int played_here;
};

static char why[PATH_SIZE + 256];

/* Loads the module at path into *l and plays: NULL, or what went wrong
 * (then nothing is left loaded or running). */
static const char *load_and_play(struct loaded *l, const char *path, library_finder find)
{
	const char *wrong;
	l->module = load_module(path);
	if (l->module == NULL) {
		snprintf(why, sizeof why, "loading %s: %s", path, load_error());
		return why;
	}
	wrong = find(l->module, &l->api);
	if (wrong != NULL) {
		unload_module(l->module);
		return wrong;
	}
	l->second.api = &l->api;
	if (!make_gate(&l->second.played) || !make_gate(&l->second.unloaded)
	    || !start_thread(&l->thread, play_then_outlive_the_module, &l->second))
		return "cannot start the second thread";
	l->played_here = play(&l->api);
	wait_at_gate(&l->second.played);
	return NULL;
}

/* Lets waiting go (the module it waited for is gone), and tells whether
 * both threads got where they should. */
static int end_second_thread(struct loaded *l)
{
	open_gate(&l->second.unloaded);
	join_thread(&l->thread);
	remove_gate(&l->second.played);
	remove_gate(&l->second.unloaded);
	return l->played_here && l->second.ok;
}

/* Unloads the copy at path (step 3): 1 if it is gone.  Then an exception
 * is raised, which no handler of the copy's may take. */
static int unload_copy(struct loaded *l, const char *path)
{
	int gone = unload_module(l->module) == 0 && !is_loaded(path);
	raise_after_unload();
	return gone;
}

/* Loads and unloads another module (step 4): NULL, or what went wrong. */
static const char *load_another_module(void)
{
	void *other = load_module(other_path);
	if (other == NULL) {
		snprintf(why, sizeof why, "loading %s: %s", other_path, load_error());
		return why;
	}
	unload_module(other);
	return NULL;
}

/* One reload of the module at path (steps 1 to 4 above): NULL, or what
 * went wrong. */
static const char *reload_once(const char *path, library_finder find)
{
	struct loaded l;
	const char *wrong = load_and_play(&l, path, find);
	int gone, played;
	if (wrong != NULL)
		return wrong;
	gone = unload_copy(&l, path);
	played = end_second_thread(&l); /* it ends with the module gone */
	wrong = load_another_module();
	if (wrong != NULL)
		return wrong;
	if (!played)
		return "a coroutine did not get where it should";
	if (!gone)
		return "the module is still loaded after it was unloaded";
	return NULL;
}

static void reload_cycles(const char *path, library_finder find)
{
	int cycle;
	for (cycle = 1; cycle <= CYCLES; cycle++) {
		const char *wrong = reload_once(path, find);
		if (wrong != NULL)
			fail_msg("reload %d of %s: %s", cycle, path, wrong);
	}
}

static void test_a_plugin_with_the_library_in_it_reloads_cleanly(void **state)
{
	(void)state;
	reload_cycles(plugin_path, plugin_library);
}

/* The new build loaded and playing before the old one is unloaded, in
 * turns from two files; the old copy's second thread ends once it is gone. */
static void test_a_new_build_loads_before_the_old_one_unloads(void **state)
{
	static struct loaded copies[2];
	const char *const paths[2] = { plugin_path, next_plugin_path };
	struct loaded *old = NULL;
	int cycle;
	(void)state;
	for (cycle = 1; cycle <= OVERLAPPING_CYCLES; cycle++) {
		struct loaded *now = &copies[cycle % 2];
		const char *wrong = load_and_play(now, paths[cycle % 2], plugin_library);
		if (wrong != NULL)
			fail_msg("overlapping reload %d of %s: %s", cycle, paths[cycle % 2], wrong);
		if (old != NULL) {
			int gone = unload_copy(old, paths[(cycle + 1) % 2]);
			if (!end_second_thread(old))
				fail_msg("overlapping reload %d: a coroutine did not get where it should", cycle);
			if (!gone)
				fail_msg("overlapping reload %d: the old copy is still loaded", cycle);
		}
		old = now;
	}
	if (!unload_copy(old, paths[OVERLAPPING_CYCLES % 2]) || !end_second_thread(old))
		fail_msg("the last copy did not end cleanly");
}

/*
 * libcoroutine.dll, loaded and freed by the program itself (built with
 * COROUTINE_BUILD_DLL, so that it exports coroutine.h's functions with
 * either ABI's linker).
 */
#if defined(_WIN32)
static const char *shared_library(void *module, struct coroutine_api *api)
{
	int found = find_in_module(module, "coroutine_open", &api->open, sizeof api->open)
		&& find_in_module(module, "coroutine_close", &api->close, sizeof api->close)
		&& find_in_module(module, "coroutine_new", &api->new_coroutine, sizeof api->new_coroutine)
		&& find_in_module(module, "coroutine_resume", &api->resume, sizeof api->resume)
		&& find_in_module(module, "coroutine_yield", &api->yield, sizeof api->yield)
		&& find_in_module(module, "coroutine_status", &api->status, sizeof api->status);
	return found ? NULL : "the library lacks a function of coroutine.h";
}

static void test_the_library_dll_reloads_cleanly(void **state)
{
	(void)state;
	reload_cycles(LIBRARY, shared_library);
}
#endif

#if defined(_WIN32) && !defined(_MSC_VER)

/*
 * The library's looks for a C++ runtime, counted: each begins with
 * GetModuleHandleA("libstdc++-6.dll") (see runtime_eh_state), so the
 * plugin's import of GetModuleHandleA (its slot in the plugin's import
 * address table) is pointed at a function that counts those calls.
 */
static int runtime_looks;

static HMODULE WINAPI count_runtime_looks(LPCSTR name)
{
	if (name != NULL && strcmp(name, "libstdc++-6.dll") == 0)
		runtime_looks++;
	return GetModuleHandleA(name);
}

static int watch_runtime_looks(HMODULE module)
{
	char *base = (char *)module;
	IMAGE_NT_HEADERS *headers = (IMAGE_NT_HEADERS *)(base + ((IMAGE_DOS_HEADER *)base)->e_lfanew);
	IMAGE_DATA_DIRECTORY imports = headers->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_IMPORT];
	IMAGE_IMPORT_DESCRIPTOR *dll;
	for (dll = (IMAGE_IMPORT_DESCRIPTOR *)(base + imports.VirtualAddress); dll->Name != 0; dll++) {
		IMAGE_THUNK_DATA *name = (IMAGE_THUNK_DATA *)(base + dll->OriginalFirstThunk);
		IMAGE_THUNK_DATA *slot = (IMAGE_THUNK_DATA *)(base + dll->FirstThunk);
		for (; name->u1.AddressOfData != 0; name++, slot++) {
			DWORD was;
			if (IMAGE_SNAP_BY_ORDINAL(name->u1.Ordinal)
			    || strcmp((const char *)((IMAGE_IMPORT_BY_NAME *)(base + name->u1.AddressOfData))->Name,
				      "GetModuleHandleA") != 0)
				continue;
			if (!VirtualProtect(&slot->u1.Function, sizeof slot->u1.Function, PAGE_READWRITE, &was))
				return 0;
			slot->u1.Function = (ULONG_PTR)count_runtime_looks;
			VirtualProtect(&slot->u1.Function, sizeof slot->u1.Function, was, &was);
			return 1;
		}
	}
	return 0;
}

/* Loads one of Windows' own DLLs that is not loaded yet: a real load. */
static HMODULE load_new_dll(void)
{
	static const char *const names[] = { "ws2_32.dll", "version.dll", "winmm.dll", "imm32.dll", "secur32.dll" };
	size_t i;
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (GetModuleHandleA(names[i]) == NULL)
			return LoadLibraryA(names[i]);
	}
	return NULL;
}

/* Starts a coroutine of S: a first resume, which looks for a runtime if
 * the schedule has none yet (see take_up_late_runtime). */
static void start_one(const struct coroutine_api *api, struct schedule *S, struct walk *w)
{
	w->api = api;
	w->steps = 0;
	api->resume(S, api->new_coroutine(S, walk, w));
}

/*
 * While a schedule is open, each DLL load is counted, and a thread looks
 * at its next chance (here a coroutine's start), once; nothing else makes
 * it look, not another schedule opened and closed meanwhile (which must
 * not stop the count).  Once the last schedule has closed, loads are not
 * counted: the next coroutine_open looks again.
 */
static void test_the_library_looks_for_a_runtime_after_each_load_and_only_then(void **state)
{
	struct coroutine_api api;
	struct walk walks[2];
	struct schedule *S, *other;
	HMODULE plugin = LoadLibraryA(PLUGIN), dll;
	(void)state;
	assert_true(plugin != NULL);
	assert_true(plugin_library(plugin, &api) == NULL);
	assert_true(watch_runtime_looks(plugin));
	S = api.open();
	assert_int_equal(runtime_looks, 1); /* this thread's first */
	other = api.open();
	api.close(other);
	start_one(&api, S, &walks[0]);
	assert_int_equal(runtime_looks, 1); /* no load since */
	dll = load_new_dll();
	assert_true(dll != NULL);
	start_one(&api, S, &walks[1]);
	assert_int_equal(runtime_looks, 2);
	api.close(S);
	FreeLibrary(dll);
	dll = load_new_dll(); /* with no schedule open: not counted */
	assert_true(dll != NULL);
	S = api.open();
	assert_int_equal(runtime_looks, 3);
	api.close(S);
	FreeLibrary(dll);
	FreeLibrary(plugin);
}
#endif

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_plugin_with_the_library_in_it_reloads_cleanly),
		cmocka_unit_test(test_a_new_build_loads_before_the_old_one_unloads),
#if defined(_WIN32)
		cmocka_unit_test(test_the_library_dll_reloads_cleanly),
#endif
#if defined(_WIN32) && !defined(_MSC_VER)
		cmocka_unit_test(test_the_library_looks_for_a_runtime_after_each_load_and_only_then),
#endif
	};
	(void)argc;
	report_faults();
	beside_program(plugin_path, sizeof plugin_path, PLUGIN, argv[0]);
	beside_program(next_plugin_path, sizeof next_plugin_path, NEXT_PLUGIN, argv[0]);
	beside_program(other_path, sizeof other_path, OTHER, argv[0]);
	return run_suite(tests);
}
