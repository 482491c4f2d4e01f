/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/*
 * A string-keyed hash table of nodes embedded in their entries (no
 * allocation per entry): what keeps lookups by name O(1) however many
 * wake locks, names or clients there are. The table does not own the
 * nodes or their keys; a key must not change while its node is in.
 */
struct hash_node {
	struct hash_node *next;
	const char *key;
	unsigned hv;
};

struct hash {
	struct hash_node **buckets;
	size_t n_buckets; /* a power of two; 0 until the first insert */
	size_t n;
};

#define hash_entry(node, type, member) ((type *)((char *)(node) - offsetof(type, member)))

/* node->key set, and not in the table yet. -ENOMEM when the table cannot grow. */
int hash_insert(struct hash *h, struct hash_node *node);
struct hash_node *hash_lookup(const struct hash *h, const char *key);
/* node must be in h. */
void hash_remove(struct hash *h, struct hash_node *node);
/* Frees the table, not the nodes. */
void hash_done(struct hash *h);
