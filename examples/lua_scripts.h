/*
 * lua_scripts.h - Lua 5.4 scripts that can wait anywhere, for a host to embed.
 *
 * Each script runs in a Lua thread of its own, inside a coroutine of its own
 * (coroutine.h), all in the host's Lua state and in one schedule.  Besides
 * what the host gives them, scripts have two functions:
 *
 *     wait([n])   gives the other scripts n ticks (1 unless given), from
 *                 wherever the script is: a sort comparator, a gsub
 *                 callback, a metamethod, a host's C function
 *     tick()      the current tick, counted from 0
 *
 * The host adds scripts and ticks:
 *
 *     lua_State *L = luaL_newstate();
 *     struct scripts *scripts = scripts_open(L, NULL, NULL);
 *     luaL_openlibs(L);
 *     scripts_load(scripts, "guard.lua");
 *     while (scripts_tick(scripts) > 0)
 *         ;                          (the host's frame)
 *     scripts_close(scripts);        (closes L too)
 *
 * A script's error ends that script only, and so does running out of memory
 * in it, also where a wait cannot save its C stack: the others run on.
 * Misuse of these functions (a tick from inside a script, the value that
 * scripts_open pushed popped, ...) prints one line naming the function and
 * the fault on stderr and calls abort(), as the coroutine library does.
 *
 * The shared-stack rule, for a host: a script's C locals (those of the C
 * functions it is inside when it waits, the host's included) live on the run
 * stack, and have no valid address while it waits.  Keep what scripts share
 * on Lua's heap (tables, full userdata) or in the host's own memory.
 *
 * This header is C99, as lua.h is, and may be included from C or C++;
 * lua_scripts.c is C.
 */
#ifndef LUA_SCRIPTS_H
#define LUA_SCRIPTS_H

#include <lua.h>

#ifdef __cplusplus
extern "C" {
#endif

struct scripts;

/*
 * Where the scripts' failures go: each is one message, script_name the name
 * of the script it ended when the message does not say it (running out of
 * memory), NULL when the message is Lua's ("file:line: message", as lua5.4
 * prints it).  A NULL report prints them on stderr, a line each.
 */
typedef void (*scripts_report)(void *ud, const char *script_name, const char *message);

/*
 * Opens the scripts of the Lua state L, once.  L is its main thread
 * (luaL_newstate's), running no function.  wait and tick become globals, and
 * the state's extra space (lua_getextraspace) holds the scripts' address,
 * for the threads L makes from then on.  So: open them before L makes any
 * thread, and keep the extra space for them.  Pushes one value onto L's
 * stack, which holds the scripts' threads out of any script's reach: leave
 * it where it is until scripts_close (push and pop above it, as around a
 * luaL_Buffer).  Returns NULL when memory runs out; L is then the caller's.
 */
struct scripts *scripts_open(lua_State *L, scripts_report report, void *ud);

/*
 * Adds the Lua file at path as a script, which starts at the next tick that
 * runs (within this one, if a script's function adds it during a tick), and
 * returns 0.  When it cannot be loaded (no file, a syntax error, no memory),
 * reports why and returns -1.  Lua's messages name the script by path.
 */
int scripts_load(struct scripts *, const char *path);

/*
 * scripts_load for the function on top of from's stack (a chunk loaded with
 * luaL_loadbuffer, say), which it pops; from is any thread of the state.
 * name names the script in messages about it.
 */
int scripts_add(struct scripts *, lua_State *from, const char *name);

/*
 * One tick: resumes, in the order they were added, the scripts whose tick
 * has come, each until it waits or ends; then the tick advances by one.
 * Returns how many scripts are left, or -1 when the tick could not run (no
 * memory for its call: reported).  Only the host calls it, between ticks.
 */
int scripts_tick(struct scripts *);

/*
 * Ticks until no script is left, passing over the ticks at which none wakes
 * up (wait(1000000) costs no more than wait(1)).  Returns 0, or -1 as
 * scripts_tick.
 */
int scripts_run(struct scripts *);

/* How many scripts could not be added, or have ended with an error. */
int scripts_failed(const struct scripts *);

/*
 * Ends the scripts still waiting, each at its wait, which raises an error
 * there ("wait: the host closed the scripts", not reported): their
 * to-be-closed variables close, and one that catches it and waits again is
 * freed there.  Then closes L (lua_close: finalizers may call tick, and
 * wait, which refuses) and frees the scripts.  Between ticks only.
 */
void scripts_close(struct scripts *);

#ifdef __cplusplus
}
#endif

#endif
