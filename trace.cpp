/*
 * The demo's --trace: after every switch, what it copied, and for every
 * yield the frames inside the saved slice, named and measured as the
 * program runs (trace_frames.cpp finds them).  --trace=trees does the same
 * for main's second program, whose coroutines yield from different
 * depths, and --trace=clone for its third, where a coroutine is cloned
 * (the trace tells the bytes of each heap copy by a fingerprint: the same
 * after the clone, apart after the next yields, and the local path in
 * each).  --trace=html writes all three as one page to step through:
 * trace_page.html, which the build turns into a string
 * (trace_page_html.h), with the walkthroughs put in.
 */
#include "trace.h"
#include "trace_frames.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- What the trace collects --------------------------------------------- */

/* One step of a walkthrough: a resume, then what it ended with; or a
 * clone of coroutine id, other. */
struct step {
	int id, other;
	int cloned;              /* coroutine_clone(S, id) made other */
	int first_run;           /* resume of a coroutine that never ran */
	long copied_in;          /* bytes copied back at the resume (0: none) */
	long owned;              /* bytes left on the run stack, not copied */
	int returned;            /* the coroutine returned: no yield */
	long copied_out;         /* bytes copied out at the yield */
	long heap[2];            /* both heap copies after the step: bytes, 0 none yet, -1 freed */
	const struct step *copies[2]; /* the yields whose slices they hold (NULL: none) */
	unsigned long sums[2];   /* the fingerprints of their bytes (0: none, or not known) */
	unsigned long sum;       /* a yield's: of the slice it copied out */
	int value[2], valued[2]; /* the walkthrough's local in both (valued 0: none, or not known) */
	char said_before[32];    /* what the program printed before the resume */
	char said[64];           /* and during it */
	int nframes;
	struct frame frames[MAX_FRAMES];
};

/* One program's steps, steps[first .. end), on a run stack of size bytes
 * above a guard of guard bytes. */
struct walkthrough {
	int first, end;
	long size, guard;
	char trees[2][64]; /* each coroutine's tree, if it walks one (trace_tree) */
	int clones;        /* a coroutine is cloned: the trace gives fingerprints */
	char local[16];    /* a local the trace reads in every slice (trace_local), */
	long local_at;     /* at top-local_at: 0 if none, or not on the run stack, */
	char local_in[NAME_LEN]; /* in this function's frame (once a yield tells) */
};

/* The bytes of a frame that its caller's call instruction pushed: the
 * return address on x86, none where it lives in a register (the page says
 * what the rest of a frame is). */
#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64)
#define CALL_PUSHES ((int)sizeof(void *))
#else
#define CALL_PUSHES 0
#endif

#define MAX_STEPS 64
#define MAX_WALKTHROUGHS 3
static struct step steps[MAX_STEPS], spare, *now = &spare;
static int nsteps;
static struct walkthrough walkthroughs[MAX_WALKTHROUGHS];
static int nwalkthroughs;
static int html;
static int clone_trace; /* --trace=clone: fingerprints after every step */
static long heap_now[2];
static const struct step *last_yield[2]; /* each coroutine's, for its frames */
static unsigned long sums_now[2];
static int value_now[2], valued_now[2];

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

/* What both heap copies hold after step s, as text: the fingerprints of
 * their bytes (trace_frames.cpp), equal for equal bytes, or (values) the
 * walkthrough's local; "" for none, or not known. */
static void heap_copy_texts(const struct step *s, int values, char text[2][24])
{
	for (int id = 0; id < 2; id++) {
		text[id][0] = '\0';
		if (values && s->heap[id] > 0 && s->valued[id])
			snprintf(text[id], sizeof text[id], "%d", s->value[id]);
		else if (!values && s->heap[id] > 0 && s->sums[id] != 0)
			snprintf(text[id], sizeof text[id], "%08lx", s->sums[id]);
	}
}

/* The line that says it, after its head. */
static void show_heap_copies(const char *head, const struct step *s, int values)
{
	char text[2][24];
	heap_copy_texts(s, values, text);
	printf("       heap copies' %s:", head);
	for (int id = 0; id < 2; id++) {
		printf("%s coroutine %d ", id ? "," : "", id);
		if (s->heap[id] > 0)
			printf("%s", text[id][0] ? text[id] : "not known");
		else
			show_heap_copy(s->heap[id]);
	}
	printf("\n");
}

