/*
 * test_fpu.c - the floating-point rounding mode is part of a coroutine's
 * state: what a coroutine sets with fesetround survives its yields, and
 * does not leak into main or into another coroutine.
 *
 * The rounding mode lives in a control register (MXCSR and the x87 control
 * word on x86_64, FPCR on aarch64) that the ABI makes callee-saved, so a
 * context switch must carry it.  Each check reads the mode back with
 * fegetround and also rounds real divisions: in double (SSE on x86_64) and
 * in long double (the x87 unit on x86_64), so that each register is seen
 * to act, not only to hold a value.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <fenv.h>

#include "coroutine.h"

#define YIELDS 5

/* What a rounding mode does to a few divisions. */
struct rounding {
	double d[2];
	long double ld[2];
};

/* Volatile, so that the divisions happen now, under the current mode,
 * instead of being folded at compile time under the default one. */
static volatile double two = 2.0, three = 3.0;
static volatile long double ltwo = 2.0L, lthree = 3.0L;

/* 2/3 and -2/3 between them round differently in each of the four modes. */
static struct rounding round_now(void)
{
	struct rounding r;
	r.d[0] = two / three;
	r.d[1] = -two / three;
	r.ld[0] = ltwo / lthree;
	r.ld[1] = -ltwo / lthree;
	return r;
}

static int same_rounding(struct rounding a, struct rounding b)
{
	return a.d[0] == b.d[0] && a.d[1] == b.d[1] && a.ld[0] == b.ld[0] && a.ld[1] == b.ld[1];
}

/* What each mode does, measured in main before any coroutine runs. */
static struct rounding rounding_under(int mode)
{
	int saved = fegetround();
	struct rounding r;
	assert_int_equal(fesetround(mode), 0);
	r = round_now();
	assert_int_equal(fesetround(saved), 0);
	return r;
}

/* The state a coroutine reports after each resume. */
struct rounder {
	int mode;               /* the mode it sets before its first yield */
	int seen_mode;          /* fegetround() after its latest resume */
	struct rounding seen;   /* round_now() after its latest resume */
};

static void set_mode_and_yield(struct schedule *S, void *ud)
{
	struct rounder *r = (struct rounder *)ud;
	int i;
	fesetround(r->mode);
	for (i = 0; i < YIELDS; i++) {
		r->seen_mode = fegetround();
		r->seen = round_now();
		coroutine_yield(S);
	}
}

static void assert_rounds_as(int mode, int seen_mode, struct rounding seen)
{
	assert_int_equal(seen_mode, mode);
	assert_true(same_rounding(seen, rounding_under(mode)));
}

/* Without this the other tests could pass on a machine that ignores modes. */
static void test_modes_round_differently(void **state)
{
	static const int mode[] = { FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO };
	size_t i, j;
	(void)state;
	for (i = 0; i < 4; i++)
		for (j = i + 1; j < 4; j++)
			assert_false(same_rounding(rounding_under(mode[i]), rounding_under(mode[j])));
}

static void test_coroutine_mode_survives_yields(void **state)
{
	struct schedule *S = coroutine_open();
	struct rounder r = { FE_UPWARD, -1, { { 0 }, { 0 } } };
	int id = coroutine_new(S, set_mode_and_yield, &r);
	(void)state;
	while (coroutine_status(S, id) != COROUTINE_DEAD) {
		r.seen_mode = -1;
		coroutine_resume(S, id);
		if (coroutine_status(S, id) != COROUTINE_DEAD)
			assert_rounds_as(FE_UPWARD, r.seen_mode, r.seen);
	}
	coroutine_close(S);
}

static void test_coroutine_mode_does_not_leak_into_main(void **state)
{
	struct schedule *S = coroutine_open();
	struct rounder r = { FE_DOWNWARD, -1, { { 0 }, { 0 } } };
	int id = coroutine_new(S, set_mode_and_yield, &r);
	(void)state;
	assert_int_equal(fesetround(FE_TOWARDZERO), 0);
	while (coroutine_status(S, id) != COROUTINE_DEAD) {
		coroutine_resume(S, id);
		assert_rounds_as(FE_TOWARDZERO, fegetround(), round_now());
	}
	assert_int_equal(fesetround(FE_TONEAREST), 0);
	coroutine_close(S);
}

static void test_interleaved_coroutines_keep_their_modes(void **state)
{
	struct schedule *S = coroutine_open();
	struct rounder up = { FE_UPWARD, -1, { { 0 }, { 0 } } };
	struct rounder zero = { FE_TOWARDZERO, -1, { { 0 }, { 0 } } };
	int a = coroutine_new(S, set_mode_and_yield, &up);
	int b = coroutine_new(S, set_mode_and_yield, &zero);
	int i;
	(void)state;
	for (i = 0; i < YIELDS; i++) {
		up.seen_mode = zero.seen_mode = -1;
		coroutine_resume(S, a);
		coroutine_resume(S, b);
		assert_rounds_as(FE_UPWARD, up.seen_mode, up.seen);
		assert_rounds_as(FE_TOWARDZERO, zero.seen_mode, zero.seen);
		assert_rounds_as(FE_TONEAREST, fegetround(), round_now());
	}
	coroutine_close(S);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_modes_round_differently),
		cmocka_unit_test(test_coroutine_mode_survives_yields),
		cmocka_unit_test(test_coroutine_mode_does_not_leak_into_main),
		cmocka_unit_test(test_interleaved_coroutines_keep_their_modes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
