/*
 * queens.c - backtracking search in direct style: N queens on an N x N
 * board, none attacking another, found by a coroutine that simply asks for
 * the column of each row and gives up when a queen is attacked.
 *
 *     col = choose(S, s, n);   returns one of 0 .. n-1, every one in turn
 *     fail(S, s);              this line of search ends here
 *
 * Only a copying design can give choose(): it yields, and main answers
 * with coroutine_clone, one copy of the waiting search per other
 * alternative.  Each copy goes on from the same point, with its own board,
 * and never learns of the others.  A copy that fails is deleted; one whose
 * function returns has found a solution.
 *
 * The clone rule: a copy shares everything outside its frames, so the
 * frames hold plain values only.  The board is kept in integers (a bit per
 * column), not in an array: AddressSanitizer keeps arrays off the run
 * stack, where coroutine_clone cannot copy them (it refuses, with a line).
 *
 * Usage: queens [N], N from 1 to 12 (8 unless given).
 */
#include "coroutine.h"
#include <stdio.h>
#include <stdlib.h>

#define MAX_N 12 /* a row's column in 4 bits, 12 rows in 48 */

/* What a search and main tell each other; in main's frame, not on the run
 * stack (the shared-stack rule). */
struct search {
	int n;                      /* the board's size */
	int asked;                  /* what the search asked for: ALTERNATIVES of choose, or FAILED */
	int answer;                 /* main's answer to choose: which alternative this copy takes */
	long solutions;             /* found so far */
	unsigned long long first;   /* the first one found: the column of row r in bits 4r .. 4r+3 */
};

#define FAILED 0

/* ---- What a search is written with --------------------------------------- */

/* One of 0 .. n-1; main sees to it that every one is returned, each to a copy. */
static int choose(struct schedule *S, struct search *s, int n)
{
	s->asked = n;
	coroutine_yield(S);
	return s->answer;
}

/* Ends this line of search: main deletes the coroutine, which never comes
 * back from this yield. */
static void fail(struct schedule *S, struct search *s)
{
	s->asked = FAILED;
	coroutine_yield(S);
}

/* ---- The search ------------------------------------------------------------- */

/*
 * A queen per row.  cols holds a bit for each column a queen stands in;
 * up and down a bit for each column of this row that a queen attacks along
 * a diagonal: going down a row, those move one column left and right.
 */
static void place_queens(struct schedule *S, void *ud)
{
	struct search *s = ud;
	unsigned cols = 0, up = 0, down = 0;
	unsigned long long placed = 0;
	int row;
	for (row = 0; row < s->n; row++) {
		int col = choose(S, s, s->n);
		unsigned bit = 1u << col;
		if ((cols | up | down) & bit)
			fail(S, s);
		cols |= bit;
		up = (up | bit) << 1;
		down = (down | bit) >> 1;
		placed |= (unsigned long long)col << 4 * row;
	}
	if (s->solutions++ == 0)
		s->first = placed;
}

/* ---- Main: the answers to choose ----------------------------------------------- */

/* The coroutines waiting for an answer, with the answer each will get:
 * a stack, so that the search goes depth first, alternatives in order. */
struct waiting {
	int id;
	int answer;
};

static void out_of_memory(void)
{
	fprintf(stderr, "queens: out of memory\n");
	exit(1);
}

/*
 * Runs the search to its end; returns the number of copies it made.  A
 * search that asks choose(n) takes alternative 0 itself, and a copy of it
 * is made for each of the others.
 */
static long solve(struct schedule *S, struct search *s)
{
	struct waiting stack[MAX_N * (MAX_N - 1) + 1]; /* at most n-1 copies wait per row, plus one */
	int top = 0, k;
	long copies = 0;
	stack[top].id = coroutine_new(S, place_queens, s);
	stack[top++].answer = 0;
	if (stack[0].id < 0)
		out_of_memory();
	while (top > 0) {
		struct waiting w = stack[--top];
		s->answer = w.answer;
		coroutine_resume(S, w.id);
		if (coroutine_status(S, w.id) == COROUTINE_DEAD)
			continue; /* it returned: a solution */
		if (s->asked == FAILED) {
			coroutine_delete(S, w.id);
			continue;
		}
		/* pushed last to first, so that alternative 0 runs next */
		for (k = s->asked - 1; k >= 1; k--) {
			stack[top].id = coroutine_clone(S, w.id);
			stack[top++].answer = k;
			if (stack[top - 1].id < 0)
				out_of_memory();
			copies++;
		}
		stack[top].id = w.id;
		stack[top++].answer = 0;
	}
	return copies;
}

static void show_board(const struct search *s)
{
	int row, col;
	for (row = 0; row < s->n; row++) {
		int queen = (int)(s->first >> 4 * row & 15);
		printf("   ");
		for (col = 0; col < s->n; col++)
			printf(" %c", col == queen ? 'Q' : '.');
		printf("\n");
	}
}

int main(int argc, char *argv[])
{
	struct search s = { 8, 0, 0, 0, 0 };
	struct schedule *S;
	long copies;
	if (argc > 1)
		s.n = atoi(argv[1]);
	if (argc > 2 || s.n < 1 || s.n > MAX_N) {
		fprintf(stderr, "usage: queens [N], N from 1 to %d\n", MAX_N);
		return 2;
	}
	S = coroutine_open();
	if (S == NULL)
		out_of_memory();
	copies = solve(S, &s);
	printf("%d queens: %ld solution%s (%ld copies of the search made)\n", s.n, s.solutions,
	       s.solutions == 1 ? "" : "s", copies);
	if (s.solutions > 0) {
		printf("the first found:\n");
		show_board(&s);
	}
	coroutine_close(S);
	return 0;
}
