/*
 * stress.c - many coroutines at random depths, resumed in random order, with
 * every byte of their stacks checked after every yield, and every id checked
 * against a model of the original's slot scan.  No timing: it passes or it
 * prints what broke and exits 1.
 *
 * Usage: stress [SEED]
 */
#include "coroutine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIVE 300        /* coroutines kept alive at once */
#define STEPS 200000    /* resumes in all */
#define FRAME 64        /* bytes of checked locals per recursion level */

struct task {
	int id;
	unsigned seed;      /* decides depth and lifetime; private to the task */
	int rounds;         /* yields left before the body returns */
	long yields;        /* written by the body: proves it ran */
};

/* A model of a schedule's slots, the original's rule written plainly. */
struct model {
	char used[1 << 20];
	int cap, nco;
};

static int model_new(struct model *m)
{
	int id;
	if (m->nco >= m->cap) {
		id = m->cap;
		m->cap *= 2;
	} else {
		for (id = m->nco; m->used[id]; id = (id + 1) % m->cap)
			;
	}
	m->used[id] = 1;
	m->nco++;
	return id;
}

static void model_end(struct model *m, int id)
{
	m->used[id] = 0;
	m->nco--;
}

static struct model model = {{0}, 16, 0};

static void failf(const char *what, int id)
{
	fprintf(stderr, "stress: %s (coroutine %d)\n", what, id);
	exit(1);
}

static unsigned next(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 16;
}

static unsigned char pattern(const struct task *t, int level, int i)
{
	return (unsigned char)(t->id * 31 + level * 7 + i);
}

/* Recurses `levels` deep, each level holding FRAME checked bytes, yields at
 * the bottom, and checks every level's bytes on the way back up. */
static void descend(struct schedule *S, struct task *t, int levels)
{
	unsigned char local[FRAME];
	for (int i = 0; i < FRAME; i++)
		local[i] = pattern(t, levels, i);
	if (levels > 0)
		descend(S, t, levels - 1);
	else
		coroutine_yield(S);
	for (int i = 0; i < FRAME; i++)
		if (local[i] != pattern(t, levels, i))
			failf("a stack byte changed across a yield", t->id);
}

static void body(struct schedule *S, void *ud)
{
	struct task *t = ud;
	if (coroutine_running(S) != t->id)
		failf("coroutine_running is not the coroutine's id", t->id);
	while (t->rounds-- > 0) {
		/* Sometimes shallow, sometimes up to 16 KiB deep. */
		int levels = next(&t->seed) % 4 == 0 ? (int)(next(&t->seed) % 256) : (int)(next(&t->seed) % 8);
		descend(S, t, levels);
		t->yields++;
	}
}

static struct task *tasks[1 << 20];

static void spawn(struct schedule *S, unsigned *seed)
{
	struct task *t = malloc(sizeof *t);
	t->seed = next(seed);
	t->rounds = (int)(next(seed) % 20);
	t->yields = 0;
	t->id = coroutine_new(S, body, t);
	if (t->id != model_new(&model))
		failf("coroutine_new broke the original's id order", t->id);
	if (tasks[t->id] != NULL)
		failf("coroutine_new reused a live slot", t->id);
	tasks[t->id] = t;
}

static void return_at_once(struct schedule *S, void *ud)
{
	(void)S, (void)ud;
}

/* Ids only, in a schedule big enough (up to 64K slots) for the slot search
 * to span many words: random news and ends, each new checked. */
static void check_ids(unsigned seed)
{
	static struct model m = {{0}, 16, 0};
	struct schedule *S = coroutine_open();
	for (long step = 0; step < STEPS; step++) {
		/* Drift between nearly empty and nearly full. */
		unsigned fill = step / 20000 % 2 ? 20 : 80;
		if (next(&seed) % 100 < fill) {
			int id = coroutine_new(S, return_at_once, NULL);
			if (id != model_new(&m))
				failf("coroutine_new broke the original's id order", id);
		} else {
			int id = (int)(next(&seed) % (unsigned)m.cap);
			if (!m.used[id])
				continue;
			coroutine_resume(S, id); /* runs to its end */
			model_end(&m, id);
		}
	}
	coroutine_close(S);
}

int main(int argc, char **argv)
{
	unsigned first = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1, seed = first;
	check_ids(first);
	struct schedule *S = coroutine_open();
	for (int i = 0; i < LIVE; i++)
		spawn(S, &seed);
	for (long step = 0; step < STEPS; step++) {
		int id = (int)(next(&seed) % (unsigned)model.cap);
		struct task *t = tasks[id];
		if (t == NULL)
			continue;
		long before = t->yields;
		int was = coroutine_status(S, id);
		coroutine_resume(S, id);
		/* A resumed coroutine finishes the round it yielded in. */
		if (was == COROUTINE_SUSPEND && t->yields != before + 1)
			failf("a resumed coroutine did not finish its round", id);
		if (coroutine_status(S, id) == COROUTINE_DEAD) {
			model_end(&model, id);
			tasks[id] = NULL;
			free(t);
			spawn(S, &seed);
		} else if (coroutine_status(S, id) != COROUTINE_SUSPEND) {
			failf("a yielded coroutine is not suspended", id);
		}
	}
	coroutine_close(S);
	for (int i = 0; i < model.cap; i++)
		free(tasks[i]);
	printf("stress: %d steps, seed %u: ok\n", STEPS, first);
	return 0;
}
