/*
 * test_fpu.c - the floating-point rounding mode is part of a coroutine's
 * state: what a coroutine sets with fesetround survives its yields, and
 * does not leak into main or into another coroutine, and a new coroutine
 * starts with main's.
 *
 * The rounding mode lives in a control register (MXCSR and the x87 control
 * word on x86_64, FPCR on aarch64) that the ABI makes callee-saved, so a
 * context switch must carry it.  Each check reads the mode back with
 * fegetround and also rounds real divisions: in double (SSE on x86_64) and
 * in long double (the x87 unit on x86_64; software quad precision on
 * aarch64, which reads FPCR too), so that each register is seen to act,
 * not only to hold a value.
 *
 * The sticky exception flags (FE_DIVBYZERO, ...) are where the backends
 * differ, as docs/platforms.md says: ucontext switches them with the coroutine, the
 * asm switch leaves them to the thread, shared by main and the coroutines,
 * in both directions, also when the control bits differ and it reloads
 * them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <fenv.h>
#include <float.h>
#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

#include "coroutine.h"

#define YIELDS 5

/* What a rounding mode does to a few divisions. */
#define QUOTIENTS 4
struct rounding {
	double d[QUOTIENTS];
	long double ld[QUOTIENTS];
};

/*
 * The divisions must happen here, under the current mode.  Volatile
 * operands keep them from being folded at compile time under the default
 * mode, and volatile results from being moved across the calls around
 * round_now (fesetround, a switch): without -frounding-math the compiler
 * takes a division for a pure function of its operands.
 */
static volatile double numerator[QUOTIENTS] = { 2.0, -2.0, 5.0, -5.0 };
static volatile double denominator = 3.0;

/*
 * In each format one of 2/3 and 5/3 rounds to nearest by rounding down,
 * the other by rounding up; with their negatives, each of the four modes
 * gives a different set of results.
 */
static struct rounding round_now(void)
{
	struct rounding r;
	int i;
	for (i = 0; i < QUOTIENTS; i++) {
		volatile double q = numerator[i] / denominator;
		volatile long double lq = (long double)numerator[i] / denominator;
		r.d[i] = q;
		r.ld[i] = lq;
	}
	return r;
}

/* The formats in which a and b hold the same results. */
#define DOUBLE 1
#define LONG_DOUBLE 2
static int formats_alike(const struct rounding *a, const struct rounding *b)
{
	int alike = DOUBLE | LONG_DOUBLE, i;
	for (i = 0; i < QUOTIENTS; i++) {
		if (a->d[i] != b->d[i])
			alike &= ~DOUBLE;
		if (a->ld[i] != b->ld[i])
			alike &= ~LONG_DOUBLE;
	}
	return alike;
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
	struct rounding expected = rounding_under(mode);
	assert_int_equal(seen_mode, mode);
	assert_int_equal(formats_alike(&seen, &expected), DOUBLE | LONG_DOUBLE);
}

/*
 * Whether each of the four modes rounds differently in both formats.  Not
 * everywhere: valgrind's simulated CPU, for one, reports the mode but
 * divides to nearest whatever it is.  There the tests below would prove
 * nothing, so they skip (and say so) instead of passing.
 */
static int modes_round_differently(void)
{
	static const int mode[] = { FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO };
	size_t i, j;
	for (i = 0; i < 4; i++) {
		for (j = i + 1; j < 4; j++) {
			struct rounding a = rounding_under(mode[i]);
			struct rounding b = rounding_under(mode[j]);
			if (formats_alike(&a, &b) != 0)
				return 0;
		}
	}
	return 1;
}

static void skip_unless_modes_round_differently(void)
{
	if (!modes_round_differently()) {
		print_message("rounding modes have no effect here; nothing to test\n");
		skip();
	}
}

/* Each test gets a fresh schedule in *state, and main's whole FP
 * environment back after, even from a test that failed halfway. */
static fenv_t mains_env;

