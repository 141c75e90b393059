/*
 * gate.h - a one-shot gate between two threads: one waits at it until the
 * other opens it.  An event on Windows, a semaphore elsewhere: the wait
 * sleeps, and what the opener wrote before it opened is seen after.
 */
#ifndef TEST_GATE_H
#define TEST_GATE_H

#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
typedef HANDLE gate;

/* 0 when it could not be made. */
static inline int make_gate(gate *g)
{
	*g = CreateEventA(NULL, TRUE, FALSE, NULL);
	return *g != NULL;
}

static inline void open_gate(gate *g)
{
	SetEvent(*g);
}

static inline void wait_at_gate(gate *g)
{
	WaitForSingleObject(*g, INFINITE);
}

static inline void remove_gate(gate *g)
{
	CloseHandle(*g);
}
#else
#include <semaphore.h>
typedef sem_t gate;

/* 0 when it could not be made. */
static inline int make_gate(gate *g)
{
	return sem_init(g, 0, 0) == 0;
}

static inline void open_gate(gate *g)
{
	sem_post(g);
}

static inline void wait_at_gate(gate *g)
{
	while (sem_wait(g) != 0)
		; /* interrupted by a signal */
}

static inline void remove_gate(gate *g)
{
	sem_destroy(g);
}
#endif

#endif
