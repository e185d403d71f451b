/*
 * lifecycle.c: the set-up (sa_lifecycle_init; firstcall.c decides which
 * call runs it), fork handling, the init and warning lines, the
 * constructor, and sockaudit_version. The destructor and
 * sockaudit_enabled set up if need be: they are in firstcall.c.
 *
 * Init happens at the first call that needs it (a socket call, sigaction,
 * clone), from any wrapper, also before our constructor ran (another
 * library's constructor may call socket()). The constructor only keeps the
 * SOCKAUDIT_* environment and the start directory as the process started. The init event is
 * written with the first line of each process (registered with line/ as
 * its first-line hook). Must never exit, abort or block the host. The
 * shim holds no lock that a fork (even one from a signal handler) could
 * meet held; the child handler only resets per-process state.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core/core.h"

static int init_emitted SA_PROC_PAGE;
static int summary_done SA_PROC_PAGE;
static int sink_err;
/* This process is the one `sockaudit` exec'd: SOCKAUDIT_LAUNCHED (set by
 * cli/launcher.c) holds our pid. A forked child has another pid and is
 * not; a program it execs keeps the pid and is. */
#define SA_ENV_LAUNCHED "SOCKAUDIT_LAUNCHED"
static int launched SA_PROC_PAGE;
static int init_written SA_PROC_PAGE;             /* this process's init line reached the sink */
static int atfork_registered;
double sa_attached_at;   /* wall-clock seconds of the attach that set us up, 0: preloaded */

static json_t *sysctl_json(const char *path)
{
	long v;

	return sa_read_sysctl(path, &v) == 0 ? json_integer(v) : json_null();
}

static void write_warning(const char *var, const char *value, const char *why)
{
	json_t *ev = sa_event_new("warning", -1);

	if (!ev)
		return;
	json_object_set_new(ev, "severity", json_string("warn"));
	json_object_set_new(ev, "variable", sa_json_str(var));
	json_object_set_new(ev, "value", sa_json_str(value));
	json_object_set_new(ev, "msg", sa_json_str(why));
	sa_event_count("warning");
	sa_event_write(ev);
}

/* The first-line hook: the init line, then one warning per bad SOCKAUDIT_*
 * value (and an unusable sink), once per process. */
