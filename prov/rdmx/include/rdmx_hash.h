/*
 * rdmx: a map from fixed-length byte keys (raw device addresses) to
 * 64-bit values, with open addressing. Used for reverse address lookups.
 */
#ifndef RDMX_HASH_H
#define RDMX_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

struct rdmx_hash {
	uint8_t		*keys;		/* cap * key_len bytes */
	uint64_t	*vals;
	uint8_t		*state;		/* RDMX_HASH_EMPTY / USED / GONE */
	size_t		key_len;
	size_t		cap;		/* a power of two */
	size_t		used;		/* live entries */
	size_t		filled;		/* live plus removed slots */
};

/* Prepares an empty map for keys of key_len bytes; 0 or -FI_ENOMEM. */
int rdmx_hash_construct(struct rdmx_hash *hash, size_t key_len);
void rdmx_hash_destruct(struct rdmx_hash *hash);

/* Adds or replaces key → val; returns 0 or -FI_ENOMEM. */
int rdmx_hash_insert(struct rdmx_hash *hash, const void *key, uint64_t val);

/* Finds key; returns true and writes *val_p when present. */
bool rdmx_hash_find(const struct rdmx_hash *hash, const void *key,
		    uint64_t *val_p);

/* Removes key if present. */
void rdmx_hash_remove(struct rdmx_hash *hash, const void *key);

#endif /* RDMX_HASH_H */
