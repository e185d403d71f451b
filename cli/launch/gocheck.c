/*
 * gocheck.c: whether an ELF file is a Go program. Go's runtime makes its
 * own system calls (socket, accept4, connect) instead of calling libc's,
 * so a preloaded library is mapped but sees none of its sockets, even in a
 * dynamically linked Go binary (cgo, Debian's caddy). Recognised by what
 * the Go linker always writes: a "Go" note of type 4 (the build id, in
 * PT_NOTE; section .note.go.buildid) or a .go.buildinfo section (which
 * stripping keeps: the runtime reads it).
 */
#include <elf.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "launch/launch.h"

#define NT_GO_BUILDID 4

/* A "Go" note of type 4 among the notes in [off, off+size). */
static int go_note(int fd, off_t off, size_t size)
{
	unsigned char buf[4096];
	size_t n = size < sizeof buf ? size : sizeof buf, p = 0;

	if (pread(fd, buf, n, off) != (ssize_t)n)
		return 0;
	while (p + sizeof(ElfW(Nhdr)) <= n) {
		ElfW(Nhdr) nh;
		size_t name_at = p + sizeof nh, desc_at;

		memcpy(&nh, buf + p, sizeof nh);
		desc_at = name_at + ((nh.n_namesz + 3) & ~3u);
		if (nh.n_namesz == 3 && name_at + 3 <= n && memcmp(buf + name_at, "Go", 3) == 0 &&
		    nh.n_type == NT_GO_BUILDID)
			return 1;
		p = desc_at + ((nh.n_descsz + 3) & ~3u);
	}
	return 0;
}

/* A section named .go.buildinfo. */
static int go_section(int fd, const ElfW(Ehdr) *eh)
{
	ElfW(Shdr) sh, strs;
	char name[16];
	unsigned i;

	if (eh->e_shentsize != sizeof sh || eh->e_shstrndx == SHN_UNDEF || eh->e_shnum > 4096 ||
	    pread(fd, &strs, sizeof strs, (off_t)(eh->e_shoff + eh->e_shstrndx * sizeof sh)) != (ssize_t)sizeof strs)
		return 0;
	for (i = 0; i < eh->e_shnum; i++) {
		if (pread(fd, &sh, sizeof sh, (off_t)(eh->e_shoff + i * sizeof sh)) != (ssize_t)sizeof sh ||
		    sh.sh_name >= strs.sh_size ||
		    pread(fd, name, sizeof name, (off_t)(strs.sh_offset + sh.sh_name)) < 14)
			continue;
		if (memcmp(name, ".go.buildinfo", 14) == 0)
			return 1;
	}
	return 0;
}

int cli_is_go_program(int fd)
{
	ElfW(Ehdr) eh;
	ElfW(Phdr) ph;
	unsigned i;

	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_phentsize != sizeof ph)
		return 0;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph)
			return 0;
		if (ph.p_type == PT_NOTE && go_note(fd, (off_t)ph.p_offset, ph.p_filesz))
			return 1;
	}
	return go_section(fd, &eh);
}
