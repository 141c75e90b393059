/*
 * hunt.c - entities whose scripts end in their own way when they are
 * despawned, in C: no exceptions, nothing unwound.
 *
 * A rabbit holds things while it lives: a burrow, and, while it eats, a
 * carrot from the store.  Its script waits for the next tick with
 * coroutine_try_yield, which answers COROUTINE_ENDING when the rabbit is
 * despawned while it waits (coroutine_delete, or coroutine_close): each
 * function of the script then gives back what it took and returns, as at
 * any return, up to the script's own, which leaves the burrow.
 *
 * The fox despawns the rabbit it catches, from its own script: the rabbit
 * is ended once the fox's turn is over, before the game loop goes on.  The
 * game loop despawns a rabbit that runs out of the camera's view, and at
 * the end closes the schedule with the fox still hunting: it is told
 * COROUTINE_ENDING too.
 *
 * It prints the same wherever the library runs, WebAssembly included.
 * (What a delete does to code that waits in coroutine_yield instead:
 * docs/api.md, "Ending a coroutine early".)
 */
#include "coroutine.h"
#include <stdio.h>
#include <stdlib.h>

#define RABBITS 4
#define VIEW 19 /* the camera sees the field up to here */

enum doing { AWAY, EATS, HOME, GONE };
static const char *const doings[] = { "away", "eats", "home", "gone" };

struct entity {
	char name;
	int id; /* its coroutine */
	int x, home, way; /* way: -1 or +1, the way it hops out */
	enum doing doing;
};

static int carrots = 4; /* in the store */

/* Ends this entity's turn.  1 when it was despawned while it waited
 * (coroutine_try_yield answered COROUTINE_ENDING): its script must then
 * return.  (-1, no memory to save its stack, comes back at once: here it
 * counts as a tick.) */
static int wait_a_tick(struct schedule *S)
{
	return coroutine_try_yield(S) == COROUTINE_ENDING;
}

/* ---- A rabbit's script ------------------------------------------------------- */

/* One cell a tick to x; 1 when despawned on the way. */
static int hop_to(struct schedule *S, struct entity *r, int x)
{
	r->doing = AWAY;
	while (r->x != x) {
		r->x += r->x < x ? 1 : -1;
		if (wait_a_tick(S))
			return 1;
	}
	return 0;
}

/* Takes a carrot from the store and eats it in n ticks; despawned before
 * it is eaten, it puts the carrot back. */
static int eat_a_carrot(struct schedule *S, struct entity *r, int n)
{
	if (carrots == 0)
		return 0;
	carrots--;
	r->doing = EATS;
	while (n-- > 0)
		if (wait_a_tick(S)) {
			carrots++;
			printf("          %c puts its carrot back (%d in the store)\n", r->name, carrots);
			return 1;
		}
	return 0;
}

/* Out, a carrot, home, twice; despawned, it stops where it is.  Either
 * way it leaves its burrow. */
static void rabbit(struct schedule *S, void *ud)
{
	struct entity *r = (struct entity *)ud;
	int meals;
	printf("          %c digs a burrow at %d\n", r->name, r->home);
	for (meals = 0; meals < 2; meals++)
		if (hop_to(S, r, r->home + 2 * r->way) || eat_a_carrot(S, r, 2) || hop_to(S, r, r->home))
			break;
	r->doing = meals == 2 ? HOME : GONE;
	printf("          %c leaves its burrow at %d\n", r->name, r->home);
}

/* ---- The fox's script ---------------------------------------------------------- */

static struct entity field[RABBITS + 1]; /* the rabbits, then the fox */

/* The nearest rabbit that eats (it does not look up), or NULL. */
static struct entity *nearest_eating_rabbit(const struct entity *fox)
{
	struct entity *prey = NULL;
	int i;
	for (i = 0; i < RABBITS; i++)
		if (field[i].doing == EATS)
			if (prey == NULL || abs(field[i].x - fox->x) < abs(prey->x - fox->x))
				prey = &field[i];
	return prey;
}

/* Hunts until told to end: a step a tick toward the nearest rabbit that
 * eats; the one it reaches it despawns. */
static void fox(struct schedule *S, void *ud)
{
	struct entity *f = (struct entity *)ud;
	while (!wait_a_tick(S)) {
		struct entity *prey = nearest_eating_rabbit(f);
		if (prey != NULL && prey->x != f->x)
			f->x += prey->x < f->x ? -1 : 1;
		if (prey != NULL && prey->x == f->x) {
			printf("          the fox catches %c at %d: coroutine_delete(S, %d)\n", prey->name, f->x,
			       prey->id);
			coroutine_delete(S, prey->id);
		}
	}
	printf("          the fox stops hunting at %d\n", f->x);
}

/* ---- The game loop ------------------------------------------------------------- */

static void spawn(struct schedule *S, struct entity *e, char name, int x, int way, coroutine_func script)
{
	e->name = name;
	e->x = e->home = x;
	e->way = way;
	e->doing = AWAY;
	e->id = coroutine_new(S, script, e);
}

static void show_tick(int tick)
{
	int i;
	printf("tick %2d | fox %2d", tick, field[RABBITS].x);
	for (i = 0; i < RABBITS; i++)
		printf(" | %c %2d %s", field[i].name, field[i].x, doings[field[i].doing]);
	printf("\n");
}

int main(void)
{
	struct schedule *S = coroutine_open();
	int tick, id, i;
	spawn(S, &field[0], 'A', 2, +1, rabbit);
	spawn(S, &field[1], 'B', 6, +1, rabbit);
	spawn(S, &field[2], 'C', 18, +1, rabbit);
	spawn(S, &field[3], 'D', 12, -1, rabbit);
	spawn(S, &field[RABBITS], 'F', 10, 0, fox);
	for (tick = 0; tick < 13; tick++) {
		show_tick(tick);
		for (id = coroutine_next(S, -1); id != -1; id = coroutine_next(S, id))
			coroutine_resume(S, id);
		for (i = 0; i < RABBITS; i++)
			if (field[i].doing != GONE && field[i].doing != HOME && field[i].x > VIEW) {
				printf("          %c is out of view at %d: coroutine_delete(S, %d)\n", field[i].name,
				       field[i].x, field[i].id);
				coroutine_delete(S, field[i].id);
			}
	}
	show_tick(tick);
	printf("          the game ends: coroutine_close(S)\n");
	coroutine_close(S);
	printf("carrots left in the store: %d\n", carrots);
	return 0;
}
