/*
 * The checked build keeps the program's own fault handler (SIGSEGV's; on
 * Windows a vectored exception handler): installed before the first
 * coroutine_open, it still runs for a fault that is not the checked
 * build's (argument "null": a read through NULL), and after the checked
 * build's report for one that is (no argument: main reads a suspended
 * coroutine's local).  And once the last schedule is closed, the checked
 * build's handler is gone and the program's is back in its place
 * (argument "closed": then a read through NULL).
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

/* Whether the program's own handler is SIGSEGV's again (on Windows, whose
 * handlers cannot be listed, only the fault after tells). */
static int own_handler_is_back(void)
{
#if defined(_WIN32)
	return 1;
#else
	struct sigaction now;
	return sigaction(SIGSEGV, NULL, &now) == 0 && !(now.sa_flags & SA_SIGINFO) && now.sa_handler == own_handler;
#endif
}

int main(int argc, char **argv)
{
	install_own_handler();
	struct schedule *S = coroutine_open();
	volatile int *local = stale_pointer(S, 1);
	if (argc > 1 && strcmp(argv[1], "null") == 0)
		local = NULL;
	if (argc > 1 && strcmp(argv[1], "closed") == 0) {
		coroutine_close(S);
		if (!own_handler_is_back()) {
			fputs("the checked build's handler outlived the last coroutine_close\n", stderr);
			return 1;
		}
		local = NULL;
	}
	printf("%d\n", *local);
	coroutine_close(S);
	return 0;
}
