/*
 * unloadable_runtime.c - a C++ runtime as the library sees one: a module
 * named libc++abi.so.1 (its soname) whose __cxa_get_globals gives each
 * thread's exception state.  Debian's libstdc++ and libc++abi are marked
 * NODELETE, so they never leave a process; this one does, when
 * test_late_runtime unloads it, which shows whether the library lets a
 * runtime go and stops calling it once it is gone.
 */
struct eh_globals {
	void *caught_exceptions;
	unsigned int uncaught_exceptions;
};

static __thread struct eh_globals globals;
static int asked;

__attribute__((visibility("default"))) struct eh_globals *__cxa_get_globals(void)
{
	asked++;
	return &globals;
}

/* How many times the library asked for a thread's state. */
__attribute__((visibility("default"))) int times_asked(void)
{
	return asked;
}
