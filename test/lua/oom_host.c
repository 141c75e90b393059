/*
 * oom_host.c - lua_host (examples/lua_host.c, included whole, its main
 * renamed) whose allocations fail on demand, for the cases of test/lua/
 * that run out of memory.  mk/lua.mk links it with lua_scripts.o and --wrap
 * for malloc, calloc, realloc (so the library's and lua_scripts.c's calls
 * come here, not Lua's, which its own allocator below serves),
 * luaL_openlibs and coroutine_new.
 *
 *     oom_host [--refuse-new=K] SCRIPT...
 *
 * --refuse-new=K: the library's allocations fail inside the K-th
 * coroutine_new, the one for the K-th script loaded.  The scripts have three
 * more functions:
 *
 *     lua_out_of_memory(on)          while on, Lua's allocator grows nothing
 *     refuse_library_allocations(n)  the next n allocations of the library
 *                                    (and of lua_scripts.c's) fail
 *     refused_library_allocations()  how many have failed so far
 */
#define main lua_host_main
#include "../../examples/lua_host.c"
#undef main

#include "coroutine.h"

#include <stdlib.h>
#include <string.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void __real_luaL_openlibs(lua_State *L);
int __real_coroutine_new(struct schedule *S, coroutine_func func, void *ud);

static lua_Integer refusals_left; /* the library's next allocations that fail */
static int refusing_all;          /* inside the coroutine_new that must fail */
static lua_Integer refused;       /* the library's allocations failed so far */
static int new_to_refuse;         /* that coroutine_new, counted from 1; 0: none */
static int lua_refusing;          /* Lua's allocator grows nothing */

/* ---- The library's allocations ------------------------------------------- */

static int must_refuse(void)
{
	if (!refusing_all && refusals_left == 0)
		return 0;
	if (refusals_left > 0)
		refusals_left--;
	refused++;
	return 1;
}

void *__wrap_malloc(size_t size)
{
	return must_refuse() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return must_refuse() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	return must_refuse() ? NULL : __real_realloc(p, size);
}

int __wrap_coroutine_new(struct schedule *S, coroutine_func func, void *ud)
{
	static int calls;
	int id;
	refusing_all = ++calls == new_to_refuse;
	id = __real_coroutine_new(S, func, ud);
	refusing_all = 0;
	return id;
}

/* ---- Lua's ------------------------------------------------------------------ */

/* Lua's allocator (lauxlib's, but for lua_refusing), on the real realloc. */
static void *lua_alloc(void *ud, void *p, size_t old_size, size_t size)
{
	(void)ud;
	if (size == 0) {
		free(p);
		return NULL;
	}
	/* With p NULL, old_size tells the kind of object, not a size. */
	if (lua_refusing && (p == NULL || size > old_size))
		return NULL;
	return __real_realloc(p, size);
}

/* ---- What the scripts call ---------------------------------------------------- */

static int lua_out_of_memory(lua_State *L)
{
	luaL_checkany(L, 1);
	lua_refusing = lua_toboolean(L, 1);
	return 0;
}

static int refuse_library_allocations(lua_State *L)
{
	refusals_left = luaL_checkinteger(L, 1);
	return 0;
}

static int refused_library_allocations(lua_State *L)
{
	lua_pushinteger(L, refused);
	return 1;
}

/* lua_host opens Lua's libraries once the state is made: then the state
 * takes the allocator above, and the scripts' globals the functions. */
void __wrap_luaL_openlibs(lua_State *L)
{
	static const luaL_Reg functions[] = {
		{ "lua_out_of_memory", lua_out_of_memory },
		{ "refuse_library_allocations", refuse_library_allocations },
		{ "refused_library_allocations", refused_library_allocations },
		{ NULL, NULL },
	};
	__real_luaL_openlibs(L);
	lua_setallocf(L, lua_alloc, NULL);
	lua_pushglobaltable(L);
	luaL_setfuncs(L, functions, 0);
	lua_pop(L, 1);
}

int main(int argc, char *argv[])
{
	static const char option[] = "--refuse-new=";
	if (argc > 1 && strncmp(argv[1], option, sizeof option - 1) == 0) {
		new_to_refuse = atoi(argv[1] + sizeof option - 1);
		argv[1] = argv[0];
		argc--;
		argv++;
	}
	return lua_host_main(argc, argv);
}
