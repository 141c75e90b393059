/*
 * model.c - the interpreter behind model.h: bytes -> program, run against
 * the library and a reference model at the same time.
 *
 * Each byte read picks the next step (or its argument); when the bytes run
 * out every read gives 0, which in a coroutine means "yield", so whatever
 * runs goes back to main, and main stops and closes the schedule with its
 * coroutines suspended.  Any string of bytes is thus a finite program.
 */
#include "model.h"
#include "coroutine.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FIRST_CAP 16  /* the original's DEFAULT_COROUTINE */
#define MAX_LIVE 40   /* more live coroutines are not created: bounds memory */
#define MAX_DEPTH 8   /* frames per coroutine */
#define FRAME_UNIT 23 /* a frame holds 1 + FRAME_UNIT * byte bytes (< 6 KiB) */

/*
 * One frame of a coroutine.  It lives on the run stack, and so do the data
 * it points to; the chain is only walked by the coroutine that owns it,
 * while it runs, when its bytes are back at the same addresses.
 */
struct frame {
	const struct frame *up;
	const unsigned char *data;
	size_t size;
	uint32_t seed;
};

struct program;

/* One coroutine as the program sees it: its ud. */
struct task {
	struct program *p;
	int id;
	const struct frame *top; /* innermost frame */
};

struct program {
	const unsigned char *next, *end; /* bytes not read yet */
	long step;
	const char *failed;              /* the first disagreement, or NULL */
	struct schedule *S;
	/* The model: what the library should answer. */
	int cap, nco, running;
	int *status;                     /* cap entries */
	struct task **task;              /* cap entries, NULL when DEAD */
};

static char failure[256];

static void disagree(struct program *p, const char *fmt, ...)
{
	if (p->failed)
		return;
	int n = snprintf(failure, sizeof failure, "step %ld: ", p->step);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(failure + n, sizeof failure - (size_t)n, fmt, ap);
	va_end(ap);
	p->failed = failure;
}

static unsigned next_byte(struct program *p)
{
	return p->next < p->end ? *p->next++ : 0;
}

static void *checked_realloc(void *ptr, size_t size)
{
	void *q = realloc(ptr, size);
	if (q == NULL) {
		fputs("model: out of memory\n", stderr);
		abort();
	}
	return q;
}

/* ---- Frame data: random bytes that can be generated again to check ---- */

