/*
 * checked_copies.c - several copies of the checked library in one process,
 * as an engine has them: its own (linked into this program) and one in
 * each plugin it loads (reload_plugin, built with the library; three
 * files, for three copies at once), hot-reloaded in any order: a copy is
 * loaded and opens a schedule, or closes it and is unloaded (dlclose,
 * FreeLibrary).  On ELF the second plugin's note, which leads its copy to
 * the others, lies in a segment of alignment 8, padded as such segments
 * are (test/support/note_aligned_8.c).  Every order of those steps is played, for two plugins,
 * three plugins (not on Windows, where each copy has a vectored handler of
 * its own, and wine loads slowly), and the program's copy with two
 * plugins.  After each step, a fault that is nobody's but the host's must
 * reach the host's own handler (installed first, as a crash reporter is),
 * through whatever copies are open and through no code that is gone; on
 * POSIX the host's handler must be the process's once every copy has
 * closed, and each open copy must still report a read of its own run
 * stack.
 *
 * A line per order (plain.h): "o2" opens copy 2, "c2" closes it.
 */
#include "coroutine.h"
#include "modules.h"
#include "plain.h"
#include "reload.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if defined(_WIN32)
#define PLUGIN(n) (n == 0 ? "reload_plugin_first.dll" : n == 1 ? "reload_plugin_second.dll" : "reload_plugin_third.dll")
#else
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>
#define PLUGIN(n) (n == 0 ? "reload_plugin_first.so" : n == 1 ? "reload_plugin_second.so" : "reload_plugin_third.so")
#endif

/* ---- The host's own handler ---------------------------------------------------- */

/* The host's page that faults at any touch: its handler makes it readable
 * and counts, and the probe reads on. */
static char *page;
static volatile int reached; /* faults that reached the host's handler */

#if defined(_WIN32)
static LONG WINAPI host_handler(EXCEPTION_POINTERS *e)
{
	const EXCEPTION_RECORD *r = e->ExceptionRecord;
	DWORD was;
	if (r->ExceptionCode != EXCEPTION_ACCESS_VIOLATION || r->NumberParameters < 2
	    || (char *)r->ExceptionInformation[1] != page)
		return EXCEPTION_CONTINUE_SEARCH;
	reached++;
	VirtualProtect(page, 4096, PAGE_READONLY, &was);
	return EXCEPTION_CONTINUE_EXECUTION;
}

/* Last in line: each copy puts its own first. */
static void install_host_handler(void)
{
	SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX);
	page = (char *)VirtualAlloc(NULL, 4096, MEM_RESERVE | MEM_COMMIT, PAGE_NOACCESS);
	AddVectoredExceptionHandler(0, host_handler);
}

/* Windows has no alarm: a hang there is left to the tool running the test. */
static void start_alarm(void)
{
}

static void stop_alarm(void)
{
}

static void forbid_page(void)
{
	DWORD was;
	VirtualProtect(page, 4096, PAGE_NOACCESS, &was);
}

static int host_handler_installed(void)
{
	return 1; /* Windows lists no vectored handlers: the probes tell */
}
#else
static sigjmp_buf back; /* where a probe of a run stack goes on */

static void host_handler(int sig, siginfo_t *info, void *context)
{
	(void)sig, (void)context;
	reached++;
	if (info->si_addr == page)
		mprotect(page, 4096, PROT_READ);
	else
		siglongjmp(back, 1);
}

static void install_host_handler(void)
{
	struct sigaction a;
	memset(&a, 0, sizeof a);
	a.sa_sigaction = host_handler;
	a.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&a.sa_mask);
	sigaction(SIGSEGV, &a, NULL);
	page = (char *)mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

static void start_alarm(void)
{
	alarm(60);
}

static void stop_alarm(void)
{
	alarm(0);
}

static void forbid_page(void)
{
	mprotect(page, 4096, PROT_NONE);
}

