/*
 * reload_plugin.c - the game code that test_reload.c loads, drives and
 * unloads again and again, as a game engine reloads it: a module built
 * with the library in it (coroutine.cpp, and asm_switch.S for the assembly
 * backend), as docs/api.md ("Plugins, unloading and threads") says.  A .so on Linux, a DLL on
 * Windows.
 */
#include "reload.h"

#if defined(_WIN32)
#define EXPORT __declspec(dllexport)
#else
#define EXPORT __attribute__((visibility("default")))
#endif

/* Zero at each load of the module; a module that stayed loaded (pinned)
 * would go on counting. */
static int starts;

EXPORT int plugin_start(struct coroutine_api *api)
{
	api->open = coroutine_open;
	api->close = coroutine_close;
	api->new_coroutine = coroutine_new;
	api->resume = coroutine_resume;
	api->yield = coroutine_yield;
	api->status = coroutine_status;
	return ++starts;
}
