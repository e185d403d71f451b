/*
 * config.c: the SOCKAUDIT_* environment -> a validated struct sa_config.
 *
 * A pure function of what getenv returns (tests pass a fake getenv). A bad
 * value never stops the host: the default stays and a warning is recorded
 * for the lifecycle (core/lifecycle.c) to write as one "warning" line. Must never allocate, exit or
 * touch a file descriptor.
 *
 * Two rules a user relies on:
 * - Fail closed: a value that limits auditing and cannot be honoured (an
 *   over-long SOCKAUDIT_COMM) audits nothing, with a warning, rather than
 *   everything.
 * - A relative log path is resolved against the directory the process
 *   started in: our constructor (before main can chdir) records it, and
 *   every load (the first socket call's, a forked child naming its own %p
 *   file) uses that record, not the working directory of the moment.
 * - The settings are the environment the process started with
 *   (sa_env_capture, from the constructor), whenever init happens.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "base/base.h"

/* The working directory at the first load ("" when unknown). A fork child
 * inherits it with the rest of our memory. */
static char start_dir[512];
static int start_dir_read SA_START_DATA;

/* The SOCKAUDIT_* entries of the environment the process started with,
 * copied ("NAME=value") by one pass over environ. Copied, not pointed to:
 * init runs at the first call that needs it, and by then the host may
 * have written over its start-up strings (nginx and others put their
 * process title there) as well as changed or cleared its environment. */
#define SNAP_MAX 32
#define SNAP_BYTES 8192
/* The usual settings (a log path, a level: a few hundred bytes) go on the
 * data page the loader writes at every exec anyway (SA_START_DATA), with
 * their offsets; only a longer environment spills into snap_buf, a page of
 * the zero tables more for the constructor to write. Offset o is snap_small[o] below
 * SNAP_SMALL, snap_buf[o - SNAP_SMALL] from there. */
#define SNAP_SMALL 320
static unsigned short snap_off[SNAP_MAX] SA_START_DATA;
static char snap_small[SNAP_SMALL] SA_START_DATA;
static char snap_buf[SNAP_BYTES];
static int snap_n SA_START_DATA, snap_taken SA_START_DATA;

static inline char *snap_at(unsigned o)
{
	return o < SNAP_SMALL ? snap_small + o : snap_buf + (o - SNAP_SMALL);
}

/* secure_getenv's rule: a setuid or setgid program (AT_SECURE) is
 * configured by nobody's environment. Asked at the first read of a
 * setting, not by the constructor: getauxval would be one more lazy
 * binding in every exec. 0: not asked yet, 1: no, 2: yes. Each thread
 * that finds it unasked asks itself, so none reads a setting on another's
 * word. */
static int env_secure SA_START_DATA;

int sa_env_secure(void)
{
	int s = __atomic_load_n(&env_secure, __ATOMIC_RELAXED);

	if (!s) {
		s = getauxval(AT_SECURE) ? 2 : 1;
		__atomic_store_n(&env_secure, s, __ATOMIC_RELAXED);
	}
	return s == 2;
}

/* s begins with the NUL-terminated p. Inline: the constructor then calls
 * into libc (a lazy-binding fix-up each) only for what it must. */
static inline const char *after_prefix(const char *s, const char *p)
{
	for (; *p; s++, p++)
		if (*s != *p)
			return NULL;
	return s;
}

static char *snap_find(const char *name);

/* A relative log path, which needs the start directory. */
SA_START_TEXT static int log_is_relative(const char *v)
{
	return v && *v && *v != '/' && strcmp(v, "stderr") != 0 && strcmp(v, "syslog") != 0 &&
	       strncmp(v, "fd:", 3) != 0;
}

/* Records the working directory, once, when the log path is relative
 * (the same environment gives the same path at every later load). */
static void read_start_dir(const char *log)
{
	if (start_dir_read || !log_is_relative(log))
		return;
	start_dir_read = 1;
	if (!getcwd(start_dir, sizeof start_dir))
		start_dir[0] = '\0';
}

