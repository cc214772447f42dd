/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: memory regions. The devices copy through the kernel or a bounce
 * buffer, so a region pins nothing: it records the buffer, its access
 * and its key. A region that grants remote access is in its domain's
 * key map, where the rdm layer checks every remote access (rdmx_keys.h).
 * Keys the provider chooses (FI_MR_PROV_KEY) are random 64-bit values;
 * requested keys must be unique among a domain's remote regions.
 */
#ifndef RDMX_MR_H
#define RDMX_MR_H

#include <stdbool.h>
#include <sys/uio.h>
#include <rdma/fi_domain.h>

#include "rdmx_hash.h"
#include "rdmx_keys.h"

struct rdmx_cntr;
struct rdmx_domain;

struct rdmx_mr {
	struct fid_mr		mr_fid;
	struct rdmx_domain	*domain;
	struct iovec		iov;
	uint64_t		access;
	uint64_t		offset;		/* without FI_MR_VIRT_ADDR: the
						   address of the region's first byte */
	bool			mapped;		/* in the domain's key map */
	struct rdmx_cntr	*cntr;		/* fi_mr_bind: counts remote */
	uint64_t		cntr_flags;	/* accesses of these kinds */
};

/* A domain's regions that grant remote access, by key. */
struct rdmx_mr_map {
	struct rdmx_keys	keys;		/* what the rdm layer is given */
	struct rdmx_hash	by_key;		/* key -> struct rdmx_mr * */
	bool			virt_addr;	/* FI_MR_VIRT_ADDR addressing */
};

/* Prepares dom's map for mr_mode; 0 or -FI_ENOMEM. */
int rdmx_mr_map_construct(struct rdmx_mr_map *map, uint64_t mr_mode);
void rdmx_mr_map_destruct(struct rdmx_mr_map *map);

int rdmx_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
		uint64_t offset, uint64_t requested_key, uint64_t flags,
		struct fid_mr **mr_p, void *context);
int rdmx_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		 uint64_t access, uint64_t offset, uint64_t requested_key,
		 uint64_t flags, struct fid_mr **mr_p, void *context);
int rdmx_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		    uint64_t flags, struct fid_mr **mr_p);

#endif /* RDMX_MR_H */
