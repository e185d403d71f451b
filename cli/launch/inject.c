/*
 * inject.c: calls made on one thread of a running process, under ptrace,
 * for `sockaudit attach` and `detach` (attach.c says what is called).
 *
 * Every thread is seized and interrupted (PTRACE_SEIZE + PTRACE_INTERRUPT:
 * no signal the program could see; a stopped process stays stopped), one
 * thread's registers and extended state saved, a function of the process
 * called with its return address 0 (the fault that ends it is ours and is
 * never delivered), the thread's state put back exactly (a system call it
 * was in restarts as after any stop), and every thread let go. A signal
 * that arrives for a thread meanwhile is held and delivered at the end.
 *
 * A call that does not come back within a second may be waiting for a lock
 * another stopped thread holds (malloc's, the loader's): the other threads
 * are let go then, and the call has 20 s more.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launch/inject.h"

#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202
#endif

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct inj_thread *find(struct inj *j, pid_t tid)
{
	for (int i = 0; i < j->n; i++)
		if (j->t[i].tid == tid)
			return &j->t[i];
	return NULL;
}

/* Waits for tid's next stop; a signal for it is held (pending) and the
 * thread let go on when go is set. 1 stopped by us or a group stop, 0
 * gone, -1 error. */
static int wait_stop(struct inj *j, struct inj_thread *t)
{
	int st;

	for (;;) {
		if (waitpid(t->tid, &st, __WALL) < 0)
			return errno == ECHILD ? 0 : -1;
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return 0;
		if (!WIFSTOPPED(st))
			continue;
		if (st >> 16 == PTRACE_EVENT_STOP) {
			int s = WSTOPSIG(st);

			t->group_stop = s == SIGSTOP || s == SIGTSTP || s == SIGTTIN || s == SIGTTOU;
			return 1;
		}
		/* A signal on its way to the thread: held, then the stop. */
		if (WSTOPSIG(st) > 0 && WSTOPSIG(st) < 65)
			t->pending |= 1ull << (WSTOPSIG(st) - 1);
		(void)j;
		return 1;
	}
}

int inj_stop_all(struct inj *j, pid_t pid, char *err, size_t cap)
{
	double t0 = now_s();
	int added;

	memset(j, 0, sizeof *j);
	j->pid = pid;
	j->caller = -1;
	do {
		char path[64];
		DIR *d;
		struct dirent *e;

		added = 0;
		snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
		if (!(d = opendir(path))) {
			snprintf(err, cap, "no process %d", (int)pid);
			return -ESRCH;
		}
		while ((e = readdir(d))) {
			pid_t tid = (pid_t)atoi(e->d_name);
			struct inj_thread *t;

			if (tid <= 0 || find(j, tid) || j->n == INJ_MAX_THREADS)
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, 0) != 0) {
				if (errno == ESRCH)
					continue;   /* ended meanwhile */
				closedir(d);
				snprintf(err, cap, "cannot trace thread %d: %s", (int)tid, strerror(errno));
				return -errno;
			}
			t = &j->t[j->n++];
			t->tid = tid;
			t->seized = 1;
			added++;
			if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) != 0 || wait_stop(j, t) <= 0)
				t->gone = 1;
		}
		closedir(d);
	} while (added);   /* threads made while we stopped the others */
	j->stopped_at = t0;
	return 0;
}

#if defined(__x86_64__)
/* Room below sp on its stack: the process's main stack grows on demand
 * (any room), another mapping has what lies between its start and sp. */
static int stack_room_ok(pid_t pid, uintptr_t sp)
{
	char maps[64], line[4608];
	FILE *f;
	int ok = 0;

	snprintf(maps, sizeof maps, "/proc/%d/maps", (int)pid);
	if (!(f = fopen(maps, "re")))
		return 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2 || sp < lo || sp >= hi)
			continue;
		ok = strstr(line, "[stack]") != NULL || sp - lo >= 128 * 1024;
		break;
	}
	fclose(f);
	return ok;
}

/*
 * The thread to call on, chosen once: the first (the main thread first)
 * whose registers we can read and whose stack has room for dlopen and our
 * set-up below where it stands (128 KiB, or the main stack): never a
 * coroutine's or signal handler's small stack, which the call could run
 * off.
 */
static struct inj_thread *caller(struct inj *j)
{
	if (j->caller >= 0 && j->caller < j->n && !j->t[j->caller].gone)
		return &j->t[j->caller];
	for (int i = 0; i < j->n; i++) {
		struct user_regs_struct r;

		if (j->t[i].gone || ptrace(PTRACE_GETREGS, j->t[i].tid, 0, &r) != 0 || !stack_room_ok(j->pid, r.rsp))
			continue;
		j->caller = i;
		return &j->t[i];
	}
	return NULL;
}

