/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Another network namespace, known by the nsfs inode the attachment
 * records carry: where it is (a bind mount, or a process in it) and
 * running a function in it from a thread that enters it (setns() moves
 * the calling thread only: CAP_SYS_ADMIN). Used by the attachments
 * (kern/attach.c: programs replaced, interfaces gone) and the protected
 * set (kern/protect.c: the addresses and routes of each namespace).
 */
#ifndef BLOOMGATE_KERN_NETNS_H
#define BLOOMGATE_KERN_NETNS_H

#include <stddef.h>
#include <linux/types.h>

/* A path to the network namespace of nsfs inode ino into path: 1, or 0
 * when none is found (the namespace is gone). */
int bg_netns_path(__u32 ino, char *path, size_t len);

/* fn(arg) in the network namespace of fd (-1: in the caller's), from a
 * thread of its own: fn's result, or -errno of the entering. */
int bg_netns_call(int fd, int (*fn)(void *arg), void *arg);

/* The same for nsfs inode ino, or here when it is ours: -ENOENT when no
 * such namespace is left. */
int bg_in_netns_of(__u32 ino, int (*fn)(void *arg), void *arg);

#endif
