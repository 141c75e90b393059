/*
 * bench_lua.c - what a waiting script of examples/lua_scripts.c (the Lua
 * host's core) costs, next to Lua's own coroutines.
 *
 * It includes lua_scripts.c itself, so that what it measures is the host's
 * own wait, scripts and ticks, and the round trips can resume a script
 * without the rest of a tick.
 *
 *   5,000 scripts from start to end
 *       lua_host's run of 5,000 scripts, each waiting inside a sort
 *       comparator and inside a gsub callback (bench/lua/sort_and_gsub.lua,
 *       11 waits each): the state opened, the scripts loaded and run to their
 *       end, the state closed, in this thread's CPU time, median [min-max]
 *       of RUNS; and the heap in use once all wait at the first tick.
 *   bytes per waiting script
 *       5,000 scripts loaded as lua_host loads them, each waiting inside its
 *       table.sort comparator (bench/lua/wait_in_sort.lua): the heap in use
 *       then, less that of 1 such script, over 4,999.  The heap is what
 *       malloc handed out (mallinfo2's uordblks + hblkhd, headers included):
 *       Lua's objects (its allocator is realloc/free), the library's
 *       coroutines with their saved slices, the host's records.  Of which
 *       Lua's own count (lua_gc COUNT and COUNTB, no malloc headers).
 *       Next to it: Lua's own coroutines, 5,000 threads loaded the same way
 *       holding the same objects (bench/lua/yield_at_top.lua), suspended by
 *       coroutine.yield at the top of their function, the only place it can
 *       leave; and what 5,000 separate C stacks would reserve at minicoro's
 *       default of 56 KiB each (a figure, not a measurement).
 *   round trip
 *       the host resumes, in turn, two scripts that call wait() again at
 *       once, inside a sort comparator (bench/lua/wait_loop_in_sort.lua) or
 *       at the top (wait_loop.lua); the floor: lua_resume, in turn, of two
 *       Lua coroutines that call coroutine.yield() again at once
 *       (yield_loop.lua).  Each variant is
 *       timed REPEATS times, interleaved (in the opposite order every other
 *       repeat), in this thread's CPU time; times are medians [min-max],
 *       ratios the median [interquartile range] of per-repeat ratios.
 *
 * Run from the source root (the scripts are named from there).
 *
 * Usage:  bench_lua                   everything
 *         bench_lua once NAME COUNT   COUNT round trips of NAME (wait_sort,
 *                                     wait_top, yield_top), for callgrind
 */
#include "../examples/lua_scripts.c"
#define BENCH_NAME "bench_lua"
#include "bench.h"

#include <lualib.h>

#include <malloc.h>
#include <string.h>
#include <time.h>

#ifndef BENCH_BACKEND
#define BENCH_BACKEND "unknown"
#endif

#define REPEATS 21
#define RUNS 7        /* of the 5,000 scripts from start to end */
#define SAMPLE_NS 5e6 /* calibrate each sample to >= 5 ms */
#define WAITING 5000  /* scripts for the bytes per waiting script */
#define MINICORO_STACK (56 * 1024)

/* ---- Helpers -------------------------------------------------------------- */

static size_t lua_heap(lua_State *L)
{
	return (size_t)lua_gc(L, LUA_GCCOUNT) * 1024 + (size_t)lua_gc(L, LUA_GCCOUNTB);
}

/* ---- A host, as lua_host's main runs it --------------------------------------- */

/* The scripts of a new state, with Lua's libraries, and n copies of path. */
static struct scripts *open_scripts(int n, const char *path)
{
	lua_State *L = luaL_newstate();
	struct scripts *h;
	int i;
	expect(L != NULL && (h = scripts_open(L, NULL, NULL)) != NULL, "out of memory");
	luaL_openlibs(L);
	for (i = 0; i < n; i++)
		expect(scripts_load(h, path) == 0, "cannot load a bench script");
	return h;
}

/* Runs the scripts to their end, then closes. */
static void finish_scripts(struct scripts *h)
{
	expect(scripts_run(h) == 0 && scripts_failed(h) == 0, "a script failed");
	scripts_close(h);
}

/* A Lua coroutine of Lua's own running the file, anchored in the registry. */
static lua_State *new_lua_coroutine(lua_State *L, const char *path)
{
	lua_State *co = lua_newthread(L);
	luaL_ref(L, LUA_REGISTRYINDEX);
	expect(luaL_loadfile(co, path) == LUA_OK, "cannot load a bench script");
	return co;
}

static void resume_lua_coroutine(lua_State *L, lua_State *co)
{
	int results;
	expect(lua_resume(co, L, 0, &results) == LUA_YIELD, "a Lua coroutine did not yield");
	lua_pop(co, results);
}

/* ---- 5,000 scripts from start to end ---------------------------------------------- */

