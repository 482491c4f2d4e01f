/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Restarts and failures, against the real daemon on a private dbus-daemon.
 * The test plays systemd's part where the daemon needs it: it receives
 * FDSTORE=1 messages on $NOTIFY_SOCKET, drops a stored fd once it reports
 * EPOLLHUP (as systemd does), and passes the store back to the next
 * instance with $LISTEN_FDS/$LISTEN_FDNAMES. It also plays logind, slowly.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "bus-harness.h"
#include "fake-systemd.h"
#include "fixture.h"
#include "macro.h"
#include "time-util.h"

#define STORE_MAX 64

static struct harness h;
static struct fake_systemd sd;

/*
 * An instance with the fd store (if with_store) and systemd's environment. With
 * address, on that bus instead of the harness's, and returning at once.
 */
static pid_t start_on(const char *log, bool with_store, const char *address)
{
	static char names[STORE_MAX * 64];
	static int fds[STORE_MAX];
	char addr[700];
	char *const env[] = { sd.notify_env, sd.runtime_env, address ? addr : NULL, NULL };
	unsigned n = with_store ? fake_systemd_copy_store(&sd, fds, STORE_MAX, names, sizeof(names)) : 0;
	pid_t pid;

	snprintf(addr, sizeof(addr), "DBUS_SYSTEM_BUS_ADDRESS=%s", address ? address : "");
	pid = harness_daemon_start(&h, &(struct harness_daemon_opts){
		.config = "[Backoff]\nDelaySec=100ms\n[WakeLocks]\nStartupHoldSec=0\n",
		.log = log,
		.env = env,
		.fds = fds,
		.n_fds = (int)n,
		.fd_names = names,
		.no_wait = address != NULL,
	});
	for (unsigned i = 0; i < n; i++)
		close(fds[i]);
	return pid;
}

static pid_t start_daemon(const char *log, bool with_store)
{
	return start_on(log, with_store, NULL);
}

struct lock_info {
	char owner[64];
	uint64_t deadline;
	uint32_t uid;
	int found;
};

static struct lock_info find_lock(sd_bus *b, const char *name)
{
	struct lock_info info = {};
	sd_bus_message *reply = NULL;
	const char *n, *why, *owner;
	uint32_t uid, pid;
	uint64_t since, deadline;

	assert_int_equal(sd_bus_call_method(b, HARNESS_NAME, HARNESS_PATH, HARNESS_IFACE, "ListWakeLocks", NULL, &reply, ""),
			 1);
	assert_true(sd_bus_message_enter_container(reply, 'a', "(sssuutt)") >= 0);
	while (sd_bus_message_read(reply, "(sssuutt)", &n, &why, &owner, &uid, &pid, &since, &deadline) > 0)
		if (strcmp(n, name) == 0) {
			info.found++;
			snprintf(info.owner, sizeof(info.owner), "%s", owner);
			info.deadline = deadline;
			info.uid = uid;
		}
	sd_bus_message_unref(reply);
	return info;
}

static int count_in_log(const char *log, const char *needle)
{
	return harness_count_in_log(&h, log, needle);
}

static int take(sd_bus *b, const char *name, uint64_t timeout, int *ret_fd, const char *log)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int r = harness_acquire(b, name, "restart test", timeout, ret_fd, &e);

	if (r != 1) {
		fprintf(stderr, "AcquireWakeLock(%s): %s\n", name, e.message ? e.message : strerror(-r));
		harness_show_log(&h, log);
	}
	sd_bus_error_free(&e);
	return r;
}

static int setup(void **state)
{
	if (geteuid() != 0 || access("/usr/bin/dbus-daemon", X_OK) < 0 || !getenv("AUTOSLEEPD")) {
		fprintf(stderr, "test-bus-restart needs root and /usr/bin/dbus-daemon, skipping\n");
		exit(77);
	}
	assert_int_equal(harness_bus_start(&h, "sysfs-basic",
					   /* Our stand-in for logind may own its name. */
					   "<policy user=\"root\"><allow own=\"org.freedesktop.login1\"/>"
					   "<allow send_destination=\"org.freedesktop.login1\"/></policy>"),
			 0);
	assert_int_equal(fake_systemd_start(&sd, h.dir), 0);
	*state = NULL;
	return 0;
}

