/*
 * child.h - what the plain test programs (driver.c) need to check that
 * misuse stops the program, and that schedules move between threads, on
 * every platform, CMocka or not:
 *
 * - struct child_case: a program's table of the cases that must end their
 *   process (abort or fault).  run_case() and child_aborts_with() run one
 *   of them in a child, by its function, and tell how the child ended
 *   (exited, aborted, faulted) and what it wrote on stderr.
 * - run_child(): the child, which runs the case by its name with
 *   run_named_case().  On POSIX it is a fork; on Windows, which has no
 *   fork, the program itself run again as "PROGRAM --child NAME", whose
 *   main must hand NAME to run_named_case().  A case that comes back
 *   exits with a code of its own, CHILD_CASE_RETURNED.
 * - start_thread(), join_thread(), run_thread(): functions on new threads.
 *
 * The C parts of support.h that have nothing to do with CMocka (reading a
 * child's stderr without the lines that tools running it add) live here.
 */
#ifndef TEST_CHILD_H
#define TEST_CHILD_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(_WIN32)
#include <windows.h>
#else
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

/* ---- What a child wrote, without what the tools running it wrote --------- */

/*
 * Tools that run the suite write lines of their own on the child's stderr:
 * qemu-user when the guest dies of a signal ("qemu: uncaught target signal
 * 6 (Aborted) - core dumped"), ASan at the first swapcontext ("==123==
 * WARNING: ASan doesn't fully support makecontext/swapcontext ...").
 * They are not the child's, so they are taken out.
 */
static inline int is_tool_report(const char *line)
{
	static const char qemu[] = "qemu: uncaught target signal ";
	static const char asan[] = "WARNING: ASan doesn't fully support makecontext/swapcontext";
	if (strncmp(line, qemu, sizeof qemu - 1) == 0)
		return 1;
	if (strncmp(line, "==", 2) != 0)
		return 0;
	line += 2 + strspn(line + 2, "0123456789"); /* past ASan's "==pid" */
	return strncmp(line, "==", 2) == 0 && strncmp(line + 2, asan, sizeof asan - 1) == 0;
}

static inline void drop_tool_reports(char *err)
{
	char *line = err, *kept = err;
	while (*line != '\0') {
		char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) + 1 : strlen(line);
		if (!is_tool_report(line)) {
			memmove(kept, line, len);
			kept += len;
		}
		line += len;
	}
	*kept = '\0';
}

#if !defined(_WIN32)
static inline void read_all(int fd, char *buf, size_t size)
{
	size_t used = 0;
	ssize_t n;
	while ((n = read(fd, buf + used, size - 1 - used)) > 0)
		used += (size_t)n;
	buf[used] = '\0';
}
#endif

/* ---- How a child ended, and what it wrote ------------------------------------ */

enum child_end {
	CHILD_EXITED,  /* status is its exit status */
	CHILD_ABORTED, /* abort(): SIGABRT, or exit code 3 on Windows */
	CHILD_FAULTED, /* a bad memory access: SIGSEGV or SIGBUS, or an access violation */
	CHILD_OTHER,   /* anything else (status: the signal or the exit code) */
	CHILD_LOST     /* could not be run */
};

struct child {
	enum child_end end;
	int status;
	char err[1024]; /* what it wrote on stderr, NUL-terminated */
};

/* What a child that wrote exactly line and aborted looks like; NULL if it did. */
static inline const char *aborted_with(const struct child *c, const char *line)
{
	static char why[1200];
	size_t len = strlen(line);
	if (c->end != CHILD_ABORTED)
		snprintf(why, sizeof why, "the child did not abort (end %d, status %d), stderr: \"%s\"",
			 (int)c->end, c->status, c->err);
	else if (strncmp(c->err, line, len) != 0 || c->err[len] != '\n')
		snprintf(why, sizeof why, "the child wrote \"%s\", not \"%s\"", c->err, line);
	else
		return NULL;
	return why;
}

/* ---- The child's side: a case of the table, by its name ------------------------ */

/*
 * A test names a case by its function; a child on Windows, the program run
 * again, can only be told a name.  The table ends with { NULL, NULL }.
 */
struct child_case {
	const char *name; /* what "PROGRAM --child NAME" runs */
	void (*run)(void);
};

#if defined(_WIN32)
/* Ends the child at a fault, with the fault's code, before anything else
 * sees it; lets other exceptions go their way. */