static void whole_runs(void)
{
	double ms[RUNS], heap = 0;
	int r;
	for (r = 0; r < RUNS; r++) {
		double start = now_ns(), before = (double)heap_in_use();
		struct scripts *h = open_scripts(WAITING, "bench/lua/sort_and_gsub.lua");
		expect(scripts_tick(h) == WAITING, "a script did not wait");
		heap = (double)heap_in_use() - before;
		finish_scripts(h);
		ms[r] = (now_ns() - start) / 1e6;
	}
	sort_sample(ms, RUNS);
	printf("%d scripts from start to end (11 waits each in sort and gsub), %s backend: %.0f ms [%.0f-%.0f],"
	       " median [min-max] of %d; heap with all waiting %.1f MB\n",
	       WAITING, BENCH_BACKEND, quantile(ms, RUNS, 0.5), quantile(ms, RUNS, 0), quantile(ms, RUNS, 1),
	       RUNS, heap / 1e6);
}

/* ---- Bytes per waiting script ----------------------------------------------------- */

/*
 * Doubles: the heap in use is measured from before the state was opened, and
 * chunks freed earlier may wait in malloc's per-thread cache, counted as in
 * use, until the new state takes them: a figure may be off by some KB (so
 * the per-script figures by a byte or two), either way.
 */
struct heap_figure {
	double heap;   /* all that malloc handed out */
	double lua;    /* of which Lua's own objects */
	double slices; /* the library's saved slices (coroutine_stack_size), summed */
};

/* n scripts of lua_host, each waiting inside its sort comparator. */
static struct heap_figure waiting_scripts(int n)
{
	struct heap_figure f = { 0, 0, 0 };
	double before = (double)heap_in_use();
	struct scripts *h = open_scripts(n, "bench/lua/wait_in_sort.lua");
	int i;

	expect(scripts_tick(h) == n, "a script did not wait");
	lua_gc(h->L, LUA_GCCOLLECT);
	f.heap = (double)heap_in_use() - before;
	f.lua = (double)lua_heap(h->L);
	for (i = 0; i < n; i++)
		f.slices += (double)coroutine_stack_size(h->S, h->scripts[i]->co);
	finish_scripts(h);
	return f;
}

/* n Lua coroutines of Lua's own, each suspended by coroutine.yield. */
static struct heap_figure yielded_coroutines(int n)
{
	struct heap_figure f = { 0, 0, 0 };
	double before = (double)heap_in_use();
	lua_State *L = luaL_newstate();
	int i;

	expect(L != NULL, "out of memory");
	luaL_openlibs(L);
	for (i = 0; i < n; i++)
		resume_lua_coroutine(L, new_lua_coroutine(L, "bench/lua/yield_at_top.lua"));
	lua_gc(L, LUA_GCCOLLECT);
	f.heap = (double)heap_in_use() - before;
	f.lua = (double)lua_heap(L);
	lua_close(L);
	return f;
}

/* (figure of WAITING - figure of 1) / (WAITING - 1) */
static double per_script(double many, double one)
{
	return (many - one) / (WAITING - 1);
}

static void bytes_per_waiting_script(void)
{
	struct heap_figure ours1 = waiting_scripts(1), ours = waiting_scripts(WAITING);
	struct heap_figure lua1 = yielded_coroutines(1), lua = yielded_coroutines(WAITING);

	printf("bytes per waiting script (%d waiting, less 1, over %d), %s backend:\n",
	       WAITING, WAITING - 1, BENCH_BACKEND);
	printf("  lua_host, waiting inside a sort comparator  %7.0f  (Lua's objects %.0f, the rest %.0f;"
	       " saved slice %.0f)\n",
	       per_script(ours.heap, ours1.heap), per_script(ours.lua, ours1.lua),
	       per_script(ours.heap - ours.lua, ours1.heap - ours1.lua), ours.slices / WAITING);
	printf("  Lua's coroutines, yielded at top level       %7.0f  (Lua's objects %.0f, the rest %.0f)\n",
	       per_script(lua.heap, lua1.heap), per_script(lua.lua, lua1.lua),
	       per_script(lua.heap - lua.lua, lua1.heap - lua1.lua));
	printf("  a separate C stack each, minicoro's default  %7d  (reserved; a figure, not measured)\n",
	       MINICORO_STACK);
}

/* ---- Round trips --------------------------------------------------------------- */

/*
 * A round trip's variant: two scripts of lua_host's (waiting with wait), or
 * two Lua coroutines of Lua's own (yielding with coroutine.yield), resumed
 * in turn, as a host with many scripts does: each resume of a script then
 * copies its slice back, which the other's has overwritten.  Each is run
 * once first, so that every round trip timed starts from the same place.
 */
#define TURNS 2
struct variant {
	const char *name;
	struct scripts *scripts;  /* the wait variants' */
	lua_State *L, *co[TURNS]; /* the yield variant's */
	int next;                 /* whose turn it is */
	long count;               /* round trips per sample */
	double ns[REPEATS];
};

