/*
 * A deliberate bug that the checked build (COROUTINE_CHECKED=1) must stop
 * on any thread, naming it as another thread: another thread than the
 * schedule's reads a suspended coroutine's local through the pointer the
 * coroutine handed main.  Given "numbered", the thread has used the
 * library before (a schedule of its own, opened and closed), and it is
 * started by a coroutine of a second schedule, which runs on main's thread
 * while the thread reads: the line must not name that coroutine.
 */
#include "stale_pointer.h"

#include <string.h>

struct reader {
	volatile int *local;
	int numbered;
};

static void read_local(struct reader *r)
{
	if (r->numbered)
		coroutine_close(coroutine_open());
	printf("%d\n", *r->local);
}

#if defined(_WIN32)
static DWORD WINAPI read_local_thread(void *r)
{
	read_local((struct reader *)r);
	return 0;
}

static void on_another_thread(struct reader *r)
{
	HANDLE thread = CreateThread(NULL, 0, read_local_thread, r, 0, NULL);
	WaitForSingleObject(thread, INFINITE);
	CloseHandle(thread);
}
#else
#include <pthread.h>

static void *read_local_thread(void *r)
{
	read_local((struct reader *)r);
	return NULL;
}

static void on_another_thread(struct reader *r)
{
	pthread_t thread;
	pthread_create(&thread, NULL, read_local_thread, r);
	pthread_join(thread, NULL);
}
#endif

static void start_reader(struct schedule *T, void *r)
{
	(void)T;
	on_another_thread((struct reader *)r);
}

int main(int argc, char **argv)
{
	struct reader r = { NULL, argc > 1 && strcmp(argv[1], "numbered") == 0 };
	end_at_a_fault();
	struct schedule *S = coroutine_open();
	r.local = stale_pointer_for(S, 1, "another thread");
	if (r.numbered) {
		struct schedule *T = coroutine_open();
		coroutine_resume(T, coroutine_new(T, start_reader, &r));
		coroutine_close(T);
	} else {
		on_another_thread(&r);
	}
	coroutine_close(S);
	return 0;
}
