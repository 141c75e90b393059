/*
 * rollback.c - rollback netcode in miniature: two players' scripts run a
 * frame per resume, an input that arrives late rewinds them to the frame
 * it was meant for, and they play those frames again.
 *
 * A player's state is its script's locals: where it stands, how long it
 * has kept its direction.  Every frame the game keeps a copy of each
 * script as it waits for the next input (coroutine_clone): a snapshot, in
 * a ring of the last RING frames.  Until a player's input arrives, the
 * game predicts it: the same as the frame before.  When the real one
 * arrives and differs, the game deletes the scripts that played on the
 * wrong guess, copies the snapshots of that frame in their place, and
 * plays the frames since again with the real input.
 *
 * The end must be the same as if every input had come on time: the game
 * plays that too, compares, and its exit status says whether they match.
 *
 * The clone rule: a copy shares everything outside its frames.  The
 * scripts keep plain values in their locals, and read and write only their
 * player's struct, which the game owns; and they read their start from a
 * field nothing writes, since a copy of a script that never ran starts
 * later, when the rest of the struct has moved on.
 */
#include "coroutine.h"
#include <stdio.h>
#include <stdlib.h>

#define PLAYERS 2
#define FRAMES 20
#define RING 8 /* snapshots kept: an input may arrive up to RING frames late */

/* Each player's input at each frame: Left, Right, Up, Down, or . (stand). */
static const char *const inputs[PLAYERS] = {
	"RRRRDDDDDLLLLUUUURRR",
	"UUUUULLLLLRRRDDDRRRR",
};

/* The inputs that arrive late, in the order they arrive. */
struct late_input {
	int player, frame, arrives;
};
static const struct late_input late_inputs[] = {
	{ 1, 5, 9 },   /* L, where U is predicted: 4 frames late */
	{ 0, 13, 17 }, /* U, where L is predicted */
	{ 1, 13, 19 }, /* D, where R is predicted: 6 frames late */
};
#define LATE_INPUTS (int)(sizeof late_inputs / sizeof late_inputs[0])

/* What a player's script and the game tell each other, owned by the game. */
struct player {
	char name;
	int start_x, start_y; /* read once, at the script's start */
	char input;           /* this frame's, set by the game */
	int x, y;             /* shown by the script after each frame */
	unsigned trail;       /* a hash of every cell it has stood on, in order */
};

/* ---- A player's script: its state is its locals ------------------------- */

/* One cell a frame; two from the third frame on in the same direction. */
static void walk(struct schedule *S, void *ud)
{
	struct player *p = ud;
	int x = p->start_x, y = p->start_y;
	int run = 0; /* frames it has kept its direction before this one */
	char last = '.';
	unsigned trail = 0;
	for (;;) {
		char in = p->input;
		int step;
		run = in == last ? run + 1 : 0;
		last = in;
		step = run >= 2 ? 2 : 1;
		x += step * ((in == 'R') - (in == 'L'));
		y += step * ((in == 'D') - (in == 'U'));
		trail = trail * 31 + (unsigned)(x * 64 + y);
		p->x = x;
		p->y = y;
		p->trail = trail;
		coroutine_yield(S); /* the end of its frame */
	}
}

/* ---- The game ------------------------------------------------------------- */

struct game {
	struct schedule *S;
	struct player players[PLAYERS];
	int live[PLAYERS];             /* the scripts that play */
	int ring[RING][PLAYERS];       /* ring[f % RING]: copies of them as frame f began; -1: none */
	char played[PLAYERS][FRAMES];  /* the input each frame was played with */
	int now;                       /* the frame the game is at */
	int late;                      /* whether inputs arrive late (else all on time) */
	int verbose;
};

static void out_of_memory(void)
{
	fprintf(stderr, "rollback: out of memory\n");
	exit(1);
}

/* The frame at which player p's input for frame f arrives. */
static int arrival(const struct game *g, int p, int f)
{
	int i;
	for (i = 0; g->late && i < LATE_INPUTS; i++) {
		if (late_inputs[i].player == p && late_inputs[i].frame == f)
			return late_inputs[i].arrives;
	}
	return f;
}

/* The input of player p for frame f as the game knows it now: the real
 * one, or the prediction, the same as the frame before (. at the start). */
static char input_for(const struct game *g, int p, int f)
{
	if (f < 0)
		return '.';
	return arrival(g, p, f) <= g->now ? inputs[p][f] : input_for(g, p, f - 1);
}

/* A copy of each script as it waits for frame f's input, in the ring, in
 * place of frame f - RING's. */
static void snapshot(struct game *g, int f)
{
	int p, *slot = g->ring[f % RING];
	for (p = 0; p < PLAYERS; p++) {
		if (slot[p] != -1)
			coroutine_delete(g->S, slot[p]);
		slot[p] = coroutine_clone(g->S, g->live[p]);
		if (slot[p] == -1)
			out_of_memory();
	}
}