static int open_schedule(void **state)
{
	if (fegetenv(&mains_env) != 0)
		return -1;
	*state = coroutine_open();
	return *state == NULL ? -1 : 0;
}

static int close_schedule(void **state)
{
	coroutine_close((struct schedule *)*state);
	return fesetenv(&mains_env);
}

static void test_coroutine_mode_survives_yields(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	struct rounder r = { FE_UPWARD, -1, { { 0 }, { 0 } } };
	int id;
	skip_unless_modes_round_differently();
	id = coroutine_new(S, set_mode_and_yield, &r);
	while (coroutine_status(S, id) != COROUTINE_DEAD) {
		r.seen_mode = -1;
		coroutine_resume(S, id);
		if (coroutine_status(S, id) != COROUTINE_DEAD)
			assert_rounds_as(FE_UPWARD, r.seen_mode, r.seen);
	}
}

static void test_coroutine_mode_does_not_leak_into_main(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	struct rounder r = { FE_DOWNWARD, -1, { { 0 }, { 0 } } };
	int id;
	skip_unless_modes_round_differently();
	id = coroutine_new(S, set_mode_and_yield, &r);
	assert_int_equal(fesetround(FE_TOWARDZERO), 0);
	while (coroutine_status(S, id) != COROUTINE_DEAD) {
		coroutine_resume(S, id);
		assert_rounds_as(FE_TOWARDZERO, fegetround(), round_now());
	}
}

static void test_interleaved_coroutines_keep_their_modes(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	struct rounder up = { FE_UPWARD, -1, { { 0 }, { 0 } } };
	struct rounder zero = { FE_TOWARDZERO, -1, { { 0 }, { 0 } } };
	int a, b, i;
	skip_unless_modes_round_differently();
	a = coroutine_new(S, set_mode_and_yield, &up);
	b = coroutine_new(S, set_mode_and_yield, &zero);
	for (i = 0; i < YIELDS; i++) {
		up.seen_mode = zero.seen_mode = -1;
		coroutine_resume(S, a);
		coroutine_resume(S, b);
		assert_rounds_as(FE_UPWARD, up.seen_mode, up.seen);
		assert_rounds_as(FE_TOWARDZERO, zero.seen_mode, zero.seen);
		assert_rounds_as(FE_TONEAREST, fegetround(), round_now());
	}
}

/*
 * Main's own mode is what it set last, also when it changed it between two
 * resumes: each resume notes main's state anew, not only the first.
 */
static void test_mains_mode_changed_between_resumes_is_its_own_after_the_yield(void **state)
{
	static const int mode[] = { FE_UPWARD, FE_TOWARDZERO, FE_UPWARD, FE_TONEAREST };
	struct schedule *S = (struct schedule *)*state;
	struct rounder down = { FE_DOWNWARD, -1, { { 0 }, { 0 } } };
	size_t i;
	int id;
	skip_unless_modes_round_differently();
	id = coroutine_new(S, set_mode_and_yield, &down);
	for (i = 0; i < sizeof mode / sizeof mode[0]; i++) {
		assert_int_equal(fesetround(mode[i]), 0);
		coroutine_resume(S, id);
		assert_rounds_as(FE_DOWNWARD, down.seen_mode, down.seen);
		assert_rounds_as(mode[i], fegetround(), round_now());
	}
}

/* Yields from a frame too deep for the quick save (its block grows: the
 * slow save moves it), in a mode of its own that changes at every yield. */
#define DEEP_FRAME 4096
static const int deep_modes[] = { FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO };
#define DEEP_YIELDS (sizeof deep_modes / sizeof deep_modes[0])

__attribute__((noinline)) static void yield_deep(struct schedule *S, size_t depth)
{
	char frame[DEEP_FRAME];
	memset(frame, 1, depth);
	/* The array's address escapes: the compiler must keep all of it. */
	__asm__ volatile("" : : "r"(frame) : "memory");
	coroutine_yield(S);
}

