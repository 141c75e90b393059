/*
 * The demo's --trace: after every switch, what it copied, and for every
 * yield the frames inside the saved slice, named and measured as the
 * program runs (trace_frames.cpp finds them).  --trace=html writes the same
 * story as one page to step through: trace_page.html, which the build
 * turns into a string (trace_page_html.h), with the steps put in.
 */
#include "trace.h"
#include "trace_frames.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- What the trace collects --------------------------------------------- */

struct step {
	int id, other;
	int first_run;           /* resume of a coroutine that never ran */
	long copied_in;          /* bytes copied back at the resume (0: none) */
	long owned;              /* bytes left on the run stack, not copied */
	int returned;            /* the coroutine returned: no yield */
	long copied_out;         /* bytes copied out at the yield */
	long heap_before[2];     /* both heap copies before and after the */
	long heap[2];            /* step: bytes, 0 none yet, -1 freed */
	char said_before[32];    /* what the demo printed before the resume */
	char said[64];           /* and during it */
	int nframes;
	struct frame frames[MAX_FRAMES];
	const struct step *frames_before; /* the yield that left the slice */
	const struct step *overwritten;   /* at a first run, the other's */
};

#define MAX_STEPS 32
static struct step steps[MAX_STEPS], spare, *now = &spare;
static int nsteps;
static int html;
static long heap_now[2];
static struct step *last_yield[2]; /* each coroutine's, for its frames */

/* Whose bytes are on the run stack: the last coroutine resumed, unless it
 * has ended.  coroutine_resume skips the copy back for that one. */
static int on_run_stack = -1;

/* ---- --trace: the text ---------------------------------------------------- */

static void show_heap_copy(long size)
{
	if (size <= 0)
		printf(size == 0 ? "none yet" : "freed");
	else
		printf("%ld bytes", size);
}

/* The run stack just after id yielded, beside both coroutines' heap copies. */
static void draw_stacks(const struct step *s)
{
	printf("       run stack                       heap\n");
	printf("   top +---------------------+\n");
	printf("       | coroutine %d %4ld B  |  -->  coroutine %d: ", s->id, s->copied_out, s->id);
	show_heap_copy(s->heap[s->id]);
	printf("\n  -%-4ld+---------------------+       coroutine %d: ", s->copied_out, s->other);
	show_heap_copy(s->heap[s->other]);
	printf("\n       :        free         :\n");
}

static void show_frames(const struct step *s)
{
	if (s->nframes == 0) {
		printf(frames_known ? "       (its frames were not found)\n"
				    : "       (its frames cannot be found on this platform)\n");
		return;
	}
	printf("       frames in the slice, top of the run stack first:\n");
	for (int i = 0; i < s->nframes; i++)
		printf("       %6ld B  %s\n", s->frames[i].size, s->frames[i].name);
}

/* The trace's line for a resume, and for what followed it. */
static void resume_line(const struct step *s, char *line, size_t len)
{
	if (s->first_run)
		snprintf(line, len, "resume %d: first run, starts at the top of the run stack", s->id);
	else if (s->owned)
		snprintf(line, len, "resume %d: its %ld bytes are still on the run stack, nothing to copy", s->id,
			 s->owned);
	else
		snprintf(line, len, "resume %d: copy %ld bytes back from its heap copy to top-%ld .. top", s->id,
			 s->copied_in, s->copied_in);
}

static void after_line(const struct step *s, char *line, size_t len)
{
	if (s->returned)
		snprintf(line, len, "coroutine %d returned: its slot and its heap copy are freed", s->id);
	else
		snprintf(line, len, "yield  %d: copied %ld bytes, top-%ld .. top, out to its heap copy", s->id,
			 s->copied_out, s->copied_out);
}

/* ---- --trace=html: the demo's own lines, kept for the page ------------------ */

#ifdef _WIN32
#include <io.h>
#else
#include <unistd.h>
#endif

/* With --trace=html the page goes to standard output, at the end; until
 * then the demo writes to a scratch file, read back line by line. */
static int page_fd = -1;
static FILE *said_file;
static long said_done;

static void keep_demo_lines(void)
{
	fflush(stdout);
	said_file = tmpfile();
	page_fd = dup(1);
	if (said_file == NULL || page_fd < 0 || dup2(fileno(said_file), 1) < 0) {
		fprintf(stderr, "--trace=html: cannot set standard output aside\n");
		exit(1);
	}
}

/* What the demo printed since the last call. */
static void demo_said(char *out, size_t len)
{
	fflush(stdout);
	long end = (long)lseek(1, 0, SEEK_CUR);
	size_t n = end > said_done ? (size_t)(end - said_done) : 0;
	if (n >= len)
		n = len - 1;
	lseek(1, said_done, SEEK_SET);
	n = n > 0 ? (size_t)read(fileno(said_file), out, n) : 0;
	out[n] = '\0';
	said_done = end;
	lseek(1, end, SEEK_SET);
}

/* ---- --trace=html: the page --------------------------------------------------- */

static FILE *page;

static void json_string(const char *text)
{
	fputc('"', page);
	for (; *text != '\0'; text++) {
		if (*text == '"' || *text == '\\')
			fprintf(page, "\\%c", *text);
		else if (*text == '\n')
			fputs("\\n", page);
		else if (*text == '<')
			fputs("\\u003c", page);
		else
			fputc(*text, page);
	}
	fputc('"', page);
}

