/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bus-harness.h"
#include "fixture.h"

static pid_t spawn(const struct harness *h, const char *const argv[], const char *log,
		   const struct harness_daemon_opts *o)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	/* Child: only async-signal-safe work, then exec. */
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	char buf[32], nofile[32];

	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	setenv("DBUS_SYSTEM_BUS_ADDRESS", h->address, 1);
	unsetenv("NOTIFY_SOCKET");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDNAMES");
	unsetenv("RUNTIME_DIRECTORY");
	for (char *const *e = o && o->env ? o->env : NULL; e && *e; e++)
		putenv(*e);
	if (o && o->n_fds > 0) {
		/* Move them out of the way first: a source may sit where a target goes. */
		int tmp[64];

		for (int i = 0; i < o->n_fds && i < 64; i++)
			tmp[i] = fcntl(o->fds[i], F_DUPFD, 100);
		for (int i = 0; i < o->n_fds && i < 64; i++) {
			dup2(tmp[i], 3 + i);
			close(tmp[i]);
		}
		snprintf(buf, sizeof(buf), "%d", o->n_fds);
		setenv("LISTEN_FDS", buf, 1);
		snprintf(buf, sizeof(buf), "%d", (int)getpid());
		setenv("LISTEN_PID", buf, 1);
		if (o->fd_names)
			setenv("LISTEN_FDNAMES", o->fd_names, 1);
	}
	/* Out of the bounding set, root's exec cannot get it back. */
	if (o && o->no_block_suspend && prctl(PR_CAPBSET_DROP, CAP_BLOCK_SUSPEND, 0, 0, 0) < 0)
		_exit(126);
	if (o && o->nofile > 0) {
		/*
		 * Through a shell: valgrind, which follows the fork until the exec,
		 * keeps a setrlimit(RLIMIT_NOFILE) here to itself.
		 */
		const char *sh[16] = { "/bin/sh", "-c", "ulimit -n \"$0\" && exec \"$@\"" };
		int n = 3;

		snprintf(nofile, sizeof(nofile), "%lu", o->nofile);
		sh[n++] = nofile;
		for (int i = 0; argv[i] && n < 15; i++)
			sh[n++] = argv[i];
		sh[n] = NULL;
		execv(sh[0], (char *const *)sh);
		_exit(127);
	}
	/* execv() takes char *const[] for historical reasons; it does not write to them. */
	execv(argv[0], (char *const *)argv);
	_exit(127);
}

int harness_bus_start(struct harness *h, const char *fixture, const char *extra)
{
	char conf[4096];
	const char *units = getenv("UNITS_DIR");

	*h = (struct harness){};
	if (!units)
		return -EINVAL;
	h->dir = fixture_new(fixture);
	/* Unprivileged clients must reach the bus socket inside it. */
	chmod(h->dir, 0755);
	snprintf(h->address, sizeof(h->address), "unix:path=%s/bus", h->dir);
	snprintf(conf, sizeof(conf),
		 "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN\" "
		 "\"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
		 "<busconfig><type>system</type><listen>%s</listen><auth>EXTERNAL</auth>\n"
		 /* The default policy of Debian's system.conf, trimmed. */
		 "<policy context=\"default\"><allow user=\"*\"/><deny own=\"*\"/><deny send_type=\"method_call\"/>"
		 "<allow send_type=\"signal\"/><allow send_requested_reply=\"true\" send_type=\"method_return\"/>"
		 "<allow send_requested_reply=\"true\" send_type=\"error\"/><allow receive_type=\"method_call\"/>"
		 "<allow receive_type=\"method_return\"/><allow receive_type=\"error\"/><allow receive_type=\"signal\"/>"
		 "<allow send_destination=\"org.freedesktop.DBus\" send_interface=\"org.freedesktop.DBus\"/>"
		 "</policy>\n<include>%s/org.autosleep1.conf</include>%s</busconfig>\n",
		 h->address, units, extra ? extra : "");
	fixture_write(h->dir, "bus.conf", conf);
	return harness_bus_restart(h);
}

int harness_bus_restart(struct harness *h)
{
	char path[512], log[512];

	if (h->bus_pid > 0) {
		kill(h->bus_pid, SIGKILL);
		waitpid(h->bus_pid, NULL, 0);
		h->bus_pid = 0;
	}
	/* A killed dbus-daemon leaves its socket; the new one binds the same path. */
	snprintf(path, sizeof(path), "%s/bus", h->dir);
	(void)unlink(path);
	snprintf(path, sizeof(path), "%s/bus.conf", h->dir);
	snprintf(log, sizeof(log), "%s/dbus.log", h->dir);
	h->bus_pid = spawn(h, (const char *const[]){ "/usr/bin/dbus-daemon", "--nofork", "--nopidfile", "--config-file", path, NULL },
			   log, NULL);
	if (h->bus_pid < 0)
		return -errno;
	/*
	 * Ready means a client gets through, not that the socket exists: the
	 * daemon binds before it listens and authenticates, and a loaded host
	 * shows the gap.
	 */
	for (int i = 0; i < 500; i++) {
		sd_bus *b = NULL;

		if (harness_open_client(h, &b) >= 0) {
			sd_bus_flush_close_unref(b);
			return 0;
		}
		usleep(10000);
	}
	return -ETIMEDOUT;
}