static void emit_init_once(double ts)
{
	const struct sa_config *cfg = sa_cfg_slot();
	struct utsname u;
	json_t *ev;
	sigset_t old;
	int i, ready;
	uint64_t d0;

	sa_signals_hold(&old);   /* before the claim: a jump between the two would lose the init line */
	if (__atomic_exchange_n(&init_emitted, 1, __ATOMIC_ACQ_REL)) {
		sa_signals_release(&old);
		return;
	}
	/* The first line: a path or syslog sink is opened now, not before. */
	ready = sa_sink_ready();
	if (ready && !sink_err)
		sink_err = ready;
	ev = sa_event_new("init", -1);
	if (!ev) {
		sa_signals_release(&old);
		return;
	}
	/* Same timestamp as the line that made us write it, so init is never
	 * later than the first event it introduces. */
	if (ts > 0)
		json_object_set_new(ev, "ts", json_real(ts));
	json_object_set_new(ev, "version", json_string(SOCKAUDIT_VERSION_STR));
	if (sa_attached_at > 0) {
		json_object_set_new(ev, "attached", json_true());
		json_object_set_new(ev, "attached_at", json_real(sa_attached_at));
	}
	json_object_set_new(ev, "level", json_string(sa_level_name(cfg->level)));
	json_object_set_new(ev, "sink", sa_json_str(sa_sink_describe()));
	json_object_set_new(ev, "kernel", uname(&u) == 0 ? sa_json_str(u.release) : json_null());
	json_object_set_new(ev, "somaxconn", sysctl_json("/proc/sys/net/core/somaxconn"));
	json_object_set_new(ev, "tcp_syncookies", sysctl_json("/proc/sys/net/ipv4/tcp_syncookies"));
	json_object_set_new(ev, "tcp_synack_retries", sysctl_json("/proc/sys/net/ipv4/tcp_synack_retries"));
	json_object_set_new(ev, "tcp_syn_linear_timeouts",
			    sysctl_json("/proc/sys/net/ipv4/tcp_syn_linear_timeouts"));
	sa_identity_fields(ev);
	sa_event_count("init");
	d0 = sa_sink_dropped();
	sa_event_write(ev);
	init_written = sa_sink_dropped() == d0;

	for (i = 0; i < cfg->nwarnings; i++)
		write_warning(cfg->warnings[i].var, cfg->warnings[i].value, cfg->warnings[i].why);
	if (sink_err) {
		char why[200], value[32], eb[SA_ERRNO_NAME_MAX];

		if (sink_err == -EPERM && sa_sink_refused())
			snprintf(why, sizeof why, "refused the log path: it holds %s (not created by us, and not a regular "
				 "file of uid %ld with one link); writing to stderr instead", sa_sink_refused(), (long)geteuid());
		else if (cfg->sink == SA_SINK_JOURNAL)
			snprintf(why, sizeof why, "the journal cannot be reached (%s connecting to "
				 "/run/systemd/journal/socket: is systemd-journald running?); writing to stderr instead",
				 sa_errno_name(-sink_err, eb));
		else
			snprintf(why, sizeof why, "cannot use this log sink (%s); writing to stderr instead",
				 sa_errno_name(-sink_err, eb));
		if (cfg->sink == SA_SINK_FD)
			snprintf(value, sizeof value, "fd:%d", cfg->sink_fd);
		else
			snprintf(value, sizeof value, "%s", cfg->sink == SA_SINK_SYSLOG ? "syslog" : cfg->sink == SA_SINK_JOURNAL ? "journal" : "stderr");
		write_warning(SOCKAUDIT_ENV_LOG, cfg->sink == SA_SINK_PATH ? cfg->path : value, why);
	}
	sa_signals_release(&old);
}

/* Its own frame: the config (6 kB) on the stack of every forked child
 * would push the handler's calls onto stack pages it never used (each
 * written page is a copy-on-write fault). */
static __attribute__((noinline)) void reopen_for_pid(struct sa_config *cfg, int shares_fds)
{
	struct sa_config c;

	sa_config_load(&c, sa_env_get, sa_pid());
	if (c.sink == SA_SINK_PATH && strcmp(c.path, cfg->path) != 0) {
		memcpy(cfg->path, c.path, sizeof cfg->path);
		sa_sink_reopen_path(cfg->path, shares_fds);
	}
}

SA_FORK_TEXT void sa_lifecycle_new_process(void)
{
	sa_lifecycle_new_process_fds(0);
}

/* shares_fds: a clone(CLONE_FILES) child, whose fd table is its parent's. */
SA_FORK_TEXT void sa_lifecycle_new_process_fds(int shares_fds)
{
	struct sa_config *cfg = sa_cfg_slot();
	pid_t parent;

	if (__atomic_load_n(&sa_clock_traps, __ATOMIC_RELAXED) != SA_CLOCK_TRAPS)
		__atomic_store_n(&sa_clock_traps, SA_CLOCK_TRAPS, __ATOMIC_RELAXED);
	sa_sink_atfork_child();
	sa_fdtab_atfork_child();
	sa_tid_forget();
	/* A fork from a handler during a blocking call: the call is the
	 * parent's, never this child's to report. */
	if (__atomic_load_n(&sa_inflight.t0, __ATOMIC_RELAXED))
		sa_inflight_end();
	/* The pid is still the parent's (or 0: it never asked). */
	parent = __atomic_load_n(&sa_rt_proc.pid, __ATOMIC_RELAXED);
	if (sa_rt_proc.parent != parent)
		sa_rt_proc.parent = parent;
	sa_set_pid(0);   /* asked when first needed (sa_pid) */
	sa_proc_epoch_next();
	/* A new process: its own init line, its own counts, and its own file
	 * when the path names the pid (%p). Every reset writes only what is
	 * set (SA_ZERO): a child of a fork-per-connection server pays a page
	 * fault for each page it writes. */
	SA_ZERO(init_emitted);
	SA_ZERO(summary_done);
	SA_ZERO(launched);
	SA_ZERO(init_written);
	sa_event_counts_reset();
	sa_lines_written_reset();
	sa_summary_reset_after_fork();
	sa_unaudited_reset();
	sa_ticker_after_fork();
	if (cfg->path_pid)
		reopen_for_pid(cfg, shares_fds);
}