static void json_frames(const struct step *s)
{
	fputc('[', page);
	for (int i = 0; s != NULL && i < s->nframes; i++) {
		fprintf(page, "%s[", i ? "," : "");
		json_string(s->frames[i].name);
		fprintf(page, ",%ld]", s->frames[i].size);
	}
	fputc(']', page);
}

/* One step of the page: what the run stack holds (owner -1: nothing), both
 * heap copies, and the bytes that moved (dir "out", "in", "kept", "none"). */
static void json_step(const char *title, const char *said, int owner, long bytes, const struct step *frames,
		      const long heap[2], const char *dir, long moved, int id)
{
	fputs("{title:", page);
	json_string(title);
	fputs(",said:", page);
	json_string(said);
	fprintf(page, ",id:%d,owner:%d,bytes:%ld,frames:", id, owner, bytes);
	json_frames(frames);
	fprintf(page, ",heap:[%ld,%ld],dir:\"%s\",moved:%ld", heap[0], heap[1], dir, moved);
}

/* A first run: the run stack still holds the last yield's bytes, which
 * the new coroutine's frames overwrite. */
static void json_overwritten(const struct step *old)
{
	if (old != NULL) {
		fprintf(page, ",old:%d,oldbytes:%ld,oldframes:", old->id, old->copied_out);
		json_frames(old);
	}
}

/* trace_page.html, as the string trace_page_html. */
#include "trace_page_html.h"

/* The page's line that the steps replace. */
static const char steps_line[] = "\nvar steps = [];\n";

static void write_page(void)
{
	static const long no_heap[2] = { 0, 0 };
	const char *steps_at = strstr(trace_page_html, steps_line);
	char title[160];
	fflush(stdout);
	if (steps_at == NULL) {
		fprintf(stderr, "--trace=html: trace_page.html has no line \"var steps = [];\"\n");
		exit(1);
	}
	page = fdopen(page_fd, "w");
	if (page == NULL)
		return;
	fwrite(trace_page_html, 1, (size_t)(steps_at + 1 - trace_page_html), page);
	fputs("var steps = [\n", page);
	for (int i = 0; i < nsteps; i++) {
		const struct step *s = &steps[i];
		resume_line(s, title, sizeof title);
		if (s->first_run) {
			json_step(title, s->said_before, -1, 0, NULL, i ? s->heap_before : no_heap, "none", 0, s->id);
			json_overwritten(s->overwritten);
		} else {
			json_step(title, s->said_before, s->id, s->owned + s->copied_in, s->frames_before,
				  s->heap_before, s->owned ? "kept" : "in", s->owned + s->copied_in, s->id);
		}
		fputs("},\n", page);
		after_line(s, title, sizeof title);
		if (s->returned)
			json_step(title, s->said, -1, 0, NULL, s->heap, "none", 0, s->id);
		else
			json_step(title, s->said, s->id, s->copied_out, s, s->heap, "out", s->copied_out, s->id);
		fputs("},\n", page);
	}
	fputs("];\n", page);
	fputs(steps_at + sizeof steps_line - 1, page);
	fclose(page);
}

/* ---- The hooks main calls ---------------------------------------------------- */

static int started;

void trace_resume(struct schedule *S, int id)
{
	char line[160];
	if (!started) {
		started = 1;
		start_frames(S);
	}
	now = nsteps < MAX_STEPS ? &steps[nsteps++] : &spare;
	long size = coroutine_stack_size(S, id);
	memset(now, 0, sizeof *now);
	now->id = id;
	if (coroutine_status(S, id) == COROUTINE_READY)
		now->first_run = 1;
	else if (id == on_run_stack)
		now->owned = size;
	else
		now->copied_in = size;
	now->frames_before = id >= 0 && id < 2 ? last_yield[id] : NULL;
	if (now->first_run && on_run_stack >= 0 && on_run_stack < 2)
		now->overwritten = last_yield[on_run_stack];
	memcpy(now->heap_before, heap_now, sizeof heap_now);
	if (html) {
		demo_said(now->said_before, sizeof now->said_before);
	} else {
		resume_line(now, line, sizeof line);
		printf("  %s\n", line);
		fflush(stdout);
	}
}

void trace_after_resume(struct schedule *S, int id, int other)
{
	struct step *s = now;
	char line[160];
	s->other = other;
	if (coroutine_status(S, id) == COROUTINE_DEAD) {
		s->returned = 1;
		on_run_stack = -1;
		if (id >= 0 && id < 2)
			heap_now[id] = -1;
	} else {
		s->copied_out = coroutine_stack_size(S, id);
		if (id >= 0 && id < 2) {
			heap_now[id] = s->copied_out;
			last_yield[id] = s;
		}
		s->nframes = find_frames(s->copied_out, s->frames);
		on_run_stack = id;
	}
	memcpy(s->heap, heap_now, sizeof heap_now);
	if (html) {
		demo_said(s->said, sizeof s->said);
		return;
	}
	after_line(s, line, sizeof line);
	printf("  %s\n", line);
	if (!s->returned) {
		draw_stacks(s);
		show_frames(s);
	}
}

int trace_start(const char *arg)
{
	if (arg == NULL)
		return 0;
	if (strcmp(arg, "--trace") == 0)
		return 1;
	if (strcmp(arg, "--trace=html") == 0) {
		html = 1;
		keep_demo_lines();
		return 1;
	}
	return -1;
}

void trace_end(void)
{
	if (!html)
		return;
	if (nsteps > 0) {
		struct step *last = &steps[nsteps - 1];
		size_t n = strlen(last->said);
		demo_said(last->said + n, sizeof last->said - n);
	}
	write_page();
}