static int teardown(void **state)
{
	fake_systemd_stop(&sd);
	harness_stop(&h);
	return 0;
}

static void test_sigkill_and_restart_keeps_locks(void **state)
{
	struct lock_info a1, a2, b2, c2, d2;
	int fa, fb, fc, fd, status;
	sd_bus *client;
	char *unlocked;

	assert_true(start_daemon("first.log", false) > 0);
	assert_int_equal(harness_open_client(&h, &client), 0);
	assert_int_equal(take(client, "timed", 3600 * USEC_PER_SEC, &fa, "first.log"), 1);
	assert_int_equal(take(client, "plain", 0, &fb, "first.log"), 1);
	assert_int_equal(take(client, "released", 0, &fc, "first.log"), 1);
	assert_int_equal(take(client, "closed-while-down", 0, &fd, "first.log"), 1);
	a1 = find_lock(client, "timed");
	close(fc);
	for (int i = 0; i < 100 && find_lock(client, "released").found; i++)
		usleep(10000);
	fake_systemd_pump(&sd, 200);
	assert_true(fake_systemd_stored(&sd, "lease-"));

	status = harness_daemon_stop(&h, SIGKILL);
	assert_true(WIFSIGNALED(status));
	fixture_write(h.dir, "sys/power/wake_unlock", "");
	/* The client lets one go while the daemon is down; systemd notices the hang-up. */
	close(fd);
	fake_systemd_pump(&sd, 0);
	fake_systemd_drop_hung_up(&sd);

	assert_true(start_daemon("second.log", true) > 0);
	a2 = find_lock(client, "timed");
	b2 = find_lock(client, "plain");
	c2 = find_lock(client, "released");
	d2 = find_lock(client, "closed-while-down");
	assert_int_equal(a2.found, 1);
	assert_int_equal(b2.found, 1);
	assert_int_equal(c2.found, 0);
	assert_int_equal(d2.found, 0);
	/*
	 * Same owner, same deadline. ListWakeLocks shows it in wall-clock
	 * time, converted with one CLOCK_BOOTTIME and one CLOCK_REALTIME read
	 * per call: each conversion is off by the time between the two reads,
	 * a microsecond natively and tens under valgrind (where 2 us failed
	 * once). A deadline reset at the restart, or lost, is off by seconds.
	 */
	assert_string_equal(a2.owner, a1.owner);
	assert_string_equal(b2.owner, a1.owner);
	assert_true(a2.deadline + 1000 >= a1.deadline && a2.deadline <= a1.deadline + 1000);
	assert_int_equal(a2.uid, 0);
	/* Nothing suspended in between, and the kernel lock was never let go. */
	assert_int_equal(count_in_log("second.log", "would write mem to state"), 0);
	unlocked = fixture_read(h.dir, "sys/power/wake_unlock");
	assert_null(strstr(unlocked, "autosleepd"));
	free(unlocked);

	/* The restored locks are the fds: closing them ends them, and then it sleeps. */
	close(fa);
	close(fb);
	for (int i = 0; i < 300 && count_in_log("second.log", "would write mem to state") == 0; i++)
		usleep(10000);
	assert_true(count_in_log("second.log", "would write mem to state") > 0);
	assert_int_equal(find_lock(client, "timed").found, 0);
	sd_bus_flush_close_unref(client);
	assert_int_equal(harness_daemon_stop(&h, SIGTERM), 0);
}