#ifdef __GLIBC__
extern void *__dso_handle SA_HIDDEN;
static int (*register_atfork)(void (*)(void), void (*)(void), void (*)(void), void *);
#endif

/* A line is about to be written in a process that no fork handler or
 * clone wrapper told us of (a raw clone system call made in assembly): the
 * reset, with the fd table's sharing asked of the kernel (kcmp; unknown:
 * taken as shared, so the parent's log fd is never closed under it). */
static void stamp_new_process(void)
{
	long pid = sa_syscall3_raw(SYS_getpid, 0, 0, 0), ppid = sa_syscall3_raw(SYS_getppid, 0, 0, 0);
	int err = errno, shared = 1;
#ifdef SYS_kcmp
	{
		/* 0: the same table; 1, 2, 3: another one; -1: cannot tell. */
		long r = sa_syscall(SYS_kcmp, pid, ppid, 2L /* KCMP_FILES */, 0L, 0L);

		shared = r < 1 || r > 3;
	}
#endif
	sa_lifecycle_new_process_fds(shared);
	sa_emit_stamp_arm();
	errno = err;
}

/* The process ends from inside a signal handler (the trampoline after a
 * handler that re-raises, the default-action catcher): a call of this
 * thread's still in flight first, then the summary. No set-up here: a
 * handler's calls never set the shim up (sa_lifecycle_end does, outside). */
void sa_lifecycle_end_in_handler(void)
{
	if (__atomic_load_n(&sa_inflight.t0, __ATOMIC_RELAXED) && !sa_in_vfork)
		sa_inflight_settle();
	sa_lifecycle_summary();
}