static uint32_t xorshift32(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static void fill_frame(unsigned char *data, size_t size, uint32_t seed)
{
	for (size_t i = 0; i < size; i++)
		data[i] = (unsigned char)xorshift32(&seed);
}

static void check_frames(struct task *t)
{
	int depth = 0;
	for (const struct frame *f = t->top; f != NULL; f = f->up, depth++) {
		uint32_t x = f->seed;
		for (size_t i = 0; i < f->size; i++) {
			if (f->data[i] != (unsigned char)xorshift32(&x)) {
				disagree(t->p, "coroutine %d: byte %zu of %zu of its frame %d from the top changed",
					 t->id, i, f->size, depth);
				return;
			}
		}
	}
}

/* ---- The model's ids and statuses ---------------------------------------- */

/* The new slots are empty. */
static void resize_model(struct program *p, int cap)
{
	p->status = (int *)checked_realloc(p->status, (size_t)cap * sizeof *p->status);
	p->task = (struct task **)checked_realloc(p->task, (size_t)cap * sizeof *p->task);
	for (int i = p->cap; i < cap; i++) {
		p->status[i] = COROUTINE_DEAD;
		p->task[i] = NULL;
	}
	p->cap = cap;
}

/* The original's rule: the old cap when full, else the first free slot from nco. */
static int model_new(struct program *p)
{
	int id;
	if (p->nco >= p->cap) {
		id = p->cap;
		resize_model(p, 2 * p->cap);
	} else {
		id = p->nco;
		while (p->status[id] != COROUTINE_DEAD)
			id = (id + 1) % p->cap;
	}
	p->status[id] = COROUTINE_READY;
	p->nco++;
	return id;
}

static void check_status(struct program *p, int id)
{
	int got = coroutine_status(p->S, id);
	if (got != p->status[id])
		disagree(p, "coroutine_status(%d) is %d, the model says %d", id, got, p->status[id]);
}

static void check_running(struct program *p)
{
	int got = coroutine_running(p->S);
	if (got != p->running)
		disagree(p, "coroutine_running is %d, the model says %d", got, p->running);
}

/* coroutine_next walks exactly the slots the model says hold a coroutine. */
static void check_walk(struct program *p)
{
	int got = coroutine_next(p->S, -1), want = -1;
	for (;;) {
		int after = want;
		do
			want++;
		while (want < p->cap && p->status[want] == COROUTINE_DEAD);
		if (want == p->cap)
			want = -1;
		if (got != want) {
			disagree(p, "coroutine_next(%d) is %d, the model says %d", after, got, want);
			return;
		}
		if (got == -1)
			return;
		got = coroutine_next(p->S, got);
	}
}

/* ---- Coroutines ---------------------------------------------------------- */

static void body(struct schedule *S, void *ud);

/* Creates a coroutine (from main or from a coroutine) unless MAX_LIVE are. */
static void spawn(struct program *p)
{
	if (p->nco >= MAX_LIVE)
		return;
	struct task *t = (struct task *)checked_realloc(NULL, sizeof *t);
	t->p = p;
	t->top = NULL;
	t->id = model_new(p);
	p->task[t->id] = t;
	int id = coroutine_new(p->S, body, t);
	if (id != t->id)
		disagree(p, "coroutine_new returned %d, the model says %d", id, t->id);
}

static void yield(struct task *t)
{
	struct program *p = t->p;
	p->status[t->id] = COROUTINE_SUSPEND;
	p->running = -1;
	coroutine_yield(p->S);
	if (p->running != t->id)
		disagree(p, "coroutine %d woke up, but main resumed %d", t->id, p->running);
	check_frames(t);
}

static void descend(struct task *t, int depth);

/* One step of a coroutine at the given depth; 0 when its frame returns. */
static int coroutine_step(struct task *t, int depth)
{
	struct program *p = t->p;
	p->step++;
	switch (next_byte(p) % 8) {
	case 0:
	case 1:
		yield(t);
		return 1;
	case 2:
	case 3:
		if (depth < MAX_DEPTH)
			descend(t, depth + 1);
		return 1;
	case 4:
		return 0;
	case 5:
		spawn(p);
		return 1;
	case 6:
		check_status(p, (int)(next_byte(p) % (unsigned)p->cap));
		return 1;
	default:
		check_running(p);
		check_status(p, t->id);
		check_walk(p);
		return 1;
	}
}

/* A new frame of random size and content, then steps until it returns. */
static void descend(struct task *t, int depth)
{
	struct program *p = t->p;
	size_t size = 1 + FRAME_UNIT * next_byte(p);
	unsigned char data[size];
	struct frame f = { t->top, data, size, (uint32_t)p->step * 2654435761u | 1 };
	fill_frame(data, size, f.seed);
	t->top = &f;
	while (!p->failed && coroutine_step(t, depth))
		;
	check_frames(t);
	t->top = f.up;
}

static void body(struct schedule *S, void *ud)
{
	struct task *t = (struct task *)ud;
	struct program *p = t->p;
	if (S != p->S)
		disagree(p, "coroutine %d got another schedule", t->id);
	descend(t, 0);
	/* Returning ends the coroutine: the model forgets it here. */
	p->status[t->id] = COROUTINE_DEAD;
	p->task[t->id] = NULL;
	p->nco--;
	p->running = -1;
	free(t);
}

/* ---- The main program -------------------------------------------------- */

static void resume(struct program *p, int id)
{
	int was = p->status[id];
	if (was != COROUTINE_DEAD) {
		p->status[id] = COROUTINE_RUNNING;
		p->running = id;
	}
	coroutine_resume(p->S, id);
	if (p->status[id] == COROUTINE_RUNNING)
		disagree(p, "coroutine_resume(%d) returned, but it neither yielded nor returned", id);
	check_running(p);
	for (int i = 0; i < p->cap && !p->failed; i++)
		check_status(p, i);
	check_walk(p);
}

static void main_step(struct program *p)
{
	p->step++;
	switch (next_byte(p) % 4) {
	case 0:
		spawn(p);
		break;
	case 1:
	case 2:
		resume(p, (int)(next_byte(p) % (unsigned)p->cap));
		break;
	default:
		check_running(p);
		check_status(p, (int)(next_byte(p) % (unsigned)p->cap));
		break;
	}
}

const char *model_run(const unsigned char *bytes, size_t size)
{
	struct program p = { bytes, bytes + size, 0, NULL, NULL, 0, 0, -1, NULL, NULL };
	p.S = coroutine_open();
	if (p.S == NULL)
		return "coroutine_open returned NULL";
	resize_model(&p, FIRST_CAP);
	while (p.next < p.end && !p.failed)
		main_step(&p);
	coroutine_close(p.S);
	for (int i = 0; i < p.cap; i++)
		free(p.task[i]);
	free(p.task);
	free(p.status);
	return p.failed;
}

void model_random_program(unsigned char *bytes, size_t size, unsigned long seed)
{
	/* splitmix64: any seed, 0 included, gives a well-mixed stream. */
	uint64_t x = seed;
	for (size_t i = 0; i < size; i++) {
		uint64_t z = (x += 0x9e3779b97f4a7c15u);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
		bytes[i] = (unsigned char)(z ^ (z >> 31));
	}
}
