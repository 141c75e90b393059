/*
 * test_examples.c - the examples and the demo print exactly what their
 * examples/<name>.expected files say, and main --trace reports copies that
 * add up, and the frames of every saved slice; main --trace=clone, a clone
 * that starts as the same bytes and parts at the next yields.
 *
 * The Makefile builds each backend's examples in build/<backend>/examples/
 * and its demo in build/<backend>/main, beside build/<backend>/test_examples:
 * this test finds them through its own argv[0].  The expected files and the
 * scripts are named relative to the source root, where make runs the tests.
 */
#include "support.h"

#include <stdlib.h>

static const char *bin_dir; /* the directory this test was started from */

/* ---- Running a program ------------------------------------------------- */

struct output {
	int status; /* as filled in by waitpid */
	char *out;  /* everything written on stdout, NUL-terminated */
	char *err;  /* and on stderr */
};

/* The whole rest of f, NUL-terminated, in a malloc'd buffer. */
static char *read_rest(FILE *f)
{
	size_t size = 4096, used = 0, n;
	char *buf = malloc(size);
	assert_non_null(buf);
	while ((n = fread(buf + used, 1, size - 1 - used, f)) > 0) {
		used += n;
		if (used == size - 1) {
			size *= 2;
			buf = realloc(buf, size);
			assert_non_null(buf);
		}
	}
	buf[used] = '\0';
	return buf;
}

static char *read_text_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text;
	if (f == NULL)
		fail_msg("cannot open %s (run the test from the source root)", path);
	text = read_rest(f);
	fclose(f);
	return text;
}

/*
 * Runs bin_dir/program with the given arguments (NULL-terminated).  The
 * child writes to temporary files rather than pipes, so that however much
 * it writes it never waits for us.
 */
static struct output run(const char *program, const char *const *args)
{
	char path[4096];
	const char *emulator = getenv("EMULATOR");
	const char *argv[9];
	struct output r;
	FILE *out = tmpfile(), *err = tmpfile();
	pid_t pid;
	size_t i, n = 0;

	assert_true(out != NULL && err != NULL);
	snprintf(path, sizeof path, "%s/%s", bin_dir, program);
	/* A cross-built program runs under the emulator this test runs under. */
	if (emulator != NULL && *emulator != '\0')
		argv[n++] = emulator;
	argv[n++] = path;
	for (i = 0; args[i] != NULL; i++) {
		assert_true(n + 1 < sizeof argv / sizeof argv[0]);
		argv[n++] = args[i];
	}
	argv[n] = NULL;
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		restore_default_signals();
		dup2(fileno(out), STDOUT_FILENO);
		dup2(fileno(err), STDERR_FILENO);
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "cannot run %s\n", argv[0]);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &r.status, 0), pid);
	rewind(out);
	rewind(err);
	r.out = read_rest(out);
	r.err = read_rest(err);
	fclose(out);
	fclose(err);
	return r;
}

static void free_output(struct output *r)
{
	free(r->out);
	free(r->err);
}

/* The file's text; "" when path is NULL. */
static char *expected(const char *path)
{
	if (path == NULL) {
		char *empty = malloc(1);
		assert_non_null(empty);
		*empty = '\0';
		return empty;
	}
	return read_text_file(path);
}

/*
 * Runs program, and checks that it wrote stdout_file's text on stdout and
 * stderr_file's (nothing, when NULL) on stderr, and exited with status.
 */
static void check_run(const char *program, const char *const *args,
		      const char *stdout_file, const char *stderr_file, int status)
{
	struct output r = run(program, args);
	char *out = expected(stdout_file), *err = expected(stderr_file);
	assert_string_equal(r.err, err);
	assert_string_equal(r.out, out);
	assert_true(WIFEXITED(r.status));
	assert_int_equal(WEXITSTATUS(r.status), status);
	free(out);
	free(err);
	free_output(&r);
}

static const char *const no_args[] = { NULL };
static const char *next_line(const char *line);
static const char *const trace_args[] = { "--trace", NULL };