void sa_lifecycle_init(void)
{
	struct sa_config *cfg = sa_cfg_slot();
	int saved = errno;

	sa_in_shim++;
	sa_run_set_state(SA_RUN_INITIALIZING);
	/* Every real function and every name looked up later, in one pass:
	 * the audit code (shim/audit, kernel, state) calls sa_real.* without
	 * a check on the request path, a server's forked children inherit the
	 * table filled, and nothing walks the loader's list after this. */
	sa_real_init();
#ifndef __GLIBC__
	/* The musl build in a glibc process (a musl program exec'd a glibc
	 * one with LD_PRELOAD inherited; it needs no library, so glibc's
	 * loader takes it): its wrappers pass every call through, and it
	 * audits nothing in a C library it was not built for. */
	if (sa_real_sym("gnu_get_libc_version")) {
		sa_run_set_state(SA_RUN_DISABLED);
		sa_in_shim--;
		errno = saved;
		return;
	}
#else
	/* glibc's fork-handler registration (what libc_nonshared's
	 * pthread_atfork calls), looked up, not linked: musl has none, and a
	 * musl program that inherited LD_PRELOAD from an audited glibc one
	 * must still start. Not found: this is not glibc; audit nothing. */
	register_atfork = (int (*)(void (*)(void), void (*)(void), void (*)(void), void *))sa_real_sym("__register_atfork");
	if (!register_atfork) {
		sa_run_set_state(SA_RUN_DISABLED);
		sa_in_shim--;
		errno = saved;
		return;
	}
#endif
	sa_env_capture(NULL);
	sa_listener_hooks_init();
	sa_json_init();
	sa_set_pid(getpid());
	sa_config_load(cfg, sa_env_get, sa_pid());
	{
		const char *l = sa_env_get(SA_ENV_LAUNCHED);
		char *end;
		long v = l ? strtol(l, &end, 10) : 0;

		launched = l && *l && !*end && v == (long)sa_pid();
	}
	sa_comm_read();
	if (cfg->disable || cfg->comm_overflow || !sa_config_comm_match(cfg->comm, sa_comm())) {
		/* Failed closed on a bad SOCKAUDIT_COMM: audit nothing, but say
		 * why, with the warnings alone (no init line, no events). */
		if (cfg->comm_overflow && !cfg->disable) {
			int i;

			sink_err = sa_sink_open(cfg);
			for (i = 0; i < cfg->nwarnings; i++)
				write_warning(cfg->warnings[i].var, cfg->warnings[i].value, cfg->warnings[i].why);
		}
		sa_run_set_state(SA_RUN_DISABLED);
		sa_in_shim--;
		errno = saved;
		return;
	}
	sink_err = sa_sink_open(cfg);
	sa_emit_set_first_line(emit_init_once);
	sa_emit_set_notes(sa_unaudited_say);
	sa_emit_set_new_process(stamp_new_process);
	sa_emit_stamp_arm();
	/* No prepare handler: the shim holds no lock a fork could meet held
	 * (fork() from a signal handler runs the prepare handlers). Once: a
	 * child that inherited a set-up under way sets up again, and its
	 * handlers are its parent's. */
	if (!atfork_registered) {
		atfork_registered = 1;
#ifdef __GLIBC__
		register_atfork(NULL, sa_fd_forked, sa_lifecycle_new_process, &__dso_handle);
#else
		pthread_atfork(NULL, sa_fd_forked, sa_lifecycle_new_process);
#endif
	}
	sa_run_set_state(SA_RUN_ACTIVE);
	sa_in_shim--;
	errno = saved;
}


/* Only what cannot wait for the first call: the environment and start
 * directory as the process started (main may change both). Everything
 * else (the configuration, the real functions, the program name, the
 * fork handler) is set up by the first call that needs it: a program that
 * never makes one (/bin/true, most of a shell's children) pays only the
 * loader's work for our library. */
#ifdef __GLIBC__
/* glibc passes an ELF constructor (argc, argv, envp). */
SA_START_TEXT __attribute__((constructor)) static void sa_ctor(int argc, char **argv, char **envp)
{
	/* musl's loader, which takes this build when an audited glibc program
	 * execs a musl one, calls a constructor with no arguments: the three
	 * are then whatever their registers held. Used only when envp is
	 * where the kernel put it, right after argv's NULL (as at every
	 * exec, glibc passing what the kernel gave); otherwise environ, found
	 * by name (sa_env_capture(NULL)), not linked to: a link is a symbol
	 * lookup the loader makes at every exec. Compared as integers: with
	 * no arguments, argv is no pointer to do arithmetic on. */
	if ((uintptr_t)envp != (uintptr_t)argv + ((uintptr_t)(unsigned int)argc + 1) * sizeof(char *) || argc <= 0)
		envp = NULL;
#if defined(__aarch64__)
	sa_canary_init();
#endif
	sa_env_capture(envp);
	sa_exec_init(envp);
}
#else
SA_START_TEXT __attribute__((constructor)) static void sa_ctor(void)
{
#if defined(__aarch64__)
	sa_canary_init();
#endif
	sa_env_capture(NULL);
	sa_exec_init(NULL);
}
#endif

/* Whether fd 2 is where the lines went (the default stderr sink, fd:2, or
 * `-o - 2>&1`): a human line there would sit among the JSON. */
static int stderr_is_sink(dev_t dev, ino_t ino)
{
	int sfd = sa_sink_fd();
	dev_t sd;
	ino_t si;
	mode_t sm;

	if (sfd == 2)
		return 1;
	return sfd >= 0 && sa_sinkio_identify(sfd, &sd, &si, &sm) == 0 && sd == dev && si == ino;
}

