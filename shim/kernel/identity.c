/*
 * identity.c: where a process runs, for its init line: the network
 * namespace (the inode of /proc/self/ns/net), the host's nodename and the
 * boot id (/proc/sys/kernel/random/boot_id, new at every boot); and what
 * it was started as (/proc/self/cmdline), so that the report can read the
 * configuration the program was given (cli/conf/). The shim reads no
 * configuration file itself.
 *
 * `sockaudit report` joins a client's connects to a listener at the same
 * address only when both sides say they are in the same namespace of the
 * same boot of the same host: 127.0.0.1:80 in two containers are two
 * different listeners. Read once per process, when its init line is
 * written; never on the per-call path. readlink, open, read and close
 * only (no stat: its symbol moved to a newer glibc version).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "digits.h"
#include "kernel/kernel.h"

/* "net:[4026531840]" -> 4026531840; 0 when unreadable. */
unsigned long long sa_netns_inode(void)
{
	char buf[64], *p;
	const char *q;
	ssize_t n = readlink("/proc/self/ns/net", buf, sizeof buf - 1);
	unsigned long long ino = 0;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strchr(buf, '[');
	q = p ? sa_digits(p + 1, &ino) : NULL;
	return q && *q == ']' ? ino : 0;
}

/* The 36-character boot id into out[37]; 0 or -errno. */
int sa_boot_id(char out[37])
{
	char buf[64];
	ssize_t n;
	int fd = sa_nc_open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC), i;

	if (fd < 0)
		return -errno;
	n = sa_nc_read(fd, buf, sizeof buf - 1);
	sa_nc_close(fd);
	if (n < 36)
		return -EIO;
	for (i = 0; i < 36; i++) {
		char c = buf[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-'))
			return -EINVAL;
		out[i] = c;
	}
	out[36] = '\0';
	return 0;
}

int sa_proc_threads(void)
{
	char buf[1024], *p;
	ssize_t n;
	int fd = sa_nc_open("/proc/self/stat", O_RDONLY | O_CLOEXEC), field = 2;
	long v = 0;

	if (fd < 0)
		return 0;
	n = sa_nc_read(fd, buf, sizeof buf - 1);
	sa_nc_close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "pid (comm) state ppid ...": comm may hold spaces and ')'; the
	 * fields after the last ')' are numbered from 3 (state). */
	if (!(p = strrchr(buf, ')')))
		return 0;
	for (p++; *p && field < 20; p++)
		if (*p == ' ')
			field++;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (*p++ - '0');
	return field == 20 && v > 0 && v < 1 << 30 ? (int)v : 0;
}

/* argv from /proc/self/cmdline, at most its first 1023 bytes (a line holds
 * 4096): "argv" as an array, "argv_truncated" when cut. A program that
 * rewrote its argv already (setproctitle) shows the rewritten one. */
static void argv_field(json_t *ev)
{
	char buf[1024];
	ssize_t n;
	size_t i, start = 0;
	json_t *a;
	int fd = sa_nc_open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	n = sa_nc_read(fd, buf, sizeof buf);
	sa_nc_close(fd);
	if (n <= 0 || !(a = json_array()))
		return;
	if ((size_t)n == sizeof buf) {
		json_object_set_new(ev, "argv_truncated", json_true());
		n--;
	}
	buf[n] = '\0';
	for (i = 0; i <= (size_t)n && json_array_size(a) < 64; i++)
		if (buf[i] == '\0' && (i > start || i < (size_t)n)) {
			json_array_append_new(a, sa_json_str(buf + start));
			start = i + 1;
		}
	json_object_set_new(ev, "argv", a);
}

void sa_identity_fields(json_t *ev)
{
	unsigned long long ino = sa_netns_inode();
	struct utsname u;
	char boot[37];

	json_object_set_new(ev, "netns", ino ? json_integer((json_int_t)ino) : json_null());
	json_object_set_new(ev, "nodename", uname(&u) == 0 ? sa_json_str(u.nodename) : json_null());
	json_object_set_new(ev, "boot_id", sa_boot_id(boot) == 0 ? json_string(boot) : json_null());
	argv_field(ev);
}
