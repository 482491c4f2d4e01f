/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The suspend path with this program as the kernel: suspend entry latency,
 * the first lease inside the state write and with the suspender blocked in
 * wakeup_count, and the daemon's wakeups meanwhile. Prints its tables;
 * returns negative errno if it broke.
 */
int bench_inflight(unsigned iterations, unsigned idle_seconds, const char *bus_extra);
