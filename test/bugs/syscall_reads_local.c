/*
 * A deliberate bug: main hands write() the pointer to a suspended
 * coroutine's local.  The kernel, not main, reads the bytes: in a checked
 * build the call fails with EFAULT, and nothing stops the program (the
 * program says so, and exits 0: checked_probes holds that).  A checked
 * build under ASan stops it: ASan checks write()'s buffer, and the local
 * is poisoned (make sanitize-checked).  POSIX.
 */
#include "stale_pointer.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	end_at_a_fault();
	struct schedule *S = coroutine_open();
	volatile int *local = stale_pointer(S, 1);
	FILE *file = tmpfile();
	errno = 0;
	if (file != NULL && write(fileno(file), (const void *)local, sizeof *local) < 0)
		printf("write: %s\n", strerror(errno));
	coroutine_close(S);
	return 0;
}
