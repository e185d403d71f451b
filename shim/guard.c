/*
 * guard.c: one-time init, the per-thread re-entry guard, fork handling,
 * and the process's identity (pid, tid, comm) and config.
 *
 * Init is cheap and happens in our constructor (so the stderr we keep is
 * the one the process started with, before nginx points fd 2 at its
 * error.log) and again lazily from any wrapper, because another library's
 * constructor may call socket() before ours runs. The init event is
 * written with the first line of each process. Must never exit, abort or
 * block the host; after fork, only the forking thread exists, so the child
 * handler re-creates every lock instead of unlocking.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "internal.h"
#include "sockaudit.h"

__thread int sa_in_shim __attribute__((tls_model("initial-exec")));
static __thread pid_t tid_cache __attribute__((tls_model("initial-exec")));

enum { ST_NEW, ST_INITIALIZING, ST_ACTIVE, ST_DISABLED };
static int state = ST_NEW;
static struct sa_config cfg;
static pid_t pid;
static char comm[64] = "?";
static unsigned comm_gen;   /* bumped whenever comm changes */
static int init_emitted;
static int sink_err;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/*
 * Whether [p, p + n) lies in this thread's stack, between our own frame and
 * the stack's top: frames of our callers, so mapped, and readable without a
 * fault. Lets accept's wrapper read the host's addrlen before the call
 * (nginx keeps it in a local) and take the peer from the host's buffer
 * after it, instead of a getpeername() per line (1 % of an nginx worker at
 * trace level, bench/profile.sh). Not on a signal stack, a coroutine's
 * stack or anything we cannot place: then 0, and the caller asks the kernel.
 * The bounds are read once per thread (for the main thread glibc parses
 * /proc/self/maps).
 */
static __thread uintptr_t stack_lo __attribute__((tls_model("initial-exec")));
static __thread uintptr_t stack_hi __attribute__((tls_model("initial-exec")));

int sa_stack_holds(const void *p, size_t n)
{
	volatile char here = 0;
	uintptr_t a = (uintptr_t)p, me = (uintptr_t)&here;

	if (SA_UNLIKELY(!stack_hi)) {
		pthread_attr_t at;
		void *lo;
		size_t sz;

		stack_lo = stack_hi = 1;   /* unknown unless glibc tells us */
		if (pthread_getattr_np(pthread_self(), &at) == 0) {
			if (pthread_attr_getstack(&at, &lo, &sz) == 0 && sz) {
				stack_lo = (uintptr_t)lo;
				stack_hi = (uintptr_t)lo + sz;
			}
			pthread_attr_destroy(&at);
		}
	}
	(void)here;
	return me >= stack_lo && me < stack_hi && a >= me && n <= stack_hi - a && a < stack_hi;
}

static void read_comm(void)
{
	ssize_t n;
	int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	n = sa_real.read(fd, comm, sizeof comm - 1);
	sa_real.close(fd);
	if (n <= 0)
		return;
	comm[n] = '\0';
	if (comm[n - 1] == '\n')
		comm[n - 1] = '\0';
	__atomic_add_fetch(&comm_gen, 1, __ATOMIC_RELEASE);
}

static void atfork_prepare(void)
{
	sa_fdtab_atfork_prepare();
	sa_sink_atfork_prepare();
}

static void atfork_parent(void)
{
	sa_sink_atfork_parent();
	sa_fdtab_atfork_parent();
}

static void atfork_child(void)
{
	struct sa_config c;

	sa_sink_atfork_child();
	sa_fdtab_atfork_child();
	tid_cache = 0;
	pid = (pid_t)syscall(SYS_getpid);
	/* A new process: its own init line, its own counts, and its own file
	 * when the path names the pid (%p). */
	init_emitted = 0;
	sa_event_counts_reset();
	sa_stats_reset_after_fork();
	sa_config_load(&c, secure_getenv, pid);
	if (c.sink == SA_SINK_PATH && strcmp(c.path, cfg.path) != 0) {
		memcpy(cfg.path, c.path, sizeof cfg.path);
		sa_sink_reopen_path(cfg.path);
	}
}

static void do_init(void)
{
	int saved = errno;

	sa_in_shim++;
	state = ST_INITIALIZING;
	sa_real_init();
	pid = getpid();
	sa_config_load(&cfg, secure_getenv, pid);
	read_comm();
	if (cfg.disable || !sa_config_comm_match(cfg.comm, comm)) {
		__atomic_store_n(&state, ST_DISABLED, __ATOMIC_RELEASE);
		sa_in_shim--;
		errno = saved;
		return;
	}
	sink_err = sa_sink_open(&cfg);
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	__atomic_store_n(&state, ST_ACTIVE, __ATOMIC_RELEASE);
	sa_in_shim--;
	errno = saved;
}

int sa_ensure_init(void)
{
	int st = __atomic_load_n(&state, __ATOMIC_ACQUIRE);

	if (SA_LIKELY(st == ST_ACTIVE))
		return 1;
	if (st != ST_NEW)
		return 0;   /* disabled, or being set up: pass through */
	pthread_once(&once, do_init);
	return __atomic_load_n(&state, __ATOMIC_ACQUIRE) == ST_ACTIVE;
}