/*
 * The launched process's last word, for the person who ran `sockaudit`:
 * lines that could not be written, said on stderr, once, as it ends:
 *   sockaudit: N lines were dropped (<reason>)
 *   sockaudit: no line was written to <sink>: <reason> (N lines dropped)
 * Never into a socket (an inetd client), never onto /dev/null, never
 * blocking (a pipe or tty through its own O_NONBLOCK description, dropped
 * when full; a background job on a tostop tty skips it), never among JSON
 * lines that did reach fd 2 (its last lines there are the warning and the
 * summary's dropped).
 */
static void exit_message(void)
{
	const char *why = NULL;
	uint64_t dropped = sa_sink_dropped(), unrep;
	char msg[640];
	dev_t dev;
	ino_t ino;
	mode_t mode;
	int n, fd, fl, none_written;
	ssize_t w;

	if (!dropped)
		return;
	unrep = sa_sink_take_unreported(&why);
	/* Not one line reached the sink: the init line (the first) did not,
	 * and no later line took the count of unreported drops. */
	none_written = !init_written && unrep == dropped;
	if (sa_sinkio_identify(2, &dev, &ino, &mode) != 0 || (fl = fcntl(2, F_GETFL)) < 0 ||
	    (fl & O_ACCMODE) == O_RDONLY || S_ISSOCK(mode) ||
	    (S_ISCHR(mode) && major(dev) == 1 && minor(dev) == 3))
		return;
	if (!none_written && stderr_is_sink(dev, ino) && !isatty(2))
		return;
	if (none_written)
		n = snprintf(msg, sizeof msg, "sockaudit: no line was written to %s: %s (%llu line%s dropped)\n",
			     sa_sink_describe(), why ? why : "the log destination failed",
			     (unsigned long long)dropped, dropped == 1 ? "" : "s");
	else
		n = snprintf(msg, sizeof msg, "sockaudit: %llu line%s dropped (%s)\n",
			     (unsigned long long)dropped, dropped == 1 ? " was" : "s were",
			     why ? why : "the log destination failed");
	if (n <= 0 || (size_t)n >= sizeof msg)
		return;
	if (S_ISFIFO(mode) || isatty(2)) {
		if (isatty(2) && !sa_sinkio_tty_writable(2))
			return;
		if (fl & O_NONBLOCK) {
			sa_sinkio_write_pipe(2, msg, (size_t)n);
			return;
		}
		fd = sa_sinkio_reopen_nonblock(2);
		if (fd < 0)
			return;      /* no /proc, or setuid: skip rather than block */
		w = sa_sinkio_write_pipe(fd, msg, (size_t)n);
		(void)w;
		sa_sinkio_close(fd);
		return;
	}
	sa_sinkio_write_raw(2, msg, (size_t)n);   /* a file or a device: does not wait on a reader */
}

/*
 * The summary, once per process, at every ending the shim can see: exit()
 * and return from main (our destructor, which exit() runs even from a
 * signal handler), _exit()/_Exit() (their wrappers), and a fatal signal the
 * host's handler re-raised (the trampoline, before the signal lands).
 * SIGKILL, and a fatal signal with no handler, end the process with no
 * code of ours running. Not in a vfork child (it shares our memory and
 * its own ending is the parent's business) nor while our own code runs
 * outside a host handler.
 */
void sa_lifecycle_summary(void)
{
	int err;

	if (!sa_active() || (sa_in_shim && !sa_in_signal) || sa_in_vfork ||
	    (!sa_event_any() && !sa_accept_active() && !sa_unaudited_any()))
		return;
	if (__atomic_exchange_n(&summary_done, 1, __ATOMIC_ACQ_REL))
		return;
	err = errno;   /* not before: an exit with nothing to say calls nothing of libc's */
	sa_in_shim++;
	sa_ticker_end();
	sa_summary_write();
	if (launched)
		exit_message();
	sa_in_shim--;
	errno = err;
}

/* Public API. */
SA_EXPORT const char *sockaudit_version(void)
{
	return SOCKAUDIT_VERSION_STR;
}