/* ---- The examples ---------------------------------------------------------- */

static void test_game_prints_its_expected_output(void **state)
{
	(void)state;
	check_run("examples/game", no_args, "examples/game.expected", NULL, 0);
}

static void test_generator_prints_its_expected_output(void **state)
{
	(void)state;
	check_run("examples/generator", no_args, "examples/generator.expected", NULL, 0);
}

/* bad.txt stops at its line 3 with an error; the other two run to the end. */
static void test_script_runs_good_scripts_and_reports_the_bad_one(void **state)
{
	static const char *const scripts[] = {
		"examples/scripts/bad.txt", "examples/scripts/bells.txt",
		"examples/scripts/hello.txt", NULL
	};
	(void)state;
	check_run("examples/script", scripts, "examples/script.expected",
		  "examples/script.stderr", 1);
}

/* examples/deep.txt (kept out of examples/scripts/, the demo's set) nests
 * 1000 repeats: it stops with an error at the 101st, and hello.txt runs to
 * its end all the same. */
static void test_script_reports_nesting_too_deep_and_goes_on(void **state)
{
	static const char *const scripts[] = {
		"examples/deep.txt", "examples/scripts/hello.txt", NULL
	};
	(void)state;
	check_run("examples/script", scripts, "examples/script-deep.expected",
		  "examples/script-deep.stderr", 1);
}

/* An entity despawned while it waits: its destructors run, innermost first,
 * the others go on, and the next id is the original's. */
static void test_despawn_prints_its_expected_output(void **state)
{
	(void)state;
	check_run("examples/despawn", no_args, "examples/despawn.expected", NULL, 0);
}

/* Entities despawned while they wait in coroutine_try_yield, by main and
 * by another entity: each gives back what it holds as it returns, before
 * the call that despawned it returns; close tells the last one too. */
static void test_hunt_prints_its_expected_output(void **state)
{
	(void)state;
	check_run("examples/hunt", no_args, "examples/hunt.expected", NULL, 0);
}

/* The late inputs' end is the on-time one's (the example compares them and
 * exits with 1 if they differ), and the rewinds left no coroutine behind. */
static void test_rollback_ends_as_if_every_input_came_on_time(void **state)
{
	(void)state;
	check_run("examples/rollback", no_args, "examples/rollback.expected", NULL, 0);
}

/* ---- The queens, against a plain recursive search ------------------------------ */

#define MAX_QUEENS 12

/* Whether a queen on (row, col) is safe from those on the rows above. */
static int safe(const int *cols, int row, int col)
{
	int r;
	for (r = 0; r < row; r++) {
		if (cols[r] == col || abs(cols[r] - col) == row - r)
			return 0;
	}
	return 1;
}

/* Counts the solutions of rows row .. n-1; the first found, in the order of
 * the columns, goes to first. */
static long count_queens(int *cols, int row, int n, int *first, long found)
{
	int col;
	if (row == n) {
		if (found == 0)
			memcpy(first, cols, (size_t)n * sizeof *cols);
		return found + 1;
	}
	for (col = 0; col < n; col++) {
		if (safe(cols, row, col)) {
			cols[row] = col;
			found = count_queens(cols, row + 1, n, first, found);
		}
	}
	return found;
}

/*
 * For each n, examples/queens n finds as many solutions as the recursive
 * search, and the first it shows is the recursive search's first (both go
 * depth first, the columns in order), each row's queen safe from the others.
 */
