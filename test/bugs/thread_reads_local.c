/*
 * A deliberate bug that the checked build (COROUTINE_CHECKED=1) must stop
 * on any thread: another thread than the schedule's reads a suspended
 * coroutine's local through the pointer the coroutine handed main.
 */
#include "stale_pointer.h"

#if defined(_WIN32)
static DWORD WINAPI read_local(void *local)
{
	printf("%d\n", *(volatile int *)local);
	return 0;
}

static void on_another_thread(volatile int *local)
{
	HANDLE thread = CreateThread(NULL, 0, read_local, (void *)local, 0, NULL);
	WaitForSingleObject(thread, INFINITE);
	CloseHandle(thread);
}
#else
#include <pthread.h>

static void *read_local(void *local)
{
	printf("%d\n", *(volatile int *)local);
	return NULL;
}

static void on_another_thread(volatile int *local)
{
	pthread_t thread;
	pthread_create(&thread, NULL, read_local, (void *)local);
	pthread_join(thread, NULL);
}
#endif

int main(void)
{
	end_at_a_fault();
	struct schedule *S = coroutine_open();
	on_another_thread(stale_pointer(S, 1));
	coroutine_close(S);
	return 0;
}