static void change_mode_and_yield_deep(struct schedule *S, void *ud)
{
	struct rounder *r = (struct rounder *)ud;
	size_t i;
	for (i = 0; i < DEEP_YIELDS; i++) {
		fesetround(deep_modes[i]);
		yield_deep(S, (i + 1) * DEEP_FRAME / DEEP_YIELDS);
		r->seen_mode = fegetround();
		r->seen = round_now();
	}
}

static void test_coroutine_yielding_deep_keeps_its_mode(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	struct rounder r = { -1, -1, { { 0 }, { 0 } } };
	size_t i;
	int id;
	skip_unless_modes_round_differently();
	id = coroutine_new(S, change_mode_and_yield_deep, &r);
	coroutine_resume(S, id);
	for (i = 0; i < DEEP_YIELDS; i++) {
		assert_rounds_as(FE_TONEAREST, fegetround(), round_now());
		coroutine_resume(S, id);
		assert_rounds_as(deep_modes[i], r.seen_mode, r.seen);
	}
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
}

static void set_mode_and_try_yield(struct schedule *S, void *ud)
{
	struct rounder *r = (struct rounder *)ud;
	fesetround(r->mode);
	assert_int_equal(coroutine_try_yield(S), 0);
	r->seen_mode = fegetround();
	r->seen = round_now();
}

static void test_coroutine_mode_survives_try_yield(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	struct rounder r = { FE_DOWNWARD, -1, { { 0 }, { 0 } } };
	int id;
	skip_unless_modes_round_differently();
	id = coroutine_new(S, set_mode_and_try_yield, &r);
	coroutine_resume(S, id);
	assert_rounds_as(FE_TONEAREST, fegetround(), round_now());
	coroutine_resume(S, id);
	assert_rounds_as(FE_DOWNWARD, r.seen_mode, r.seen);
	assert_rounds_as(FE_TONEAREST, fegetround(), round_now());
}

/* ---- A new coroutine starts with main's state ---------------------------- */

/* Records what it finds at its start, before any switch of its own. */
static void note_mode_at_start(struct schedule *S, void *ud)
{
	struct rounder *r = (struct rounder *)ud;
	(void)S;
	r->seen_mode = fegetround();
	r->seen = round_now();
}

/*
 * Started under each mode in turn: a coroutine that took its mode from
 * anywhere but main at its start (a context left by an earlier coroutine,
 * whose memory the new one may reuse) would round as main does under one
 * mode at most.
 */
static void test_new_coroutine_starts_with_mains_mode(void **state)
{
	static const int mode[] = { FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO, FE_TONEAREST };
	struct schedule *S = (struct schedule *)*state;
	size_t i;
	skip_unless_modes_round_differently();
	for (i = 0; i < sizeof mode / sizeof mode[0]; i++) {
		struct rounder r = { -1, -1, { { 0 }, { 0 } } };
		assert_int_equal(fesetround(mode[i]), 0);
		coroutine_resume(S, coroutine_new(S, note_mode_at_start, &r));
		assert_rounds_as(mode[i], r.seen_mode, r.seen);
	}
}

#if defined(__SSE2__)
/*
 * Flush-to-zero (MXCSR bit 15), which no <fenv.h> function sets: SSE
 * arithmetic then gives 0 where the result would be subnormal.  Set in
 * main, a new coroutine's arithmetic must flush too, and not once main
 * clears it.
 */
static volatile double smallest_normal = DBL_MIN;

static int flushes_to_zero(void)
{
	volatile double half = smallest_normal / 2;
	return half == 0.0;
}

static void note_flush_to_zero(struct schedule *S, void *ud)
{
	(void)S;
	*(int *)ud = flushes_to_zero();
}

/* Whether flush-to-zero acts here (not under valgrind, whose simulated
 * CPU gives subnormals whatever MXCSR says): if not, nothing to test. */
static void skip_unless_flush_to_zero_acts(void)
{
	unsigned int mains = _mm_getcsr();
	int acts;
	_MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
	acts = flushes_to_zero();
	_mm_setcsr(mains);
	if (!acts) {
		print_message("flush-to-zero has no effect here; nothing to test\n");
		skip();
	}
}

