/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "core.h"
#include "manager.h"

/*
 * For now the core is the manager seen through core.h: a struct core is a
 * struct manager, and only this file turns one into the other. When the
 * core becomes a structure of its own, these bodies change and no policy
 * does.
 */
static struct manager *M(struct core *c)
{
	return (struct manager *)c;
}

struct core *manager_core(struct manager *m)
{
	return (struct core *)m;
}

sd_event *core_event(struct core *c)
{
	return M(c)->event;
}

struct leases *core_leases(struct core *c)
{
	return &M(c)->leases;
}

struct wake_observers *core_wake(struct core *c)
{
	return &M(c)->wake;
}

int core_hold(struct core *c, const char *name, const char *why, usec_t cap, uint64_t *ret_id)
{
	return manager_hold(M(c), name, why, cap, ret_id);
}

int core_drop(struct core *c, uint64_t id, const char *reason)
{
	return manager_release(M(c), id, reason);
}

void core_changed(struct core *c, const char *property)
{
	manager_changed(M(c), property);
}

bool core_away(struct core *c)
{
	return manager_away(M(c));
}

void core_user_active(struct core *c)
{
	manager_user_active(M(c));
}

void core_set_session_hold(struct core *c, bool held, const char *why)
{
	manager_set_session_hold(M(c), held, why);
}

void core_lock_done(struct core *c, enum lock_step result)
{
	manager_lock_done(M(c), result);
}

void core_external_sleep(struct core *c, bool start)
{
	manager_external_sleep(M(c), start);
}
