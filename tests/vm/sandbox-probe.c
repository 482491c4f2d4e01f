/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One access, reported with its errno, for the VM sandbox scenario:
 *
 *   sandbox-probe socket inet|inet6|unix|netlink   create a socket of that family
 *   sandbox-probe read PATH                        open PATH read-only and read a byte
 *   sandbox-probe open PATH                        open PATH read-only (devices)
 *   sandbox-probe write PATH VALUE                 open PATH write-only and write VALUE
 *
 * Prints "ok" or the error ("EACCES Permission denied") and exits 0 or 1, so
 * the same probe run inside and outside autosleepd's sandbox shows exactly
 * which protection refused what. A shell cannot create an AF_INET socket
 * without also connecting it, which would blur the two.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int fail(int e)
{
	printf("%s %s\n", strerrorname_np(e) ? strerrorname_np(e) : "E?", strerror(e));
	return 1;
}

static int probe_socket(const char *family)
{
	int f, fd;

	if (strcmp(family, "inet") == 0)
		f = AF_INET;
	else if (strcmp(family, "inet6") == 0)
		f = AF_INET6;
	else if (strcmp(family, "unix") == 0)
		f = AF_UNIX;
	else if (strcmp(family, "netlink") == 0)
		f = AF_NETLINK;
	else {
		fprintf(stderr, "sandbox-probe: unknown socket family '%s'\n", family);
		return 2;
	}
	fd = socket(f, f == AF_NETLINK ? SOCK_RAW : SOCK_STREAM, 0);
	if (fd < 0)
		return fail(errno);
	close(fd);
	printf("ok\n");
	return 0;
}

static int probe_file(const char *op, const char *path, const char *value)
{
	char c;
	int fd;

	fd = open(path, (strcmp(op, "write") == 0 ? O_WRONLY : O_RDONLY) | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return fail(errno);
	if (strcmp(op, "read") == 0 && read(fd, &c, 1) < 0) {
		int e = errno;

		close(fd);
		return fail(e);
	}
	if (strcmp(op, "write") == 0 && write(fd, value, strlen(value)) < 0) {
		int e = errno;

		close(fd);
		return fail(e);
	}
	close(fd);
	printf("ok\n");
	return 0;
}

int main(int argc, char *argv[])
{
	if (argc == 3 && strcmp(argv[1], "socket") == 0)
		return probe_socket(argv[2]);
	if (argc == 3 && (strcmp(argv[1], "read") == 0 || strcmp(argv[1], "open") == 0))
		return probe_file(argv[1], argv[2], NULL);
	if (argc == 4 && strcmp(argv[1], "write") == 0)
		return probe_file(argv[1], argv[2], argv[3]);
	fprintf(stderr, "usage: sandbox-probe socket FAMILY | read PATH | open PATH | write PATH VALUE\n");
	return 2;
}
