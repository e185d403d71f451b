/*
 * remote.c: where a running process has a function. The object is found
 * in /proc/PID/maps (its first mapping, file offset 0, is its load base),
 * its file read through /proc/PID/root (the process's own view, a
 * container's too), and the name looked up in the file's dynamic symbol
 * table, the default version only (dlopen@@GLIBC_2.34, not a hidden
 * compatibility one).
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launch/inject.h"

static int begins(const char *path, const char *const *prefix)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	for (; *prefix; prefix++)
		if (**prefix == '=' ? strcmp(b, *prefix + 1) == 0 : strncmp(b, *prefix, strlen(*prefix)) == 0)
			return 1;
	return 0;
}

int remote_object(pid_t pid, const char *const *prefix, char *path, size_t cap, uintptr_t *base)
{
	char maps[64], line[4608];
	FILE *f;
	int found = -1;

	snprintf(maps, sizeof maps, "/proc/%d/maps", (int)pid);
	if (!(f = fopen(maps, "re")))
		return -1;
	while (found < 0 && fgets(line, sizeof line, f)) {
		unsigned long lo, off;
		char *p = strchr(line, '/');

		if (!p || sscanf(line, "%lx-%*x %*s %lx", &lo, &off) != 2 || off != 0)
			continue;
		p[strcspn(p, "\n")] = 0;
		if (!begins(p, prefix))
			continue;
		snprintf(path, cap, "%s", p);
		*base = (uintptr_t)lo;
		found = 0;
	}
	fclose(f);
	return found;
}

uintptr_t remote_sym(pid_t pid, const char *path, uintptr_t base, const char *name)
{
	char file[4200];
	struct stat st;
	const unsigned char *m;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	uintptr_t at = 0, lowest = UINTPTR_MAX;
	int fd;

	snprintf(file, sizeof file, "/proc/%d/root%s", (int)pid, path);
	if ((fd = open(file, O_RDONLY | O_CLOEXEC)) < 0 && (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof *eh ||
	    (m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
		close(fd);
		return 0;
	}
	close(fd);
	eh = (const void *)m;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof *sh > (uint64_t)st.st_size ||
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > (uint64_t)st.st_size)
		goto out;
	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(m + eh->e_phoff + i * sizeof *ph);

		if (ph->p_type == PT_LOAD && ph->p_vaddr < lowest)
			lowest = (uintptr_t)(ph->p_vaddr & ~(uint64_t)0xfff);
	}
	sh = (const void *)(m + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum && !at; i++) {
		const Elf64_Sym *sym;
		const Elf64_Half *ver = NULL;
		const char *str;
		size_t n;

		if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum ||
		    sh[i].sh_offset + sh[i].sh_size > (uint64_t)st.st_size)
			continue;
		sym = (const void *)(m + sh[i].sh_offset);
		str = (const char *)(m + sh[sh[i].sh_link].sh_offset);
		n = sh[i].sh_size / sizeof *sym;
		for (int k = 0; k < eh->e_shnum; k++)
			if (sh[k].sh_type == SHT_GNU_versym && sh[k].sh_offset + n * 2 <= (uint64_t)st.st_size)
				ver = (const void *)(m + sh[k].sh_offset);
		for (size_t k = 0; k < n; k++) {
			if (sym[k].st_shndx == SHN_UNDEF || !sym[k].st_value || strcmp(str + sym[k].st_name, name) != 0)
				continue;
			if (ver && (ver[k] & 0x8000))
				continue;   /* a hidden old version */
			at = base + (uintptr_t)sym[k].st_value - (lowest == UINTPTR_MAX ? 0 : lowest);
			break;
		}
	}
out:
	munmap((void *)m, (size_t)st.st_size);
	return at;
}
