/*
 * dllmain_plugin.c - a DLL with the library built in whose DllMain calls
 * coroutine_open or coroutine_close, under the loader lock, when the
 * environment variable DLLMAIN_PLUGIN says so (test/platform/dllmain.c):
 *   open   coroutine_open (and coroutine_close) when the DLL is loaded;
 *   close  coroutine_close, when it is freed, of the schedule that
 *          plugin_keep_schedule opened.
 * Unset, DllMain does nothing, and plugin_run opens, runs and closes
 * outside it.  And after plugin_hold_next_thread, DllMain holds the loader
 * lock in the next thread that starts, until the program releases it.
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

static HANDLE holding, release;
static volatile LONG released;

__declspec(dllexport) void plugin_hold_next_thread(HANDLE now_holding, HANDLE to_release)
{
	holding = now_holding;
	release = to_release;
}

/* 1 if the program released the hold, 0 if it timed out (10 s). */
__declspec(dllexport) int plugin_released(void)
{
	return released;
}

static void hold_the_loader_lock(void)
{
	HANDLE now_holding = holding;
	holding = NULL;
	SetEvent(now_holding);
	released = WaitForSingleObject(release, 10000) == WAIT_OBJECT_0;
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
	if (reason == DLL_THREAD_ATTACH && holding != NULL)
		hold_the_loader_lock();
	return TRUE;
}