static void test_losing_the_bus_is_fatal(void **state)
{
	int fa, status = -1;
	sd_bus *client;
	char *unlocked, rec[600];
	pid_t pid;

	pid = start_daemon("busloss.log", false);
	assert_true(pid > 0);
	assert_int_equal(harness_open_client(&h, &client), 0);
	assert_int_equal(take(client, "kept", 0, &fa, "busloss.log"), 1);
	fake_systemd_pump(&sd, 200);
	fixture_write(h.dir, "sys/power/wake_unlock", "");
	sd_bus_flush_close_unref(client);

	kill(h.bus_pid, SIGKILL);
	waitpid(h.bus_pid, NULL, 0);
	h.bus_pid = 0;
	for (int i = 0; i < 200 && waitpid(pid, &status, WNOHANG) == 0; i++)
		usleep(10000);
	h.daemon_pid = 0;
	/* It exits non-zero so that systemd restarts it... */
	assert_true(WIFEXITED(status));
	assert_int_not_equal(WEXITSTATUS(status), 0);
	assert_int_equal(count_in_log("busloss.log", "Lost the connection to the D-Bus system bus"), 1);
	/* ...keeping the kernel lock and the stored lease for the next instance. */
	unlocked = fixture_read(h.dir, "sys/power/wake_unlock");
	assert_null(strstr(unlocked, "autosleepd"));
	free(unlocked);
	fake_systemd_pump(&sd, 0);
	assert_true(fake_systemd_stored(&sd, "lease-"));
	snprintf(rec, sizeof(rec), "%s/run/leases", h.dir);
	assert_int_equal(access(rec, F_OK), 0);
	close(fa);
}

/* Its wait status once it exited within 5 s; -1 (and killed) if it still ran. */
static int wait_exit(pid_t pid)
{
	int status;

	for (int i = 0; i < 500; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			h.daemon_pid = 0;
			return status;
		}
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	h.daemon_pid = 0;
	return -1;
}

/* A second dbus-daemon whose policy lets nobody own org.autosleep1 (its policy file is not where it looks). */
static pid_t refusing_bus(char *address, size_t size)
{
	char conf[2048], path[600], sock[512];
	pid_t pid;

	snprintf(sock, sizeof(sock), "%s/bus-refusing", h.dir);
	if (snprintf(address, size, "unix:path=%s", sock) >= (int)size)
		return -ENAMETOOLONG;
	snprintf(conf, sizeof(conf),
		 "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN\" "
		 "\"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
		 "<busconfig><type>system</type><listen>%s</listen><auth>EXTERNAL</auth>\n"
		 "<policy context=\"default\"><allow user=\"*\"/><deny own=\"*\"/>"
		 "<allow receive_type=\"method_return\"/><allow receive_type=\"error\"/>"
		 "<allow receive_type=\"signal\"/>"
		 "<allow send_destination=\"org.freedesktop.DBus\" send_interface=\"org.freedesktop.DBus\"/>"
		 "</policy></busconfig>\n",
		 address);
	fixture_write(h.dir, "bus-refusing.conf", conf);
	snprintf(path, sizeof(path), "%s/bus-refusing.conf", h.dir);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		execl("/usr/bin/dbus-daemon", "dbus-daemon", "--nofork", "--nopidfile", "--config-file", path, NULL);
		_exit(127);
	}
	for (int i = 0; i < 500 && access(sock, F_OK) < 0; i++)
		usleep(10000);
	usleep(100000);
	return pid;
}

static int lease_records(void)
{
	char dir[600], cmd[700];
	int n = 0;
	FILE *p;

	snprintf(dir, sizeof(dir), "%s/run/leases", h.dir);
	snprintf(cmd, sizeof(cmd), "ls '%s' 2>/dev/null | wc -l", dir);
	p = popen(cmd, "r");
	if (p) {
		if (fscanf(p, "%d", &n) != 1)
			n = 0;
		pclose(p);
	}
	return n;
}

