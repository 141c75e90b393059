/*
 * lua_scripts.c - Lua 5.4 scripts that can wait anywhere (lua_scripts.h).
 *
 * Why a C-level coroutine: Lua's own coroutine.yield cannot leave a function
 * that C code called (a table.sort comparator, a string.gsub callback, a
 * metamethod reached from C): Lua would have to unwind the C frames in
 * between, and says "attempt to yield across a C-call boundary".  wait
 * unwinds nothing.  It suspends the script's whole C stack, Lua's own frames
 * (luaV_execute, table.sort, ...) included: coroutine_try_yield copies it off
 * the shared run stack, and the next resume copies it back.  So a script
 * waits anywhere, for the C stack it holds at that moment (1.3 KB in a sort
 * comparator).
 *
 * The shared-stack rule, for Lua: what Lua owns (strings, tables, the Lua
 * threads' own stacks) lives on Lua's heap and stays valid across a wait.
 * The C locals of a waiting script (wait's, and those of the C functions
 * below it: table.sort's, the VM's) live on the run stack and have no valid
 * address until it runs again: they are never handed to another script.
 * The scripts' own state is on the heap (malloc), off the run stack, so
 * every script may reach it.
 *
 * No script can break another, even with the debug library: the scripts'
 * state is reached through the extra space, not an upvalue that
 * debug.setupvalue could change, and their threads are anchored where no
 * Lua code reaches them (see struct scripts).
 */
#include "lua_scripts.h"

#include "coroutine.h"

#include <lauxlib.h>

#include <stdio.h>
#include <stdlib.h>

struct script {
	lua_State *thread; /* its Lua thread: its name at the bottom of its stack */
	int co;            /* its coroutine; -1 once it has ended */
	int status;        /* how it ended: LUA_OK, or its error's */
	lua_Integer wake;  /* the tick it waits for */
};

/*
 * The scripts' threads live on the stack of a thread of their own, anchors,
 * on which nothing ever runs: no Lua code ever holds it (a finalizer gets
 * the thread it runs on from coroutine.running()), so none can resume or
 * close it.  anchors lives on the main thread's stack, below every call:
 * Lua code reaches a thread's slots only through debug.getlocal, which sees
 * a call's own slots, and the ticks run as calls on the main thread.  The
 * registry holds none of them.
 */
struct scripts {
	lua_State *L;            /* the main thread, which runs the ticks */
	lua_State *anchors;      /* scripts[i]'s thread is in its slot i + 1 */
	int anchor_index;        /* where anchors is on L's stack */
	struct schedule *S;
	struct script **scripts; /* the scripts left, in the order added */
	int count, cap;
	struct script *running;  /* the script being resumed, or NULL */
	int ticking;             /* inside a tick */
	lua_Integer tick;
	int failed;
	scripts_report report;
	void *report_ud;
};

static void check_outside_tick(const struct scripts *h, const char *function);
static void check_add(const struct scripts *h, const char *function);
static void refuse(const char *function, const char *fault);

/* ---- What a script calls ----------------------------------------------- */

/*
 * The scripts, from any Lua thread of the state: scripts_open keeps their
 * address in the main thread's extra space, which lua_newthread copies into
 * every thread.
 */
static struct scripts *host_of(lua_State *L)
{
	return *(struct scripts **)lua_getextraspace(L);
}

/* host_of, for wait and tick: none when scripts_open failed (out of
 * memory) after they became globals. */
static struct scripts *scripts_of(lua_State *L)
{
	struct scripts *h = host_of(L);
	if (h == NULL)
		luaL_error(L, "no scripts: scripts_open failed");
	return h;
}

/*
 * The script that this call came from: the one whose coroutine is running.
 * NULL when main runs the code: the host's own calls into Lua, or a
 * finalizer run by an allocation of main's or by lua_close.
 * (coroutine_yield from main would stop the whole program: the library
 * aborts on that misuse.)
 */
static struct script *calling_script(const struct scripts *h)
{
	int co = coroutine_running(h->S);
	if (co == -1 || h->running == NULL || h->running->co != co)
		return NULL;
	return h->running;
}

/*
 * A finalizer stops the collector until it returns (lua_gc then answers
 * -1): a wait inside one would stop it for every script, for as long as the
 * wait lasts.
 */
static int in_finalizer(lua_State *L)
{
	return lua_gc(L, LUA_GCISRUNNING) == -1;
}

