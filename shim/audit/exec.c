/*
 * exec.c: an exec whose environment no longer preloads the shim. A daemon
 * that re-execs itself with an environment of its own making (nginx's
 * binary upgrade passes only what its `env` directives name;
 * systemd-socket-activate passes six variables) starts a program that runs
 * unaudited, and nothing would say so. Before such an exec (or spawn) the
 * shim writes one line naming the program and why.
 *
 * Runs where exec runs: after vfork in a child that shares our memory, in
 * a signal handler, after fork in a multi-threaded program. So: nothing
 * allocated, no lock, the line on the stack. In a child that shares our
 * memory the line is written only into a log file already open (no state
 * of ours may change there), under the child's own pid and tid.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "audit/audit.h"
#include "event_text.h"

#define LIB_TAG "libsockaudit"

/* Our own environment names us in LD_PRELOAD: set once, at load. Whether
 * it is what preloaded us (not /etc/ld.so.preload, which the new program
 * gets whatever its environment; in secure execution the loader ignores
 * LD_PRELOAD) is asked at an exec: getauxval in the constructor would be
 * one more lazy binding in every exec. */
static int preloaded_by_env = -1;

/* Whether VALUE (an LD_PRELOAD value) names our library. */
SA_FORK_TEXT static int names_us(const char *v)
{
	/* An array, not a literal: .rodata sits in the library's first pages,
	 * which the loader has read already; a literal's pool is after .text. */
	static const char tag[] = LIB_TAG;
	const char *p;
	size_t k;

	/* By hand: libc's strncmp would be one more lazy binding (about 700
	 * instructions) in the constructor of every exec. */
	for (p = v; *p; p++) {
		if (*p != tag[0])
			continue;
		for (k = 1; k < sizeof tag - 1 && p[k] == tag[k]; k++)
			;
		if (k == sizeof tag - 1)
			return 1;
	}
	return 0;
}

SA_START_TEXT void sa_exec_init(char *const envp[])
{
	const char *v;

	if (preloaded_by_env >= 0)
		return;
	/* The constructor's envp, which sa_env_capture() has just read (one
	 * pass over it, not two); without it, as secure_getenv reads it. */
	v = envp ? sa_env_start_preload() : secure_getenv("LD_PRELOAD");
	preloaded_by_env = v && names_us(v);
}

SA_FORK_TEXT int sa_exec_env_preloads(char *const envp[])
{
	size_t i;

	static const char key[] = "LD_PRELOAD=";
	size_t k;

	if (!envp)
		return 0;
	/* By hand, the key in .rodata: a forked child about to exec (a shell's)
	 * runs this, and strncmp would be a lazy binding there, its lookups
	 * and its written page faulted in that child. */
	for (i = 0; envp[i]; i++) {
		if (envp[i][0] != 'L')
			continue;
		for (k = 1; key[k] && envp[i][k] == key[k]; k++)
			;
		if (!key[k] && names_us(envp[i] + k))
			return 1;
	}
	return 0;
}

/* A child sharing our memory: the line only into a log file already open. */
static void write_shared(struct sa_line *L)
{
	int len = sa_line_finish(L, NULL), fd = sa_sink_fd();
	dev_t dev;
	ino_t ino;
	mode_t mode;

	if (len > 0 && fd >= 0 && sa_sinkio_identify(fd, &dev, &ino, &mode) == 0 && S_ISREG(mode))
		sa_sinkio_write_raw(fd, L->buf, (size_t)len);
}

SA_FORK_TEXT int sa_exec_drops_preload(char *const envp[])
{
	/* The scan first: an exec that keeps the library (a shell's) then
	 * binds nothing (getauxval) and writes no page. */
	return preloaded_by_env > 0 && !sa_exec_env_preloads(envp) && !sa_env_secure();
}

void sa_exec_check(const char *call, const char *prog, char *const envp[], int shared_mem)
{
	struct sa_line L;
	int replaced;

	if (!sa_exec_drops_preload(envp))
		return;
	if (shared_mem)
		sa_line_begin_as(&L, "exec_unaudited", (pid_t)sa_syscall(SYS_getpid), (pid_t)sa_syscall(SYS_gettid));
	else
		sa_line_begin_at(&L, "exec_unaudited", -1, 1, 0);
	sa_line_str(&L, "call", call);
	sa_line_str(&L, "program", prog);
	replaced = envp != sa_environ();
	sa_line_bool(&L, "env_replaced", replaced);
	sa_line_str(&L, "msg", replaced ? SA_MSG_EXEC_UNAUDITED_ENV_REPLACED : SA_MSG_EXEC_UNAUDITED_PRELOAD_REMOVED);
	if (shared_mem) {
		write_shared(&L);
		return;
	}
	if (sa_in_signal) {
		/* The init line is built with jansson (it allocates): not here. */
		int len = sa_line_finish(&L, NULL);
		if (len > 0)
			sa_sink_write(L.buf, (size_t)len);
		return;
	}
	sa_line_emit(&L, SA_LEVEL_WARN, NULL);
}
