/*
 * model.h - random programs checked against a reference model.
 *
 * A string of bytes spells a program: the main program creates coroutines,
 * resumes them, asks for their status and walks the slots in use
 * (coroutine_next); each coroutine calls itself through frames of random
 * size filled with random data, yields at random depths, creates
 * coroutines, asks for statuses and walks the slots.  Every answer of the
 * library is compared with a small model of the ids and statuses (the
 * original's rules), and every frame's data is checked after every switch.
 *
 * Shared by test/spec/test_model.c (programs from fixed seeds) and
 * fuzz/fuzz_model.c (programs from libFuzzer).
 */
#ifndef MODEL_H
#define MODEL_H

#include <stddef.h>

/*
 * Runs the program spelled by bytes[0..size) until the bytes run out, then
 * closes the schedule (suspended coroutines included).  Returns NULL when
 * the library agreed with the model throughout, else a description of the
 * first disagreement (in a static buffer).
 */
const char *model_run(const unsigned char *bytes, size_t size);

/* Fills bytes[0..size) with a program derived from seed. */
void model_random_program(unsigned char *bytes, size_t size, unsigned long seed);

#endif
