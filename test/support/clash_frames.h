/*
 * clash_frames.h - frames far larger than the run stack plus its guard,
 * in clash_frames.c, which is compiled with -fstack-clash-protection.
 */
#ifndef CLASH_FRAMES_H
#define CLASH_FRAMES_H

char clash_protected_8_mib_frame(void);
char clash_protected_64_mib_frame(void);

#endif
