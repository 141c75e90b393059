/*
 * game.c - a fixed-step game loop driving 24 entities, each one a coroutine.
 *
 * An entity's behaviour is written as straight-line code ("walk to the
 * well, wait 3 ticks, say hello, walk home"), not as a state machine: the
 * coroutine keeps its place in the code and its locals between ticks.
 * Every coroutine_yield ends the entity's turn for this tick; the loop
 * resumes every entity once per tick.  There is no real time and no
 * sleeping, so the output is the same on every run.
 *
 * The loop keeps no list of the entities' coroutines: it walks the
 * schedule's with coroutine_next, and an entity whose behaviour has ended
 * has left the schedule.
 */
#include "coroutine.h"
#include <stdio.h>

#define ENTITIES 24
#define STREET 40 /* cells 0 .. STREET-1 */
#define GATE 2
#define WELL 20
#define MARKET 34

enum activity { WALKING, WAITING, DONE };

struct entity {
	char name;   /* 'A', 'B', ... */
	const char *kind;
	int home;
	int x;
	enum activity doing;
	coroutine_func behaviour;
};

/* ---- The helpers that behaviours are written with ---------------------- */

/* Ends this entity's turn for n ticks. */
static void wait_ticks(struct schedule *S, struct entity *e, int n)
{
	e->doing = WAITING;
	while (n-- > 0)
		coroutine_yield(S);
}

/* One cell per tick until the entity stands on x. */
static void walk_to(struct schedule *S, struct entity *e, int x)
{
	e->doing = WALKING;
	while (e->x != x) {
		e->x += e->x < x ? 1 : -1;
		coroutine_yield(S);
	}
}

static void say(const struct entity *e, const char *words)
{
	printf("          %c the %s, at %d: \"%s\"\n", e->name, e->kind, e->x, words);
}

/* ---- Behaviours ----------------------------------------------------------- */

static void villager(struct schedule *S, void *ud)
{
	struct entity *e = ud;
	walk_to(S, e, WELL);
	wait_ticks(S, e, 3);
	say(e, "hello");
	walk_to(S, e, e->home);
	say(e, "good night");
}

static void guard(struct schedule *S, void *ud)
{
	struct entity *e = ud;
	int round;
	for (round = 1; round <= 2; round++) {
		walk_to(S, e, GATE);
		say(e, round == 1 ? "all clear" : "all clear again");
		walk_to(S, e, e->home);
	}
}

static void merchant(struct schedule *S, void *ud)
{
	struct entity *e = ud;
	walk_to(S, e, MARKET);
	say(e, "fresh bread!");
	wait_ticks(S, e, 4);
	say(e, "sold out");
	walk_to(S, e, e->home);
}

/* An entity's coroutine: its behaviour, then it is done. */
static void live(struct schedule *S, void *ud)
{
	struct entity *e = ud;
	e->behaviour(S, e);
	e->doing = DONE;
}

/* ---- The game loop ------------------------------------------------------------ */

static const char *const kinds[] = { "villager", "guard", "merchant" };
static const coroutine_func behaviours[] = { villager, guard, merchant };

static void spawn(struct schedule *S, struct entity *e, int i)
{
	e->name = (char)('A' + i);
	e->kind = kinds[i % 3];
	e->home = (i * 7 + 3) % STREET;
	e->x = e->home;
	e->doing = WAITING;
	e->behaviour = behaviours[i % 3];
	coroutine_new(S, live, e);
}

/* The landmarks, above the columns of the tick lines. */
static void show_street(void)
{
	int x;
	printf("gate G, well W, market M; digits count the entities on a cell\n");
	printf("street   |");
	for (x = 0; x < STREET; x++)
		putchar(x == GATE ? 'G' : x == WELL ? 'W' : x == MARKET ? 'M' : ' ');
	printf("|\n");
}

/*
 * One line at the start of each tick: how many entities stand on each cell,
 * and what they are busy with.  What they say during the tick follows it.
 */
static void show_tick(int tick, const struct entity *e, int n)
{
	int cells[STREET] = { 0 };
	int count[DONE + 1] = { 0 };
	int i;
	for (i = 0; i < n; i++) {
		count[e[i].doing]++;
		if (e[i].doing != DONE)
			cells[e[i].x]++;
	}
	printf("tick %3d |", tick);
	for (i = 0; i < STREET; i++)
		putchar(cells[i] == 0 ? '.' : cells[i] > 9 ? '+' : '0' + cells[i]);
	printf("| walking %2d  waiting %2d  done %2d\n", count[WALKING], count[WAITING], count[DONE]);
}

/*
 * Gives every entity still running its turn, in the order of their ids
 * (the order they were spawned in); returns how many are left.
 */
static int play_tick(struct schedule *S)
{
	int id, left = 0;
	for (id = coroutine_next(S, -1); id != -1; id = coroutine_next(S, id)) {
		coroutine_resume(S, id);
		if (coroutine_status(S, id) != COROUTINE_DEAD)
			left++;
	}
	return left;
}

int main(void)
{
	struct schedule *S = coroutine_open();
	/* In main's frame, not on the run stack: the loop reads the entities
	 * while their coroutines are suspended (the shared-stack rule). */
	struct entity entities[ENTITIES];
	int i, tick = 0, left;

	for (i = 0; i < ENTITIES; i++)
		spawn(S, &entities[i], i);
	show_street();
	do {
		show_tick(tick, entities, ENTITIES);
		left = play_tick(S);
		tick++;
	} while (left > 0);
	printf("all %d entities done after %d ticks\n", ENTITIES, tick);
	coroutine_close(S);
	return 0;
}
