/*
 * attach.c: `sockaudit attach [-o FILE] [-l LEVEL] [--comm NAMES] PID...`
 * and `sockaudit detach PID...`: the library into a program that is
 * already running (no restart: its accept queue, connections and state
 * stay), and out again.
 *
 * Attach: refuse what cannot work, before touching the process (no such
 * pid, a static or Go program, a library the process cannot see, a
 * process we may not trace, and why); stop its threads (inject.c), load
 * the library with the process's own dlopen (glibc 2.34+ and musl export
 * it; older glibc has __libc_dlopen_mode), call its sockaudit_attach()
 * with the settings, let the threads go. Detach: sockaudit_detach() the
 * same way. shim/core/attach.c is the library's side.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launch/inject.h"
#include "launch/launch.h"

static struct inj J;   /* 4096 threads' room: not on the stack */

static const char *const glibc_names[] = { "libc.so.6", "libc-2.", NULL };
/* Debian's musl maps its loader as /usr/lib/x86_64-linux-musl/libc.so. */
static const char *const musl_names[] = { "ld-musl-", "libc.musl-", "=libc.so", NULL };
static const char *const our_names[] = { "libsockaudit", NULL };

static void usage(FILE *out, int detach)
{
	if (detach)
		fputs("usage: sockaudit detach PID...\n\n"
		      "Lets a process that `sockaudit attach` audits go: every call redirected is put\n"
		      "back, its signal handlers too, the summary written and the log closed. The\n"
		      "library stays loaded and does nothing; `sockaudit attach` works again.\n", out);
	else
		fputs("usage: sockaudit attach [-o FILE|-] [-l warn|info|trace] [--comm NAMES] PID...\n\n"
		      "Audits a program that is already running, without a restart: its threads are\n"
		      "stopped for a few milliseconds (ptrace; no signal it can see), libsockaudit is\n"
		      "loaded with the program's own dlopen and every loaded object's calls to the\n"
		      "socket functions are pointed at it. The log is as under `sockaudit COMMAND`;\n"
		      "its init line says \"attached\": true. Needs the right to trace the process\n"
		      "(its user, or root; see kernel.yama.ptrace_scope).\n\n"
		      "  -o, --output FILE   the log (an absolute path is passed; %p becomes the pid);\n"
		      "                      '-' or stderr: the program's standard error. Default:\n"
		      "                      $SOCKAUDIT_LOG, else the program's standard error.\n"
		      "  -l, --level LEVEL   warn, info or trace. Default: $SOCKAUDIT_LEVEL, else info.\n"
		      "      --comm NAMES    audit only if the program's name is in the comma list.\n", out);
}

/* Why we may not trace pid, in words a person can act on. */
static void say_no_trace(pid_t pid, int err, char *why, size_t cap)
{
	char path[64], line[256];
	FILE *f;
	long scope = -1, uid = -1, tracer = 0;

	if ((f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re"))) {
		if (fscanf(f, "%ld", &scope) != 1)
			scope = -1;
		fclose(f);
	}
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re"))) {
		while (fgets(line, sizeof line, f)) {
			sscanf(line, "Uid: %ld", &uid);
			sscanf(line, "TracerPid: %ld", &tracer);
		}
		fclose(f);
	}
	if (tracer > 0)
		snprintf(why, cap, "process %d is already traced by process %ld (a debugger or strace): detach it first",
			 (int)pid, tracer);
	else if (scope == 3)
		snprintf(why, cap, "kernel.yama.ptrace_scope is 3: no process may be traced until a reboot");
	else if (uid >= 0 && uid != (long)geteuid() && geteuid() != 0)
		snprintf(why, cap, "process %d runs as uid %ld and we as %ld: run as that user or as root", (int)pid,
			 uid, (long)geteuid());
	else if (scope >= 1 && geteuid() != 0)
		snprintf(why, cap, "kernel.yama.ptrace_scope is %ld: only root (CAP_SYS_PTRACE) may trace a process "
			 "that is not its child (or: sysctl -w kernel.yama.ptrace_scope=0)", scope);
	else
		snprintf(why, cap, "not allowed to trace process %d (%s): run as root or with CAP_SYS_PTRACE", (int)pid,
			 strerror(err));
}

/* The settings as an environment: our SOCKAUDIT_* with the options over
 * them. Packed for the process: pointers, then the strings. */
struct settings {
	char *v[40];
	int n;
};