static void test_queens_finds_what_a_recursive_search_finds(void **state)
{
	int n;
	(void)state;
	for (n = 1; n <= 9; n++) {
		int cols[MAX_QUEENS], first[MAX_QUEENS], shown[MAX_QUEENS], size, row = 0;
		long expected = count_queens(cols, 0, n, first, 0), solutions;
		char arg[8];
		const char *args[] = { arg, NULL }, *line;
		struct output r;
		snprintf(arg, sizeof arg, "%d", n);
		r = run("examples/queens", args);
		assert_string_equal(r.err, "");
		assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
		assert_int_equal(sscanf(r.out, "%d queens: %ld solution", &size, &solutions), 2);
		assert_int_equal(size, n);
		assert_int_equal(solutions, expected);
		for (line = next_line(r.out); line != NULL; line = next_line(line)) {
			const char *q = strchr(line, 'Q');
			if (strncmp(line, "    ", 4) != 0)
				continue; /* not a row of the board */
			assert_non_null(q);
			assert_in_range(row, 0, n - 1);
			shown[row] = (int)(q - line - 4) / 2;
			assert_true(safe(shown, row, shown[row]));
			row++;
		}
		assert_int_equal(row, expected > 0 ? n : 0);
		if (expected > 0)
			assert_memory_equal(shown, first, (size_t)n * sizeof *first);
		free_output(&r);
	}
}

static void test_queens_prints_its_expected_output(void **state)
{
	(void)state;
	check_run("examples/queens", no_args, "examples/queens.expected", NULL, 0);
}

/* ---- The demo and its trace --------------------------------------------------- */

static void test_demo_prints_the_original_output(void **state)
{
	(void)state;
	check_run("main", no_args, "examples/main.expected", NULL, 0);
}

/* The trace's lines are indented; the demo's are not. */
static char *demo_lines(const char *text)
{
	char *kept = malloc(strlen(text) + 1), *to = kept;
	assert_non_null(kept);
	while (*text != '\0') {
		const char *end = strchr(text, '\n');
		size_t len = end ? (size_t)(end - text + 1) : strlen(text);
		if (*text != ' ') {
			memcpy(to, text, len);
			to += len;
		}
		text += len;
	}
	*to = '\0';
	return kept;
}

/* The demo's --trace reads each yield's slice on the run stack from main,
 * to name its frames: what a checked build (COROUTINE_CHECKED=1) stops. */
static void skip_trace_in_checked_build(void)
{
#if COROUTINE_CHECKED
	skip();
#endif
}

static void test_trace_keeps_the_demo_lines(void **state)
{
	skip_trace_in_checked_build();
	struct output r = run("main", trace_args);
	char *demo = demo_lines(r.out), *original = read_text_file("examples/main.expected");
	(void)state;
	assert_string_equal(demo, original);
	assert_string_equal(r.err, "");
	assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	free(demo);
	free(original);
	free_output(&r);
}

/* The line after this one, or NULL at the end of the text. */
static const char *next_line(const char *line)
{
	const char *newline = strchr(line, '\n');
	return newline != NULL && newline[1] != '\0' ? newline + 1 : NULL;
}

/*
 * Every resume after the first copies back exactly the bytes that the
 * coroutine's last yield copied out, and those are never 0.  Each of the
 * demo's two coroutines yields 5 times and is resumed 5 times after that.
 */
static void test_trace_copies_back_what_the_yield_saved(void **state)
{
	skip_trace_in_checked_build();
	struct output r = run("main", trace_args);
	long saved[2] = { 0, 0 };
	int yields = 0, copies = 0;
	const char *line;
	(void)state;
	for (line = r.out; line != NULL; line = next_line(line)) {
		int id;
		long bytes;
		if (sscanf(line, "  yield  %d: copied %ld bytes", &id, &bytes) == 2) {
			assert_in_range(id, 0, 1);
			assert_true(bytes > 0);
			saved[id] = bytes;
			yields++;
		} else if (sscanf(line, "  resume %d: copy %ld bytes back", &id, &bytes) == 2) {
			assert_in_range(id, 0, 1);
			assert_int_equal(bytes, saved[id]);
			copies++;
		}
	}
	assert_int_equal(yields, 10);
	assert_int_equal(copies, 10);
	free_output(&r);
}

/* Where the demo finds the frames of a slice (trace.cpp says where). */
#if defined(__linux__) && defined(__GLIBC__) && (defined(__x86_64__) || defined(__i386__) || defined(__aarch64__))
#define FRAMES_FOUND 1
#else
#define FRAMES_FOUND 0
#endif

