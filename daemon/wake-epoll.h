/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/*
 * An fd in an epoll of our own with EPOLLWAKEUP: from the moment an event is
 * queued until epoll_wait() hands it over, the kernel holds a wakeup source
 * (named after the file, e.g. "event3"), so input during suspend entry aborts
 * the suspend instead of being lost.
 *
 * Pausing must not drop EPOLLWAKEUP: ep_modify() in fs/eventpoll.c destroys
 * the item's wakeup source when a modify clears it and registers a new one
 * when it comes back, a /sys/class/wakeup device, uevents and a
 * synchronize_rcu() each time. A paused item keeps EPOLLWAKEUP and no poll
 * bits, which is the state EPOLLONESHOT leaves an item in after delivery
 * (events &= EP_PRIVATE_BITS) and which ep_poll_callback() treats as
 * disabled; its wakeup source lives on, inactive.
 */
int wake_epoll_add(int epfd, int fd, void *data);
int wake_epoll_pause(int epfd, int fd, void *data);
int wake_epoll_resume(int epfd, int fd, void *data);

/*
 * Whether the kernel kept EPOLLWAKEUP on fd's item in epfd: it drops the flag
 * silently without CAP_BLOCK_SUSPEND in the initial user namespace (capget()
 * cannot tell that from inside another one) and on a kernel without
 * CONFIG_PM_SLEEP. The item's line in our fdinfo shows the mask it kept.
 */
bool wake_epoll_kept(int epfd, int fd);
