/*
 * lua_host.c - a Lua 5.4 host whose scripts can wait anywhere.
 *
 *     lua_host SCRIPT...
 *
 * One Lua state runs every script given, each in a coroutine of its own
 * (lua_scripts.h, whose first user this is).  Besides Lua's standard library
 * a script has two functions:
 *
 *     wait([n])   gives the other scripts n ticks (1 unless given)
 *     tick()      the current tick, counted from 0
 *
 * In each tick the host resumes, in the order the scripts were given, every
 * script whose wake-up tick has come; it ends when every script has ended.
 * A script's error ends that script only, with Lua's message on stderr; the
 * exit status is 1 if a script failed or could not be loaded.  Running out
 * of memory is such an error too, also where a wait cannot save the script's
 * C stack: wait then raises Lua's own "not enough memory" in the script.
 */
#include "lua_scripts.h"

#include <lauxlib.h>
#include <lualib.h>

#include <stdio.h>

int main(int argc, char *argv[])
{
	lua_State *L;
	struct scripts *scripts;
	int i, failed;

	if (argc < 2) {
		fprintf(stderr, "usage: %s SCRIPT...\n", argv[0]);
		return 2;
	}
	if ((L = luaL_newstate()) == NULL || (scripts = scripts_open(L, NULL, NULL)) == NULL) {
		fprintf(stderr, "%s: out of memory\n", argv[0]);
		if (L != NULL)
			lua_close(L);
		return 1;
	}
	luaL_openlibs(L);
	for (i = 1; i < argc; i++)
		scripts_load(scripts, argv[i]);
	failed = scripts_run(scripts) == -1 || scripts_failed(scripts) > 0;
	scripts_close(scripts);
	return failed;
}