static int host_handler_installed(void)
{
	struct sigaction now;
	return sigaction(SIGSEGV, NULL, &now) == 0 && (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == host_handler;
}
#endif

/* A fault that is nobody's but the host's: 1 if its handler took it. */
static int fault_reaches_the_host(void)
{
	int before = reached;
	forbid_page();
	(void)*(volatile char *)page;
	return reached == before + 1;
}

/* ---- The copies ------------------------------------------------------------------- */

/* A copy: the program's (plugin -1) or a plugin's, while open with a
 * schedule whose coroutine handed out its local. */
struct copy {
	int plugin;
	void *module;
	struct coroutine_api api;
	struct schedule *S;
	volatile char *local;
};

static char paths[3][1024];

static void hand_out(struct schedule *S, void *ud)
{
	struct copy *c = (struct copy *)ud;
	volatile char local[16];
	local[0] = 1;
	c->local = local;
	c->api.yield(S);
	local[1] = local[0];
}

static void programs_own(struct coroutine_api *api)
{
	api->open = coroutine_open;
	api->close = coroutine_close;
	api->new_coroutine = coroutine_new;
	api->resume = coroutine_resume;
	api->yield = coroutine_yield;
	api->status = coroutine_status;
}

/* Loads it (a plugin) and opens a schedule: NULL, or what went wrong. */
static const char *open_copy(struct copy *c)
{
	if (c->plugin < 0) {
		programs_own(&c->api);
	} else {
		plugin_start_func start;
		c->module = load_module(paths[c->plugin]);
		if (c->module == NULL)
			return "a plugin did not load";
		if (!find_in_module(c->module, "plugin_start", &start, sizeof start))
			return "a plugin has no plugin_start";
		start(&c->api);
	}
	c->S = c->api.open();
	c->api.resume(c->S, c->api.new_coroutine(c->S, hand_out, c));
	return NULL;
}

static void close_copy(struct copy *c)
{
	c->api.close(c->S);
	if (c->plugin >= 0)
		unload_module(c->module);
}

#if !defined(_WIN32)
/* A read of an open copy's run stack: reported by that copy, naming its
 * schedule, and then the host's handler, through the copies above it. */
static int run_stack_read_is_reported(const struct copy *c)
{
	static char said[4096];
	char schedule[64];
	int fds[2], saved = dup(2), before = reached;
	volatile int faulted = 0;
	ssize_t n;
	if (saved < 0 || pipe(fds) != 0)
		return 0;
	dup2(fds[1], 2);
	close(fds[1]);
	if (sigsetjmp(back, 1) == 0)
		(void)*c->local;
	else
		faulted = 1;
	dup2(saved, 2);
	close(saved);
	n = read(fds[0], said, sizeof said - 1);
	close(fds[0]);
	said[n > 0 ? n : 0] = '\0';
	snprintf(schedule, sizeof schedule, "schedule 0x%llx)", (unsigned long long)(uintptr_t)c->S);
	/* "touched" where the CPU or the emulator does not tell a read from a write */
	return faulted && reached == before + 1
	       && (strstr(said, "main read coroutine 0's stack (top-") != NULL
		   || strstr(said, "main touched coroutine 0's stack (top-") != NULL)
	       && strstr(said, schedule) != NULL;
}
#endif

/* ---- Every order -------------------------------------------------------------------- */

enum { MOST = 3 };

/* An order: each step opens or closes a copy (its number, then 'o'/'c'). */
struct order {
	const char *which;
	int copies;
	int plugin[MOST];
	int step[2 * MOST]; /* copy * 2 + (0 open, 1 close) */
};

static char why[256];

/* Plays an order: NULL if every fault went where it should. */
static const char *play(const struct order *o)
{
	struct copy copy[MOST];
	int s, k;
	for (k = 0; k < o->copies; k++) {
		memset(&copy[k], 0, sizeof copy[k]);
		copy[k].plugin = o->plugin[k];
	}
	for (s = 0; s < 2 * o->copies; s++) {
		struct copy *c = &copy[o->step[s] / 2];
		const char *wrong = NULL;
		if (o->step[s] % 2 == 0)
			wrong = open_copy(c);
		else
			close_copy(c);
		if (wrong != NULL)
			return wrong;
		if (!fault_reaches_the_host()) {
			snprintf(why, sizeof why, "after step %d, a fault did not reach the host's handler", s + 1);
			return why;
		}
#if !defined(_WIN32)
		for (k = 0; k < o->copies; k++) {
			int open = 0, t;
			for (t = 0; t <= s; t++)
				if (o->step[t] / 2 == k)
					open = o->step[t] % 2 == 0;
			if (open && !run_stack_read_is_reported(&copy[k])) {
				snprintf(why, sizeof why, "after step %d, a read of copy %d's run stack was not "
					 "reported, or did not reach the host's handler", s + 1, k + 1);
				return why;
			}
		}
#endif
	}
	return host_handler_installed() ? NULL : "the host's handler is not the process's at the end";
}

/* Every order of the steps of o->copies copies (each opens before it
 * closes), from step s on; opened[k]/closed[k]: done.  Reports each. */
static void every_order(struct order *o, int s, int *opened, int *closed)
{
	int k;
	if (s == 2 * o->copies) {
		char name[128];
		size_t n = (size_t)snprintf(name, sizeof name, "%s: ", o->which);
		for (k = 0; k < s; k++)
			n += (size_t)snprintf(name + n, sizeof name - n, "%s%c%d", k ? " " : "",
					      o->step[k] % 2 ? 'c' : 'o', o->step[k] / 2 + 1);
		start_alarm(); /* a lock kept by a copy: the next open hangs */
		report(name, play(o));
		stop_alarm();
		return;
	}
	for (k = 0; k < o->copies; k++) {
		int *done = opened[k] ? &closed[k] : &opened[k];
		if (closed[k])
			continue;
		*done = 1;
		o->step[s] = 2 * k + (done == &closed[k]);
		every_order(o, s + 1, opened, closed);
		*done = 0;
	}
}

static void every_order_of(const char *which, int copies, const int *plugin)
{
	struct order o;
	int opened[MOST] = { 0 }, closed[MOST] = { 0 };
	o.which = which;
	o.copies = copies;
	memcpy(o.plugin, plugin, sizeof o.plugin);
	every_order(&o, 0, opened, closed);
}

int main(int argc, char **argv)
{
	static const int two_plugins[MOST] = { 0, 1, -1 }, three_plugins[MOST] = { 0, 1, 2 },
			 programs_and_two[MOST] = { -1, 0, 1 };
	int n;
	(void)argc;
	for (n = 0; n < 3; n++)
		beside_program(paths[n], sizeof paths[n], PLUGIN(n), argv[0]);
	install_host_handler();
	report("a fault reaches the host's handler before any copy opens", fault_reaches_the_host() ? NULL : "it did not");
	every_order_of("two plugins", 2, two_plugins);
#if !defined(_WIN32)
	every_order_of("three plugins", 3, three_plugins);
#else
	(void)three_plugins;
#endif
	every_order_of("the program's copy (1) and two plugins", 3, programs_and_two);
	return finish();
}
