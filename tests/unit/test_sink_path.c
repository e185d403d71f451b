/* Unit tests for shim/line/sink_path.c: which existing files the log path
 * may use (the judge), and the open itself on a file we create, a file of
 * ours, a FIFO with and without a reader, a hard link and a symlink; and
 * shim/line/sink.c in a forked child whose memory names a log fd its fd
 * table does not hold (fork copies the table before the memory). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"

static char dir[] = "/tmp/sa-ut-path.XXXXXX";

static void judge(void **state)
{
	(void)state;
	assert_null(sa_sinkpath_judge(S_IFREG | 0600, 0, 1, 0));
	assert_string_equal(sa_sinkpath_judge(S_IFREG | 0666, 65534, 1, 0), "a file owned by another user");
	assert_string_equal(sa_sinkpath_judge(S_IFIFO | 0666, 0, 1, 0), "a FIFO we did not create");
	assert_null(sa_sinkpath_judge(S_IFCHR | 0666, 0, 1, 1000));          /* /dev/null */
	assert_string_equal(sa_sinkpath_judge(S_IFCHR | 0620, 1000, 1, 0), "a device owned by another user");
	assert_string_equal(sa_sinkpath_judge(S_IFSOCK | 0666, 0, 1, 0), "not a regular file");
	assert_string_equal(sa_sinkpath_judge(S_IFREG | 0600, 0, 2, 0), "a file with more than one link");
	assert_null(sa_sinkpath_judge(S_IFREG | 0600, 1000, 1, 1000));
}

static void opens(void **state)
{
	char p[128], q[128];
	const char *why;
	struct stat st;
	int fd, rd;

	(void)state;
	/* Created by us: used, 0600, close-on-exec. */
	snprintf(p, sizeof p, "%s/new.jsonl", dir);
	fd = sa_sinkpath_open(p, &why);
	assert_true(fd >= 0);
	assert_null(why);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	/* Ours already (a previous run's): used. */
	fd = sa_sinkpath_open(p, &why);
	assert_true(fd >= 0);
	assert_null(why);
	close(fd);
	/* A second link to it: refused, on either name. */
	snprintf(q, sizeof q, "%s/link.jsonl", dir);
	assert_int_equal(link(p, q), 0);
	assert_int_equal(sa_sinkpath_open(q, &why), -EPERM);
	assert_string_equal(why, "a file with more than one link");
	unlink(q);
	/* A symlink: never followed. */
	assert_int_equal(symlink(p, q), 0);
	assert_int_equal(sa_sinkpath_open(q, &why), -ELOOP);
	unlink(q);
	/* A FIFO: without a reader ENXIO (never waits), with one refused. */
	assert_int_equal(mkfifo(q, 0600), 0);
	assert_int_equal(sa_sinkpath_open(q, &why), -ENXIO);
	rd = open(q, O_RDONLY | O_NONBLOCK);
	assert_true(rd >= 0);
	assert_int_equal(sa_sinkpath_open(q, &why), -EPERM);
	assert_string_equal(why, "a FIFO we did not create");
	close(rd);
	unlink(q);
	unlink(p);
}

static int lines_in(const char *p)
{
	char buf[4096];
	int fd = open(p, O_RDONLY), n = 0;
	ssize_t r;

	if (fd < 0)
		return -1;
	while ((r = read(fd, buf, sizeof buf)) > 0)
		for (ssize_t i = 0; i < r; i++)
			n += buf[i] == '\n';
	close(fd);
	return n;
}

static void sink_to(struct sa_config *c, const char *p)
{
	memset(c, 0, sizeof *c);
	c->sink = SA_SINK_PATH;
	snprintf(c->path, sizeof c->path, "%s", p);
	assert_int_equal(sa_sink_open(c), 0);
	sa_sink_atfork_child();    /* the last test's fd (closed) is looked at again */
}

/* A parent's sink at DIR/NAME (path p) that wrote one line L: its fd. */
static int parent_wrote(struct sa_config *c, const char *name, char *p, size_t n, const char *l)
{
	int fd;

	snprintf(p, n, "%s/%s", dir, name);
	sink_to(c, p);
	assert_int_equal(sa_sink_write(l, strlen(l)), 1);
	fd = sa_sink_fd();
	assert_true(fd >= 0);
	return fd;
}

/* The parent's log fd is in the child's memory but not in its table: the
 * child's own file may get that number, and must keep it (before: it
 * closed it as "the parent's copy", and lost every line). */
static void child_without_parent_fd(void **state)
{
	static struct sa_config c;
	char a[128], b[128];
	const char *l = "{\"event\":\"x\"}\n";
	int fd;

	(void)state;
	snprintf(b, sizeof b, "%s/child.jsonl", dir);
	fd = parent_wrote(&c, "parent.jsonl", a, sizeof a, l);
	assert_int_equal(close(fd), 0);          /* the table the child got lacks it */
	sa_sink_atfork_child();
	sa_sink_reopen_path(b, 0);
	assert_int_equal(sa_sink_write(l, strlen(l)), 1);
	assert_int_equal(sa_sink_write(l, strlen(l)), 1);
	assert_int_equal(lines_in(b), 2);
	assert_int_equal(lines_in(a), 1);
	close(sa_sink_fd());
	unlink(a);
	unlink(b);
}

/* The same without %p: the number in memory holds one of the host's
 * files in the child's table; not one line goes into it. */
static void child_number_is_the_hosts(void **state)
{
	static struct sa_config c;
	char a[128], h[128];
	const char *l = "{\"event\":\"x\"}\n";
	int fd, hfd;

	(void)state;
	snprintf(h, sizeof h, "%s/host.txt", dir);
	fd = parent_wrote(&c, "log.jsonl", a, sizeof a, l);
	hfd = open(h, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(hfd >= 0);
	assert_int_equal(dup2(hfd, fd), fd);     /* the host's file at our number */
	close(hfd);
	sa_sink_atfork_child();
	assert_int_equal(sa_sink_write(l, strlen(l)), 1);
	assert_int_equal(lines_in(h), 0);
	assert_int_equal(lines_in(a), 2);
	close(fd);
	close(sa_sink_fd());
	unlink(a);
	unlink(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(judge),
		cmocka_unit_test(opens),
		cmocka_unit_test(child_without_parent_fd),
		cmocka_unit_test(child_number_is_the_hosts),
	};
	int r;

	if (!mkdtemp(dir))
		return 1;
	r = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(dir);
	return r;
}
