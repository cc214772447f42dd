/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: byte-keyed hash map (see rdmx_hash.h). Linear probing over a
 * power-of-two table; removed slots are marked so probes continue past
 * them, and the table is rebuilt when live plus removed slots pass half.
 */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_hash.h"

#define RDMX_HASH_MIN_CAP	16

/* FNV-1a over the key bytes. */
static uint64_t rdmx_hash_key(const void *key, size_t len)
{
	const uint8_t *p = key;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static int rdmx_hash_alloc(struct rdmx_hash *hash, size_t cap)
{
	hash->vals = malloc(cap * sizeof(*hash->vals));
	if (!hash->vals)
		return -FI_ENOMEM;
	for (size_t i = 0; i < cap; i++)
		hash->vals[i] = RDMX_HASH_EMPTY;
	hash->cap = cap;
	hash->used = 0;
	hash->filled = 0;
	return 0;
}

int rdmx_hash_construct(struct rdmx_hash *hash, size_t key_len,
			rdmx_hash_key_of key_of)
{
	hash->key_len = key_len;
	hash->key_of = key_of;
	return rdmx_hash_alloc(hash, RDMX_HASH_MIN_CAP);
}

void rdmx_hash_destruct(struct rdmx_hash *hash)
{
	free(hash->vals);
	hash->vals = NULL;
}

static bool rdmx_hash_live(uint64_t val)
{
	return val != RDMX_HASH_EMPTY && val != RDMX_HASH_GONE;
}

/* The slot holding key, or (size_t) -1. */
static size_t rdmx_hash_slot(const struct rdmx_hash *hash, const void *key)
{
	size_t mask = hash->cap - 1;
	size_t i = rdmx_hash_key(key, hash->key_len) & mask;

	for (size_t n = 0; n < hash->cap; n++, i = (i + 1) & mask) {
		uint64_t val = hash->vals[i];

		if (val == RDMX_HASH_EMPTY)
			break;
		if (rdmx_hash_live(val) &&
		    !memcmp(hash->key_of(hash, val), key, hash->key_len))
			return i;
	}
	return (size_t) -1;
}

static void rdmx_hash_put(struct rdmx_hash *hash, uint64_t val)
{
	size_t mask = hash->cap - 1;
	size_t i = rdmx_hash_key(hash->key_of(hash, val), hash->key_len) & mask;

	while (rdmx_hash_live(hash->vals[i]))
		i = (i + 1) & mask;
	if (hash->vals[i] == RDMX_HASH_EMPTY)
		hash->filled++;
	hash->vals[i] = val;
	hash->used++;
}

static int rdmx_hash_rebuild(struct rdmx_hash *hash, size_t cap)
{
	struct rdmx_hash old = *hash;
	int ret;

	ret = rdmx_hash_alloc(hash, cap);
	if (ret) {
		*hash = old;
		return ret;
	}
	for (size_t i = 0; i < old.cap; i++) {
		if (rdmx_hash_live(old.vals[i]))
			rdmx_hash_put(hash, old.vals[i]);
	}
	rdmx_hash_destruct(&old);
	return 0;
}

int rdmx_hash_insert(struct rdmx_hash *hash, const void *key, uint64_t val)
{
	size_t slot = rdmx_hash_slot(hash, key);
	int ret;

	if (slot != (size_t) -1) {
		hash->vals[slot] = val;
		return 0;
	}
	if ((hash->filled + 1) * 2 > hash->cap) {
		size_t cap = hash->cap;

		/*
		 * At most a third full after the rebuild: at least cap / 6
		 * inserts before the next one, and 16 to 48 bytes a live entry.
		 */
		while ((hash->used + 1) * 3 > cap)
			cap *= 2;
		ret = rdmx_hash_rebuild(hash, cap);
		if (ret)
			return ret;
	}
	rdmx_hash_put(hash, val);
	return 0;
}

bool rdmx_hash_find(const struct rdmx_hash *hash, const void *key, uint64_t *val_p)
{
	size_t slot = rdmx_hash_slot(hash, key);

	if (slot == (size_t) -1)
		return false;
	*val_p = hash->vals[slot];
	return true;
}

void rdmx_hash_remove(struct rdmx_hash *hash, const void *key)
{
	size_t slot = rdmx_hash_slot(hash, key);

	if (slot == (size_t) -1)
		return;
	hash->vals[slot] = RDMX_HASH_GONE;
	hash->used--;
}