static inline LONG WINAPI exit_at_a_fault(EXCEPTION_POINTERS *e)
{
	DWORD code = e->ExceptionRecord->ExceptionCode;
	if (code == EXCEPTION_ACCESS_VIOLATION || code == EXCEPTION_STACK_OVERFLOW)
		TerminateProcess(GetCurrentProcess(), code);
	return EXCEPTION_CONTINUE_SEARCH;
}

/* What a child does first: a fault is to end it with its exception code,
 * not start a debugger (wine's winedbg would print a crash report). */
static inline void enter_child(void)
{
	SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX);
	AddVectoredExceptionHandler(1, exit_at_a_fault);
}
#else
/*
 * A test program may catch SIGSEGV and friends (cmocka does, to report a
 * crashing test; so do ASan and UBSan, to report the crash): the child
 * inherits those handlers, and would go on or exit.  It must die of the
 * signal, as a program that nothing watches would.
 */
static inline void restore_default_signals(void)
{
	static const int signals[] = { SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE };
	size_t i;
	for (i = 0; i < sizeof signals / sizeof signals[0]; i++)
		signal(signals[i], SIG_DFL);
}

/* What a child does first: a fault or an abort is to kill it. */
static inline void enter_child(void)
{
	restore_default_signals();
}
#endif

/* A child whose case came back exits with this code: every case must fault
 * or abort, and 0 would look like a crash that went unreported (wine ends
 * such a process with 0). */
#define CHILD_CASE_RETURNED 4

/* Runs the case named name, in a child: what main calls for "--child NAME"
 * (Windows), and what the fork runs (POSIX).  Returns the child's exit code:
 * CHILD_CASE_RETURNED, or 2 if the table has no such case. */
static inline int run_named_case(const struct child_case *cases, const char *name)
{
	enter_child();
	for (; cases->run != NULL; cases++)
		if (strcmp(cases->name, name) == 0) {
			cases->run();
			return CHILD_CASE_RETURNED;
		}
	fprintf(stderr, "no case named %s\n", name);
	return 2;
}

/* ---- The parent's side: running a case in a child ------------------------------ */

#if defined(_WIN32)
/*
 * The program run again with "--child NAME", its stderr into a pipe.  What
 * abort() and faults look like as exit codes: 3 (the C runtime's abort),
 * STATUS_ACCESS_VIOLATION or STATUS_STACK_OVERFLOW.  msvcrt's abort may
 * add a sentence of its own after the line: only the first line counts.
 */
static inline struct child run_child(const struct child_case *cases, const char *name)
{
	struct child c = { CHILD_LOST, 0, "" };
	char self[MAX_PATH], command[2 * MAX_PATH];
	SECURITY_ATTRIBUTES inherit = { sizeof inherit, NULL, TRUE };
	HANDLE read_end, write_end;
	STARTUPINFOA start;
	PROCESS_INFORMATION process;
	DWORD code, used = 0, n;
	(void)cases;
	if (GetModuleFileNameA(NULL, self, sizeof self) == 0 ||
	    !CreatePipe(&read_end, &write_end, &inherit, 0))
		return c;
	SetHandleInformation(read_end, HANDLE_FLAG_INHERIT, 0);
	snprintf(command, sizeof command, "\"%s\" --child %s", self, name);
	memset(&start, 0, sizeof start);
	start.cb = sizeof start;
	start.dwFlags = STARTF_USESTDHANDLES;
	start.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
	start.hStdOutput = GetStdHandle(STD_OUTPUT_HANDLE);
	start.hStdError = write_end;
	fflush(NULL);
	if (!CreateProcessA(self, command, NULL, NULL, TRUE, 0, NULL, NULL, &start, &process)) {
		CloseHandle(read_end);
		CloseHandle(write_end);
		return c;
	}
	CloseHandle(write_end);
	while (used < sizeof c.err - 1 && ReadFile(read_end, c.err + used, sizeof c.err - 1 - used, &n, NULL) && n > 0)
		used += n;
	c.err[used] = '\0';
	CloseHandle(read_end);
	WaitForSingleObject(process.hProcess, INFINITE);
	GetExitCodeProcess(process.hProcess, &code);
	CloseHandle(process.hProcess);
	CloseHandle(process.hThread);
	/* Text mode: lines end in CRLF; keep LF only, as on POSIX. */
	for (char *r = c.err; (r = strchr(r, '\r')) != NULL;)
		memmove(r, r + 1, strlen(r));
	drop_tool_reports(c.err);
	c.status = (int)code;
	if (code == 3)
		c.end = CHILD_ABORTED;
	else if (code == 0xC0000005u || code == 0xC00000FDu)
		c.end = CHILD_FAULTED;
	else if (code < 256)
		c.end = CHILD_EXITED;
	else
		c.end = CHILD_OTHER;
	return c;
}
#else
/* A fork that runs the case named name, with stderr into a pipe. */
static inline struct child run_child(const struct child_case *cases, const char *name)
{
	struct child c = { CHILD_LOST, 0, "" };
	int pipefd[2], status;
	pid_t pid;
	if (pipe(pipefd) != 0)
		return c;
	fflush(NULL); /* or the child would print our buffered output again */
	pid = fork();
	if (pid < 0)
		return c;
	if (pid == 0) {
		close(pipefd[0]);
		dup2(pipefd[1], STDERR_FILENO);
		_exit(run_named_case(cases, name));
	}
	close(pipefd[1]);
	read_all(pipefd[0], c.err, sizeof c.err);
	drop_tool_reports(c.err);
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) != pid)
		return c;
	if (WIFEXITED(status)) {
		c.end = CHILD_EXITED;
		c.status = WEXITSTATUS(status);
	} else {
		c.status = WTERMSIG(status);
		c.end = c.status == SIGABRT ? CHILD_ABORTED
		      : c.status == SIGSEGV || c.status == SIGBUS ? CHILD_FAULTED : CHILD_OTHER;
	}
	return c;
}
#endif

