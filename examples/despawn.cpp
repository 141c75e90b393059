/*
 * despawn.cpp - a C++ game loop whose entities hold things while they live,
 * and one entity despawned in the middle of its behaviour, as an engine
 * despawns one that is killed or left behind by the camera.
 *
 * An entity's behaviour is straight-line code in a coroutine, one tick per
 * yield, as in game.c.  What it holds it holds as C++ does: in objects
 * whose destructors give it back (RAII).  coroutine_delete ends the
 * coroutine where it waits, and destroys those objects as if its functions
 * had returned from there, innermost first: nothing the entity held leaks,
 * and no wait helper has to check a "cancelled" flag.  The other entities
 * go on as if nothing had happened.
 *
 * Where nothing can be unwound (WebAssembly: README says where), the
 * deleted coroutine is freed without running its destructors.
 */
#include "coroutine.h"
#include <stdio.h>
#include <string.h>

enum activity { WALKING, DRAWING, DONE, DESPAWNED };
static const char *const activities[] = { "walking", "drawing", "done", "despawned" };

struct entity {
	char name;
	int id; /* its coroutine */
	int x, home;
	enum activity doing;
};

#define WELL 20
#define ENTITIES 5 /* four at the start, one spawned later */

/* Something an entity holds while it lives; its destructor gives it back,
 * however the behaviour ends: returning, or deleted. */
class holding {
public:
	holding(const entity &e, const char *what) : e_(e), what_(what) {}
	~holding() { printf("          %c at %d gives back %s\n", e_.name, e_.x, what_); }
	holding(const holding &) = delete;
	holding &operator=(const holding &) = delete;

private:
	const entity &e_;
	const char *what_;
};

/* ---- What behaviours are written with ------------------------------------ */

static void walk_to(schedule *S, entity *e, int x)
{
	e->doing = WALKING;
	while (e->x != x) {
		e->x += e->x < x ? 1 : -1;
		coroutine_yield(S);
	}
}

/* Holds a place at the well for n ticks. */
static void draw_water(schedule *S, entity *e, int n)
{
	holding place(*e, "its place at the well");
	e->doing = DRAWING;
	while (n-- > 0)
		coroutine_yield(S);
}

/* ---- The behaviour ------------------------------------------------------------ */

static void fetch_water(schedule *S, void *ud)
{
	entity *e = static_cast<entity *>(ud);
	holding bucket(*e, "its bucket");
	walk_to(S, e, WELL);
	draw_water(S, e, 4);
	walk_to(S, e, e->home);
	e->doing = DONE;
}

/* ---- The game loop ------------------------------------------------------------- */

static void spawn(schedule *S, entity *e, char name, int home)
{
	e->name = name;
	e->x = e->home = home;
	e->doing = WALKING;
	e->id = coroutine_new(S, fetch_water, e);
	printf("          %c spawned at %d: coroutine %d\n", name, home, e->id);
}

/* Ends e's behaviour wherever it is, its destructors run. */
static void despawn(schedule *S, entity *e)
{
	printf("          %c despawned at %d, %s: coroutine_delete(S, %d)\n", e->name, e->x,
	       activities[e->doing], e->id);
	coroutine_delete(S, e->id);
	e->doing = DESPAWNED;
}

static void show_tick(int tick, const entity *e, int n)
{
	int pad = 0; /* after the last activity: columns 9 wide, none at the end */
	printf("tick %2d", tick);
	for (int i = 0; i < n && e[i].name != 0; i++) {
		const char *doing = activities[e[i].doing];
		printf("%*s | %c %2d %s", pad, "", e[i].name, e[i].x, doing);
		pad = 9 - (int)strlen(doing);
	}
	printf("\n");
}

/* Each entity's turn, in the order of their ids; returns how many are left. */
static int play_tick(schedule *S)
{
	int left = 0;
	for (int id = coroutine_next(S, -1); id != -1; id = coroutine_next(S, id)) {
		coroutine_resume(S, id);
		if (coroutine_status(S, id) != COROUTINE_DEAD)
			left++;
	}
	return left;
}

int main()
{
	schedule *S = coroutine_open();
	/* In main's frame, not on the run stack: the loop reads the entities
	 * while their coroutines are suspended (the shared-stack rule). */
	entity entities[ENTITIES] = {};
	int tick = 0, left;

	spawn(S, &entities[0], 'A', 19);
	spawn(S, &entities[1], 'B', 27);
	spawn(S, &entities[2], 'C', 17);
	spawn(S, &entities[3], 'D', 14);
	do {
		show_tick(tick, entities, ENTITIES);
		if (tick == 7) {
			/* C is drawing water.  A is done: with C gone, B and D are
			 * left, so E gets the first free slot from 2 on, C's, not
			 * A's 0 (ids are handed out as the original hands them out). */
			despawn(S, &entities[2]);
			spawn(S, &entities[4], 'E', 24);
		}
		left = play_tick(S);
		tick++;
	} while (left > 0);
	show_tick(tick, entities, ENTITIES);
	coroutine_close(S);
	return 0;
}