static void set(struct settings *s, const char *name, const char *value)
{
	size_t k = strlen(name);

	for (int i = 0; i < s->n; i++)
		if (strncmp(s->v[i], name, k) == 0 && s->v[i][k] == '=') {
			free(s->v[i]);
			s->v[i] = s->v[--s->n];
			break;
		}
	if (value && s->n < 39 && asprintf(&s->v[s->n], "%s=%s", name, value) > 0)
		s->n++;
}

static size_t pack(const struct settings *s, uintptr_t at, char *buf, size_t cap)
{
	size_t ptrs = (size_t)(s->n + 1) * sizeof(uintptr_t), o = ptrs;

	if (ptrs > cap)
		return 0;
	for (int i = 0; i < s->n; i++) {
		size_t l = strlen(s->v[i]) + 1;
		uintptr_t p = at + o;

		if (o + l > cap)
			return 0;
		memcpy(buf + i * sizeof p, &p, sizeof p);
		memcpy(buf + o, s->v[i], l);
		o += l;
	}
	memset(buf + s->n * sizeof(uintptr_t), 0, sizeof(uintptr_t));
	return (o + 15) & ~(size_t)15;
}

static int refuse(pid_t pid, const char *why)
{
	fprintf(stderr, "sockaudit attach: %d: %s; the process is as it was\n", (int)pid, why);
	return 1;
}

/* The library this process can load: ours (the musl attach build for a
 * musl program), at the same file inside the process's root. */
static int pick(pid_t pid, int musl, char *lib, size_t cap, char *why, size_t wcap)
{
	const char *name = musl ? SA_MUSL_ATTACH_LIB_NAME : SA_LIB_NAME;
	char there[PATH_MAX + 64];
	struct stat a, b;

	if (cli_find_library(name, lib, cap) != 0) {
		snprintf(why, wcap, "%s is not installed beside sockaudit%s", name, musl ? " (make musl builds it)" : "");
		return -1;
	}
	snprintf(there, sizeof there, "/proc/%d/root%s", (int)pid, lib);
	if (stat(lib, &a) != 0 || stat(there, &b) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		snprintf(why, wcap, "the process does not see %.300s (another mount namespace: a container?); "
			 "install the library at that path inside it", lib);
		return -1;
	}
	return 0;
}

static void settings_from(struct settings *s, const char *out, const char *level, const char *comm)
{
	extern char **environ;
	char abs[PATH_MAX + 8];

	s->n = 0;
	for (char **e = environ; *e && s->n < 32; e++)
		if (strncmp(*e, "SOCKAUDIT_", 10) == 0 && strncmp(*e, "SOCKAUDIT_LAUNCHED=", 19) != 0)
			s->v[s->n++] = strdup(*e);
	if (out && (!strcmp(out, "-") || !strcmp(out, "stderr")))
		set(s, "SOCKAUDIT_LOG", "stderr");
	else if (out && out[0] != '/' && strchr(out, ':') == NULL && strcmp(out, "syslog") && strcmp(out, "journal")) {
		char cwd[PATH_MAX];

		snprintf(abs, sizeof abs, "%s/%s", getcwd(cwd, sizeof cwd) ? cwd : ".", out);
		set(s, "SOCKAUDIT_LOG", abs);
	} else if (out)
		set(s, "SOCKAUDIT_LOG", out);
	if (level)
		set(s, "SOCKAUDIT_LEVEL", level);
	if (comm)
		set(s, "SOCKAUDIT_COMM", comm);
}

static const char *attach_said(long r)
{
	switch (r) {
	case 1: return "already audited (preloaded or attached)";
	case 2: return "the settings audit nothing in this program (SOCKAUDIT_DISABLE or --comm)";
	case 3: return "no call of it could be redirected";
	case 4: return "the loaded library has no wrappers (another build?)";
	default: return "the library refused";
	}
}

static int comm_of(pid_t pid, char *comm, size_t cap)
{
	char p[64];
	FILE *f;

	snprintf(p, sizeof p, "/proc/%d/comm", (int)pid);
	comm[0] = 0;
	if (!(f = fopen(p, "re")))
		return -1;
	if (fgets(comm, (int)cap, f))
		comm[strcspn(comm, "\n")] = 0;
	fclose(f);
	return 0;
}

