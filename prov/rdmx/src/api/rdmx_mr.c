/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: memory regions and their domain's key map (see rdmx_mr.h). */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_cntr.h"
#include "rdmx_domain.h"
#include "rdmx_mr.h"
#include "rdmx_stubs.h"

#define RDMX_MR_ACCESS	(FI_SEND | FI_RECV | FI_READ | FI_WRITE | \
			 FI_REMOTE_READ | FI_REMOTE_WRITE)
#define RDMX_MR_REMOTE	(FI_REMOTE_READ | FI_REMOTE_WRITE)

static const void *rdmx_mr_key_of(const struct rdmx_hash *hash, uint64_t val)
{
	(void) hash;
	return &((const struct rdmx_mr *) (uintptr_t) val)->mr_fid.key;
}

static int rdmx_mr_find(const struct rdmx_keys *keys, uint64_t key, uint64_t addr,
			size_t len, uint64_t access, uint8_t **buf)
{
	const struct rdmx_mr_map *map = rdmx_container_of(keys, struct rdmx_mr_map, keys);
	const struct rdmx_mr *mr;
	uint64_t val, base, start;

	if (!rdmx_hash_find(&map->by_key, &key, &val))
		return -FI_EACCES;
	mr = (const struct rdmx_mr *) (uintptr_t) val;
	if ((mr->access & access) != access)
		return -FI_EACCES;
	base = map->virt_addr ? (uintptr_t) mr->iov.iov_base : mr->offset;
	if (addr < base)
		return -FI_EINVAL;
	start = addr - base;
	if (start > mr->iov.iov_len || len > mr->iov.iov_len - start)
		return -FI_EINVAL;
	*buf = (uint8_t *) mr->iov.iov_base + start;
	return 0;
}

static void rdmx_mr_accessed(const struct rdmx_keys *keys, uint64_t key, uint64_t access)
{
	const struct rdmx_mr_map *map = rdmx_container_of(keys, struct rdmx_mr_map, keys);
	const struct rdmx_mr *mr;
	uint64_t val;

	if (!rdmx_hash_find(&map->by_key, &key, &val))
		return;
	mr = (const struct rdmx_mr *) (uintptr_t) val;
	if (mr->cntr && (mr->cntr_flags & access))
		rdmx_cntr_inc(mr->cntr);
}

static const struct rdmx_keys_ops rdmx_mr_keys_ops = {
	.find = rdmx_mr_find,
	.accessed = rdmx_mr_accessed,
};

int rdmx_mr_map_construct(struct rdmx_mr_map *map, uint64_t mr_mode)
{
	map->keys.ops = &rdmx_mr_keys_ops;
	map->virt_addr = mr_mode & (FI_MR_VIRT_ADDR | FI_MR_BASIC);
	return rdmx_hash_construct(&map->by_key, sizeof(uint64_t), rdmx_mr_key_of);
}

void rdmx_mr_map_destruct(struct rdmx_mr_map *map)
{
	rdmx_hash_destruct(&map->by_key);
}

/*
 * Gives mr its key and, if it grants remote access, its place in the
 * domain's map; 0, or -FI_ENOKEY for a requested key already in use.
 * Domain lock held.
 */
static int rdmx_mr_key(struct rdmx_domain *dom, struct rdmx_mr *mr, uint64_t requested)
{
	struct rdmx_mr_map *map = &dom->mrs;
	uint64_t val;
	int ret;

	if (dom->mr_mode & (FI_MR_PROV_KEY | FI_MR_BASIC)) {
		do
			mr->mr_fid.key = rdmx_random64();
		while (rdmx_hash_find(&map->by_key, &mr->mr_fid.key, &val));
	} else {
		mr->mr_fid.key = requested;
	}
	if (!(mr->access & RDMX_MR_REMOTE))
		return 0;
	if (rdmx_hash_find(&map->by_key, &mr->mr_fid.key, &val)) {
		RDMX_WARN(FI_LOG_MR, "key %#lx is in use\n", (unsigned long) requested);
		return -FI_ENOKEY;
	}
	ret = rdmx_hash_insert(&map->by_key, &mr->mr_fid.key, (uintptr_t) mr);
	mr->mapped = !ret;
	return ret;
}

static int rdmx_mr_close(struct fid *fid)
{
	struct rdmx_mr *mr = rdmx_container_of(fid, struct rdmx_mr, mr_fid.fid);
	struct rdmx_domain *dom = mr->domain;

	rdmx_lock_acquire(&dom->lock);
	if (mr->mapped)
		rdmx_hash_remove(&dom->mrs.by_key, &mr->mr_fid.key);
	if (mr->cntr)
		mr->cntr->mr_binds--;
	rdmx_lock_release(&dom->lock);
	if (mr->cntr)
		rdmx_ref_put(&mr->cntr->refs);
	rdmx_ref_put(&dom->refs);
	free(mr);
	return 0;
}

