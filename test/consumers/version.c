/*
 * version.c - a consumer built by a build system that reports the library's
 * version as EXPECTED_VERSION ("1.2.3"): CMake, Meson or pkg-config.  It
 * fails unless that is the version in the coroutine.h it was compiled
 * with, so a build file that stops reading the version from coroutine.h
 * is caught.  Plain C, like every consumer here.
 */
#include "coroutine.h"
#include <stdio.h>
#include <string.h>

#define STRING(x) #x
#define VERSION_STRING(major, minor, patch) STRING(major) "." STRING(minor) "." STRING(patch)

int main(void)
{
	const char *header = VERSION_STRING(COROUTINE_VERSION_MAJOR, COROUTINE_VERSION_MINOR,
					    COROUTINE_VERSION_PATCH);
	if (strcmp(header, EXPECTED_VERSION) != 0) {
		fprintf(stderr, "version: coroutine.h says %s, the build system says %s\n",
			header, EXPECTED_VERSION);
		return 1;
	}
	printf("coroutine %s\n", header);
	return 0;
}
