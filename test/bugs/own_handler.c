/*
 * The checked build keeps the program's own SIGSEGV handler: installed
 * before the first coroutine_open, it still runs for a fault that is not
 * the checked build's (argument "null": a write through NULL), and after
 * the checked build's report for one that is (no argument: main reads a
 * suspended coroutine's local).
 */
#include "stale_pointer.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

static void own_handler(int sig)
{
	static const char line[] = "the program's own handler ran\n";
	(void)sig;
	if (write(2, line, sizeof line - 1) < 0)
		_exit(4);
	_exit(3);
}

int main(int argc, char **argv)
{
	signal(SIGSEGV, own_handler);
	struct schedule *S = coroutine_open();
	volatile int *local = stale_pointer(S);
	if (argc > 1 && strcmp(argv[1], "null") == 0)
		local = NULL;
	printf("%d\n", *local);
	coroutine_close(S);
	return 0;
}