/*
 * fi_mr_bind of a counter (FI_RMA_EVENT): it counts the remote reads
 * and writes flags names of this region, once each is done. One counter
 * a region, of the region's domain.
 */
static int rdmx_mr_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct rdmx_mr *mr = rdmx_container_of(fid, struct rdmx_mr, mr_fid.fid);
	struct rdmx_cntr *cntr;

	if (bfid->fclass != FI_CLASS_CNTR) {
		RDMX_WARN(FI_LOG_MR, "a region binds only a counter\n");
		return -FI_EINVAL;
	}
	if (!flags || (flags & ~(uint64_t) RDMX_MR_REMOTE)) {
		RDMX_WARN(FI_LOG_MR, "region counter flags %#lx: FI_REMOTE_READ or "
			  "FI_REMOTE_WRITE\n", (unsigned long) flags);
		return -FI_EBADFLAGS;
	}
	cntr = rdmx_container_of(bfid, struct rdmx_cntr, cntr_fid.fid);
	if (cntr->domain != mr->domain || mr->cntr) {
		RDMX_WARN(FI_LOG_MR, "%s\n", mr->cntr ? "the region has a counter already" :
			  "the counter is of another domain");
		return -FI_EINVAL;
	}
	rdmx_ref_get(&cntr->refs);
	rdmx_lock_acquire(&mr->domain->lock);
	mr->cntr = cntr;
	mr->cntr_flags = flags;
	cntr->mr_binds++;
	rdmx_lock_release(&mr->domain->lock);
	return 0;
}

static struct fi_ops rdmx_mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = rdmx_mr_close,
	.bind = rdmx_mr_bind,
	.control = rdmx_no_control,
	.ops_open = rdmx_no_ops_open,
	.tostr = rdmx_no_tostr,
	.ops_set = rdmx_no_ops_set,
};

int rdmx_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		    uint64_t flags, struct fid_mr **mr_p)
{
	struct rdmx_domain *dom;
	struct rdmx_mr *mr;
	int ret;

	if (fid->fclass != FI_CLASS_DOMAIN) {
		RDMX_WARN(FI_LOG_MR, "memory is registered with a domain\n");
		return -FI_EINVAL;
	}
	dom = rdmx_container_of(fid, struct rdmx_domain, domain_fid.fid);
	if (!attr || attr->iov_count > 1 || (attr->iov_count && !attr->mr_iov)) {
		RDMX_WARN(FI_LOG_MR, "one iov per region at most\n");
		return -FI_EINVAL;
	}
	if (attr->access & ~(uint64_t) RDMX_MR_ACCESS) {
		RDMX_WARN(FI_LOG_MR, "bad access flags %#lx\n",
			  (unsigned long) attr->access);
		return -FI_EINVAL;
	}
	if (flags) {
		RDMX_WARN(FI_LOG_MR, "registration flags %#lx not supported\n",
			  (unsigned long) flags);
		return -FI_EBADFLAGS;
	}
	if (attr->iface != FI_HMEM_SYSTEM) {
		RDMX_WARN(FI_LOG_MR, "device memory is not supported\n");
		return -FI_ENOSYS;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -FI_ENOMEM;
	mr->domain = dom;
	mr->access = attr->access;
	mr->offset = attr->offset;
	if (attr->iov_count)
		mr->iov = attr->mr_iov[0];
	mr->mr_fid.fid.fclass = FI_CLASS_MR;
	mr->mr_fid.fid.context = attr->context;
	mr->mr_fid.fid.ops = &rdmx_mr_fi_ops;
	mr->mr_fid.mem_desc = mr;
	rdmx_lock_acquire(&dom->lock);
	ret = rdmx_mr_key(dom, mr, attr->requested_key);
	rdmx_lock_release(&dom->lock);
	if (ret) {
		free(mr);
		return ret;
	}
	rdmx_ref_get(&dom->refs);
	*mr_p = &mr->mr_fid;
	return 0;
}

int rdmx_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		 uint64_t access, uint64_t offset, uint64_t requested_key,
		 uint64_t flags, struct fid_mr **mr_p, void *context)
{
	struct fi_mr_attr attr = {
		.mr_iov = iov,
		.iov_count = count,
		.access = access,
		.offset = offset,
		.requested_key = requested_key,
		.context = context,
		.iface = FI_HMEM_SYSTEM,
	};

	return rdmx_mr_regattr(fid, &attr, flags, mr_p);
}

int rdmx_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
		uint64_t offset, uint64_t requested_key, uint64_t flags,
		struct fid_mr **mr_p, void *context)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };

	return rdmx_mr_regv(fid, &iov, 1, access, offset, requested_key, flags,
			    mr_p, context);
}
