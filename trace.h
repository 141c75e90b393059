/*
 * The demo's --trace (trace.cpp): what every switch copied, the frames in
 * each saved slice, and --trace=html, a page that steps through them.
 */
#ifndef TRACE_H
#define TRACE_H

#include "coroutine.h"

/* What main's argument asks for. */
enum trace_mode {
	TRACE_BAD = -1, /* an argument main does not know */
	TRACE_OFF,      /* none: the demo, as the original runs it */
	TRACE_TEXT,     /* --trace: the demo, traced */
	TRACE_TREES,    /* --trace=trees: the second program, traced */
	TRACE_CLONE,    /* --trace=clone: the third program, traced */
	TRACE_HTML      /* --trace=html: all three, as one page */
};

/* Reads main's argument. */
enum trace_mode trace_start(const char *arg);
/* A program starts on S, before it makes its coroutines: a walkthrough. */
void trace_begin(struct schedule *S);
/* Around main's coroutine_resume(S, id); other is the other coroutine. */
void trace_resume(struct schedule *S, int id);
void trace_after_resume(struct schedule *S, int id, int other);
/* A coroutine's local a learner follows (the third program's path), by
 * its address on the run stack: the trace reads it in every slice a
 * yield copies out, at the same place in each heap copy. */
void trace_local(const char *name, const volatile int *address);
/* After main's copy = coroutine_clone(S, id). */
void trace_clone(struct schedule *S, int id, int copy);
/* The second program: coroutine id walks the tree shape, written
 * value(left,right) with - for no child, e.g. 1(-,2): --trace=trees prints
 * it, the page draws it. */
void trace_tree(int id, const char *shape);
/* After the last program: --trace=html writes its page. */
void trace_end(void);

#endif
