/*
 * lua_host.c - a Lua 5.4 host whose scripts can wait anywhere.
 *
 *     lua_host SCRIPT...
 *
 * One Lua state runs every script given, each in a Lua thread of its own,
 * inside a coroutine of its own.  Besides Lua's standard library a script
 * has two functions:
 *
 *     wait([n])   gives the other scripts n ticks (1 unless given)
 *     tick()      the current tick, counted from 0
 *
 * In each tick the host resumes, in the order the scripts were given, every
 * script whose wake-up tick has come; it ends when every script has ended.
 * A script's error ends that script only, with Lua's message on stderr; the
 * exit status is 1 if a script failed or could not be loaded.  Running out
 * of memory is such an error too, also where a wait cannot save the script's
 * C stack: coroutine_try_yield then leaves the script running, and wait
 * raises Lua's own "not enough memory" in it.
 *
 * Why a C-level coroutine: Lua's own coroutine.yield cannot leave a function
 * that C code called (a table.sort comparator, a string.gsub callback, a
 * metamethod reached from C): Lua would have to unwind the C frames in
 * between, and says "attempt to yield across a C-call boundary".  wait
 * unwinds nothing.  It suspends the script's whole C stack, Lua's own frames
 * (luaV_execute, table.sort, ...) included: coroutine_yield copies it off the
 * shared run stack, and the next resume copies it back.  So a script waits
 * anywhere, for the C stack it holds at that moment (1.3 KB in a sort
 * comparator).
 *
 * The shared-stack rule, for Lua: what Lua owns (strings, tables, the Lua
 * threads' own stacks) lives on Lua's heap and stays valid across a wait.
 * The C locals of a waiting script (wait's, and those of the C functions
 * below it: table.sort's, the VM's) live on the run stack and have no valid
 * address until it runs again: they are never handed to another script.
 * The host's own state lives in main's frame, off the run stack, so every
 * script may reach it.
 */
#include "coroutine.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <stdio.h>
#include <stdlib.h>

struct script {
	const char *path;   /* as given: messages name the script by it */
	lua_State *thread;  /* the script's Lua thread */
	int co;             /* its coroutine; -1 once it has ended or failed to load */
	lua_Integer wake;   /* the tick it waits for */
	int failed;
};

struct host {
	struct schedule *S;
	lua_State *L;            /* the Lua state; its main thread runs no script,
	                            but the host's loop (run_host) */
	lua_Integer tick;
	struct script *running;  /* the script being resumed, or NULL */
	struct script *scripts;
	int count;
};

/* ---- What a script calls ----------------------------------------------- */

/*
 * The host, from any of its Lua threads: open_host keeps its address in the
 * main thread's extra space, which lua_newthread copies into every thread.
 * No script can reach it there (an upvalue of wait's could be changed by
 * debug.setupvalue).
 */
static struct host *host_of(lua_State *L)
{
	return *(struct host **)lua_getextraspace(L);
}

/*
 * The script that this call came from: the one whose coroutine is running.
 * NULL when main runs the code: the host's own calls into Lua, or a finalizer
 * run by an allocation of main's or by lua_close.  (coroutine_yield from
 * main would stop the whole program: the library aborts on that misuse.)
 */
static struct script *calling_script(const struct host *h)
{
	int co = coroutine_running(h->S);
	if (co == -1 || h->running == NULL || h->running->co != co)
		return NULL;
	return h->running;
}

/* wait([n]): yields the script from wherever it is, for n ticks. */
static int host_wait(lua_State *L)
{
	struct host *h = host_of(L);
	lua_Integer n = luaL_optinteger(L, 1, 1);
	struct script *s = calling_script(h);

	luaL_argcheck(L, n >= 1, 1, "ticks must be 1 or more");
	luaL_argcheck(L, n <= LUA_MAXINTEGER - h->tick, 1,
	              "too many ticks: the tick would pass math.maxinteger");
	if (s == NULL)
		return luaL_error(L, "wait: no script is running (the host is running a finalizer)");
	/*
	 * A finalizer stops the collector until it returns (lua_gc then answers
	 * -1): a wait inside one would stop it for every script, for as long as
	 * the wait lasts.
	 */
	if (lua_gc(L, LUA_GCISRUNNING) == -1)
		return luaL_error(L, "wait: cannot wait inside a finalizer");
	s->wake = h->tick + n;
	/*
	 * No memory to save the script's C stack: the script goes on here, and
	 * gets Lua's own memory error (lua_error raises one for this message),
	 * which it may catch as any other.
	 */
	if (coroutine_try_yield(h->S) == -1) {
		lua_pushliteral(L, "not enough memory");
		return lua_error(L);
	}
	return 0;
}

/* tick(): the current tick. */
static int host_tick(lua_State *L)
{
	const struct host *h = host_of(L);
	lua_pushinteger(L, h->tick);
	return 1;
}

/* wait and tick as globals. */
static void register_functions(struct host *h)
{
	static const luaL_Reg functions[] = {
		{ "wait", host_wait },
		{ "tick", host_tick },
		{ NULL, NULL },
	};
	lua_pushglobaltable(h->L);
	luaL_setfuncs(h->L, functions, 0);
	lua_pop(h->L, 1);
}

/* ---- A script's life --------------------------------------------------------- */

/*
 * The message handler of a script's lua_pcall: lua.c's, less its traceback.
 * An error object that is not a string (or a number) prints as the text its
 * __tostring gives, else as its type.
 */
static int error_message(lua_State *L)
{
	if (lua_tostring(L, 1) != NULL)
		return 1;
	if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
		return 1;
	lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
	return 1;
}

/* The error on top of the script's thread, with status, on stderr.  Lua's
 * message names the script, but for running out of memory: then the host
 * does. */
