/*
 * reload.h - what test_reload.c finds in the modules it loads and unloads,
 * the way a game engine reloads its game code: the functions of
 * coroutine.h, as the module's own copy of the library has them.
 */
#ifndef RELOAD_H
#define RELOAD_H

#include "coroutine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The functions of coroutine.h that the test calls, all from one module. */
struct coroutine_api {
	struct schedule *(*open)(void);
	void (*close)(struct schedule *);
	int (*new_coroutine)(struct schedule *, coroutine_func, void *);
	void (*resume)(struct schedule *, int);
	void (*yield)(struct schedule *);
	int (*status)(struct schedule *, int);
};

/* reload_plugin.c's one export: fills *api with the plugin's library, and
 * returns how many times it has been called since this copy of the plugin
 * was loaded (1 the first time: its static data is fresh). */
typedef int (*plugin_start_func)(struct coroutine_api *api);

#ifdef __cplusplus
}
#endif

#endif
