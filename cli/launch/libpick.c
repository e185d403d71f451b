/*
 * libpick.c: which audit library the launcher preloads into a program, or
 * none. A preload that does not fit does not merely fail to audit: glibc's
 * loader stops the program when the library needs a symbol version the
 * host's libc lacks, and musl's when a symbol is missing. So the launcher
 * looks first:
 * - the program's interpreter (PT_INTERP; a #! script's interpreter, through
 *   `env NAME` too) names its C library: ld-musl-* is musl and gets
 *   libsockaudit-musl.so; anything else gets libsockaudit.so;
 * - for glibc, the highest GLIBC_x.y the library needs (its .gnu.version_r)
 *   must not be above the running glibc's version (the launcher runs on the
 *   system's glibc, which the program's loader uses too);
 * - a musl program without a musl library, or a glibc that is too old:
 *   one line on stderr, and the program runs without any library of ours.
 * A program without PT_INTERP (static) or an unreadable one gets
 * libsockaudit.so as before; progcheck.c says what the loader will do.
 */
#include <elf.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch/launch.h"

static int readable(const char *path)
{
	return access(path, R_OK) == 0;
}

/* Finds library NAME: beside our executable (the build tree), in
 * ../lib/sockaudit and ../lib beside it (a relocated or DESTDIR install),
 * then the configured directory. Writes an absolute path: a relative
 * LD_PRELOAD would be resolved against whatever directory the program
 * chdir()s into. */
int cli_find_library(const char *name, char *out, size_t cap)
{
	static const char *const rel[] = { "", "/../lib/sockaudit", "/../lib" };
	char exe[PATH_MAX], real[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t i;

	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			for (i = 0; i < sizeof rel / sizeof rel[0]; i++) {
				if ((size_t)snprintf(out, cap, "%s%s/%s", exe, rel[i], name) >= cap ||
				    !readable(out))
					continue;
				if (realpath(out, real) && strlen(real) < cap)
					strcpy(out, real);
				return 0;
			}
		}
	}
	if ((size_t)snprintf(out, cap, "%s/%s", SOCKAUDIT_LIBDIR, name) < cap && readable(out))
		return 0;
	return -1;
}

/* The PT_INTERP string of the ELF file at fd, in out; -1 when there is none
 * or the file is not an ELF of our class. */
static int elf_interp(int fd, char *out, size_t cap)
{
	ElfW(Ehdr) eh;
	ElfW(Phdr) ph;
	size_t i;

	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
	    eh.e_phentsize != sizeof ph)
		return -1;
	for (i = 0; i < eh.e_phnum; i++) {
		ssize_t got;

		if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph)
			return -1;
		if (ph.p_type != PT_INTERP)
			continue;
		if (ph.p_filesz == 0 || ph.p_filesz >= cap)
			return -1;
		got = pread(fd, out, ph.p_filesz, (off_t)ph.p_offset);
		if (got != (ssize_t)ph.p_filesz)
			return -1;
		out[got] = '\0';
		return 0;
	}
	return -1;
}

/* "2.17" -> 2017: glibc's versions as one comparable number (0 if not one). */
static long glibc_num(const char *v)
{
	char *end;
	long major = strtol(v, &end, 10), minor;

	if (end == v || *end != '.')
		return 0;
	minor = strtol(end + 1, &end, 10);
	return major * 1000 + minor;
}

/* The highest GLIBC_x.y the shared library at path needs (its version
 * needs), in ver (e.g. "2.17"); 0 when it needs none, -1 unreadable. */
