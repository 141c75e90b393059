/*
 * dllmain.c - coroutine_open and coroutine_close refuse to run under
 * Windows' loader lock, in DllMain (and so in a DLL's static constructors
 * and destructors): dllmain_plugin.dll (test/support/dllmain_plugin.c, the
 * library built in) calls them there in a child process, which must stop
 * with the function's one line.  The same DLL opens, runs and closes
 * schedules outside DllMain, and so does this program while it is loaded,
 * also while the DLL's DllMain holds the loader lock in another thread.
 *
 *     dllmain                (the checks)
 *     dllmain --child NAME   (a case, in the child of run_child)
 */
#include "child.h"
#include "coroutine.h"
#include "plain.h"

typedef int (*plugin_func)(void);

static HMODULE load_plugin(const char *dllmain_does)
{
	SetEnvironmentVariableA("DLLMAIN_PLUGIN", dllmain_does);
	return LoadLibraryA("dllmain_plugin.dll");
}

static plugin_func plugin_function(HMODULE plugin, const char *name)
{
	return (plugin_func)(void (*)(void))GetProcAddress(plugin, name);
}

/* Each child case must end in coroutine_open's or coroutine_close's
 * refusal; returning is a failure of its own (exit code 4). */
static void open_in_dllmain(void)
{
	load_plugin("open");
}

static void close_in_dllmain(void)
{
	HMODULE plugin = load_plugin("close");
	plugin_func keep = plugin ? plugin_function(plugin, "plugin_keep_schedule") : NULL;
	if (keep == NULL || !keep()) {
		fprintf(stderr, "dllmain_plugin.dll: not loaded, or no schedule kept\n");
		exit(5);
	}
	FreeLibrary(plugin);
}

static const struct child_case child_cases[] = {
	{ "open-in-dllmain", open_in_dllmain },
	{ "close-in-dllmain", close_in_dllmain },
	{ NULL, NULL }
};

static void yield_once(struct schedule *S, void *ud)
{
	(void)ud;
	coroutine_yield(S);
}

/* Outside DllMain, with the DLL loaded: the DLL's library and this
 * program's each open, run and close schedules. */
static const char *works_outside_dllmain(void)
{
	HMODULE plugin = load_plugin("");
	plugin_func run = plugin ? plugin_function(plugin, "plugin_run") : NULL;
	struct schedule *S;
	int id, steps;
	if (run == NULL)
		return "dllmain_plugin.dll or its plugin_run not found";
	steps = run();
	S = coroutine_open();
	if (S == NULL)
		return "coroutine_open failed";
	id = coroutine_new(S, yield_once, NULL);
	coroutine_resume(S, id);
	coroutine_close(S);
	FreeLibrary(plugin);
	return steps == 2 ? NULL : "plugin_run did not run its coroutine to the end";
}

static DWORD WINAPI do_nothing(void *unused)
{
	(void)unused;
	return 0;
}

/* The loader lock held by another thread (the DLL's DllMain, run for that
 * thread's start, waits there) does not refuse this thread's calls, nor
 * make them wait for it.  A schedule stays open meanwhile, so that neither
 * call registers the DLL notification, which takes the loader lock. */
static const char *works_while_another_thread_holds_the_loader_lock(void)
{
	HMODULE plugin = load_plugin("");
	void (*hold)(HANDLE, HANDLE) = NULL;
	plugin_func released = plugin ? plugin_function(plugin, "plugin_released") : NULL;
	HANDLE holding = CreateEventA(NULL, TRUE, FALSE, NULL), release = CreateEventA(NULL, TRUE, FALSE, NULL);
	HANDLE thread;
	struct schedule *kept, *S;
	int id;
	if (plugin != NULL)
		hold = (void (*)(HANDLE, HANDLE))(void (*)(void))GetProcAddress(plugin, "plugin_hold_next_thread");
	if (hold == NULL || released == NULL || holding == NULL || release == NULL)
		return "dllmain_plugin.dll, its functions or the events not found";
	kept = coroutine_open();
	hold(holding, release);
	thread = CreateThread(NULL, 0, do_nothing, NULL, 0, NULL);
	if (thread == NULL || WaitForSingleObject(holding, 10000) != WAIT_OBJECT_0)
		return "DllMain did not run for a new thread";
	S = coroutine_open();
	id = coroutine_new(S, yield_once, NULL);
	coroutine_resume(S, id);
	coroutine_close(S);
	SetEvent(release);
	WaitForSingleObject(thread, INFINITE);
	coroutine_close(kept);
	id = released();
	FreeLibrary(plugin);
	return id ? NULL : "this thread waited for the loader lock: DllMain's hold timed out";
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--child") == 0)
		return run_named_case(child_cases, argv[2]);
	enter_child(); /* here too: a fault ends the program with its code (wine's would be 0) */
	report("the DLL and the program open, run and close outside DllMain", works_outside_dllmain());
	report("another thread's loader lock refuses nothing here",
	       works_while_another_thread_holds_the_loader_lock());
	report("coroutine_open is refused in DllMain",
	       child_aborts_with(child_cases, open_in_dllmain,
				 "coroutine_open: called under the loader lock "
				 "(from DllMain, or a DLL's static constructor or destructor)"));
	report("coroutine_close is refused in DllMain",
	       child_aborts_with(child_cases, close_in_dllmain,
				 "coroutine_close: called under the loader lock "
				 "(from DllMain, or a DLL's static constructor or destructor)"));
	return finish();
}