/* Whether name, as the trace prints it, starts with prefix. */
static int named(const char *name, const char *prefix)
{
	return strncmp(name, prefix, strlen(prefix)) == 0;
}

/*
 * After every yield the trace lists the frames of the saved slice, top of
 * the run stack first, ending with the library's entry (run_coroutine, or
 * its ucontext wrapper, or, when run_coroutine jumped to foo, the asm
 * backend's coroutine_start_context), foo (unless it jumped to
 * coroutine_yield: clang does, for the yield that ends its loop, under
 * ASan), coroutine_yield and the save, and their bytes add up to the
 * slice.  foo is in most lists.
 * Where the demo cannot find frames it says so, after every yield.
 */
static void test_trace_names_the_frames_of_every_yield(void **state)
{
	skip_trace_in_checked_build();
	struct output r = run("main", trace_args);
	const char *line;
	long slice = 0, sum = 0;
	int yields = 0, frames = 0, lists = 0, foos = 0;
	char names[8][64];
	(void)state;
	for (line = r.out; line != NULL; line = next_line(line)) {
		int id;
		long bytes;
		char name[64];
		if (sscanf(line, "  yield  %d: copied %ld bytes", &id, &bytes) == 2) {
			slice = bytes;
			sum = 0;
			frames = 0;
			yields++;
		} else if (sscanf(line, " %ld B  %63[^\n]", &bytes, name) == 2) {
			assert_true(bytes >= 0);
			sum += bytes;
			assert_true(frames < 8);
			strcpy(names[frames++], name);
		} else if (frames > 0) {
			/* the list ended: the slice, frame by frame (foo's
			 * last call, after its loop, may be a tail call) */
			int calls_foo = strcmp(names[frames - 3], "foo") == 0;
			assert_int_equal(sum, slice);
			const char *entry;
			assert_true(frames >= 3 + calls_foo);
			assert_true(named(names[frames - 1], "save_"));
			assert_string_equal(names[frames - 2], "coroutine_yield");
			entry = names[frames - 3 - calls_foo];
			assert_true(named(entry, "run_coroutine") || named(entry, "coroutine_start_context"));
			foos += calls_foo;
			frames = 0;
			lists++;
		} else if (named(line, "       (its frames cannot be found on this platform)\n")) {
			assert_false(FRAMES_FOUND);
			lists++;
		}
	}
	assert_int_equal(yields, 10);
	assert_int_equal(lists, 10);
	assert_true(!FRAMES_FOUND || foos >= 8);
	free_output(&r);
}

/* ---- The clone walkthrough (main --trace=clone) -------------------------------- */

static const char *const clone_args[] = { "--trace=clone", NULL };

/* What the trace says of both heap copies after a step: their fingerprints
 * (0: none, or not known where the run stack is not found). */
struct fingerprints {
	unsigned long sum[2];
	int known;
};

static int read_fingerprints(const char *line, struct fingerprints *f)
{
	char text[2][16];
	if (sscanf(line, "       heap copies' bytes (FNV-1a): coroutine 0 %15[^,], coroutine 1 %15[^\n]", text[0],
		   text[1]) != 2)
		return 0;
	f->known = 0;
	for (int id = 0; id < 2; id++) {
		char *end;
		f->sum[id] = strtoul(text[id], &end, 16);
		if (*end != '\0' || end == text[id])
			f->sum[id] = 0;
		else
			f->known = 1;
	}
	return 1;
}

/*
 * main clones coroutine 0 after its first yield: the clone's heap copy is
 * copied from the original's (its bytes, and their fingerprint, the same),
 * the clone's first resume copies back those bytes, and once each has been
 * resumed and has yielded again, their heap copies differ from each other
 * and from the bytes they shared.  The demo's lines are its own: each copy
 * adds its id to the path it prints.
 */