static void test_new_coroutine_starts_with_mains_flush_to_zero(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	int on, seen;
	skip_unless_flush_to_zero_acts();
	for (on = 1; on >= 0; on--) {
		_MM_SET_FLUSH_ZERO_MODE(on ? _MM_FLUSH_ZERO_ON : _MM_FLUSH_ZERO_OFF);
		seen = -1;
		coroutine_resume(S, coroutine_new(S, note_flush_to_zero, &seen));
		assert_int_equal(seen, on);
	}
}
#endif

#if defined(__SSE2__)
/* MXCSR's control bits, without the sticky flags, which the asm switch
 * leaves to the thread. */
#define MXCSR_FLAGS 0x3f

static unsigned mxcsr_control(void)
{
	return _mm_getcsr() & ~(unsigned)MXCSR_FLAGS;
}
#endif

#if defined(__x86_64__) || defined(__i386__)
/* ---- The x87 control word alone ------------------------------------------ */

/*
 * fesetround sets MXCSR and the x87 control word together; code that sets
 * the x87 word alone (fldcw, as x87 code and some libraries do) changes it
 * without MXCSR.  The switch must carry it all the same, and leave main's
 * MXCSR as it was: checked right after each resume, before the teardown
 * gives main its whole environment back.
 */
static unsigned short x87_control_word(void)
{
	unsigned short cw;
	__asm__ volatile("fnstcw %0" : "=m"(cw));
	return cw;
}

static void set_x87_control_word(unsigned short cw)
{
	__asm__ volatile("fldcw %0" : : "m"(cw));
}

#define X87_ROUNDING 0x0c00 /* bits 10-11: 11 is toward zero */

struct x87_keeper {
	unsigned short own;  /* the word it sets */
	int changed;         /* resumes after which its word was not its own */
};

static void set_x87_word_and_yield(struct schedule *S, void *ud)
{
	struct x87_keeper *k = (struct x87_keeper *)ud;
	int i;
	set_x87_control_word(k->own);
	for (i = 0; i < YIELDS; i++) {
		coroutine_yield(S);
		k->changed += x87_control_word() != k->own;
	}
}

static void test_x87_control_word_set_alone_stays_with_its_coroutine(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	unsigned short mains = x87_control_word();
#if defined(__SSE2__)
	unsigned mains_mxcsr = mxcsr_control();
#endif
	struct x87_keeper k;
	int id;
	k.own = (unsigned short)(mains | X87_ROUNDING);
	k.changed = 0;
	assert_int_not_equal(k.own, mains);
	id = coroutine_new(S, set_x87_word_and_yield, &k);
	while (coroutine_status(S, id) != COROUTINE_DEAD) {
		coroutine_resume(S, id);
		assert_int_equal(x87_control_word(), mains);
#if defined(__SSE2__)
		assert_int_equal(mxcsr_control(), mains_mxcsr);
#endif
	}
	assert_int_equal(k.changed, 0);
}
#endif

#if defined(__SSE2__)
/* ---- MXCSR's control bits alone ------------------------------------------ */

/*
 * The other way round: SSE code may set MXCSR alone (_mm_setcsr), and
 * leave the x87 control word as it was.
 */
#define MXCSR_ROUNDING 0x6000 /* bits 13-14: 11 is toward zero */

struct mxcsr_keeper {
	unsigned own;  /* the control bits it sets */
	int changed;   /* resumes after which its bits were not its own */
};

static void set_mxcsr_and_yield(struct schedule *S, void *ud)
{
	struct mxcsr_keeper *k = (struct mxcsr_keeper *)ud;
	int i;
	_mm_setcsr(k->own);
	for (i = 0; i < YIELDS; i++) {
		coroutine_yield(S);
		k->changed += mxcsr_control() != k->own;
	}
}