static int peek_write(pid_t pid, uintptr_t at, const void *p, size_t n)
{
	struct iovec l = { (void *)p, n }, r = { (void *)at, n };

	if (process_vm_writev(pid, &l, 1, &r, 1, 0) == (ssize_t)n)
		return 0;
	/* Not allowed by some kernels for a traced process's stack: word by word. */
	for (size_t o = 0; o < n; o += sizeof(long)) {
		long w = 0;

		errno = 0;
		w = ptrace(PTRACE_PEEKDATA, pid, (void *)(at + o), 0);
		if (errno)
			return -errno;
		memcpy(&w, (const char *)p + o, n - o < sizeof w ? n - o : sizeof w);
		if (ptrace(PTRACE_POKEDATA, pid, (void *)(at + o), (void *)w) != 0)
			return -errno;
	}
	return 0;
}
#endif

int inj_read(struct inj *j, uintptr_t at, void *p, size_t n)
{
	struct iovec l = { p, n }, r = { (void *)at, n };

	return process_vm_readv(j->pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -errno;
}

#if defined(__x86_64__)
static int save(struct inj *j, struct inj_thread *t)
{
	struct iovec v = { j->xstate, sizeof j->xstate };

	if (ptrace(PTRACE_GETREGS, t->tid, 0, &j->regs) != 0)
		return -errno;
	if (ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_X86_XSTATE, &v) == 0)
		j->xstate_len = v.iov_len;
	else if (ptrace(PTRACE_GETFPREGS, t->tid, 0, j->xstate) == 0)
		j->xstate_len = 0;   /* the legacy area only */
	else
		return -errno;
	j->saved = 1;
	return 0;
}

static int restore(struct inj *j, struct inj_thread *t)
{
	struct iovec v = { j->xstate, j->xstate_len };
	int r = 0;

	if (ptrace(PTRACE_SETREGS, t->tid, 0, &j->regs) != 0)
		r = -errno;
	if (j->xstate_len ? ptrace(PTRACE_SETREGSET, t->tid, (void *)NT_X86_XSTATE, &v) != 0
			  : ptrace(PTRACE_SETFPREGS, t->tid, 0, j->xstate) != 0)
		r = r ? r : -errno;
	return r;
}
#endif

int inj_prepare(struct inj *j, char *err, size_t cap)
{
#if defined(__x86_64__)
	struct inj_thread *t = caller(j);

	if (!t) {
		snprintf(err, cap, "no thread of process %d could be stopped with room on its stack for the call",
			 (int)j->pid);
		return -ESRCH;
	}
	if (!j->saved && save(j, t) != 0) {
		snprintf(err, cap, "cannot read thread %d's registers: %s", (int)t->tid, strerror(errno));
		return -EIO;
	}
	return 0;
#else
	(void)j;
	snprintf(err, cap, "attach is not built for this architecture yet");
	return -ENOSYS;
#endif
}

uintptr_t inj_data_at(const struct inj *j, size_t len)
{
#if defined(__x86_64__)
	return (j->regs.rsp - 128 - len) & ~(uintptr_t)15;   /* below the red zone, 16-aligned */
#else
	(void)j, (void)len;
	return 0;
#endif
}

#if defined(__x86_64__)
/* Lets the other threads go (a call that waits on one of them). */
static void release_others(struct inj *j, struct inj_thread *keep)
{
	for (int i = 0; i < j->n; i++) {
		struct inj_thread *t = &j->t[i];

		if (t == keep || !t->seized)
			continue;
		ptrace(PTRACE_DETACH, t->tid, 0, 0);
		t->seized = 0;
	}
}

/* Writes the data and a frame whose return address is 0 below the
 * thread's stack, points its registers at fn(args) and lets it run. */
static int start_call(struct inj *j, struct inj_thread *t, uintptr_t fn, const long *args, int nargs,
		      const void *data, size_t len, uintptr_t *data_at, char *err, size_t cap)
{
	struct user_regs_struct r = j->regs;
	uintptr_t sp, ra = 0, at;

	/* The data, then the frame. */
	sp = inj_data_at(j, len);
	at = sp;
	if (len && peek_write(j->pid, at, data, len) != 0) {
		snprintf(err, cap, "cannot write to process %d's stack: %s", (int)j->pid, strerror(errno));
		return -EIO;
	}
	if (data_at)
		*data_at = at;
	sp -= 8;   /* the return address: 0, a fault we catch */
	if (peek_write(j->pid, sp, &ra, sizeof ra) != 0) {
		snprintf(err, cap, "cannot write to process %d's stack: %s", (int)j->pid, strerror(errno));
		return -EIO;
	}
	r.rsp = sp;
	r.rip = fn;
	r.rax = 0;
	r.orig_rax = (unsigned long)-1;   /* not in a system call: nothing to restart */
	r.rdi = nargs > 0 ? (unsigned long)args[0] : 0;
	r.rsi = nargs > 1 ? (unsigned long)args[1] : 0;
	r.rdx = nargs > 2 ? (unsigned long)args[2] : 0;
	r.rcx = nargs > 3 ? (unsigned long)args[3] : 0;
	if (ptrace(PTRACE_SETREGS, t->tid, 0, &r) != 0 || ptrace(PTRACE_CONT, t->tid, 0, 0) != 0) {
		snprintf(err, cap, "cannot run thread %d: %s", (int)t->tid, strerror(errno));
		restore(j, t);
		return -EIO;
	}
	return 0;
}