/* In .rodata, which lies in the library's first pages with the
 * constructor's code (shim/sa_fork_text.ld), not among the strings after
 * .text: every exec reads it. */
static const char env_prefix[] = "SOCKAUDIT" "_";   /* split: not a variable's name (docs test) */
static const char log_name[] = SOCKAUDIT_ENV_LOG;
static const char preload_key[] = "LD_PRELOAD=";
/* LD_PRELOAD's value in the environment the constructor was given: read
 * by the constructor only (the host may overwrite it later). */
static const char *preload_at_start SA_START_DATA;

SA_START_TEXT const char *sa_env_start_preload(void)
{
	return preload_at_start;
}

SA_START_TEXT void sa_env_capture(char **envp)
{
	char **e;
	size_t small, used, len;
	int full;

	/* The constructor's envp is the one that counts (2); a copy taken
	 * before it (1) is taken again from it. */
	if (snap_taken == 2 || (snap_taken && !envp))
		return;
	if (!envp) {
		/* Before our constructor (another library's constructor, or a
		 * sanitizer's start-up, made the first call): environ, looked
		 * up by name (sa_environ), not linked to, which would cost the
		 * loader a lookup at every exec. Not found yet: nothing is
		 * taken, and the next call looks again. */
		if (!(envp = sa_environ()))
			return;
		snap_taken = 1;
	} else {
		snap_taken = 2;
	}
	snap_n = 0;
	preload_at_start = NULL;
	for (e = envp, small = 0, used = 0, full = 0; e && *e; e++) {
		char *to;
		unsigned at;
		const char *p;

		/* LD_PRELOAD too, the first as getenv would: the exec audit
		 * asks whether our own environment preloaded us. */
		if ((*e)[0] == 'L' && !preload_at_start && (p = after_prefix(*e, preload_key))) {
			preload_at_start = p;
			continue;
		}
		if (full || (*e)[0] != 'S' || !after_prefix(*e, env_prefix))
			continue;
		/* By hand: the constructor binds no libc function it can avoid. */
		for (len = 0; (*e)[len] && len < SNAP_BYTES; len++)
			;
		if ((*e)[len]) {
			full = 1;   /* beyond any valid setting: it and the rest as if unset */
			continue;
		}
		if (small + len < SNAP_SMALL) {
			at = small;
			small += len + 1;
		} else if (used + len < SNAP_BYTES) {
			at = SNAP_SMALL + used;
			used += len + 1;
		} else {
			full = 1;   /* the settings together beyond SNAP_BYTES: the rest as if unset */
			continue;
		}
		to = snap_at(at);
		for (size_t i = 0; i <= len; i++)
			to[i] = (*e)[i];
		snap_off[snap_n++] = (unsigned short)at;
		full = snap_n == SNAP_MAX;
	}
	/* Only a relative log path needs the directory, and only as it was
	 * before main could chdir(). Looked at before the secure-execution
	 * test, which an absolute path (the launcher's) never needs here. */
	if (log_is_relative(snap_find(log_name)))
		read_start_dir(sa_env_get(log_name));
}

/* An attach: the settings the attach tool passed replace what the process
 * started with (its environment names no log of ours). */
void sa_env_capture_attach(char **settings)
{
	snap_taken = 0;
	sa_env_capture(settings);
}

int sa_env_final(void)
{
	return __atomic_load_n(&snap_taken, __ATOMIC_ACQUIRE) == 2;
}

/* The setting NAME as copied, whatever the secure-execution rule says. */
SA_START_TEXT static char *snap_find(const char *name)
{
	const char *v;
	int i;

	for (i = 0; i < snap_n; i++)
		if ((v = after_prefix(snap_at(snap_off[i]), name)) && *v == '=')
			return (char *)v + 1;
	return NULL;
}

SA_START_TEXT int sa_env_present(const char *name)
{
	return snap_find(name) != NULL;
}

SA_START_TEXT char *sa_env_get(const char *name)
{
	if (!snap_n || sa_env_secure())
		return NULL;
	return snap_find(name);
}