static void round_trip(struct variant *v)
{
	int i = v->next;
	v->next = (i + 1) % TURNS;
	if (v->L != NULL) {
		resume_lua_coroutine(v->L, v->co[i]);
	} else {
		struct script *s = v->scripts->scripts[i];
		v->scripts->tick = s->wake;
		resume_script(v->scripts, s);
	}
}

static void open_variant(struct variant *v, const char *name, const char *path, int own)
{
	int i;
	memset(v, 0, sizeof *v);
	v->name = name;
	if (own) {
		v->L = luaL_newstate();
		expect(v->L != NULL, "out of memory");
		luaL_openlibs(v->L);
		for (i = 0; i < TURNS; i++)
			v->co[i] = new_lua_coroutine(v->L, path);
	} else {
		v->scripts = open_scripts(TURNS, path);
	}
	for (i = 0; i < TURNS; i++)
		round_trip(v); /* up to the first wait or yield */
}

/* The scripts wait forever: closing frees them where they wait. */
static void close_variant(struct variant *v)
{
	if (v->L != NULL)
		lua_close(v->L);
	else
		scripts_close(v->scripts);
}

static double time_round_trips(struct variant *v, long count)
{
	double start = now_ns();
	long i;
	for (i = 0; i < count; i++)
		round_trip(v);
	return (now_ns() - start) / (double)count;
}

static void calibrate(struct variant *v)
{
	for (v->count = 1000; v->count * time_round_trips(v, v->count) < SAMPLE_NS;)
		v->count *= 2;
}

enum { WAIT_SORT, WAIT_TOP, YIELD_TOP, VARIANTS };

static void open_variants(struct variant *v)
{
	open_variant(&v[WAIT_SORT], "wait_sort", "bench/lua/wait_loop_in_sort.lua", 0);
	open_variant(&v[WAIT_TOP], "wait_top", "bench/lua/wait_loop.lua", 0);
	open_variant(&v[YIELD_TOP], "yield_top", "bench/lua/yield_loop.lua", 1);
}

static void print_round_trip(const char *what, struct variant *v, struct variant *floor)
{
	double t[REPEATS], ratio[REPEATS];
	int r;
	for (r = 0; r < REPEATS; r++) {
		t[r] = v->ns[r];
		ratio[r] = v->ns[r] / floor->ns[r];
	}
	sort_sample(t, REPEATS);
	sort_sample(ratio, REPEATS);
	printf("  %-38s %7.1f [%.1f-%.1f]", what, quantile(t, REPEATS, 0.5), quantile(t, REPEATS, 0),
	       quantile(t, REPEATS, 1));
	if (v != floor)
		printf("   %.2f [%.2f-%.2f]", quantile(ratio, REPEATS, 0.5), quantile(ratio, REPEATS, 0.25),
		       quantile(ratio, REPEATS, 0.75));
	if (v->L == NULL)
		printf("   slice %ld B", coroutine_stack_size(v->scripts->S, v->scripts->scripts[0]->co));
	printf("\n");
}

static void round_trips(void)
{
	struct variant v[VARIANTS];
	int r, i;

	open_variants(v);
	for (i = 0; i < VARIANTS; i++)
		calibrate(&v[i]);
	for (r = 0; r < REPEATS; r++) {
		for (i = 0; i < VARIANTS; i++) {
			struct variant *x = &v[r % 2 ? VARIANTS - 1 - i : i];
			x->ns[r] = time_round_trips(x, x->count);
		}
	}
	printf("round trip, ns: median [min-max] of %d; ratio to Lua's own yield: median [IQR] of"
	       " per-repeat ratios; %s backend:\n", REPEATS, BENCH_BACKEND);
	print_round_trip("wait() inside a sort comparator", &v[WAIT_SORT], &v[YIELD_TOP]);
	print_round_trip("wait() at top level", &v[WAIT_TOP], &v[YIELD_TOP]);
	print_round_trip("Lua's coroutine.yield() at top level", &v[YIELD_TOP], &v[YIELD_TOP]);
	for (i = 0; i < VARIANTS; i++)
		close_variant(&v[i]);
}

/* bench_lua once NAME COUNT: COUNT round trips of one variant. */
static int once(const char *name, long count)
{
	struct variant v[VARIANTS];
	int i, found = 0;
	open_variants(v);
	for (i = 0; i < VARIANTS; i++) {
		if (strcmp(v[i].name, name) == 0) {
			time_round_trips(&v[i], count);
			found = 1;
		}
	}
	for (i = 0; i < VARIANTS; i++)
		close_variant(&v[i]);
	if (!found)
		fprintf(stderr, "bench_lua: no variant %s\n", name);
	return !found;
}

int main(int argc, char *argv[])
{
	if (argc == 4 && strcmp(argv[1], "once") == 0)
		return once(argv[2], atol(argv[3]));
	expect(argc == 1, "usage: bench_lua [once NAME COUNT]");
	whole_runs();
	bytes_per_waiting_script();
	round_trips();
	return 0;
}