/* Where a coroutine is cloned: what each heap copy holds, by fingerprint;
 * and the local the trace reads, the same place in every slice. */
static void show_heap_texts(const struct walkthrough *w, const struct step *s)
{
	char head[NAME_LEN + 64];
	show_heap_copies("bytes (FNV-1a)", s, 0);
	if (w->local_at <= 0)
		return;
	snprintf(head, sizeof head, "%s (at top-%ld%s%s%s)", w->local, w->local_at, w->local_in[0] ? ", in " : "",
		 w->local_in, w->local_in[0] ? "'s frame" : "");
	show_heap_copies(head, s, 1);
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
	if (s->cloned)
		snprintf(line, len, "clone  %d: copied its heap copy, %ld bytes, to coroutine %d's new heap copy", s->id,
			 s->copied_out, s->other);
	else if (s->returned)
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

/* A slice's frames, top first, as [[name, bytes, saved registers (-1: not
 * known)], ...]: [] for none. */
static void json_frames(const struct step *s)
{
	fputc('[', page);
	for (int i = 0; s != NULL && i < s->nframes; i++) {
		fprintf(page, "%s[", i ? "," : "");
		json_string(s->frames[i].name);
		fprintf(page, ",%ld,%d]", s->frames[i].size, s->frames[i].saved);
	}
	fputc(']', page);
}

/* One step of the page: what the run stack holds (owner -1: nothing), the
 * slice it holds (frames), both heap copies (heap, copies) and the bytes
 * that moved (dir "out", "in", "kept", "none"; "clone": between heap copies). */
static void json_step(const char *title, const char *said, int owner, long bytes, const struct step *frames,
		      const long heap[2], const struct step *const copies[2], const char *dir, int id)
{
	fputs("{title:", page);
	json_string(title);
	fputs(",said:", page);
	json_string(said);
	fprintf(page, ",id:%d,owner:%d,bytes:%ld,frames:", id, owner, bytes);
	json_frames(frames);
	fprintf(page, ",heap:[%ld,%ld],copies:[", heap[0], heap[1]);
	json_frames(copies[0]);
	fputc(',', page);
	json_frames(copies[1]);
	fprintf(page, "],dir:\"%s\",moved:%ld", dir, bytes);
}

/* Where a coroutine is cloned: the fingerprints of both heap copies'
 * bytes (sums), and where the trace reads a local, its value in both
 * (values), as text ("" for none). */
static void json_heap_texts(const struct walkthrough *w, const struct step *s)
{
	char text[2][24];
	for (int values = 0; values < 2; values++) {
		if (values ? w->local_at <= 0 : !w->clones)
			continue;
		heap_copy_texts(s, values, text);
		fprintf(page, ",%s:[\"%s\",\"%s\"]", values ? "values" : "sums", text[0], text[1]);
	}
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

/* Each step of the trace is two steps of the page: the resume, and the
 * yield or the return that ended it. */
static void json_steps(const struct walkthrough *w)
{
	static const struct step start = {}; /* before a walkthrough's first step */
	char title[160];
	for (int i = w->first; i < w->end; i++) {
		const struct step *s = &steps[i], *prev = i > w->first ? s - 1 : &start;
		if (s->cloned) {
			/* one step: the run stack as it was, the heap copy copied */
			after_line(s, title, sizeof title);
			json_step(title, s->said_before, s->owned ? s->id : -1, s->owned, s->owned ? s->copies[s->id] : NULL,
				  s->heap, s->copies, "clone", s->id);
			json_heap_texts(w, s);
			fprintf(page, ",copied:%ld,copy:%d},\n", s->copied_out, s->other);
			continue;
		}
		resume_line(s, title, sizeof title);
		if (s->first_run) {
			json_step(title, s->said_before, -1, 0, NULL, prev->heap, prev->copies, "none", s->id);
			/* the run stack still holds the last yield's bytes */
			json_overwritten(prev->copies[prev->id] == prev ? prev : NULL);
		} else {
			json_step(title, s->said_before, s->id, s->owned + s->copied_in, prev->copies[s->id],
				  prev->heap, prev->copies, s->owned ? "kept" : "in", s->id);
		}
		json_heap_texts(w, prev);
		fputs("},\n", page);
		after_line(s, title, sizeof title);
		if (s->returned)
			json_step(title, s->said, -1, 0, NULL, s->heap, s->copies, "none", s->id);
		else
			json_step(title, s->said, s->id, s->copied_out, s, s->heap, s->copies, "out", s->id);
		json_heap_texts(w, s);
		fputs("},\n", page);
	}
}

/* trace_page.html, as the string trace_page_html. */
#include "trace_page_html.h"

/* The page's line that the walkthroughs replace. */
static const char walkthroughs_line[] = "\nvar walkthroughs = [];\n";

static void write_page(void)
{
	const char *at = strstr(trace_page_html, walkthroughs_line);
	fflush(stdout);
	if (at == NULL) {
		fprintf(stderr, "--trace=html: trace_page.html has no line \"var walkthroughs = [];\"\n");
		exit(1);
	}
	page = fdopen(page_fd, "w");
	if (page == NULL)
		return;
	fwrite(trace_page_html, 1, (size_t)(at + 1 - trace_page_html), page);
	fputs("var walkthroughs = [\n", page);
	for (int i = 0; i < nwalkthroughs; i++) {
		const struct walkthrough *w = &walkthroughs[i];
		fprintf(page, "{stack:%ld,guard:%ld,ret:%d,word:%d,trees:[", w->size, w->guard, CALL_PUSHES,
			(int)sizeof(void *));
		json_string(w->trees[0]);
		fputc(',', page);
		json_string(w->trees[1]);
		fputc(']', page);
		if (w->local_at > 0) {
			fputs(",local:{name:", page);
			json_string(w->local);
			fprintf(page, ",at:%ld,bytes:%d}", w->local_at, (int)sizeof(int));
		}
		fputs(",steps:[\n", page);
		json_steps(w);
		fputs("]},\n", page);
	}
	fputs("];\n", page);
	fputs(at + sizeof walkthroughs_line - 1, page);
	fclose(page);
}

/* ---- The hooks main calls ---------------------------------------------------- */

/* The last step's said: what the program printed after it. */
static void said_after_last_step(void)
{
	if (html && nsteps > 0) {
		struct step *last = &steps[nsteps - 1];
		size_t n = strlen(last->said);
		demo_said(last->said + n, sizeof last->said - n);
	}
}

void trace_begin(struct schedule *S)
{
	said_after_last_step();
	if (nwalkthroughs < MAX_WALKTHROUGHS)
		nwalkthroughs++;
	struct walkthrough *w = &walkthroughs[nwalkthroughs - 1];
	w->first = w->end = nsteps;
	start_frames(S);
	run_stack_sizes(&w->size, &w->guard);
	memset(heap_now, 0, sizeof heap_now);
	memset(last_yield, 0, sizeof last_yield);
	memset(sums_now, 0, sizeof sums_now);
	memset(valued_now, 0, sizeof valued_now);
	on_run_stack = -1;
}

void trace_tree(int id, const char *shape)
{
	if (nwalkthroughs > 0 && id >= 0 && id < 2) {
		char *tree = walkthroughs[nwalkthroughs - 1].trees[id];
		snprintf(tree, sizeof walkthroughs[0].trees[0], "%s", shape);
	}
	if (!html)
		printf("  coroutine %d walks %s: value(left,right), - for no child\n", id, shape);
}

/* A yield's value of the walkthrough's local, in the slice it copied
 * out, and the frame that holds it. */
static int read_local(struct walkthrough *w, const struct step *yield, int *value)
{
	long below = 0;
	if (!slice_int(yield->copied_out, w->local_at, value))
		return 0;
	for (int i = 0; i < yield->nframes && w->local_in[0] == '\0'; i++) {
		below += yield->frames[i].size;
		if (w->local_at <= below)
			snprintf(w->local_in, sizeof w->local_in, "%s", yield->frames[i].name);
	}
	return 1;
}

void trace_local(const char *name, const volatile int *address)
{
	if (nwalkthroughs > 0) {
		struct walkthrough *w = &walkthroughs[nwalkthroughs - 1];
		snprintf(w->local, sizeof w->local, "%s", name);
		w->local_at = below_top(address);
	}
}

void trace_resume(struct schedule *S, int id)
{
	char line[160];
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
	if (nwalkthroughs > 0)
		walkthroughs[nwalkthroughs - 1].end = nsteps;
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
	int known = id >= 0 && id < 2;
	s->other = other;
	if (coroutine_status(S, id) == COROUTINE_DEAD) {
		s->returned = 1;
		on_run_stack = -1;
		if (known) {
			heap_now[id] = -1;
			last_yield[id] = NULL;
			sums_now[id] = 0;
			valued_now[id] = 0;
		}
	} else {
		s->copied_out = coroutine_stack_size(S, id);
		s->nframes = find_frames(s->copied_out, s->frames);
		s->sum = slice_fingerprint(s->copied_out);
		if (known) {
			heap_now[id] = s->copied_out;
			last_yield[id] = s;
			sums_now[id] = s->sum;
			valued_now[id] = nwalkthroughs > 0 && read_local(&walkthroughs[nwalkthroughs - 1], s, &value_now[id]);
		}
		on_run_stack = id;
	}
	memcpy(s->heap, heap_now, sizeof heap_now);
	memcpy(s->copies, last_yield, sizeof last_yield);
	memcpy(s->sums, sums_now, sizeof sums_now);
	memcpy(s->value, value_now, sizeof value_now);
	memcpy(s->valued, valued_now, sizeof valued_now);
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
	if (clone_trace && nwalkthroughs > 0)
		show_heap_texts(&walkthroughs[nwalkthroughs - 1], s);
}

/* The clone is made from id's heap copy, byte for byte: its own heap
 * copy holds the bytes of id's last yield, whose fingerprint it shares.
 * The run stack is not touched: id's bytes are still there if they were. */
void trace_clone(struct schedule *S, int id, int copy)
{
	struct step *s = nsteps < MAX_STEPS ? &steps[nsteps++] : &spare;
	char line[160];
	memset(s, 0, sizeof *s);
	s->id = id;
	s->other = copy;
	s->cloned = 1;
	s->copied_out = coroutine_stack_size(S, copy);
	if (id == on_run_stack)
		s->owned = coroutine_stack_size(S, id);
	if (id >= 0 && id < 2 && copy >= 0 && copy < 2) {
		heap_now[copy] = s->copied_out;
		last_yield[copy] = last_yield[id];
		sums_now[copy] = sums_now[id];
		value_now[copy] = value_now[id];
		valued_now[copy] = valued_now[id];
	}
	memcpy(s->heap, heap_now, sizeof heap_now);
	memcpy(s->copies, last_yield, sizeof last_yield);
	memcpy(s->sums, sums_now, sizeof sums_now);
	memcpy(s->value, value_now, sizeof value_now);
	memcpy(s->valued, valued_now, sizeof valued_now);
	if (nwalkthroughs > 0) {
		walkthroughs[nwalkthroughs - 1].end = nsteps;
		walkthroughs[nwalkthroughs - 1].clones = 1;
	}
	if (html) {
		demo_said(s->said_before, sizeof s->said_before);
		return;
	}
	after_line(s, line, sizeof line);
	printf("  %s\n", line);
	if (nwalkthroughs > 0)
		show_heap_texts(&walkthroughs[nwalkthroughs - 1], s);
}

enum trace_mode trace_start(const char *arg)
{
	if (arg == NULL)
		return TRACE_OFF;
	if (strcmp(arg, "--trace") == 0)
		return TRACE_TEXT;
	if (strcmp(arg, "--trace=trees") == 0)
		return TRACE_TREES;
	if (strcmp(arg, "--trace=clone") == 0) {
		clone_trace = 1;
		return TRACE_CLONE;
	}
	if (strcmp(arg, "--trace=html") == 0) {
		html = 1;
		keep_demo_lines();
		return TRACE_HTML;
	}
	return TRACE_BAD;
}

void trace_end(void)
{
	if (!html)
		return;
	said_after_last_step();
	write_page();
}