/* The case whose function is run; NULL if the table has none. */
static inline const struct child_case *find_case(const struct child_case *cases, void (*run)(void))
{
	for (; cases->run != NULL; cases++)
		if (cases->run == run)
			return cases;
	return NULL;
}

/* Runs the case whose function is run in a child. */
static inline struct child run_case(const struct child_case *cases, void (*run)(void))
{
	const struct child_case *found = find_case(cases, run);
	if (found == NULL)
		abort(); /* every case is in the table */
	return run_child(cases, found->name);
}

/* Runs the case in a child; NULL if it wrote exactly line and aborted,
 * else what it did. */
static inline const char *child_aborts_with(const struct child_case *cases, void (*run)(void), const char *line)
{
	const struct child_case *found = find_case(cases, run);
	struct child c;
	if (found == NULL)
		return "no such child case";
	c = run_child(cases, found->name);
	return aborted_with(&c, line);
}

/* ---- Running functions on other threads ----------------------------------- */

struct thread {
	void (*f)(void *);
	void *arg;
#if defined(_WIN32)
	HANDLE handle;
#else
	pthread_t handle;
#endif
};

#if defined(_WIN32)
static inline DWORD WINAPI call_on_thread(LPVOID p)
{
	struct thread *t = (struct thread *)p;
	t->f(t->arg);
	return 0;
}

/* Starts f(arg) on a new thread; 0 when it could not. */
static inline int start_thread(struct thread *t, void (*f)(void *), void *arg)
{
	t->f = f;
	t->arg = arg;
	t->handle = CreateThread(NULL, 0, call_on_thread, t, 0, NULL);
	return t->handle != NULL;
}

static inline void join_thread(struct thread *t)
{
	WaitForSingleObject(t->handle, INFINITE);
	CloseHandle(t->handle);
}
#else
static inline void *call_on_thread(void *p)
{
	struct thread *t = (struct thread *)p;
	t->f(t->arg);
	return NULL;
}

/* Starts f(arg) on a new thread; 0 when it could not. */
static inline int start_thread(struct thread *t, void (*f)(void *), void *arg)
{
	t->f = f;
	t->arg = arg;
	return pthread_create(&t->handle, NULL, call_on_thread, t) == 0;
}

static inline void join_thread(struct thread *t)
{
	pthread_join(t->handle, NULL);
}
#endif

/* Lets the other threads run before this one goes on (in a wait loop). */
static inline void let_other_threads_run(void)
{
#if defined(_WIN32)
	SwitchToThread();
#else
	sched_yield();
#endif
}

/* Runs f(arg) on a new thread and waits for it; 0 when it could not. */
static inline int run_thread(void (*f)(void *), void *arg)
{
	struct thread t;
	if (!start_thread(&t, f, arg))
		return 0;
	join_thread(&t);
	return 1;
}

#endif