/* wait([n]): yields the script from wherever it is, for n ticks. */
static int script_wait(lua_State *L)
{
	struct scripts *h = scripts_of(L);
	lua_Integer n = luaL_optinteger(L, 1, 1);
	struct script *s = calling_script(h);

	luaL_argcheck(L, n >= 1, 1, "ticks must be 1 or more");
	luaL_argcheck(L, n <= LUA_MAXINTEGER - h->tick, 1,
	              "too many ticks: the tick would pass math.maxinteger");
	if (s == NULL && in_finalizer(L))
		return luaL_error(L, "wait: no script is running (the host is running a finalizer)");
	if (s == NULL)
		return luaL_error(L, "attempt to wait from outside a script");
	if (in_finalizer(L))
		return luaL_error(L, "wait: cannot wait inside a finalizer");
	s->wake = h->tick + n;
	/*
	 * No memory to save the script's C stack: the script goes on here, and
	 * gets Lua's own memory error (lua_error raises one for this message),
	 * which it may catch as any other.
	 */
	switch (coroutine_try_yield(h->S)) {
	case -1:
		lua_pushliteral(L, "not enough memory");
		return lua_error(L);
	case COROUTINE_ENDING: /* scripts_close: the script's way out is an error */
		return luaL_error(L, "wait: the host closed the scripts");
	default:
		return 0;
	}
}

/* tick(): the current tick. */
static int script_tick(lua_State *L)
{
	lua_pushinteger(L, scripts_of(L)->tick);
	return 1;
}

/* ---- Failures ---------------------------------------------------------------- */

static void report_failure(struct scripts *h, const char *script_name, const char *message)
{
	h->failed++;
	if (h->report != NULL)
		h->report(h->report_ud, script_name, message);
	else if (script_name != NULL)
		fprintf(stderr, "%s: %s\n", script_name, message);
	else
		fprintf(stderr, "%s\n", message);
}

/*
 * The error on top of a script's thread, with status.  Lua's message says
 * which script, but for running out of memory: then its name does (the
 * bottom of its thread's stack).  No memory is needed to report it.
 */
static void report_error(struct scripts *h, lua_State *thread, int status)
{
	const char *message = lua_tostring(thread, -1);
	if (message == NULL)
		message = "(error object is not a string)";
	report_failure(h, status == LUA_ERRMEM ? lua_tostring(thread, 1) : NULL, message);
}

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

/* ---- A script's life --------------------------------------------------------- */

/*
 * The body of a script's coroutine.  The script runs in protected mode here,
 * inside its own coroutine: a Lua error unwinds (longjmp) to this lua_pcall,
 * never into main's frames or another script's.  Its error stays on its
 * thread, for resume_script to report: this frame, under every wait, stays
 * small.
 */
static void run_script(struct schedule *S, void *ud)
{
	struct script *s = ud;
	(void)S;
	lua_pushcfunction(s->thread, error_message);
	lua_insert(s->thread, 2); /* the name, the handler, the function */
	s->status = lua_pcall(s->thread, 0, 0, 2);
}

/* Room for one more script, in the array and on the anchors' stack. */
static int make_room(struct scripts *h)
{
	struct script **grown;
	if (h->count == h->cap) {
		int cap = h->cap == 0 ? 16 : h->cap * 2;
		if ((grown = realloc(h->scripts, (size_t)cap * sizeof *grown)) == NULL)
			return 0;
		h->scripts = grown;
		h->cap = cap;
	}
	return lua_checkstack(h->anchors, 1) && lua_checkstack(h->L, 3);
}

/*
 * A new thread, with the name (a light userdata: a C string) at the bottom
 * of its stack, on top of the anchors' stack.  A call on the main thread:
 * out of memory is a Lua error there, not a panic.  Nothing is allocated
 * once the thread is made, so no finalizer runs while this call's slots
 * hold it.
 */
static int make_thread(lua_State *L)
{
	struct scripts *h = lua_touserdata(L, 1);
	lua_pushstring(L, lua_touserdata(L, 2));
	lua_newthread(L);
	lua_insert(L, -2);
	lua_xmove(L, lua_tothread(L, -2), 1);
	lua_xmove(L, h->anchors, 1);
	return 0;
}

/* The thread of a new script named name, on top of the anchors' stack;
 * NULL when out of memory (reported). */
