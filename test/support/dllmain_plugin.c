/*
 * dllmain_plugin.c - a DLL with the library built in whose DllMain calls
 * coroutine_open or coroutine_close, under the loader lock, when the
 * environment variable DLLMAIN_PLUGIN says so (test/platform/dllmain.c):
 *   open   coroutine_open (and coroutine_close) when the DLL is loaded;
 *   close  coroutine_close, when it is freed, of the schedule that
 *          plugin_keep_schedule opened.
 * Unset, DllMain does nothing, and plugin_run opens, runs and closes
 * outside it.
 */
#include "coroutine.h"

#include <string.h>
#include <windows.h>

static struct schedule *kept;

static void count_twice(struct schedule *S, void *ud)
{
	++*(int *)ud;
	coroutine_yield(S);
	++*(int *)ud;
}

/* A coroutine run to its end on a schedule of its own: its count, 2. */
__declspec(dllexport) int plugin_run(void)
{
	int steps = 0;
	struct schedule *S = coroutine_open();
	if (S == NULL)
		return -1;
	int id = coroutine_new(S, count_twice, &steps);
	while (coroutine_status(S, id) != COROUTINE_DEAD)
		coroutine_resume(S, id);
	coroutine_close(S);
	return steps;
}

__declspec(dllexport) int plugin_keep_schedule(void)
{
	kept = coroutine_open();
	return kept != NULL;
}

static int asked(const char *what)
{
	char value[16];
	DWORD n = GetEnvironmentVariableA("DLLMAIN_PLUGIN", value, sizeof value);
	return n > 0 && n < sizeof value && strcmp(value, what) == 0;
}

BOOL WINAPI DllMain(HINSTANCE dll, DWORD reason, LPVOID reserved)
{
	(void)dll, (void)reserved;
	if (reason == DLL_PROCESS_ATTACH && asked("open"))
		coroutine_close(coroutine_open());
	if (reason == DLL_PROCESS_DETACH && asked("close"))
		coroutine_close(kept);
	return TRUE;
}