/* Locks restored, then no name: exit non-zero with everything kept for the next start (under ASan too). */
static void test_no_name_keeps_stored_locks(void **state)
{
	char refusing[600], *unlocked;
	const char *const bad[] = { refusing, "unix:path=/nonexistent/autosleep-test-bus" };
	const char *const says[] = { "The system bus refuses us the name org.autosleep1", "No D-Bus system bus" };
	pid_t pid, bus2;
	sd_bus *client;
	int fa, records, status;

	(void)state;
	bus2 = refusing_bus(refusing, sizeof(refusing));
	assert_true(bus2 > 0);
	assert_true(start_daemon("named.log", false) > 0);
	assert_int_equal(harness_open_client(&h, &client), 0);
	assert_int_equal(take(client, "kept", 0, &fa, "named.log"), 1);
	fake_systemd_pump(&sd, 200);
	assert_true(WIFSIGNALED(harness_daemon_stop(&h, SIGKILL)));
	fake_systemd_pump(&sd, 100);
	records = lease_records();
	assert_true(records >= 1);
	fixture_write(h.dir, "sys/power/wake_unlock", "");

	for (unsigned i = 0; i < ELEMENTSOF(bad); i++) {
		char log[32];

		snprintf(log, sizeof(log), "noname%u.log", i);
		pid = start_on(log, true, bad[i]);
		assert_true(pid > 0);
		status = wait_exit(pid);
		if (status == -1 || count_in_log(log, says[i]) != 1)
			harness_show_log(&h, log);
		assert_int_not_equal(status, -1);
		assert_true(WIFEXITED(status));
		assert_int_not_equal(WEXITSTATUS(status), 0);
		assert_int_equal(count_in_log(log, says[i]), 1);
		/* The kernel lock, the stored fds and the records stay for the next start. */
		unlocked = fixture_read(h.dir, "sys/power/wake_unlock");
		assert_null(strstr(unlocked, "autosleepd"));
		free(unlocked);
		fake_systemd_pump(&sd, 100);
		assert_true(fake_systemd_stored(&sd, "lease-"));
		assert_int_equal(lease_records(), records);
	}

	/* The next start with the bus takes the lock back. */
	assert_true(start_daemon("after.log", true) > 0);
	assert_int_equal(find_lock(client, "kept").found, 1);
	close(fa);
	sd_bus_flush_close_unref(client);
	kill(bus2, SIGTERM);
	waitpid(bus2, NULL, 0);
}

/* Disable() outlives a crash, as the locks do; Enable() ends it. */
static void test_disable_survives_restart(void **state)
{
	sd_bus *client;
	int enabled = -1;

	(void)state;
	assert_true(start_daemon("disable.log", false) > 0);
	assert_int_equal(harness_open_client(&h, &client), 0);
	assert_int_equal(sd_bus_call_method(client, HARNESS_NAME, HARNESS_PATH, HARNESS_IFACE, "Disable", NULL, NULL, ""),
			 1);
	assert_true(WIFSIGNALED(harness_daemon_stop(&h, SIGKILL)));
	fake_systemd_pump(&sd, 100);
	assert_true(start_daemon("disable2.log", true) > 0);
	assert_true(sd_bus_get_property_trivial(client, HARNESS_NAME, HARNESS_PATH, HARNESS_IFACE, "Enabled", NULL, 'b',
						&enabled) >= 0);
	assert_int_equal(enabled, 0);
	assert_int_equal(count_in_log("disable2.log", "would write mem to state"), 0);
	assert_int_equal(count_in_log("disable2.log", "Autosleep was disabled before the restart"), 1);

	assert_int_equal(sd_bus_call_method(client, HARNESS_NAME, HARNESS_PATH, HARNESS_IFACE, "Enable", NULL, NULL, ""),
			 1);
	assert_true(WIFSIGNALED(harness_daemon_stop(&h, SIGKILL)));
	assert_true(start_daemon("disable3.log", true) > 0);
	assert_true(sd_bus_get_property_trivial(client, HARNESS_NAME, HARNESS_PATH, HARNESS_IFACE, "Enabled", NULL, 'b',
						&enabled) >= 0);
	assert_int_equal(enabled, 1);
	sd_bus_flush_close_unref(client);
	assert_int_equal(harness_daemon_stop(&h, SIGTERM), 0);
}

/* Ended after each test too: a failed assertion must not leave them holding the name or a lock. */
static pid_t hold;

static int stop_leftovers(void **state)
{
	if (hold > 0) {
		kill(hold, SIGKILL);
		waitpid(hold, NULL, 0);
		hold = 0;
	}
	if (h.daemon_pid > 0)
		harness_daemon_stop(&h, SIGKILL);
	return 0;
}