bool harness_name_has_owner(sd_bus *b)
{
	sd_bus_message *reply = NULL;
	int has = 0;

	if (sd_bus_call_method(b, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
			       "NameHasOwner", NULL, &reply, "s", HARNESS_NAME) >= 0)
		sd_bus_message_read(reply, "b", &has);
	sd_bus_message_unref(reply);
	return has;
}

pid_t harness_daemon_start(struct harness *h, const struct harness_daemon_opts *o)
{
	const char *daemon = getenv("AUTOSLEEPD");
	char cfg[512], log[512], level[64];
	sd_bus *b = NULL;
	int status;

	if (!daemon)
		return -EINVAL;
	fixture_write(h->dir, "autosleep.conf", o->config ? o->config : "");
	snprintf(cfg, sizeof(cfg), "%s/autosleep.conf", h->dir);
	snprintf(log, sizeof(log), "%s/%s", h->dir, o->log ? o->log : "daemon.log");
	snprintf(level, sizeof(level), "--log-level=%s", o->log_level ? o->log_level : "debug");
	h->daemon_pid = spawn(h,
			      (const char *const[]){ daemon, "--root", h->dir, "--config", cfg, level,
					  o->real ? NULL : "--dry-run", NULL },
			      log, o);
	if (h->daemon_pid < 0)
		return -errno;
	if (o->no_wait)
		return h->daemon_pid;
	if (harness_open_client(h, &b) < 0)
		return -ECONNREFUSED;
	for (int i = 0; i < 500; i++) {
		/*
		 * Up means answering: the name is taken first, and start-up (the
		 * knob, restored locks) ends before the main loop answers a call.
		 */
		if (harness_name_has_owner(b) &&
		    sd_bus_call_method(b, HARNESS_NAME, HARNESS_PATH, "org.freedesktop.DBus.Peer", "Ping", NULL, NULL,
				       "") >= 0) {
			sd_bus_flush_close_unref(b);
			return h->daemon_pid;
		}
		if (waitpid(h->daemon_pid, &status, WNOHANG) == h->daemon_pid) {
			h->daemon_pid = 0;
			break;
		}
		usleep(10000);
	}
	sd_bus_flush_close_unref(b);
	harness_show_log(h, o->log ? o->log : "daemon.log");
	return -ETIMEDOUT;
}

int harness_daemon_stop(struct harness *h, int sig)
{
	int status = -1;

	if (h->daemon_pid <= 0)
		return -1;
	kill(h->daemon_pid, sig);
	waitpid(h->daemon_pid, &status, 0);
	h->daemon_pid = 0;
	return status;
}

void harness_stop(struct harness *h)
{
	if (h->daemon_pid > 0)
		harness_daemon_stop(h, SIGTERM);
	if (h->bus_pid > 0) {
		kill(h->bus_pid, SIGTERM);
		waitpid(h->bus_pid, NULL, 0);
		h->bus_pid = 0;
	}
	fixture_free(h->dir);
	h->dir = NULL;
}

int harness_open_client(const struct harness *h, sd_bus **ret)
{
	sd_bus *b;
	int r;

	r = sd_bus_new(&b);
	if (r < 0)
		return r;
	sd_bus_set_address(b, h->address);
	sd_bus_set_bus_client(b, true);
	r = sd_bus_start(b);
	if (r < 0) {
		sd_bus_unref(b);
		return r;
	}
	*ret = b;
	return 0;
}

int harness_acquire(sd_bus *b, const char *name, const char *why, uint64_t timeout, int *ret_fd, sd_bus_error *e)
{
	sd_bus_message *reply = NULL;
	int fd, r;

	r = sd_bus_call_method(b, HARNESS_NAME, HARNESS_PATH, HARNESS_IFACE, "AcquireWakeLock", e, &reply, "sst", name,
			       why, timeout);
	if (r < 0)
		return r;
	r = sd_bus_message_read(reply, "h", &fd);
	if (r >= 0) {
		*ret_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		r = *ret_fd < 0 ? -errno : 1;
	}
	sd_bus_message_unref(reply);
	return r;
}

int harness_count_locks(sd_bus *b, const char *name)
{
	sd_bus_message *reply = NULL;
	const char *n, *why, *owner;
	uint32_t uid, pid;
	uint64_t since, deadline;
	int count = 0;

	if (sd_bus_call_method(b, HARNESS_NAME, HARNESS_PATH, HARNESS_IFACE, "ListWakeLocks", NULL, &reply, "") < 0 ||
	    sd_bus_message_enter_container(reply, 'a', "(sssuutt)") < 0) {
		sd_bus_message_unref(reply);
		return -1;
	}
	while (sd_bus_message_read(reply, "(sssuutt)", &n, &why, &owner, &uid, &pid, &since, &deadline) > 0)
		if (!name || strcmp(n, name) == 0)
			count++;
	sd_bus_message_unref(reply);
	return count;
}

void harness_show_log(const struct harness *h, const char *name)
{
	char *l = fixture_read(h->dir, name);

	fprintf(stderr, "--- %s:\n%s\n---\n", name, l ? l : "(none)");
	free(l);
}

int harness_count_in_log(const struct harness *h, const char *name, const char *needle)
{
	char *l = fixture_read(h->dir, name), *p = l;
	int n = 0;

	while (p && (p = strstr(p, needle))) {
		n++;
		p += strlen(needle);
	}
	free(l);
	return n;
}