/* Checks made before the process is touched; 0, or 1 refused (said). */
static int check(pid_t pid, int *musl)
{
	char p[64], obj[PATH_MAX];
	uintptr_t base;
	int fd;

	if (pid <= 0 || pid == getpid())
		return refuse(pid, "not a process we can attach to");
	snprintf(p, sizeof p, "/proc/%d/exe", (int)pid);
	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0) {
		if (errno == ENOENT)
			return refuse(pid, "no such process");
		if (errno == EACCES || errno == EPERM) {
			char why[400];

			say_no_trace(pid, errno, why, sizeof why);
			return refuse(pid, why);
		}
		/* A kernel thread has no exe. */
		return refuse(pid, "no program file (a kernel thread?)");
	}
	if (cli_is_go_program(fd)) {
		close(fd);
		return refuse(pid, "a Go program makes its own system calls, past any library: nothing to redirect");
	}
	close(fd);
	*musl = remote_object(pid, musl_names, obj, sizeof obj, &base) == 0;
	if (!*musl && remote_object(pid, glibc_names, obj, sizeof obj, &base) != 0)
		return refuse(pid, "a static program (no C library loaded): its calls cannot be redirected");
	return 0;
}

static const char *log_of(const struct settings *s)
{
	for (int i = 0; i < s->n; i++)
		if (strncmp(s->v[i], "SOCKAUDIT_LOG=", 14) == 0 && strcmp(s->v[i] + 14, "stderr") != 0)
			return s->v[i] + 14;
	return "the program's standard error";
}

/* dlopen's own words for a failure (dlerror), when the process has it. */
static void dlopen_failed(pid_t pid, const char *libc, uintptr_t base, char *why, size_t cap)
{
	uintptr_t fn = remote_sym(pid, libc, base, "dlerror");
	char msg[300] = "";
	long r = 0;

	if (fn && inj_call(&J, fn, NULL, 0, NULL, 0, NULL, &r, why, cap) == 0 && r)
		inj_read(&J, (uintptr_t)r, msg, sizeof msg - 1);
	msg[sizeof msg - 1] = 0;
	snprintf(why, cap, "its dlopen could not load the library%s%s", msg[0] ? ": " : "", msg);
}

/* The library loaded into the stopped process; 0, or -1 with why. */
static int load(pid_t pid, int musl, const char *lib, char *ours, size_t cap, uintptr_t *our_base, char *why,
		size_t wcap)
{
	char libc[PATH_MAX];
	uintptr_t base, fn;
	long args[2], r = 0, mode = 2 /* RTLD_NOW */;
	size_t len = strlen(lib) + 1;

	if (remote_object(pid, musl ? musl_names : glibc_names, libc, sizeof libc, &base) != 0)
		return snprintf(why, wcap, "no C library found in its memory"), -1;
	if (!(fn = remote_sym(pid, libc, base, "dlopen")) && !musl) {
		fn = remote_sym(pid, libc, base, "__libc_dlopen_mode");   /* glibc before 2.34 */
		mode |= 0x80000000;                                       /* __RTLD_DLOPEN */
	}
	if (!fn)
		return snprintf(why, wcap, "no dlopen in its C library (%.300s)", libc), -1;
	args[0] = (long)inj_data_at(&J, len);
	args[1] = mode;
	if (inj_call(&J, fn, args, 2, lib, len, NULL, &r, why, wcap) != 0)
		return -1;
	if (!r)
		return dlopen_failed(pid, libc, base, why, wcap), -1;
	if (remote_object(pid, our_names, ours, cap, our_base) != 0)
		return snprintf(why, wcap, "the library loaded but is not in the process's maps"), -1;
	return 0;
}

static int attach_one(pid_t pid, const struct settings *s)
{
	char why[600], lib[PATH_MAX], ours[PATH_MAX], comm[32], buf[8192];
	uintptr_t our_base = 0, fn, at;
	long r = -1, arg;
	int musl = 0, loaded, rc;
	size_t len;
	double ms;

	if (check(pid, &musl))
		return 1;
	loaded = remote_object(pid, our_names, ours, sizeof ours, &our_base) == 0;
	if (!loaded && pick(pid, musl, lib, sizeof lib, why, sizeof why) != 0)
		return refuse(pid, why);
	comm_of(pid, comm, sizeof comm);
	if ((rc = inj_stop_all(&J, pid, why, sizeof why)) != 0) {
		inj_release(&J);
		if (rc == -EPERM || rc == -EACCES)
			say_no_trace(pid, -rc, why, sizeof why);
		return refuse(pid, why);
	}
	if (inj_prepare(&J, why, sizeof why) != 0 ||
	    (!loaded && load(pid, musl, lib, ours, sizeof ours, &our_base, why, sizeof why) != 0))
		goto fail;
	if (!(fn = remote_sym(pid, ours, our_base, "sockaudit_attach"))) {
		snprintf(why, sizeof why, "the library loaded in it (%.300s) has no sockaudit_attach: an older build", ours);
		goto fail;
	}
	len = pack(s, 0, buf, sizeof buf);   /* its size, then its place */
	at = inj_data_at(&J, len);
	pack(s, at, buf, sizeof buf);
	arg = (long)at;
	if (inj_call(&J, fn, &arg, 1, buf, len, NULL, &r, why, sizeof why) != 0)
		goto fail;
	ms = inj_release(&J);
	if (r != 0) {
		fprintf(stderr, "sockaudit attach: %d (%s): %s\n", (int)pid, comm, attach_said(r));
		return 1;
	}
	printf("sockaudit attach: %d (%s): attached; %d thread%s stopped for %.1f ms; log: %s\n", (int)pid, comm,
	       J.n, J.n == 1 ? "" : "s", ms, log_of(s));
	return 0;
fail:
	inj_release(&J);
	fprintf(stderr, "sockaudit attach: %d (%s): %s; the process runs on%s\n", (int)pid, comm, why,
		loaded || !our_base ? "" : " (the library stays loaded, inactive)");
	return 1;
}