/* Frame f: a snapshot, then each script plays its input. */
static void play_frame(struct game *g, int f)
{
	int p;
	snapshot(g, f);
	for (p = 0; p < PLAYERS; p++) {
		g->players[p].input = g->played[p][f] = input_for(g, p, f);
		coroutine_resume(g->S, g->live[p]);
	}
}

static void show_frame(const struct game *g, const char *label, int f)
{
	int p;
	if (!g->verbose)
		return;
	printf("%s %2d ", label, f);
	for (p = 0; p < PLAYERS; p++) {
		const struct player *pl = &g->players[p];
		printf("  %c %c (%3d,%3d)", pl->name, pl->input, pl->x, pl->y);
	}
	printf("\n");
}

/*
 * The scripts go back to where they waited as frame f began: the ones that
 * played on since are deleted, and copies of frame f's snapshots take their
 * place (the snapshots stay, for another rewind).  Then frames f .. now-1
 * are played again.
 */
static void rewind_to(struct game *g, int f, int now)
{
	int p;
	if (now - f > RING) {
		fprintf(stderr, "rollback: frame %d is gone from the ring\n", f);
		exit(1);
	}
	for (p = 0; p < PLAYERS; p++) {
		coroutine_delete(g->S, g->live[p]);
		g->live[p] = coroutine_clone(g->S, g->ring[f % RING][p]);
		if (g->live[p] == -1)
			out_of_memory();
	}
	for (; f < now; f++) {
		play_frame(g, f);
		show_frame(g, "  again", f);
	}
}

/* What arrives as frame now begins: the inputs that were late, each of
 * which takes the game back to its frame if it was played with another. */
static void receive_inputs(struct game *g, int now)
{
	int i;
	g->now = now;
	for (i = 0; g->late && i < LATE_INPUTS; i++) {
		const struct late_input *in = &late_inputs[i];
		char real = inputs[in->player][in->frame], played = g->played[in->player][in->frame];
		if (in->arrives != now)
			continue;
		if (g->verbose)
			printf("frame %2d: %c's input for frame %d arrives: %c, played as %c: back %d frames\n",
			       now, g->players[in->player].name, in->frame, real, played, now - in->frame);
		if (played != real)
			rewind_to(g, in->frame, now);
	}
}

/* Plays all frames: with the late inputs late, or all on time. */
static void play(struct game *g, int late, int verbose)
{
	int p, f, i;
	g->S = coroutine_open();
	if (g->S == NULL)
		out_of_memory();
	g->late = late;
	g->verbose = verbose;
	for (p = 0; p < PLAYERS; p++) {
		struct player *pl = &g->players[p];
		pl->name = (char)('A' + p);
		pl->start_x = pl->x = 10 * p;
		pl->start_y = pl->y = 0;
		pl->trail = 0;
		g->live[p] = coroutine_new(g->S, walk, pl);
		if (g->live[p] == -1)
			out_of_memory();
		for (i = 0; i < RING; i++)
			g->ring[i][p] = -1;
	}
	for (f = 0; f < FRAMES; f++) {
		receive_inputs(g, f);
		play_frame(g, f);
		show_frame(g, "frame", f);
	}
}

/* The coroutines in the schedule: the live scripts and the ring's copies. */
static int coroutines(struct schedule *S)
{
	int id, n = 0;
	for (id = coroutine_next(S, -1); id != -1; id = coroutine_next(S, id))
		n++;
	return n;
}

static void show_end(const char *label, const struct game *g)
{
	int p;
	printf("%s", label);
	for (p = 0; p < PLAYERS; p++) {
		const struct player *pl = &g->players[p];
		printf("  %c (%3d,%3d) trail %08x", pl->name, pl->x, pl->y, pl->trail);
	}
	printf("\n");
}

int main(void)
{
	struct game late, on_time;
	int p, same = 1, kept;

	printf("%d players, %d frames; each frame a snapshot of every script, the last %d frames kept\n",
	       PLAYERS, FRAMES, RING);
	play(&late, 1, 1);
	play(&on_time, 0, 0);

	show_end("the end, inputs late:   ", &late);
	show_end("the end, inputs on time:", &on_time);
	for (p = 0; p < PLAYERS; p++) {
		const struct player *a = &late.players[p], *b = &on_time.players[p];
		same = same && a->x == b->x && a->y == b->y && a->trail == b->trail;
	}
	printf("%s\n", same ? "the same" : "they differ");

	/* A rewind deletes what it replaces: no more than the scripts and their
	 * snapshots are left. */
	kept = coroutines(late.S);
	printf("coroutines left: %d (%d scripts, %d snapshots)\n", kept, PLAYERS, kept - PLAYERS);
	coroutine_close(late.S);
	coroutine_close(on_time.S);
	return same && kept == PLAYERS * (1 + RING) ? 0 : 1;
}
