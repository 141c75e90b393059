/* two_copies.c - two copies of the library in one process (the program's
 * and a plugin's, test/debug/plugin.c), each with a coroutine waiting when
 * stop_here is called: the debugger's commands must find both. */
#include "coroutine.h"
#include <dlfcn.h>
#include <stdio.h>

struct schedule *host_schedule;

__attribute__((noinline)) void stop_here(void)
{
	__asm__ volatile("" ::: "memory");
}

static void host_waiter(struct schedule *S, void *ud)
{
	volatile int host_local = *(int *)ud;
	coroutine_yield(S);
	*(int *)ud = host_local + 1;
}

int main(int argc, char **argv)
{
	int mine = 7, theirs = 40;
	void *plugin = dlopen(argc > 1 ? argv[1] : "./plugin.so", RTLD_NOW | RTLD_LOCAL);
	if (plugin == NULL) {
		fprintf(stderr, "two_copies: %s\n", dlerror());
		return 1;
	}
	void (*plugin_start)(int *), (*plugin_finish)(void);
	/* POSIX's way from dlsym's object pointer to a function pointer (ISO C has none) */
	*(void **)&plugin_start = dlsym(plugin, "plugin_start");
	*(void **)&plugin_finish = dlsym(plugin, "plugin_finish");
	plugin_start(&theirs);
	host_schedule = coroutine_open();
	coroutine_resume(host_schedule, coroutine_new(host_schedule, host_waiter, &mine));
	stop_here();
	coroutine_resume(host_schedule, 0);
	coroutine_close(host_schedule);
	plugin_finish();
	printf("host %d, plugin %d\n", mine, theirs);
	return 0;
}