/* Waits for the call to return into the 0 return address (a SIGSEGV at
 * rip 0) and takes its return value; other signals are kept for the
 * thread, and the other threads let go after a second. */
static int wait_return(struct inj *j, struct inj_thread *t, double t0, long *ret, char *err, size_t cap)
{
	int st, released = 0;


	for (;;) {
		pid_t w = waitpid(t->tid, &st, __WALL | WNOHANG);

		if (w == 0) {
			double waited = now_s() - t0;

			if (waited > 1 && !released) {
				release_others(j, t);
				released = 1;
			}
			if (waited > 21) {
				snprintf(err, cap, "the call in process %d has not returned after 21 s", (int)j->pid);
				return -ETIMEDOUT;   /* the thread cannot be taken back from inside it */
			}
			usleep(200);
			continue;
		}
		if (w < 0 || WIFEXITED(st) || WIFSIGNALED(st)) {
			snprintf(err, cap, "process %d ended during the call", (int)j->pid);
			return -ESRCH;
		}
		if (!WIFSTOPPED(st))
			continue;
		if (st >> 16 == PTRACE_EVENT_STOP) {
			ptrace(PTRACE_CONT, t->tid, 0, 0);
			continue;
		}
		if (WSTOPSIG(st) == SIGSEGV) {
			struct user_regs_struct now;

			if (ptrace(PTRACE_GETREGS, t->tid, 0, &now) == 0 && now.rip == 0) {
				*ret = (long)now.rax;
				break;
			}
			snprintf(err, cap, "the call faulted in process %d (at %#llx)", (int)j->pid,
				 (unsigned long long)now.rip);
			restore(j, t);
			return -EFAULT;
		}
		t->pending |= 1ull << (WSTOPSIG(st) - 1);   /* delivered at the end */
		ptrace(PTRACE_CONT, t->tid, 0, 0);
	}
	return 0;
}
#endif

int inj_call(struct inj *j, uintptr_t fn, const long *args, int nargs, const void *data, size_t len,
	     uintptr_t *data_at, long *ret, char *err, size_t cap)
{
#if defined(__x86_64__)
	struct inj_thread *t = caller(j);
	double t0 = now_s();
	int rc;

	if (inj_prepare(j, err, cap) != 0)
		return -EIO;
	rc = start_call(j, t, fn, args, nargs, data, len, data_at, err, cap);
	if (rc == 0)
		rc = wait_return(j, t, t0, ret, err, cap);
	if (rc != 0)
		return rc;
	j->call_ms += (now_s() - t0) * 1000;
	if (restore(j, t) != 0) {
		snprintf(err, cap, "cannot put thread %d's registers back: %s", (int)t->tid, strerror(errno));
		return -EIO;
	}
	return 0;
#else
	(void)j, (void)fn, (void)args, (void)nargs, (void)data, (void)len, (void)data_at, (void)ret;
	snprintf(err, cap, "attach is not built for this architecture yet");
	return -ENOSYS;
#endif
}

/* Every thread let go, each held signal delivered; a process that was
 * stopped when we came is stopped again. */
double inj_release(struct inj *j)
{
	int was_stopped = 0;

	for (int i = 0; i < j->n; i++)
		was_stopped |= j->t[i].group_stop;
	for (int i = 0; i < j->n; i++) {
		struct inj_thread *t = &j->t[i];
		int first = 0;

		if (!t->seized)
			continue;
		for (int s = 1; s < 65; s++)
			if (t->pending >> (s - 1) & 1) {
				first = s;
				t->pending &= ~(1ull << (s - 1));
				break;
			}
		if (!first && was_stopped && t->group_stop && j->saved && t == &j->t[j->caller])
			first = SIGSTOP;   /* it ran our calls: back into the stop */
		ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)first);
		t->seized = 0;
		for (int s = 1; s < 65; s++)   /* the rest of its held signals */
			if (t->pending >> (s - 1) & 1)
				syscall(SYS_tgkill, j->pid, t->tid, s);
	}
	return (now_s() - j->stopped_at) * 1000;
}
