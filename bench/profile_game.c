/*
 * profile_game.c - examples/game.c's whole game, played again and again
 * with its output thrown away: a run long enough for a profiler to sample
 * (make profile-game, make flamegraph; see docs/profiling.md).  The game is
 * included as it is, its main renamed.
 */
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>

#define main game_main
#include "examples/game.c"
#undef main

int main(int argc, char **argv)
{
	int games = argc > 1 ? atoi(argv[1]) : 2000;
	if (freopen("/dev/null", "w", stdout) == NULL)
		return 1;
	/* One thread: stdio need not lock stdout at each character. */
	__fsetlocking(stdout, FSETLOCKING_BYCALLER);
	for (int i = 0; i < games; i++)
		game_main();
	return 0;
}
