/*
 * The demo's --trace (trace.cpp): what every switch copied, the frames in
 * each saved slice, and --trace=html, a page that steps through them.
 */
#ifndef TRACE_H
#define TRACE_H

#include "coroutine.h"

/* Reads main's argument: 1 for a trace, 0 for none, -1 for a bad one. */
int trace_start(const char *arg);
/* Around main's coroutine_resume(S, id); other is the other coroutine. */
void trace_resume(struct schedule *S, int id);
void trace_after_resume(struct schedule *S, int id, int other);
/* After the demo: --trace=html writes its page. */
void trace_end(void);

#endif
