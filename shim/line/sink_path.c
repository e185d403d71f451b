/*
 * sink_path.c: opening the log path like a careful daemon. The path may
 * sit in a directory others can write (/tmp), where another user can plant
 * a file, a FIFO or a link before we run: root would then append its lines
 * to that user's file, or hand them to whoever reads the FIFO. So:
 * - a file we create ourselves (O_CREAT|O_EXCL, mode 0600) is ours;
 * - an existing one is used only if the opened fd (never the name, which
 *   can change between a check and the open) is a regular file owned by
 *   our effective uid with one link (a hard link another user made to a
 *   file of ours would pass the owner check), or a character device owned
 *   by root (/dev/null, /dev/full: no other user can make one);
 * - a symlink is never followed (O_NOFOLLOW), a FIFO never waited on
 *   (O_NONBLOCK: no reader gives ENXIO, a reader gives a FIFO we refuse).
 * Raw system calls only (fstat's, which every kernel and C library has
 * the same on x86_64 and arm64): no libc symbol newer than the library's
 * floor, nothing allocated.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "line/line.h"

#define PATH_FLAGS (O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)

/* What the opened fd is: type, owner and links, from the fd itself. */
static int fd_facts(int fd, mode_t *mode, uid_t *uid, unsigned long *nlink)
{
	struct stat st;

	if (sa_fstat(fd, &st) != 0)
		return -errno;
	*mode = st.st_mode;
	*uid = st.st_uid;
	*nlink = (unsigned long)st.st_nlink;
	return 0;
}

const char *sa_sinkpath_judge(mode_t mode, uid_t uid, unsigned long nlink, uid_t euid)
{
	if (S_ISFIFO(mode))
		return "a FIFO we did not create";
	if (S_ISCHR(mode))
		return uid == 0 ? NULL : "a device owned by another user";
	if (!S_ISREG(mode))
		return "not a regular file";
	if (uid != euid)
		return "a file owned by another user";
	if (nlink != 1)
		return "a file with more than one link";
	return NULL;
}

int sa_sinkpath_open(const char *path, const char **refused)
{
	mode_t mode = 0;
	uid_t uid = 0;
	unsigned long nlink = 0;
	const char *why;
	int fd = -1, i, err;

	*refused = NULL;
	/* Removed between our two opens (a rotation): try again, twice. */
	for (i = 0; i < 3; i++) {
		fd = (int)sa_syscall(SYS_openat, AT_FDCWD, path, PATH_FLAGS | O_CREAT | O_EXCL, 0600);
		if (fd >= 0)
			return sa_sinkio_move_high(fd);
		if (errno != EEXIST)
			return -errno;
		fd = (int)sa_syscall(SYS_openat, AT_FDCWD, path, PATH_FLAGS, 0);
		if (fd >= 0 || errno != ENOENT)
			break;
	}
	if (fd < 0)
		return -errno;
	err = fd_facts(fd, &mode, &uid, &nlink);
	why = err ? "its type and owner cannot be read" : sa_sinkpath_judge(mode, uid, nlink, geteuid());
	if (why) {
		sa_sinkio_close(fd);
		*refused = why;
		return -EPERM;
	}
	return sa_sinkio_move_high(fd);
}