static void test_clone_trace_shows_the_same_bytes_then_each_its_own(void **state)
{
	skip_trace_in_checked_build();
	struct output r = run("main", clone_args);
	const char *line;
	long saved[2] = { 0, 0 };
	int clones = 0, yields_after[2] = { 0, 0 }, parted = 0, resumes_after = 0;
	unsigned long shared = 0;
	struct fingerprints f = { { 0, 0 }, 0 };
	(void)state;
	assert_string_equal(r.err, "");
	assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	char *demo = demo_lines(r.out);
	assert_string_equal(demo, "main start\ncoroutine 0 : 1\ncoroutine 0 : 10\ncoroutine 1 : 11\n"
				  "coroutine 0 : 100\ncoroutine 1 : 111\nmain end\n");
	free(demo);
	for (line = r.out; line != NULL; line = next_line(line)) {
		int id, copy;
		long bytes;
		if (sscanf(line, "  yield  %d: copied %ld bytes", &id, &bytes) == 2) {
			assert_in_range(id, 0, 1);
			saved[id] = bytes;
			yields_after[id] += clones;
		} else if (sscanf(line, "  clone  %d: copied its heap copy, %ld bytes, to coroutine %d's", &id, &bytes,
				  &copy) == 3) {
			assert_int_equal(id, 0);
			assert_int_equal(copy, 1);
			assert_int_equal(bytes, saved[0]);
			saved[1] = bytes;
			clones++;
		} else if (sscanf(line, "  resume %d: copy %ld bytes back", &id, &bytes) == 2) {
			assert_in_range(id, 0, 1);
			assert_int_equal(bytes, saved[id]);
			resumes_after += id == 1;
		} else if (read_fingerprints(line, &f) && f.known) {
			if (clones == 1 && shared == 0) {
				/* the line right after the clone's */
				assert_true(f.sum[0] != 0);
				assert_int_equal(f.sum[1], f.sum[0]);
				shared = f.sum[0];
			} else if (yields_after[0] > 0 && yields_after[1] > 0 && !parted) {
				assert_true(f.sum[0] != f.sum[1]);
				assert_true(f.sum[0] != shared && f.sum[1] != shared);
				parted = 1;
			}
		}
	}
	assert_int_equal(clones, 1);
	assert_true(resumes_after >= 1); /* the clone's bytes copied back */
	/* where the run stack is found, the fingerprints are there */
	assert_int_equal(shared != 0, FRAMES_FOUND);
	assert_int_equal(parted, FRAMES_FOUND);
	free_output(&r);
}

static void test_demo_rejects_unknown_arguments(void **state)
{
	static const char *const args[] = { "--verbose", NULL };
	struct output r = run("main", args);
	(void)state;
	assert_string_equal(r.out, "");
	assert_non_null(strstr(r.err, "usage: "));
	assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 2);
	free_output(&r);
}

int main(int argc, char *argv[])
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_game_prints_its_expected_output),
		cmocka_unit_test(test_generator_prints_its_expected_output),
		cmocka_unit_test(test_script_runs_good_scripts_and_reports_the_bad_one),
		cmocka_unit_test(test_script_reports_nesting_too_deep_and_goes_on),
		cmocka_unit_test(test_despawn_prints_its_expected_output),
		cmocka_unit_test(test_hunt_prints_its_expected_output),
		cmocka_unit_test(test_queens_finds_what_a_recursive_search_finds),
		cmocka_unit_test(test_queens_prints_its_expected_output),
		cmocka_unit_test(test_rollback_ends_as_if_every_input_came_on_time),
		cmocka_unit_test(test_demo_prints_the_original_output),
		cmocka_unit_test(test_trace_keeps_the_demo_lines),
		cmocka_unit_test(test_trace_copies_back_what_the_yield_saved),
		cmocka_unit_test(test_trace_names_the_frames_of_every_yield),
		cmocka_unit_test(test_clone_trace_shows_the_same_bytes_then_each_its_own),
		cmocka_unit_test(test_demo_rejects_unknown_arguments),
	};
	char *slash = strrchr(argv[0], '/');
	(void)argc;
	if (slash != NULL) {
		*slash = '\0';
		bin_dir = argv[0];
	} else {
		bin_dir = ".";
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
