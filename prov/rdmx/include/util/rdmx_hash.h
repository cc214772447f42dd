/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: a map from fixed-length byte keys (raw device addresses) to
 * 64-bit values, with open addressing. Used for reverse address lookups.
 *
 * The map stores values only, 8 bytes a slot: every value names an object
 * that already holds its key (an AV entry, an address handle), and the
 * owner's key_of gives the key back from the value. A key must not change
 * while its value is in the map.
 */
#ifndef RDMX_HASH_H
#define RDMX_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

struct rdmx_hash;

/* The key_len bytes of the key stored with val. */
typedef const void *(*rdmx_hash_key_of)(const struct rdmx_hash *hash,
					uint64_t val);

struct rdmx_hash {
	uint64_t		*vals;		/* cap slots, or EMPTY / GONE */
	rdmx_hash_key_of	key_of;
	size_t			key_len;
	size_t			cap;		/* a power of two */
	size_t			used;		/* live entries */
	size_t			filled;		/* live plus removed slots */
};

/* The two values the map keeps for itself; no stored value may be one. */
#define RDMX_HASH_EMPTY	UINT64_MAX
#define RDMX_HASH_GONE	(UINT64_MAX - 1)

/* Prepares an empty map for keys of key_len bytes; 0 or -FI_ENOMEM. */
int rdmx_hash_construct(struct rdmx_hash *hash, size_t key_len,
			rdmx_hash_key_of key_of);
void rdmx_hash_destruct(struct rdmx_hash *hash);

/* Adds or replaces key → val (key_of(val) must equal key); 0 or -FI_ENOMEM. */
int rdmx_hash_insert(struct rdmx_hash *hash, const void *key, uint64_t val);

/* Finds key; returns true and writes *val_p when present. */
bool rdmx_hash_find(const struct rdmx_hash *hash, const void *key,
		    uint64_t *val_p);

/* Removes key if present. */
void rdmx_hash_remove(struct rdmx_hash *hash, const void *key);

#endif /* RDMX_HASH_H */