static void test_hold_takes_its_lock_again(void **state)
{
	const char *ctl = getenv("AUTOSLEEPCTL");
	char env[600], log[600];
	sd_bus *client;
	pid_t pid;
	int status, n = 0;

	/* No fd store this time: the daemon cannot restore, autosleepctl hold must take the lock again. */
	assert_non_null(ctl);
	pid = harness_daemon_start(&h, &(struct harness_daemon_opts){
		.config = "[WakeLocks]\nStartupHoldSec=3s\n", .log = "hold1.log" });
	assert_true(pid > 0);
	snprintf(env, sizeof(env), "DBUS_SYSTEM_BUS_ADDRESS=%s", h.address);
	snprintf(log, sizeof(log), "%s/hold.out", h.dir);
	hold = fork();
	assert_true(hold >= 0);
	if (hold == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		dup2(fd, STDERR_FILENO);
		putenv(env);
		execl(ctl, ctl, "hold", "--name", "again", "--why", "re-acquire test", "--", "sleep", "60", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(harness_open_client(&h, &client), 0);
	for (int i = 0; i < 300 && harness_count_locks(client, "again") != 1; i++)
		usleep(10000);
	assert_int_equal(harness_count_locks(client, "again"), 1);

	status = harness_daemon_stop(&h, SIGKILL);
	assert_true(WIFSIGNALED(status));
	assert_true(harness_daemon_start(&h, &(struct harness_daemon_opts){
		.config = "[WakeLocks]\nStartupHoldSec=3s\n", .log = "hold2.log" }) > 0);
	for (int i = 0; i < 300 && (n = harness_count_locks(client, "again")) != 1; i++)
		usleep(10000);
	assert_int_equal(n, 1);
	/* The daemon lists the lock before hold has its reply and says so: wait for the words. */
	for (int i = 0; i < 300 && count_in_log("hold.out", "took wake lock 'again' again") == 0; i++)
		usleep(10000);
	assert_int_equal(count_in_log("hold.out", "took wake lock 'again' again"), 1);
	/* The start-up hold covered the gap: nothing suspended while hold's lock was away. */
	assert_int_equal(count_in_log("hold2.log", "would write mem to state"), 0);

	kill(hold, SIGTERM);
	assert_int_equal(waitpid(hold, &status, 0), hold);
	hold = 0;
	/* SIGTERM goes on to the command, and hold exits with its status. */
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 128 + SIGTERM);
	sd_bus_flush_close_unref(client);
	assert_int_equal(harness_daemon_stop(&h, SIGTERM), 0);
}

/* A logind that takes its time to answer ListInhibitors. */
static sd_bus_message *pending_list;

static int fake_list_inhibitors(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	pending_list = sd_bus_message_ref(m);
	return 1;
}

static const sd_bus_vtable fake_logind_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_METHOD("ListInhibitors", "", "a(ssssuu)", fake_list_inhibitors, 0),
	SD_BUS_VTABLE_END,
};

static void test_no_suspend_before_logind_answers(void **state)
{
	sd_bus *logind, *client;
	usec_t end;
	int n;

	assert_int_equal(harness_open_client(&h, &logind), 0);
	assert_true(sd_bus_add_object_vtable(logind, NULL, "/org/freedesktop/login1", "org.freedesktop.login1.Manager",
					     fake_logind_vtable, NULL) >= 0);
	assert_true(sd_bus_request_name(logind, "org.freedesktop.login1", 0) >= 0);
	assert_true(start_daemon("logind.log", false) > 0);

	/* A whole second without logind's answer: held, and nothing suspends. */
	end = now(CLOCK_MONOTONIC) + USEC_PER_SEC;
	while (now(CLOCK_MONOTONIC) < end) {
		if (sd_bus_process(logind, NULL) > 0)
			continue;
		sd_bus_wait(logind, 10 * USEC_PER_MSEC);
	}
	assert_non_null(pending_list);
	assert_int_equal(harness_open_client(&h, &client), 0);
	assert_int_equal(harness_count_locks(client, "logind-inhibitor"), 1);
	assert_int_equal(count_in_log("logind.log", "would write mem to state"), 0);

	/* logind answers: no inhibitors. Cycles begin. */
	assert_true(sd_bus_reply_method_return(pending_list, "a(ssssuu)", 0) >= 0);
	pending_list = sd_bus_message_unref(pending_list);
	sd_bus_flush(logind);
	for (int i = 0; i < 300 && (n = count_in_log("logind.log", "would write mem to state")) == 0; i++) {
		sd_bus_process(logind, NULL);
		usleep(10000);
	}
	assert_true(n > 0);
	assert_int_equal(harness_count_locks(client, "logind-inhibitor"), 0);
	sd_bus_flush_close_unref(client);
	sd_bus_flush_close_unref(logind);
	assert_int_equal(harness_daemon_stop(&h, SIGTERM), 0);
}