int sa_active(void)
{
	return __atomic_load_n(&state, __ATOMIC_ACQUIRE) == ST_ACTIVE;
}

const struct sa_config *sa_config(void)
{
	return sa_active() ? &cfg : NULL;
}

void sa_guard_configure(const struct sa_config *c, const char *name)
{
	cfg = *c;
	pid = getpid();
	tid_cache = 0;
	if (strcmp(comm, name) != 0) {
		snprintf(comm, sizeof comm, "%s", name);
		__atomic_add_fetch(&comm_gen, 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&state, ST_ACTIVE, __ATOMIC_RELEASE);
}

pid_t sa_pid(void)
{
	return pid;
}

pid_t sa_tid(void)
{
	if (SA_UNLIKELY(!tid_cache))
		tid_cache = (pid_t)syscall(SYS_gettid);
	return tid_cache;
}

const char *sa_comm(void)
{
	return comm;
}

unsigned sa_comm_gen(void)
{
	return __atomic_load_n(&comm_gen, __ATOMIC_ACQUIRE);
}

static json_t *sysctl_json(const char *path)
{
	long v;

	return sa_read_sysctl(path, &v) == 0 ? json_integer(v) : json_null();
}

void sa_emit_init_once(double ts)
{
	struct utsname u;
	json_t *ev;
	int i;

	if (__atomic_exchange_n(&init_emitted, 1, __ATOMIC_ACQ_REL))
		return;
	ev = sa_event_new("init", -1);
	if (!ev)
		return;
	/* Same timestamp as the line that made us write it, so init is never
	 * later than the first event it introduces. */
	if (ts > 0)
		json_object_set_new(ev, "ts", json_real(ts));
	json_object_set_new(ev, "version", json_string(SOCKAUDIT_VERSION_STR));
	json_object_set_new(ev, "level", json_string(sa_level_name(cfg.level)));
	json_object_set_new(ev, "sink", sa_json_str(sa_sink_describe()));
	json_object_set_new(ev, "kernel", uname(&u) == 0 ? sa_json_str(u.release) : json_null());
	json_object_set_new(ev, "somaxconn", sysctl_json("/proc/sys/net/core/somaxconn"));
	json_object_set_new(ev, "tcp_syncookies", sysctl_json("/proc/sys/net/ipv4/tcp_syncookies"));
	json_object_set_new(ev, "tcp_synack_retries", sysctl_json("/proc/sys/net/ipv4/tcp_synack_retries"));
	json_object_set_new(ev, "tcp_syn_linear_timeouts",
			    sysctl_json("/proc/sys/net/ipv4/tcp_syn_linear_timeouts"));
	sa_event_count("init");
	sa_event_write(ev);

	/* One warning line per bad SOCKAUDIT_* value (and an unusable sink). */
	for (i = 0; i < cfg.nwarnings; i++) {
		ev = sa_event_new("warning", -1);
		json_object_set_new(ev, "severity", json_string("warn"));
		json_object_set_new(ev, "variable", sa_json_str(cfg.warnings[i].var));
		json_object_set_new(ev, "value", sa_json_str(cfg.warnings[i].value));
		json_object_set_new(ev, "msg", sa_json_str(cfg.warnings[i].why));
		sa_event_count("warning");
		sa_event_write(ev);
	}
	if (sink_err) {
		char why[200], value[32];
		ev = sa_event_new("warning", -1);
		snprintf(why, sizeof why, "cannot use this log sink (%s); writing to stderr instead",
			 sa_errno_name(-sink_err));
		json_object_set_new(ev, "severity", json_string("warn"));
		json_object_set_new(ev, "variable", json_string("SOCKAUDIT_LOG"));
		if (cfg.sink == SA_SINK_FD)
			snprintf(value, sizeof value, "fd:%d", cfg.sink_fd);
		else
			snprintf(value, sizeof value, "%s", cfg.sink == SA_SINK_SYSLOG ? "syslog" : "stderr");
		json_object_set_new(ev, "value", sa_json_str(cfg.sink == SA_SINK_PATH ? cfg.path : value));
		json_object_set_new(ev, "msg", json_string(why));
		sa_event_count("warning");
		sa_event_write(ev);
	}
}

__attribute__((constructor)) static void sa_ctor(void)
{
	sa_ensure_init();
}

__attribute__((destructor)) static void sa_dtor(void)
{
	/* A process that never made an audited call stays silent. */
	if (!sa_active() || sa_in_shim || !sa_event_any())
		return;
	sa_in_shim++;
	sa_stats_summary();
	sa_in_shim--;
}

/* Public API. */
SA_EXPORT const char *sockaudit_version(void)
{
	return SOCKAUDIT_VERSION_STR;
}

SA_EXPORT int sockaudit_enabled(void)
{
	return sa_ensure_init();
}
