/*
 * script.cpp - a tiny script engine: every script runs in a coroutine of
 * its own, and the host interleaves them.
 *
 *     script FILE...
 *
 * The language, one command per line ('#' starts a comment line):
 *
 *     print TEXT      prints TEXT, with $NAME replaced by NAME's value
 *     wait N          gives the other scripts N ticks
 *     set NAME N      NAME = N
 *     add NAME N      NAME = NAME + N
 *     repeat N        runs the lines up to the matching end N times
 *     end
 *
 * The interpreter is an ordinary recursive one that reads the script line
 * by line; `wait` just yields to the host in the middle of it, however
 * deeply nested in repeats it is.  No state machine, no saved "program
 * counter": the coroutine's stack is the interpreter's state.
 *
 * A script with an error stops at the faulty line with a message naming
 * file and line; the others keep running.  Repeats nested more than
 * MAX_NESTING deep are such an error: each level is a few frames of the
 * recursive interpreter on the run stack, which is finite (1 MiB).  The exit status is 1 if any
 * script failed or could not be read.
 */
#include "coroutine.h"
#include <stdio.h>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

struct script {
	std::string path;
	std::string name;                /* the file name, for output */
	std::vector<std::string> lines;
	std::map<std::string, long> vars;
	int wake;                        /* the tick it waits for */
	int nesting;                     /* repeats entered and not left */
	std::string error;               /* "path:line: what", if it failed */
};

static int now; /* the host's tick */

/* Each level costs about 1 KiB of run stack (run_repeat, run_lines and
 * run_line with its istringstream), several under ASan: 100 levels stay
 * far below the 1 MiB run stack, 1000 would not. */
static const int MAX_NESTING = 100;

/* ---- The interpreter (runs inside the script's coroutine) --------------- */

static bool fail(script *sc, size_t line, const std::string &what)
{
	sc->error = sc->path + ":" + std::to_string(line + 1) + ": " + what;
	return false;
}

static bool read_number(std::istringstream &words, long *n)
{
	std::string rest;
	return bool(words >> *n) && !(words >> rest);
}

/* TEXT with every $NAME replaced by the variable's value. */
static bool expand(script *sc, size_t line, const std::string &text, std::string *out)
{
	size_t at = 0, dollar;
	while ((dollar = text.find('$', at)) != std::string::npos) {
		size_t end = text.find_first_not_of("abcdefghijklmnopqrstuvwxyz_", dollar + 1);
		std::string name = text.substr(dollar + 1, end - dollar - 1);
		if (sc->vars.count(name) == 0)
			return fail(sc, line, "unknown variable '" + name + "'");
		*out += text.substr(at, dollar - at) + std::to_string(sc->vars[name]);
		at = end == std::string::npos ? text.size() : end;
	}
	*out += text.substr(at);
	return true;
}

/* The line of the end that closes the repeat on line `repeat`, or 0. */
static size_t matching_end(const script *sc, size_t repeat)
{
	int depth = 0;
	for (size_t i = repeat + 1; i < sc->lines.size(); i++) {
		std::istringstream words(sc->lines[i]);
		std::string command;
		words >> command;
		if (command == "repeat")
			depth++;
		else if (command == "end" && depth-- == 0)
			return i;
	}
	return 0;
}

static bool run_lines(struct schedule *S, script *sc, size_t first, size_t last);

static bool run_repeat(struct schedule *S, script *sc, size_t line, std::istringstream &words, size_t *next)
{
	long times;
	if (!read_number(words, &times) || times < 0)
		return fail(sc, line, "repeat needs a count");
	size_t end = matching_end(sc, line);
	if (end == 0)
		return fail(sc, line, "'repeat' without 'end'");
	if (sc->nesting == MAX_NESTING)
		return fail(sc, line, "nesting too deep");
	sc->nesting++;
	for (long i = 0; i < times; i++) {
		if (!run_lines(S, sc, line + 1, end))
			return false;
	}
	sc->nesting--;
	*next = end + 1;
	return true;
}

