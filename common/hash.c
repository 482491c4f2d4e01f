/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

/* FNV-1a: keys are short names chosen by clients; the table grows, so chains stay short. */
static unsigned hash_string(const char *s)
{
	unsigned h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static int hash_resize(struct hash *h, size_t n_buckets)
{
	struct hash_node **b = calloc(n_buckets, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < h->n_buckets; i++)
		for (struct hash_node *n = h->buckets[i], *next; n; n = next) {
			next = n->next;
			n->next = b[n->hv & (n_buckets - 1)];
			b[n->hv & (n_buckets - 1)] = n;
		}
	free(h->buckets);
	h->buckets = b;
	h->n_buckets = n_buckets;
	return 0;
}

int hash_insert(struct hash *h, struct hash_node *node)
{
	size_t i;
	int r;

	/* Grow at a load of one: a rehash now and then, O(1) on average. */
	if (h->n >= h->n_buckets) {
		r = hash_resize(h, h->n_buckets ? h->n_buckets * 2 : 16);
		if (r < 0 && h->n_buckets == 0)
			return r;
		/* A full table that cannot grow still works, with longer chains. */
	}
	node->hv = hash_string(node->key);
	i = node->hv & (h->n_buckets - 1);
	node->next = h->buckets[i];
	h->buckets[i] = node;
	h->n++;
	return 0;
}

struct hash_node *hash_lookup(const struct hash *h, const char *key)
{
	unsigned hv;

	if (h->n_buckets == 0)
		return NULL;
	hv = hash_string(key);
	for (struct hash_node *n = h->buckets[hv & (h->n_buckets - 1)]; n; n = n->next)
		if (n->hv == hv && strcmp(n->key, key) == 0)
			return n;
	return NULL;
}

void hash_remove(struct hash *h, struct hash_node *node)
{
	struct hash_node **p;

	assert(h->n_buckets > 0);
	for (p = &h->buckets[node->hv & (h->n_buckets - 1)]; *p != node; p = &(*p)->next)
		assert(*p);
	*p = node->next;
	node->next = NULL;
	h->n--;
}

void hash_done(struct hash *h)
{
	free(h->buckets);
	*h = (struct hash){};
}
