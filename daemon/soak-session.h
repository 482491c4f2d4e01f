/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "soak.h"

/*
 * The soak client on the main loop: the first SoakCycle pauses autosleep
 * (suspender_set_paused()), and it resumes when the client leaves the bus,
 * however it left. One client at a time, one cycle at a time. Each cycle
 * runs on the suspender thread; its reply is sent when the thread reports,
 * or when the watchdog gives up on a state write that does not return
 * (result "hang"; no cycle runs after that until the write returned).
 */
struct manager;

#define SOAK_WATCHDOG_DEFAULT_USEC (120 * USEC_PER_SEC)

/* Queue one cycle for call's sender; replies later. Returns 1, or <0 with error set. */
int soak_session_cycle(struct manager *m, sd_bus_message *call, const struct soak_request *req, usec_t watchdog,
		       sd_bus_error *error);
/* The suspender thread reported a cycle. */
void soak_session_finished(struct manager *m, const struct soak_record *rec);
void soak_session_free(struct manager *m);
