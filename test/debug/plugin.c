/* plugin.c - a plugin with its own copy of the library, for two_copies.c. */
#include "coroutine.h"

struct schedule *plugin_schedule;

static void plugin_waiter(struct schedule *S, void *ud)
{
	volatile int plugin_local = *(int *)ud;
	coroutine_yield(S);
	*(int *)ud = plugin_local + 1;
}

void plugin_start(int *value)
{
	plugin_schedule = coroutine_open();
	coroutine_resume(plugin_schedule, coroutine_new(plugin_schedule, plugin_waiter, value));
}

void plugin_finish(void)
{
	coroutine_resume(plugin_schedule, 0);
	coroutine_close(plugin_schedule);
}