int cli_glibc_needed(const char *path, char *ver, size_t cap)
{
	ElfW(Ehdr) eh;
	ElfW(Shdr) sh, strsh;
	char *buf = NULL, *strs = NULL;
	long best = 0;
	size_t i;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;

	if (fd < 0)
		return -1;
	*ver = '\0';
	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_shentsize != sizeof sh)
		goto out;
	for (i = 0; i < eh.e_shnum; i++) {
		if (pread(fd, &sh, sizeof sh, (off_t)(eh.e_shoff + i * sizeof sh)) != (ssize_t)sizeof sh)
			goto out;
		if (sh.sh_type == SHT_GNU_verneed)
			break;
	}
	rc = 0;
	if (i == eh.e_shnum)
		goto out;              /* needs no version at all */
	rc = -1;
	if (sh.sh_link >= eh.e_shnum || sh.sh_size > (1u << 20) ||
	    pread(fd, &strsh, sizeof strsh, (off_t)(eh.e_shoff + sh.sh_link * sizeof strsh)) != (ssize_t)sizeof strsh ||
	    strsh.sh_size > (4u << 20))
		goto out;
	buf = malloc(sh.sh_size);
	strs = malloc(strsh.sh_size + 1);
	if (!buf || !strs || pread(fd, buf, sh.sh_size, (off_t)sh.sh_offset) != (ssize_t)sh.sh_size ||
	    pread(fd, strs, strsh.sh_size, (off_t)strsh.sh_offset) != (ssize_t)strsh.sh_size)
		goto out;
	strs[strsh.sh_size] = '\0';
	{
		size_t off = 0;

		for (;;) {
			ElfW(Verneed) vn;
			size_t aoff;
			unsigned k;

			if (off + sizeof vn > sh.sh_size)
				goto out;
			memcpy(&vn, buf + off, sizeof vn);
			aoff = off + vn.vn_aux;
			for (k = 0; k < vn.vn_cnt; k++) {
				ElfW(Vernaux) va;
				const char *name;

				if (aoff + sizeof va > sh.sh_size)
					goto out;
				memcpy(&va, buf + aoff, sizeof va);
				if (va.vna_name >= strsh.sh_size)
					goto out;
				name = strs + va.vna_name;
				if (strncmp(name, "GLIBC_", 6) == 0 && glibc_num(name + 6) > best) {
					best = glibc_num(name + 6);
					snprintf(ver, cap, "%s", name + 6);
				}
				aoff += va.vna_next;
				if (!va.vna_next)
					break;
			}
			if (!vn.vn_next)
				break;
			off += vn.vn_next;
		}
	}
	rc = best ? 1 : 0;
out:
	free(buf);
	free(strs);
	close(fd);
	return rc;
}

static int is_musl_interp(const char *interp)
{
	const char *base = strrchr(interp, '/');

	return strncmp(base ? base + 1 : interp, "ld-musl-", 8) == 0;
}

/* The ELF that runs when NAME is exec'd: NAME resolved in $PATH, through
 * up to four #! lines. -1 when it cannot be opened. */
static int final_program(const char *name, char *path, size_t cap)
{
	char interp[PATH_MAX];
	int depth, fd;

	if (cli_resolve(name, path, cap) != 0)
		return -1;
	for (depth = 0; depth < 4; depth++) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		if (cli_script_interp(fd, interp, sizeof interp) != 0)
			return fd;
		close(fd);
		if ((size_t)snprintf(path, cap, "%s", interp) >= cap)
			return -1;
	}
	return -1;
}

int cli_pick_library(const char *name, char *lib, size_t cap, FILE *err)
{
	char path[PATH_MAX], interp[PATH_MAX], need[32];
	int fd = final_program(name, path, sizeof path), have;
	const char *ours = gnu_get_libc_version();

	if (fd >= 0) {
		have = elf_interp(fd, interp, sizeof interp) == 0;
		close(fd);
	} else {
		have = 0;
	}
	if (have && is_musl_interp(interp)) {
		if (cli_find_library(SA_MUSL_LIB_NAME, lib, cap) == 0)
			return SA_PICK_PRELOAD;
		fprintf(err, "sockaudit: %s uses musl (%s) and %s is not installed: "
			"running it without the audit library, nothing will be logged\n",
			name, interp, SA_MUSL_LIB_NAME);
		return SA_PICK_NONE;
	}
	if (cli_find_library(SA_LIB_NAME, lib, cap) != 0)
		return SA_PICK_MISSING;
	if (cli_glibc_needed(lib, need, sizeof need) == 1 && glibc_num(need) > glibc_num(ours)) {
		fprintf(err, "sockaudit: %s needs glibc %s and this system has %s: "
			"running %s without it, nothing will be logged\n", lib, need, ours, name);
		return SA_PICK_NONE;
	}
	return SA_PICK_PRELOAD;
}
