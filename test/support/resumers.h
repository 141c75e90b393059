/*
 * resumers.h - what the tests of the link to the resumer share
 * (test/spec/test_frames.c, test_frames_cxx.cpp, test/platform/resumers.c):
 * whether the build has the link, and functions that resume a coroutine,
 * each of which a backtrace inside the coroutine names as its resumer.
 * They are defined here and exported (not static), so that dladdr names
 * them: include this file in one file of a program.
 */
#ifndef TEST_RESUMERS_H
#define TEST_RESUMERS_H

#include "coroutine.h"

/* Whether a coroutine's start links to its resumer in this build: the
 * assembly switch but on armv7, and ucontext on glibc's x86_64 and
 * aarch64 (docs/profiling.md: "Where the link is"). */
#if (defined(COROUTINE_ASM) && !defined(__arm__)) || \
	(!defined(COROUTINE_ASM) && defined(__GLIBC__) && (defined(__x86_64__) || defined(__aarch64__)))
#define LINKED 1
#else
#define LINKED 0
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Each does something after its resume, so that the call is not a jump
 * and its frame stays. */
static volatile int resumes;

__attribute__((noinline)) void resume_from_a(struct schedule *S, int id)
{
	coroutine_resume(S, id);
	resumes++;
}

__attribute__((noinline)) void resume_from_b(struct schedule *S, int id)
{
	coroutine_resume(S, id);
	resumes++;
}

/* resume_from_b, from a frame deeper. */
__attribute__((noinline)) void resume_from_deeper(struct schedule *S, int id)
{
	resume_from_b(S, id);
	resumes++;
}

#ifdef __cplusplus
}
#endif

#endif