static void report_error(const struct script *s, int status)
{
	const char *message = lua_tostring(s->thread, -1);
	if (message == NULL)
		message = "(error object is not a string)";
	if (status == LUA_ERRMEM)
		fprintf(stderr, "%s: %s\n", s->path, message);
	else
		fprintf(stderr, "%s\n", message);
}

/*
 * The body of a script's coroutine.  The script runs in protected mode here,
 * inside its own coroutine: a Lua error unwinds (longjmp) to this lua_pcall,
 * never into main's frames or another script's.
 */
static void run_script(struct schedule *S, void *ud)
{
	struct script *s = ud;
	int status;
	(void)S;
	lua_pushcfunction(s->thread, error_message);
	lua_insert(s->thread, 1);
	status = lua_pcall(s->thread, 0, 0, 1);
	if (status != LUA_OK) {
		report_error(s, status);
		s->failed = 1;
	}
	lua_settop(s->thread, 0);
}

/*
 * Loads the file (path as given: Lua's messages name it so) into a new Lua
 * thread and gives it a coroutine.  A script that fails to load never runs.
 * The thread stays on the main thread's stack, anchored there until
 * lua_close and out of every script's reach (see run_host).
 */
static void add_script(struct host *h, struct script *s, const char *path)
{
	int status;
	s->path = path;
	s->wake = 0;
	s->failed = 1; /* until it has its coroutine: every other way out fails */
	s->co = -1;
	if (!lua_checkstack(h->L, 2)) { /* the thread, and room for run_host's call */
		fprintf(stderr, "%s: too many scripts\n", path);
		return;
	}
	s->thread = lua_newthread(h->L);
	if ((status = luaL_loadfile(s->thread, path)) != LUA_OK)
		report_error(s, status);
	else if ((s->co = coroutine_new(h->S, run_script, s)) == -1)
		fprintf(stderr, "%s: out of memory\n", path);
	else
		s->failed = 0;
}

/* Runs the script until it waits or ends. */
static void resume_script(struct host *h, struct script *s)
{
	h->running = s;
	coroutine_resume(h->S, s->co);
	h->running = NULL;
	if (coroutine_status(h->S, s->co) == COROUTINE_DEAD)
		s->co = -1;
}

/* ---- The host ---------------------------------------------------------------- */

/* Resumes, in the order given, every live script whose wake-up tick has come. */
static void run_tick(struct host *h)
{
	int i;
	for (i = 0; i < h->count; i++) {
		struct script *s = &h->scripts[i];
		if (s->co != -1 && s->wake <= h->tick)
			resume_script(h, s);
	}
}

/*
 * The next tick at which a script wakes up, or -1 when no script is live.
 * The ticks in between would resume nobody: the host skips them, so that
 * wait(1000000) costs no more than wait(1).
 */
static lua_Integer next_tick(const struct host *h)
{
	lua_Integer next = -1;
	int i;
	for (i = 0; i < h->count; i++) {
		const struct script *s = &h->scripts[i];
		if (s->co != -1 && (next == -1 || s->wake < next))
			next = s->wake;
	}
	return next;
}

static int any_failed(const struct host *h)
{
	int i;
	for (i = 0; i < h->count; i++) {
		if (h->scripts[i].failed)
			return 1;
	}
	return 0;
}

/* The schedule, the Lua state with wait and tick, and room for count
 * scripts; 0 when out of memory. */
static int open_host(struct host *h, int count)
{
	h->S = coroutine_open();
	h->L = luaL_newstate();
	h->count = count;
	h->scripts = calloc((size_t)count, sizeof *h->scripts);
	h->tick = 0;
	h->running = NULL;
	if (h->S == NULL || h->L == NULL || h->scripts == NULL)
		return 0;
	*(struct host **)lua_getextraspace(h->L) = h; /* before any lua_newthread */
	luaL_openlibs(h->L);
	register_functions(h);
	return 1;
}

/* The host's loop: runs the scripts, a tick at a time, until none is live. */
static int run_ticks(lua_State *L)
{
	struct host *h = host_of(L);
	lua_Integer next;
	while ((next = next_tick(h)) != -1) {
		h->tick = next;
		run_tick(h);
	}
	return 0;
}

/*
 * Runs the loop as a call on the main thread, above the scripts' threads
 * (add_script).  A script can reach the main thread (debug.getregistry()[1]),
 * but Lua neither closes nor resumes a thread that is inside a call, and
 * debug.getlocal sees only a call's own slots: no script can close, resume
 * or unanchor another script's thread, and each script starts on the chunk
 * the host loaded.  0 if the call itself failed (out of memory).
 */
static int run_host(struct host *h)
{
	lua_pushcfunction(h->L, run_ticks);
	if (lua_pcall(h->L, 0, 0, 0) != LUA_OK) {
		fprintf(stderr, "%s\n", lua_tostring(h->L, -1));
		return 0;
	}
	return 1;
}

/* Lua first: a finalizer that lua_close runs may call wait, which asks
 * the schedule whether a script is running. */
static void close_host(struct host *h)
{
	lua_close(h->L);
	coroutine_close(h->S);
	free(h->scripts);
}

int main(int argc, char *argv[])
{
	/* In main's frame, off the run stack: every script's wait reaches it. */
	struct host h;
	int i, failed;

	if (argc < 2) {
		fprintf(stderr, "usage: %s SCRIPT...\n", argv[0]);
		return 2;
	}
	if (!open_host(&h, argc - 1)) {
		fprintf(stderr, "%s: out of memory\n", argv[0]);
		return 1;
	}
	for (i = 0; i < h.count; i++)
		add_script(&h, &h.scripts[i], argv[i + 1]);
	failed = !run_host(&h) || any_failed(&h);
	close_host(&h);
	return failed;
}
