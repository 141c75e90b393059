/*
 * embed_host.c - lua_scripts.h embedded as a host that draws frames would
 * embed it, for the cases embed and misuse_* of test/lua/.
 *
 *     embed_host [--misuse=KIND | --frames=N] SCRIPT...
 *
 * Loads each SCRIPT with scripts_load, then one more from a string with
 * scripts_add (named "hello"), then draws frames: a scripts_tick each,
 * printing how many scripts are left, until none is (or N frames are
 * drawn: then it closes with scripts waiting); between two frames it
 * calls the global function between_frames, if a script has defined it.
 * The failures reach the host's own report, which prints them on stderr.
 * The scripts have two more functions:
 *
 *     spawn(path)               scripts_load from inside a script: true if
 *                               it loaded
 *     spawn_string(name, code)  scripts_add of code, from the script's thread
 *     tick_now()                scripts_tick from inside a script (misuse)
 *
 * --misuse=KIND misuses the API before the first frame: popped (pops the
 * value scripts_open pushed), thread (opens the scripts on a thread that is
 * not the main one), not_function (scripts_add with a number on top).
 */
#include "../../examples/lua_scripts.h"

#include <lauxlib.h>
#include <lualib.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct scripts *scripts; /* the host's: its C functions reach it here */

static void report(void *ud, const char *script_name, const char *message)
{
	fprintf(stderr, "%s: %s%s%s\n", (const char *)ud, script_name ? script_name : "",
	        script_name ? ": " : "", message);
}

static int spawn(lua_State *L)
{
	lua_pushboolean(L, scripts_load(scripts, luaL_checkstring(L, 1)) == 0);
	return 1;
}

static int spawn_string(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	luaL_checkstring(L, 2);
	if (luaL_loadstring(L, lua_tostring(L, 2)) != LUA_OK)
		return lua_error(L);
	lua_pushboolean(L, scripts_add(scripts, L, name) == 0);
	return 1;
}

static int tick_now(lua_State *L)
{
	lua_pushinteger(L, scripts_tick(scripts));
	return 1;
}

static void open_functions(lua_State *L)
{
	static const luaL_Reg functions[] = {
		{ "spawn", spawn },
		{ "spawn_string", spawn_string },
		{ "tick_now", tick_now },
		{ NULL, NULL },
	};
	luaL_openlibs(L);
	lua_pushglobaltable(L);
	luaL_setfuncs(L, functions, 0);
	lua_pop(L, 1);
}

/* The host's own Lua code between two frames, on the main thread. */
static void between_frames(lua_State *L)
{
	if (lua_getglobal(L, "between_frames") != LUA_TFUNCTION) {
		lua_pop(L, 1);
		return;
	}
	if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
		fprintf(stderr, "embed_host: between_frames: %s\n", lua_tostring(L, -1));
		lua_pop(L, 1);
	}
}

static void misuse(lua_State *L, const char *kind)
{
	if (strcmp(kind, "popped") == 0) {
		lua_settop(L, 0);
		scripts_tick(scripts);
	} else if (strcmp(kind, "thread") == 0) {
		scripts_open(lua_newthread(L), NULL, NULL);
	} else if (strcmp(kind, "not_function") == 0) {
		lua_pushinteger(L, 42);
		scripts_add(scripts, L, "a number");
	}
	fprintf(stderr, "embed_host: no misuse %s\n", kind);
}

int main(int argc, char *argv[])
{
	static const char option[] = "--misuse=", frames_option[] = "--frames=";
	lua_State *L = luaL_newstate();
	int i, frame, left, first = 1, frames = -1;

	scripts = scripts_open(L, report, "embed_host");
	if (scripts == NULL)
		return 1;
	open_functions(L);
	if (argc > 1 && strncmp(argv[1], option, sizeof option - 1) == 0) {
		misuse(L, argv[1] + sizeof option - 1);
		return 1;
	}
	if (argc > 1 && strncmp(argv[1], frames_option, sizeof frames_option - 1) == 0)
		frames = atoi(argv[first++] + sizeof frames_option - 1);
	for (i = first; i < argc; i++)
		scripts_load(scripts, argv[i]);
	luaL_loadstring(L, "print('hello: at tick', tick()) wait(3) print('hello: ends at tick', tick())");
	scripts_add(scripts, L, "hello");
	for (frame = 0; frame != frames && (left = scripts_tick(scripts)) > 0; frame++) {
		printf("frame %d, scripts left: %d\n", frame, left);
		between_frames(L);
	}
	if (frame != frames)
		printf("frame %d, scripts left: %d\n", frame, left);
	else
		printf("closing after %d frames\n", frames);
	i = scripts_failed(scripts);
	scripts_close(scripts);
	return i > 0;
}
