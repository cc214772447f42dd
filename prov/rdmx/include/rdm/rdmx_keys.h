/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the memory a peer's RMA may reach. The api layer keeps the
 * domain's registrations by key (rdmx_mr.c) and gives the rdm layer this
 * lookup: the rdm layer checks every remote access through it, packet by
 * packet, so a region closed while an access is under way is not touched
 * after its fi_close returned.
 */
#ifndef RDMX_KEYS_H
#define RDMX_KEYS_H

#include <stddef.h>
#include <stdint.h>

struct rdmx_keys;

struct rdmx_keys_ops {
	/*
	 * The len bytes at addr of the region registered with key, which
	 * must grant every access bit asked (FI_REMOTE_READ, FI_REMOTE_WRITE):
	 * 0 and *buf; -FI_EACCES when no region has key or it grants less;
	 * -FI_EINVAL when the bytes are not all inside it.
	 */
	int	(*find)(const struct rdmx_keys *keys, uint64_t key, uint64_t addr,
			size_t len, uint64_t access, uint8_t **buf);
	/*
	 * A remote access (FI_REMOTE_READ or FI_REMOTE_WRITE) of the region
	 * with key is done: its counter counts it (FI_RMA_EVENT, fi_mr_bind).
	 */
	void	(*accessed)(const struct rdmx_keys *keys, uint64_t key, uint64_t access);
};

struct rdmx_keys {
	const struct rdmx_keys_ops	*ops;
};

static inline int rdmx_keys_find(const struct rdmx_keys *keys, uint64_t key, uint64_t addr,
				 size_t len, uint64_t access, uint8_t **buf)
{
	return keys->ops->find(keys, key, addr, len, access, buf);
}

static inline void rdmx_keys_accessed(const struct rdmx_keys *keys, uint64_t key,
				      uint64_t access)
{
	keys->ops->accessed(keys, key, access);
}

#endif /* RDMX_KEYS_H */