/*
 * Runs one line and sets *next to the line to run after it.  The locals
 * here (std::string, std::istringstream) may hold pointers into themselves;
 * they survive a yield because resume puts their bytes back at the same
 * addresses.
 */
static bool run_line(struct schedule *S, script *sc, size_t line, size_t *next)
{
	std::istringstream words(sc->lines[line]);
	std::string command, name;
	long n;
	*next = line + 1;
	if (!(words >> command) || command[0] == '#')
		return true;
	if (command == "print") {
		std::string text, out;
		std::getline(words >> std::ws, text);
		if (!expand(sc, line, text, &out))
			return false;
		printf("[%3d] %s: %s\n", now, sc->name.c_str(), out.c_str());
	} else if (command == "wait") {
		if (!read_number(words, &n) || n < 0)
			return fail(sc, line, "wait needs a number of ticks");
		sc->wake = now + (int)n;
		coroutine_yield(S);
	} else if (command == "set" || command == "add") {
		if (!(words >> name) || !read_number(words, &n))
			return fail(sc, line, command + " needs a name and a number");
		sc->vars[name] = (command == "add" ? sc->vars[name] : 0) + n;
	} else if (command == "repeat") {
		return run_repeat(S, sc, line, words, next);
	} else if (command == "end") {
		return fail(sc, line, "'end' without 'repeat'");
	} else {
		return fail(sc, line, "unknown command '" + command + "'");
	}
	return true;
}

/* Runs lines [first, last); false once a line has failed. */
static bool run_lines(struct schedule *S, script *sc, size_t first, size_t last)
{
	size_t line = first;
	while (line < last) {
		if (!run_line(S, sc, line, &line))
			return false;
	}
	return true;
}

static void run_script(struct schedule *S, void *ud)
{
	script *sc = (script *)ud;
	run_lines(S, sc, 0, sc->lines.size());
}

/* ---- The host ----------------------------------------------------------------- */

static bool load(script *sc, const char *path)
{
	std::ifstream file(path);
	std::string line;
	if (!file)
		return false;
	while (std::getline(file, line))
		sc->lines.push_back(line);
	sc->path = path;
	sc->name = sc->path.substr(sc->path.find_last_of('/') + 1);
	sc->wake = 0;
	sc->nesting = 0;
	return true;
}

/* Resumes the scripts whose wait is over; returns how many failed. */
static int play_tick(struct schedule *S, std::vector<script> &scripts, std::vector<int> &ids)
{
	int failed = 0;
	for (size_t i = 0; i < scripts.size(); i++) {
		if (ids[i] < 0 || scripts[i].wake > now)
			continue;
		coroutine_resume(S, ids[i]);
		if (coroutine_status(S, ids[i]) != COROUTINE_DEAD)
			continue;
		ids[i] = -1;
		if (scripts[i].error.empty()) {
			printf("[%3d] host: %s finished\n", now, scripts[i].name.c_str());
		} else {
			fprintf(stderr, "%s\n", scripts[i].error.c_str());
			printf("[%3d] host: %s stopped by an error\n", now, scripts[i].name.c_str());
			failed++;
		}
	}
	return failed;
}

static bool any_running(const std::vector<int> &ids)
{
	for (int id : ids) {
		if (id >= 0)
			return true;
	}
	return false;
}

int main(int argc, char *argv[])
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE...\n", argv[0]);
		return 2;
	}
	struct schedule *S = coroutine_open();
	/* Sized once: the coroutines hold pointers to the elements. */
	std::vector<script> scripts(argc - 1);
	std::vector<int> ids(scripts.size(), -1);
	int failed = 0;

	for (size_t i = 0; i < scripts.size(); i++) {
		if (load(&scripts[i], argv[i + 1])) {
			ids[i] = coroutine_new(S, run_script, &scripts[i]);
		} else {
			fprintf(stderr, "%s: cannot open the file\n", argv[i + 1]);
			failed++;
		}
	}
	for (now = 0; any_running(ids); now++)
		failed += play_tick(S, scripts, ids);
	coroutine_close(S);
	return failed > 0;
}
