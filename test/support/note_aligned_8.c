/*
 * note_aligned_8.c - an empty .note.coroutine section of alignment 8.
 * Linked into a module beside the checked library, it makes the module's
 * .note.coroutine, and the PT_NOTE segment that holds it, 8-aligned: the
 * notes of such a segment are laid out with 8-byte padding (the ELF
 * specification's gABI, glibc's reading of it), which the library must
 * follow to find its note (test/bugs/checked_copies.c).
 */
__asm__(".pushsection .note.coroutine, \"a\", %note\n"
	"\t.balign 8\n"
	"\t.popsection");
