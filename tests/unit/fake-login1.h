/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

/*
 * TEST SEAM: a stand-in for systemd-logind on the test's private bus, with
 * just what autosleepd uses: org.freedesktop.login1.Manager (ListSessions,
 * ListInhibitors, LockSessions, the SessionNew, SessionRemoved and
 * PrepareForSleep signals) and one org.freedesktop.login1.Session object per
 * session, whose properties announce their changes as logind's do. It runs
 * only while the test pumps it (fake_login1_pump), on the test's thread.
 * Nothing here asserts.
 */
#define FAKE_LOGIN1_SESSIONS_MAX 64

struct fake_session {
	struct fake_login1 *f;
	char id[16];
	char path[64];
	char name[32];
	char class[16];
	char type[16];
	uint32_t uid;
	/* int, not bool: sd-bus reads a "b" property through an int. */
	int active, idle, locked, remote;
	bool gone;          /* removed; its slot stays so the others keep their addresses */
	bool locker;        /* answers Lock with LockedHint=true, as a screen locker does */
	unsigned lock_signals;
	sd_bus_slot *slot;
};

struct fake_inhibitor {
	char what[64];
	char who[32];
	char why[64];
	char mode[8];
	uint32_t uid;
	uint32_t pid;
	int fd;             /* our end of a taker's fd (Inhibit), -1 for ones the test added */
};

#define FAKE_LOGIN1_INHIBITORS_MAX 8

/* Calls held back while deferring (fake_login1_defer()), to be answered in any order, or never. */
#define FAKE_LOGIN1_HELD_MAX 256

enum fake_answer {
	FAKE_ANSWER_NOW,   /* as logind would answer it now */
	FAKE_ANSWER_ERROR, /* org.freedesktop.DBus.Error.Failed */
	FAKE_ANSWER_NEVER, /* dropped: the caller hears nothing until its own timeout */
};

struct fake_login1 {
	sd_bus *bus;
	struct fake_inhibitor inhibitors[FAKE_LOGIN1_INHIBITORS_MAX];
	unsigned n_inhibitors;
	int docked;
	struct fake_session sessions[FAKE_LOGIN1_SESSIONS_MAX];
	unsigned n;
	unsigned lock_calls;
	/* Set by the test: called inside LockSessions, before any session hears Lock. */
	void (*on_lock)(struct fake_login1 *f, void *userdata);
	void *userdata;
	/* Deferring: every call to logind is held here instead of answered. */
	bool defer;
	sd_bus_slot *filter_slot;
	sd_bus_message *held[FAKE_LOGIN1_HELD_MAX];
	unsigned n_held;
	bool away; /* released org.freedesktop.login1 */
};

/* Connect to address and own org.freedesktop.login1. */
int fake_login1_start(struct fake_login1 *f, const char *address);
void fake_login1_stop(struct fake_login1 *f);
/* Serve requests for up to ms milliseconds. */
void fake_login1_pump(struct fake_login1 *f, int ms);

/* A new session (SessionNew is sent if announce); returns it or NULL. */
struct fake_session *fake_login1_add(struct fake_login1 *f, const char *id, const char *class, const char *type,
				     bool remote, bool active, bool idle, bool announce);
void fake_login1_remove(struct fake_login1 *f, struct fake_session *s);
/* Change a property and send PropertiesChanged, as logind does. */
void fake_session_set(struct fake_session *s, const char *property, bool value);
/* Class or Type: a string property, changed and announced. */
void fake_session_set_string(struct fake_session *s, const char *property, const char *value);

/*
 * While on, calls to logind are held (the filter sees them before sd-bus
 * dispatches them); fake_login1_answer() answers the i-th held one now, with
 * an error, or never, in whatever order the test likes. Turning deferral off
 * answers nothing: what is held stays held.
 */
int fake_login1_defer(struct fake_login1 *f, bool on);
void fake_login1_answer(struct fake_login1 *f, unsigned i, enum fake_answer how);
/* The member of the i-th held call, for the test's event log. */
const char *fake_login1_held_member(struct fake_login1 *f, unsigned i);
/* Leave the bus (release the name: NameOwnerChanged to "") and come back (a new owner, as a restart shows). */
void fake_login1_leave(struct fake_login1 *f);
void fake_login1_return(struct fake_login1 *f);
void fake_login1_prepare_for_sleep(struct fake_login1 *f, bool start);
/* Another program's inhibitor, as ListInhibitors shows it; announced as logind does (BlockInhibited). */
void fake_login1_add_inhibitor(struct fake_login1 *f, const char *what, const char *who, uint32_t pid);
/* The same with a why: logind takes any string from any user. */
void fake_login1_add_inhibitor_why(struct fake_login1 *f, const char *what, const char *who, const char *why,
				   uint32_t pid);
/* The same, taken by uid (logind reports its taker's). */
void fake_login1_add_inhibitor_uid(struct fake_login1 *f, const char *what, const char *who, const char *why,
				   uint32_t uid, uint32_t pid);
/* Its taker let go of every inhibitor named who, as logind announces it. */
void fake_login1_remove_inhibitor(struct fake_login1 *f, const char *who);
/* Drop inhibitors whose taker closed its fd, as logind does; how many are left with what. */
unsigned fake_login1_count_inhibitors(struct fake_login1 *f, const char *what);
