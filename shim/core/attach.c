/*
 * attach.c: the library in a program that is already running. `sockaudit
 * attach PID` (cli/attach) stops the program's threads, loads this library
 * with the program's own dlopen and calls sockaudit_attach() on one of its
 * threads; `sockaudit detach PID` calls sockaudit_detach() the same way.
 *
 * Attach: the settings the tool passed (SOCKAUDIT_LOG, _LEVEL, _COMM, as
 * an environment) in place of the start's, the set-up as at a first call
 * (its init line says "attached"), every loaded object's GOT slots for the
 * calls we wrap pointed at our wrappers (got.c), and the signal handlers
 * the program installed before given the trampoline; the objects it loads
 * later with dlopen get the same as they come. Listeners and
 * connections open at that moment are learnt as inherited ones are, at
 * their next call (a thread blocked in accept() is audited from its next
 * accept).
 *
 * Detach: the slots and handlers put back, the summary written, the log
 * closed. The library stays mapped and passes every call through (a call
 * in flight in a wrapper returns through it); unloading it under running
 * threads would not be safe. An attach after a detach sets up again.
 */
#include <signal.h>
#include <time.h>

#include "core/core.h"

/* The names a preloaded run interposes (shim/exports.map), ours in place.
 * Fixed-width strings, not pointers: no relocation at every load. */
static const char wrapped[][16] = {
	"socket", "socketpair", "setsockopt", "getsockopt", "listen", "accept", "accept4", "connect",
	"close", "close_range", "closefrom", "dup", "dup2", "dup3",
	"read", "__read_chk", "write", "recv", "__recv_chk", "send", "recvfrom", "__recvfrom_chk", "sendto",
	"recvmsg", "sendmsg", "readv", "writev",
	"sigaction", "signal", "syscall", "vfork", "clone", "_exit", "_Exit", "unshare", "setns",
	"execve", "execv", "execvp", "execvpe", "execl", "execlp", "execle", "fexecve", "posix_spawn", "posix_spawnp",
};
#define NWRAPPED (sizeof wrapped / sizeof wrapped[0])
/* Ours, and one more: "dlopen", whose slots go to attach_dlopen below. */
static const char *names[NWRAPPED + 1];
static void *ours[NWRAPPED + 1];
static int attached, detached;

/* The objects a program loads after the attach (a module, a plugin) are
 * redirected as they come: its dlopen calls come here. */
static void *attach_dlopen(const char *file, int mode)
{
	static void *(*real)(const char *, int);
	void *h;

	if (!real)
		real = (void *(*)(const char *, int))sa_real_sym("dlopen");
	if (!real)
		return NULL;
	h = real(file, mode);
	if (h && __atomic_load_n(&attached, __ATOMIC_ACQUIRE))
		sa_got_patch(names, (void *const *)ours, NWRAPPED + 1);
	return h;
}

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * 0 attached; 1 already audited (preloaded, or attached before); 2 the
 * settings audit nothing here (SOCKAUDIT_DISABLE, a SOCKAUDIT_COMM that
 * leaves this program out); 3 no slot could be changed; 4 none of our
 * wrappers found in our own table.
 */
SA_EXPORT int sockaudit_attach(char **settings)
{
	enum sa_run_state st = sa_run_state();
	size_t i;
	int n;

	if (st == SA_RUN_ACTIVE || st == SA_RUN_INITIALIZING)
		return 1;
	if (st == SA_RUN_DISABLED && !detached)
		return 2;   /* preloaded, and its settings say nothing here */
	for (i = 0; i < NWRAPPED; i++) {
		names[i] = wrapped[i];
		if (!ours[i] && !(ours[i] = sa_self_sym(wrapped[i])))
			return 4;
	}
	names[NWRAPPED] = "dlopen";
	ours[NWRAPPED] = (void *)attach_dlopen;
	sa_env_capture_attach(settings);
	sa_attached_at = wall_now();
	sa_sink_reopen_allowed();
	if (detached)
		sa_init_again();
	else
		sa_setup_slow();
	if (!sa_active())
		return 2;
	attached = 1;
	detached = 0;
	sa_sig_adopt_all();
	n = sa_got_patch(names, (void *const *)ours, NWRAPPED + 1);
	if (n <= 0 && !sa_got_patched()) {
		sockaudit_detach();
		return 3;
	}
	return 0;
}

/* 0 detached; 1 not attached (nothing changed). */
SA_EXPORT int sockaudit_detach(void)
{
	if (!attached)
		return 1;
	sa_got_restore();
	sa_sig_release_all();
	sa_lifecycle_summary();
	sa_ticker_end();
	sa_run_set_state(SA_RUN_DISABLED);
	sa_sink_close();
	attached = 0;
	detached = 1;
	return 0;
}