static lua_State *new_thread(struct scripts *h, const char *name)
{
	if (!make_room(h)) {
		report_failure(h, name, "out of memory");
		return NULL;
	}
	lua_pushcfunction(h->L, make_thread);
	lua_pushlightuserdata(h->L, h);
	lua_pushlightuserdata(h->L, (void *)name);
	if (lua_pcall(h->L, 2, 0, 0) != LUA_OK) {
		report_failure(h, name, lua_tostring(h->L, -1));
		lua_pop(h->L, 1);
		return NULL;
	}
	return lua_tothread(h->anchors, -1);
}

/*
 * Gives the new thread (on top of the anchors' stack), which holds its
 * function, a coroutine and the last place in the order; on failure, drops
 * the thread.
 */
static int start_script(struct scripts *h, lua_State *thread)
{
	struct script *s = malloc(sizeof *s);
	if (s == NULL || (s->co = coroutine_new(h->S, run_script, s)) == -1) {
		free(s);
		report_failure(h, lua_tostring(thread, 1), "out of memory");
		lua_pop(h->anchors, 1);
		return -1;
	}
	s->thread = thread;
	s->wake = h->tick;
	h->scripts[h->count++] = s;
	return 0;
}

int scripts_load(struct scripts *h, const char *path)
{
	lua_State *thread;
	int status;
	check_add(h, "scripts_load");
	if ((thread = new_thread(h, path)) == NULL)
		return -1;
	if ((status = luaL_loadfile(thread, path)) != LUA_OK) {
		report_error(h, thread, status);
		lua_pop(h->anchors, 1);
		return -1;
	}
	return start_script(h, thread);
}

int scripts_add(struct scripts *h, lua_State *from, const char *name)
{
	lua_State *thread;
	check_add(h, "scripts_add");
	if (from == NULL || !lua_isfunction(from, -1))
		refuse("scripts_add", "no function on top of from's stack");
	if ((thread = new_thread(h, name)) == NULL) {
		lua_pop(from, 1);
		return -1;
	}
	lua_xmove(from, thread, 1);
	return start_script(h, thread);
}

/* Runs the script until it waits or ends, and reports its error. */
static void resume_script(struct scripts *h, struct script *s)
{
	h->running = s;
	coroutine_resume(h->S, s->co);
	h->running = NULL;
	if (coroutine_status(h->S, s->co) != COROUTINE_DEAD)
		return;
	s->co = -1;
	if (s->status != LUA_OK)
		report_error(h, s->thread, s->status);
}

/*
 * Drops the scripts that have ended, their threads with them (the collector
 * may take them now), keeping the order of the rest.  Allocates nothing.
 */
static void drop_ended(struct scripts *h)
{
	int i, kept = 0;
	for (i = 0; i < h->count; i++) {
		struct script *s = h->scripts[i];
		if (s->co == -1) {
			free(s);
			continue;
		}
		lua_copy(h->anchors, i + 1, kept + 1);
		h->scripts[kept++] = s;
	}
	lua_settop(h->anchors, kept);
	h->count = kept;
}

/* ---- The ticks ----------------------------------------------------------------- */

/*
 * Resumes, in order, every script whose tick has come, those that scripts
 * add meanwhile included.  Run as a call on the main thread (run_tick): a
 * script can reach the main thread (debug.getregistry()[1]), but Lua neither
 * closes nor resumes a thread that is inside a call, and this call's own
 * slots are empty.
 */
static int resume_due_scripts(lua_State *L)
{
	struct scripts *h = host_of(L);
	int i;
	for (i = 0; i < h->count; i++) {
		struct script *s = h->scripts[i];
		if (s->co != -1 && s->wake <= h->tick)
			resume_script(h, s);
	}
	return 0;
}

/* The tick h->tick; -1 if its call could not be made (out of memory). */
static int run_tick(struct scripts *h)
{
	int status;
	if (!lua_checkstack(h->L, 1)) {
		report_failure(h, NULL, "not enough memory");
		return -1;
	}
	h->ticking = 1;
	lua_pushcfunction(h->L, resume_due_scripts);
	status = lua_pcall(h->L, 0, 0, 0);
	h->ticking = 0;
	if (status != LUA_OK) {
		report_failure(h, NULL, lua_tostring(h->L, -1));
		lua_pop(h->L, 1);
		return -1;
	}
	drop_ended(h);
	return 0;
}

int scripts_tick(struct scripts *h)
{
	check_outside_tick(h, "scripts_tick");
	if (run_tick(h) == -1)
		return -1;
	h->tick++;
	return h->count;
}

/* The next tick at which a script wakes up, or -1 when none is left. */
static lua_Integer next_tick(const struct scripts *h)
{
	lua_Integer next = -1;
	int i;
	for (i = 0; i < h->count; i++) {
		if (next == -1 || h->scripts[i]->wake < next)
			next = h->scripts[i]->wake;
	}
	return next;
}

