/*
 * The checked build keeps the program's own fault handler (SIGSEGV's; on
 * Windows a vectored exception handler): installed before the first
 * coroutine_open, it still runs for a fault that is not the checked
 * build's (argument "null": a read through NULL), and after the checked
 * build's report for one that is (no argument: main reads a suspended
 * coroutine's local).
 */
#include "stale_pointer.h"

#include <signal.h>
#include <string.h>
#if !defined(_WIN32)
#include <unistd.h>
#endif

static const char ran[] = "the program's own handler ran\n";

#if defined(_WIN32)
static LONG WINAPI own_handler(EXCEPTION_POINTERS *e)
{
	if (e->ExceptionRecord->ExceptionCode != EXCEPTION_ACCESS_VIOLATION)
		return EXCEPTION_CONTINUE_SEARCH;
	fputs(ran, stderr);
	fflush(stderr);
	TerminateProcess(GetCurrentProcess(), 3);
	return EXCEPTION_CONTINUE_SEARCH;
}

static void install_own_handler(void)
{
	SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX);
	AddVectoredExceptionHandler(1, own_handler);
}
#else
static void own_handler(int sig)
{
	(void)sig;
	if (write(2, ran, sizeof ran - 1) < 0)
		_exit(4);
	_exit(3);
}

static void install_own_handler(void)
{
	signal(SIGSEGV, own_handler);
}
#endif

int main(int argc, char **argv)
{
	install_own_handler();
	struct schedule *S = coroutine_open();
	volatile int *local = stale_pointer(S);
	if (argc > 1 && strcmp(argv[1], "null") == 0)
		local = NULL;
	printf("%d\n", *local);
	coroutine_close(S);
	return 0;
}