#define STRANGERS_MAX 64

/*
 * dbus-daemon restarts (a crash, an upgrade): it hands its unique names
 * out again from :1.0, and the daemon restarts with it. The restored lock
 * holds, but a stranger given its old owner's name cannot release it.
 */
static void test_bus_restart_forgets_owners(void **state)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus *client, *others[16], *strangers[STRANGERS_MAX];
	struct lock_info a1, a2;
	const char *unique = NULL;
	int fa, status, n, r;
	pid_t pid;

	pid = start_daemon("owners1.log", false);
	assert_true(pid > 0);
	/* Other clients first: the owner's name is one the next bus will hand out again, after its own start-up. */
	for (unsigned i = 0; i < ELEMENTSOF(others); i++)
		assert_int_equal(harness_open_client(&h, &others[i]), 0);
	assert_int_equal(harness_open_client(&h, &client), 0);
	assert_int_equal(take(client, "victim", 0, &fa, "owners1.log"), 1);
	a1 = find_lock(client, "victim");
	fake_systemd_pump(&sd, 200);
	assert_true(fake_systemd_stored(&sd, "lease-"));
	fixture_write(h.dir, "sys/power/wake_unlock", "");
	sd_bus_flush_close_unref(client);
	for (unsigned i = 0; i < ELEMENTSOF(others); i++)
		sd_bus_flush_close_unref(others[i]);

	assert_int_equal(harness_bus_restart(&h), 0);
	status = wait_exit(pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	fake_systemd_pump(&sd, 0);
	assert_true(start_daemon("owners2.log", true) > 0);
	for (n = 0; n < STRANGERS_MAX; n++) {
		assert_int_equal(harness_open_client(&h, &strangers[n]), 0);
		assert_true(sd_bus_get_unique_name(strangers[n], &unique) >= 0);
		if (strcmp(unique, a1.owner) == 0)
			break;
	}
	fprintf(stderr, "# the lock's owner was %s; stranger %d of the new bus got the name\n", a1.owner, n);
	assert_true(n < STRANGERS_MAX);
	r = sd_bus_call_method(strangers[n], HARNESS_NAME, HARNESS_PATH, HARNESS_IFACE, "ReleaseWakeLock", &e, NULL, "s",
			       "victim");
	if (r >= 0)
		harness_show_log(&h, "owners2.log");
	assert_true(r < 0);
	assert_string_equal(e.name, "org.autosleep1.Error.NoSuchWakeLock");
	sd_bus_error_free(&e);
	a2 = find_lock(strangers[n], "victim");
	assert_int_equal(a2.found, 1);
	assert_string_equal(a2.owner, "");
	assert_int_equal(count_in_log("owners2.log", "was taken on an earlier D-Bus system bus"), 1);
	assert_int_equal(count_in_log("owners2.log", "would write mem to state"), 0);
	/* Its fd still ends it. */
	close(fa);
	for (int i = 0; i < 300 && find_lock(strangers[n], "victim").found; i++)
		usleep(10000);
	assert_int_equal(find_lock(strangers[n], "victim").found, 0);
	for (int i = 0; i <= n && i < STRANGERS_MAX; i++)
		sd_bus_flush_close_unref(strangers[i]);
	assert_int_equal(harness_daemon_stop(&h, SIGTERM), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_sigkill_and_restart_keeps_locks, stop_leftovers),
		cmocka_unit_test_teardown(test_no_suspend_before_logind_answers, stop_leftovers),
		cmocka_unit_test_teardown(test_hold_takes_its_lock_again, stop_leftovers),
		cmocka_unit_test_teardown(test_no_name_keeps_stored_locks, stop_leftovers),
		cmocka_unit_test_teardown(test_disable_survives_restart, stop_leftovers),
		cmocka_unit_test_teardown(test_bus_restart_forgets_owners, stop_leftovers),
		/* Last: it kills the bus. */
		cmocka_unit_test_teardown(test_losing_the_bus_is_fatal, stop_leftovers),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