int scripts_run(struct scripts *h)
{
	lua_Integer next;
	check_outside_tick(h, "scripts_run");
	while ((next = next_tick(h)) != -1) {
		h->tick = next;
		if (run_tick(h) == -1)
			return -1;
	}
	return 0;
}

int scripts_failed(const struct scripts *h)
{
	return h->failed;
}

/* ---- Open and close ------------------------------------------------------------ */

/*
 * wait and tick as globals, and the anchors' thread returned: a call, for
 * out of memory is a Lua error.
 */
static int open_call(lua_State *L)
{
	static const luaL_Reg functions[] = {
		{ "wait", script_wait },
		{ "tick", script_tick },
		{ NULL, NULL },
	};
	lua_pushglobaltable(L);
	luaL_setfuncs(L, functions, 0);
	lua_pop(L, 1);
	lua_newthread(L);
	return 1;
}

struct scripts *scripts_open(lua_State *L, scripts_report report, void *ud)
{
	lua_Debug ar;
	struct scripts *h;
	if (!lua_pushthread(L))
		refuse("scripts_open", "L is not the state's main thread (give luaL_newstate's)");
	lua_pop(L, 1);
	if (lua_getstack(L, 0, &ar))
		refuse("scripts_open", "L is running a function: open the scripts from the host's own code");
	if ((h = calloc(1, sizeof *h)) == NULL)
		return NULL;
	h->L = L;
	h->report = report;
	h->report_ud = ud;
	/* Before wait is a global: a finalizer may call it from now on. */
	*(struct scripts **)lua_getextraspace(L) = h;
	if ((h->S = coroutine_open()) == NULL || !lua_checkstack(L, 1))
		goto fail;
	lua_pushcfunction(L, open_call);
	if (lua_pcall(L, 0, 1, 0) != LUA_OK) {
		lua_pop(L, 1);
		goto fail;
	}
	h->anchors = lua_tothread(L, -1);
	h->anchor_index = lua_gettop(L);
	return h;
fail:
	coroutine_close(h->S);
	free(h);
	*(struct scripts **)lua_getextraspace(L) = NULL;
	return NULL;
}

/* Ends a waiting script at its wait, which raises an error there: its
 * to-be-closed variables close and its handlers run, Lua being still open.
 * The error is not reported: the host asked for it. */
static void end_script(struct scripts *h, struct script *s)
{
	if (s->co == -1)
		return;
	h->running = s;
	coroutine_delete(h->S, s->co);
	h->running = NULL;
	s->co = -1;
}

/* The scripts first, then Lua (a finalizer that lua_close runs may call
 * wait, which asks the schedule whether a script is running), then the
 * schedule. */
void scripts_close(struct scripts *h)
{
	int i;
	check_outside_tick(h, "scripts_close");
	for (i = 0; i < h->count; i++)
		end_script(h, h->scripts[i]);
	lua_close(h->L);
	coroutine_close(h->S);
	for (i = 0; i < h->count; i++)
		free(h->scripts[i]);
	free(h->scripts);
	free(h);
}

/* ---- Misuse -------------------------------------------------------------------- */

/* As the coroutine library's misuse: a line naming the function, then abort. */
static void refuse(const char *function, const char *fault)
{
	fprintf(stderr, "%s: %s\n", function, fault);
	abort();
}

/*
 * Between ticks (on the main thread, outside any call), anchors must be
 * where scripts_open pushed it.  Inside a call the bottom of the stack
 * cannot be seen: it is not checked there.
 */
static void check_anchors(const struct scripts *h, const char *function)
{
	lua_Debug ar;
	if (!h->ticking && !lua_getstack(h->L, 0, &ar)
	    && (lua_gettop(h->L) < h->anchor_index || lua_tothread(h->L, h->anchor_index) != h->anchors))
		refuse(function, "the value scripts_open pushed is gone from L's stack: leave it there until scripts_close");
}

static void check_outside_tick(const struct scripts *h, const char *function)
{
	if (h == NULL)
		refuse(function, "no scripts (scripts_open returned NULL)");
	if (h->ticking)
		refuse(function, "called during a tick (by a script's function): call it between ticks");
	check_anchors(h, function);
}

static void check_add(const struct scripts *h, const char *function)
{
	if (h == NULL)
		refuse(function, "no scripts (scripts_open returned NULL)");
	check_anchors(h, function);
}
