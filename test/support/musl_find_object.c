/*
 * musl_find_object.c - glibc's _dl_find_object (2.35), made of
 * dl_iterate_phdr, for the musl build of the tests (make musl-test).
 *
 * musl-tools' gcc links a C program built with -fexceptions against the
 * libgcc_eh that Debian built for glibc, whose unwinder finds a function's
 * unwind tables through _dl_find_object, which musl has not.  This gives it
 * one, so that test_delete's cleanups run under musl as they would with a
 * libgcc built for musl (Alpine's), which asks dl_iterate_phdr itself.  The
 * program must be linked with --eh-frame-hdr (musl-gcc does not ask for it),
 * or it has no table to find.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stddef.h>
#include <stdint.h>

/* As glibc's <dlfcn.h> has it on x86_64 (no dlfo_eh_dbase, no dlfo_eh_count). */
struct dl_find_object {
	unsigned long long dlfo_flags;
	void *dlfo_map_start;
	void *dlfo_map_end;
	struct link_map *dlfo_link_map;
	void *dlfo_eh_frame;
	unsigned long long dlfo_reserved[7];
};

int _dl_find_object(void *pc, struct dl_find_object *result);

struct search {
	uintptr_t pc;
	struct dl_find_object *found;
};

/* Whether this module has a segment holding the address; if so, its table. */
static int look_in(struct dl_phdr_info *info, size_t size, void *data)
{
	struct search *s = (struct search *)data;
	const ElfW(Phdr) *table = NULL;
	int holds = 0;
	int i;
	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + p->p_vaddr;
		if (p->p_type == PT_LOAD && s->pc >= start && s->pc < start + p->p_memsz) {
			holds = 1;
			s->found->dlfo_map_start = (void *)start;
			s->found->dlfo_map_end = (void *)(start + p->p_memsz);
		} else if (p->p_type == PT_GNU_EH_FRAME) {
			table = p;
		}
	}
	if (!holds)
		return 0;
	s->found->dlfo_flags = 0;
	s->found->dlfo_link_map = NULL;
	s->found->dlfo_eh_frame = table ? (void *)(info->dlpi_addr + table->p_vaddr) : NULL;
	return 1;
}

/* 0 when a module holds pc, -1 when none does. */
int _dl_find_object(void *pc, struct dl_find_object *result)
{
	struct search s;
	s.pc = (uintptr_t)pc;
	s.found = result;
	return dl_iterate_phdr(look_in, &s) ? 0 : -1;
}
