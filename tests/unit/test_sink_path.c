/* Unit tests for shim/line/sink_path.c: which existing files the log path
 * may use (the judge), and the open itself on a file we create, a file of
 * ours, a FIFO with and without a reader, a hard link and a symlink. */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(judge),
		cmocka_unit_test(opens),
	};
	int r;

	if (!mkdtemp(dir))
		return 1;
	r = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(dir);
	return r;
}