static int detach_one(pid_t pid)
{
	char why[600], ours[PATH_MAX], comm[32];
	uintptr_t base, fn;
	long r = -1;
	int musl, rc;
	double ms;

	if (check(pid, &musl))
		return 1;
	comm_of(pid, comm, sizeof comm);
	if (remote_object(pid, our_names, ours, sizeof ours, &base) != 0 ||
	    !(fn = remote_sym(pid, ours, base, "sockaudit_detach"))) {
		fprintf(stderr, "sockaudit detach: %d (%s): not attached (no libsockaudit in it)\n", (int)pid, comm);
		return 1;
	}
	if ((rc = inj_stop_all(&J, pid, why, sizeof why)) != 0) {
		inj_release(&J);
		if (rc == -EPERM || rc == -EACCES)
			say_no_trace(pid, -rc, why, sizeof why);
		fprintf(stderr, "sockaudit detach: %d (%s): %s\n", (int)pid, comm, why);
		return 1;
	}
	rc = inj_prepare(&J, why, sizeof why) == 0 && inj_call(&J, fn, NULL, 0, NULL, 0, NULL, &r, why, sizeof why) == 0;
	ms = inj_release(&J);
	if (!rc) {
		fprintf(stderr, "sockaudit detach: %d (%s): %s\n", (int)pid, comm, why);
		return 1;
	}
	if (r != 0) {
		fprintf(stderr, "sockaudit detach: %d (%s): not attached (preloaded, or detached already)\n", (int)pid,
			comm);
		return 1;
	}
	printf("sockaudit detach: %d (%s): detached; %d thread%s stopped for %.1f ms\n", (int)pid, comm, J.n,
	       J.n == 1 ? "" : "s", ms);
	return 0;
}

static int pids(int argc, char **argv, int detach, const struct settings *s)
{
	int rc = 0;

	if (optind >= argc) {
		usage(stderr, detach);
		return 2;
	}
	for (int i = optind; i < argc; i++) {
		char *end;
		long p = strtol(argv[i], &end, 10);

		if (!*argv[i] || *end || p <= 0 || p > INT_MAX) {
			fprintf(stderr, "sockaudit %s: '%s' is not a process id\n", detach ? "detach" : "attach", argv[i]);
			rc = 2;
			continue;
		}
		if ((detach ? detach_one((pid_t)p) : attach_one((pid_t)p, s)) != 0 && !rc)
			rc = 1;
	}
	return rc;
}

int cli_attach(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' }, { "level", required_argument, NULL, 'l' },
		{ "comm", required_argument, NULL, 'c' },   { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *level = NULL, *comm = NULL;
	struct settings s;
	int c;

	while ((c = getopt_long(argc, argv, "+o:l:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'l': level = optarg; break;
		case 'c': comm = optarg; break;
		case 'h': usage(stdout, 0); return 0;
		default: usage(stderr, 0); return 2;
		}
	}
	if (level && strcmp(level, "warn") && strcmp(level, "info") && strcmp(level, "trace")) {
		fprintf(stderr, "sockaudit attach: --level is warn, info or trace, not '%s'\n", level);
		return 2;
	}
	settings_from(&s, out, level, comm);
	return pids(argc, argv, 0, &s);
}

int cli_detach(int argc, char **argv)
{
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	int c;

	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout, 1);
			return 0;
		}
		usage(stderr, 1);
		return 2;
	}
	return pids(argc, argv, 1, NULL);
}