static void test_mxcsr_control_set_alone_stays_with_its_coroutine(void **state)
{
	struct schedule *S = (struct schedule *)*state;
	unsigned mains = mxcsr_control();
#if defined(__x86_64__) || defined(__i386__)
	unsigned short mains_x87 = x87_control_word();
#endif
	struct mxcsr_keeper k;
	int id;
	k.own = mains | MXCSR_ROUNDING;
	k.changed = 0;
	assert_int_not_equal(k.own, mains);
	id = coroutine_new(S, set_mxcsr_and_yield, &k);
	while (coroutine_status(S, id) != COROUTINE_DEAD) {
		coroutine_resume(S, id);
		assert_int_equal(mxcsr_control(), mains);
#if defined(__x86_64__) || defined(__i386__)
		assert_int_equal(x87_control_word(), mains_x87);
#endif
	}
	assert_int_equal(k.changed, 0);
}
#endif

/* ---- The sticky exception flags ---------------------------------------- */

static volatile double zero = 0.0;

static void divide_by_zero(void)
{
	volatile double q = 1.0 / zero;
	(void)q;
}

/* Whether a division by zero raises FE_DIVBYZERO here (not under valgrind,
 * whose simulated CPU keeps no sticky flags): if not, nothing to test. */
static void skip_unless_division_by_zero_raises_its_flag(void)
{
	int raised;
	feclearexcept(FE_ALL_EXCEPT);
	divide_by_zero();
	raised = fetestexcept(FE_DIVBYZERO) != 0;
	feclearexcept(FE_ALL_EXCEPT);
	if (!raised) {
		print_message("no sticky flags here; nothing to test\n");
		skip();
	}
}

/* Divides by zero under another rounding mode than main's, so that the
 * asm switch does reload the control register on the way back. */
static void raise_divbyzero_and_yield(struct schedule *S, void *ud)
{
	(void)ud;
	fesetround(FE_UPWARD);
	divide_by_zero();
	coroutine_yield(S);
}

/* Whether FE_DIVBYZERO is set in main after a coroutine raised it. */
static int coroutines_flag_seen_in_main(struct schedule *S)
{
	int id = coroutine_new(S, raise_divbyzero_and_yield, NULL);
	feclearexcept(FE_ALL_EXCEPT);
	coroutine_resume(S, id);
	return fetestexcept(FE_DIVBYZERO) != 0;
}

/* Rounds its own way and clears the flags before its yield, then reports
 * whether FE_DIVBYZERO is set when it is resumed. */
static void clear_flags_and_yield(struct schedule *S, void *ud)
{
	int *seen = (int *)ud;
	fesetround(FE_UPWARD);
	feclearexcept(FE_ALL_EXCEPT);
	coroutine_yield(S);
	*seen = fetestexcept(FE_DIVBYZERO) != 0;
}

/*
 * Whether FE_DIVBYZERO, raised in main while a coroutine with its own
 * rounding mode (and no flag) was suspended, is set in that coroutine when
 * it is resumed.  The asm switch then loads the coroutine's control bits
 * and, as the flags differ, must keep main's flags.
 */
static int mains_flag_seen_in_coroutine(struct schedule *S)
{
	int seen = -1;
	int id = coroutine_new(S, clear_flags_and_yield, &seen);
	coroutine_resume(S, id);
	feclearexcept(FE_ALL_EXCEPT);
	divide_by_zero();
	coroutine_resume(S, id);
	assert_int_equal(coroutine_status(S, id), COROUTINE_DEAD);
	return seen;
}

/* Returns, its own rounding mode set and a flag raised: what main sees
 * when a coroutine finishes (main's mode, in every backend, is tested
 * first). */
static void raise_divbyzero_and_return(struct schedule *S, void *ud)
{
	(void)S, (void)ud;
	fesetround(FE_UPWARD);
	divide_by_zero();
}

static int finishing_coroutines_flag_seen_in_main(struct schedule *S)
{
	feclearexcept(FE_ALL_EXCEPT);
	coroutine_resume(S, coroutine_new(S, raise_divbyzero_and_return, NULL));
	assert_int_equal(fegetround(), FE_TONEAREST);
	return fetestexcept(FE_DIVBYZERO) != 0;
}

