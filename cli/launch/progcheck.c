/*
 * progcheck.c: before the launcher execs COMMAND, the blind spots it can
 * see from the file alone, said in one line on stderr (the program still
 * runs):
 * - no PT_INTERP (statically linked, static-pie, Go with CGO_ENABLED=0):
 *   no dynamic loader runs, so LD_PRELOAD is never read;
 * - an ELF class other than ours (a 32-bit program): the loader cannot
 *   load our library into it and skips it;
 * - setuid/setgid to another id, or file capabilities for a non-root
 *   user: the kernel sets AT_SECURE and ld.so ignores every LD_PRELOAD
 *   entry that contains a '/' (ours always does: it is an absolute path);
 * - a Go program (gocheck.c): the library loads, but Go makes its own
 *   system calls, so none of its sockets are seen.
 * A script (#!) is checked through the interpreter its first line names
 * (through `env NAME` too); the kernel ignores a script's own setuid bit.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "launch/launch.h"

/* Resolves NAME like execvp: as given when it has a '/', else the first
 * executable regular file in $PATH (glibc's default when unset). */
int cli_resolve(const char *name, char *out, size_t cap)
{
	const char *path = getenv("PATH"), *p, *end;
	struct stat st;

	if (strchr(name, '/'))
		return (size_t)snprintf(out, cap, "%s", name) < cap ? 0 : -1;
	if (!path)
		path = "/bin:/usr/bin";
	for (p = path;; p = end + 1) {
		size_t dl;

		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		dl = (size_t)(end - p);
		if ((size_t)snprintf(out, cap, "%.*s%s%s", (int)dl, p, dl ? "/" : "", name) < cap &&
		    stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return 0;
		if (!*end)
			return -1;
	}
}

/* What the ELF file at fd says: 0 fine (has PT_INTERP, our class),
 * 1 static, 2 another class, -1 not an ELF we can read. */
static int elf_kind(int fd)
{
	unsigned char id[EI_NIDENT];
	size_t i;

	if (pread(fd, id, sizeof id, 0) != (ssize_t)sizeof id || memcmp(id, ELFMAG, SELFMAG) != 0)
		return -1;
	if (id[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32))
		return 2;
	{
		ElfW(Ehdr) eh;
		ElfW(Phdr) ph;

		if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || eh.e_phentsize != sizeof ph)
			return -1;
		if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
			return -1;
		for (i = 0; i < eh.e_phnum; i++) {
			if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph)
				return -1;
			if (ph.p_type == PT_INTERP)
				return 0;
		}
		return 1;
	}
}

/* Whether exec of the file at PATH (stat in *st) runs in secure mode
 * (AT_SECURE) for us, and why. */
static const char *secure_reason(const char *path, const struct stat *st, char *buf, size_t cap)
{
	struct statvfs vfs;

	if (statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_NOSUID))
		return NULL;         /* the kernel ignores the bits there */
	if ((st->st_mode & S_ISUID) && st->st_uid != getuid()) {
		snprintf(buf, cap, "is setuid (runs as uid %ld)", (long)st->st_uid);
		return buf;
	}
	if ((st->st_mode & S_ISGID) && (st->st_mode & S_IXGRP) && st->st_gid != getgid()) {
		snprintf(buf, cap, "is setgid (runs as gid %ld)", (long)st->st_gid);
		return buf;
	}
	/* Capabilities a non-root user gains; root has them already. */
	if (getuid() != 0 && getxattr(path, "security.capability", NULL, 0) > 0) {
		snprintf(buf, cap, "has file capabilities (setcap)");
		return buf;
	}
	return NULL;
}

/* The interpreter a script's #! line names (through `env NAME`), resolved,
 * in out; -1 when the file is not a script. */
int cli_script_interp(int fd, char *out, size_t cap)
{
	char line[256], *p, *tok, *save = NULL;
	ssize_t n = pread(fd, line, sizeof line - 1, 0);

	if (n < 3 || line[0] != '#' || line[1] != '!')
		return -1;
	line[n] = '\0';
	p = strchr(line, '\n');
	if (p)
		*p = '\0';
	tok = strtok_r(line + 2, " \t", &save);
	if (!tok)
		return -1;
	if (strcmp(strrchr(tok, '/') ? strrchr(tok, '/') + 1 : tok, "env") == 0) {
		char *arg = strtok_r(NULL, " \t", &save);

		while (arg && arg[0] == '-')       /* env -S, env -i: take the next word */
			arg = strtok_r(NULL, " \t", &save);
		if (arg && !strchr(arg, '='))
			return cli_resolve(arg, out, cap);
	}
	return (size_t)snprintf(out, cap, "%s", tok) < cap ? 0 : -1;
}

void cli_check_program(const char *name, FILE *err)
{
	char path[PATH_MAX], interp[PATH_MAX], why[96];
	const char *runs = NULL, *sec;
	struct stat st;
	int fd, depth, k;

	if (cli_resolve(name, path, sizeof path) != 0)
		return;              /* execvp says what is wrong */
	for (depth = 0; depth < 4; depth++) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) != 0) {
			if (fd >= 0)
				close(fd);
			return;      /* execute-only, or gone: nothing to say */
		}
		/* The kernel honours setuid on the program it loads, not a script's. */
		if (cli_script_interp(fd, interp, sizeof interp) == 0) {
			close(fd);
			snprintf(path, sizeof path, "%s", interp);
			runs = path;
			continue;
		}
		sec = secure_reason(path, &st, why, sizeof why);
		k = elf_kind(fd);
		if (k != 2 && !sec && cli_is_go_program(fd))
			k = 3;
		close(fd);
		if (k != 1 && k != 2 && k != 3 && !sec)
			return;
		if (runs)
			fprintf(err, "sockaudit: %s runs %s, which ", name, runs);
		else
			fprintf(err, "sockaudit: %s ", name);
		if (k == 3)
			fputs("is a Go program: Go makes its own system calls, not libc's, so the audit "
			      "library cannot see its sockets; it runs, but nothing will be logged\n", err);
		else if (k == 1)
			fputs("is statically linked: LD_PRELOAD cannot load the audit library, "
			      "nothing will be logged\n", err);
		else if (k == 2)
			fprintf(err, "is a %d-bit program: the %d-bit audit library cannot be loaded "
				"into it, nothing will be logged\n",
				sizeof(void *) == 8 ? 32 : 64, (int)sizeof(void *) * 8);
		else
			fprintf(err, "%s: the loader ignores an LD_PRELOAD path with a '/' in secure "
				"mode, nothing will be logged\n", sec);
		return;
	}
}
