/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <sys/types.h>

/* Context switches of every thread of pid, each a wakeup or a preemption; -1 if it cannot be read. */
long proc_ctxt_switches(pid_t pid);