static void warn(struct sa_config *c, const char *var, const char *value, const char *why)
{
	struct sa_config_warning *w;

	if (c->nwarnings >= SA_MAX_WARNINGS)
		return;
	w = &c->warnings[c->nwarnings++];
	snprintf(w->var, sizeof w->var, "%s", var);
	snprintf(w->value, sizeof w->value, "%s", value);
	snprintf(w->why, sizeof w->why, "%s", why);
}

/* Parses a whole decimal integer in [lo, hi]; 0 on success. */
static int parse_int(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

static void int_var(struct sa_config *c, sa_getenv_fn get, const char *var,
		    long lo, long hi, int *field)
{
	const char *v = get(var);
	long n;
	char why[160];

	if (!v)
		return;
	if (parse_int(v, lo, hi, &n) == 0) {
		*field = (int)n;
		return;
	}
	snprintf(why, sizeof why, "not a whole number from %ld to %ld; using the default %d",
		 lo, hi, *field);
	warn(c, var, v, why);
}

/* Expands %p to pid and %% to %; other % sequences are kept as they are. */
static int expand_path(const char *in, pid_t pid, char *out, size_t cap)
{
	size_t o = 0;
	int n;

	for (; *in; in++) {
		if (in[0] == '%' && in[1] == 'p') {
			n = snprintf(out + o, cap - o, "%ld", (long)pid);
			if (n < 0 || (size_t)n >= cap - o)
				return -ENAMETOOLONG;
			o += (size_t)n;
			in++;
			continue;
		}
		if (in[0] == '%' && in[1] == '%')
			in++;
		if (o + 1 >= cap)
			return -ENAMETOOLONG;
		out[o++] = *in;
	}
	out[o] = '\0';
	return 0;
}

/* Whether expand_path puts the pid in: a %p that is not %%p. */
static int names_pid(const char *v)
{
	for (; *v; v++)
		if (*v == '%' && (*++v == 'p' || !*v))
			return *v == 'p';
	return 0;
}

static void log_var(struct sa_config *c, sa_getenv_fn get, pid_t pid)
{
	const char *v = get(SOCKAUDIT_ENV_LOG);
	long n;

	if (!v || !strcmp(v, "stderr"))
		return;
	if (!strcmp(v, "syslog")) {
		c->sink = SA_SINK_SYSLOG;
		return;
	}
	if (!strcmp(v, "journal")) {
		c->sink = SA_SINK_JOURNAL;
		return;
	}
	if (!strncmp(v, "fd:", 3)) {
		/* Digits only: strtol would also take "fd: 2" and "fd:+2". */
		if (v[3] >= '0' && v[3] <= '9' && parse_int(v + 3, 0, INT_MAX, &n) == 0) {
			c->sink = SA_SINK_FD;
			c->sink_fd = (int)n;
		} else {
			warn(c, SOCKAUDIT_ENV_LOG, v, "fd:N needs a file descriptor number; using stderr");
		}
		return;
	}
	if (!*v) {
		warn(c, SOCKAUDIT_ENV_LOG, v, "empty; using stderr");
		return;
	}
	if (expand_path(v, pid, c->path, sizeof c->path) != 0 ||
	    sa_config_absolute(start_dir, c->path, sizeof c->path) != 0) {
		c->path[0] = '\0';
		warn(c, SOCKAUDIT_ENV_LOG, v, "path too long; using stderr");
		return;
	}
	c->sink = SA_SINK_PATH;
	c->path_pid = names_pid(v);
}

int sa_config_absolute(const char *dir, char *path, size_t cap)
{
	size_t d, p = strlen(path);

	if (path[0] == '/' || !dir || dir[0] != '/')
		return 0;   /* already absolute, or no directory to resolve against */
	d = strlen(dir);
	while (d > 1 && dir[d - 1] == '/')
		d--;
	if (d + 1 + p + 1 > cap)
		return -ENAMETOOLONG;
	memmove(path + d + 1, path, p + 1);
	memcpy(path, dir, d);
	path[d] = '/';
	if (d == 1)      /* dir is "/" */
		memmove(path + 1, path + 2, p + 1);
	return 0;
}

static void level_var(struct sa_config *c, sa_getenv_fn get)
{
	const char *v = get(SOCKAUDIT_ENV_LEVEL);

	if (!v)
		return;
	if (!strcmp(v, "warn"))
		c->level = SA_LEVEL_WARN;
	else if (!strcmp(v, "info"))
		c->level = SA_LEVEL_INFO;
	else if (!strcmp(v, "trace"))
		c->level = SA_LEVEL_TRACE;
	else
		warn(c, SOCKAUDIT_ENV_LEVEL, v, "expected warn, info or trace; using info");
}

/* strcasecmp for a lower-case word w, by hand: a shell's signal wrapper
 * asks sa_config_disables without binding libc's. */
static int is_word(const char *v, const char *w)
{
	for (; *w; v++, w++)
		if ((*v >= 'A' && *v <= 'Z' ? *v - 'A' + 'a' : *v) != *w)
			return 0;
	return *v == '\0';
}

int sa_config_disables(const char *v)
{
	return v && (is_word(v, "1") || is_word(v, "yes") || is_word(v, "true") || is_word(v, "on"));
}

static void disable_var(struct sa_config *c, sa_getenv_fn get)
{
	const char *v = get(SOCKAUDIT_ENV_DISABLE);

	if (!v || !*v || !strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "false") ||
	    !strcasecmp(v, "off"))
		return;
	if (sa_config_disables(v))
		c->disable = 1;
	else
		warn(c, SOCKAUDIT_ENV_DISABLE, v,
		     "expected 1, on, yes or true (disable) or 0, off, no or false; auditing stays on");
}