#if COROUTINE_ASM
static void test_sticky_flags_stay_with_the_thread(void **state)
{
	skip_unless_division_by_zero_raises_its_flag();
	assert_true(coroutines_flag_seen_in_main((struct schedule *)*state));
}

static void test_mains_sticky_flags_reach_a_coroutine_with_its_own_mode(void **state)
{
	skip_unless_division_by_zero_raises_its_flag();
	assert_true(mains_flag_seen_in_coroutine((struct schedule *)*state));
}

static void test_finishing_coroutines_sticky_flags_stay_with_the_thread(void **state)
{
	skip_unless_division_by_zero_raises_its_flag();
	assert_true(finishing_coroutines_flag_seen_in_main((struct schedule *)*state));
}
#else
static void test_sticky_flags_switch_with_the_coroutine(void **state)
{
	skip_unless_division_by_zero_raises_its_flag();
	assert_false(coroutines_flag_seen_in_main((struct schedule *)*state));
}

static void test_mains_sticky_flags_stay_out_of_a_coroutine(void **state)
{
	skip_unless_division_by_zero_raises_its_flag();
	assert_false(mains_flag_seen_in_coroutine((struct schedule *)*state));
}

static void test_finishing_coroutines_sticky_flags_stay_with_it(void **state)
{
	skip_unless_division_by_zero_raises_its_flag();
	assert_false(finishing_coroutines_flag_seen_in_main((struct schedule *)*state));
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_coroutine_mode_survives_yields,
						open_schedule, close_schedule),
		cmocka_unit_test_setup_teardown(test_coroutine_mode_does_not_leak_into_main,
						open_schedule, close_schedule),
		cmocka_unit_test_setup_teardown(test_interleaved_coroutines_keep_their_modes,
						open_schedule, close_schedule),
		cmocka_unit_test_setup_teardown(test_mains_mode_changed_between_resumes_is_its_own_after_the_yield,
						open_schedule, close_schedule),
		cmocka_unit_test_setup_teardown(test_coroutine_yielding_deep_keeps_its_mode,
						open_schedule, close_schedule),
		cmocka_unit_test_setup_teardown(test_coroutine_mode_survives_try_yield,
						open_schedule, close_schedule),
		cmocka_unit_test_setup_teardown(test_new_coroutine_starts_with_mains_mode,
						open_schedule, close_schedule),
#if defined(__SSE2__)
		cmocka_unit_test_setup_teardown(test_new_coroutine_starts_with_mains_flush_to_zero,
						open_schedule, close_schedule),
#endif
#if defined(__x86_64__) || defined(__i386__)
		cmocka_unit_test_setup_teardown(test_x87_control_word_set_alone_stays_with_its_coroutine,
						open_schedule, close_schedule),
#endif
#if defined(__SSE2__)
		cmocka_unit_test_setup_teardown(test_mxcsr_control_set_alone_stays_with_its_coroutine,
						open_schedule, close_schedule),
#endif
#if COROUTINE_ASM
		cmocka_unit_test_setup_teardown(test_sticky_flags_stay_with_the_thread,
						open_schedule, close_schedule),
		cmocka_unit_test_setup_teardown(test_mains_sticky_flags_reach_a_coroutine_with_its_own_mode,
						open_schedule, close_schedule),
		cmocka_unit_test_setup_teardown(test_finishing_coroutines_sticky_flags_stay_with_the_thread,
						open_schedule, close_schedule),
#else
		cmocka_unit_test_setup_teardown(test_sticky_flags_switch_with_the_coroutine,
						open_schedule, close_schedule),
		cmocka_unit_test_setup_teardown(test_mains_sticky_flags_stay_out_of_a_coroutine,
						open_schedule, close_schedule),
		cmocka_unit_test_setup_teardown(test_finishing_coroutines_sticky_flags_stay_with_it,
						open_schedule, close_schedule),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