static void comm_var(struct sa_config *c, sa_getenv_fn get)
{
	const char *v = get(SOCKAUDIT_ENV_COMM);

	if (!v || !*v)
		return;
	if (strlen(v) >= sizeof c->comm) {
		/* Fail closed: the list was meant to limit auditing, and a cut
		 * list could name a program it never named. */
		c->comm_overflow = 1;
		warn(c, SOCKAUDIT_ENV_COMM, v, "list longer than 255 bytes; auditing no program");
		return;
	}
	snprintf(c->comm, sizeof c->comm, "%s", v);
}

void sa_config_load(struct sa_config *c, sa_getenv_fn get, pid_t pid)
{
	memset(c, 0, sizeof *c);
	c->level = SA_LEVEL_INFO;
	c->sink = SA_SINK_STDERR;
	c->sink_fd = -1;
	c->stats_interval = 5;
	c->slow_connect_ms = 500;
	c->quickack_min_reasserts = 16;
	c->quickack_max_segs = 2;

	read_start_dir(get(SOCKAUDIT_ENV_LOG));
	disable_var(c, get);
	level_var(c, get);
	log_var(c, get, pid);
	comm_var(c, get);
	int_var(c, get, SOCKAUDIT_ENV_STATS_INTERVAL, 0, 86400, &c->stats_interval);
	int_var(c, get, SOCKAUDIT_ENV_SLOW_CONNECT_MS, 1, 3600000, &c->slow_connect_ms);
	int_var(c, get, SOCKAUDIT_ENV_QUICKACK_MIN_REASSERTS, 2, 1000000, &c->quickack_min_reasserts);
	int_var(c, get, SOCKAUDIT_ENV_QUICKACK_MAX_SEGS, 1, 1000, &c->quickack_max_segs);
}

int sa_config_comm_match(const char *list, const char *comm)
{
	const char *p = list, *end;
	size_t n = strlen(comm);

	if (!list || !*list)
		return 1;
	while (*p) {
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		/* The kernel keeps 15 bytes of a program's name: match a longer
		 * list entry by its first 15 bytes too. */
		size_t len = (size_t)(end - p);
		if ((len == n && !strncmp(p, comm, n)) || (len > 15 && n == 15 && !strncmp(p, comm, 15)))
			return 1;
		p = *end ? end + 1 : end;
	}
	return 0;
}

const char *sa_level_name(enum sa_level l)
{
	switch (l) {
	case SA_LEVEL_WARN: return "warn";
	case SA_LEVEL_TRACE: return "trace";
	default: return "info";
	}
}
