/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: address vectors (see rdmx_av.h). */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_av.h"
#include "rdmx_domain.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_stubs.h"

#define RDMX_AV_MIN_CAP	16
/* The largest count hint accepted (inserts grow past it as needed). */
#define RDMX_AV_COUNT_MAX	(1 << 26)

static struct rdmx_av *rdmx_av(struct fid_av *av_fid)
{
	return rdmx_container_of(av_fid, struct rdmx_av, av_fid);
}

const void *rdmx_av_addr(const struct rdmx_av *av, fi_addr_t fi_addr)
{
	if (fi_addr >= av->count || !av->valid[fi_addr])
		return NULL;
	return av->addrs + fi_addr * av->addr_size;
}

fi_addr_t rdmx_av_reverse(const struct rdmx_av *av, const void *canon)
{
	uint64_t val;

	return rdmx_hash_find(&av->reverse, canon, &val) ? val : FI_ADDR_NOTAVAIL;
}

static const void *rdmx_av_lookup_op(const struct rdmx_addrs *addrs, fi_addr_t fi_addr)
{
	return rdmx_av_addr(rdmx_container_of(addrs, struct rdmx_av, lookups), fi_addr);
}

static fi_addr_t rdmx_av_reverse_op(const struct rdmx_addrs *addrs, const void *canon)
{
	return rdmx_av_reverse(rdmx_container_of(addrs, struct rdmx_av, lookups), canon);
}

static const struct rdmx_addrs_ops rdmx_av_addrs_ops = {
	.lookup = rdmx_av_lookup_op,
	.reverse = rdmx_av_reverse_op,
};

/* Reverse map keys: the address stored in the entry a value names. */
static const void *rdmx_av_key(const struct rdmx_hash *hash, uint64_t val)
{
	const struct rdmx_av *av = rdmx_container_of(hash, struct rdmx_av, reverse);

	return av->addrs + val * av->addr_size;
}

static int rdmx_av_grow(struct rdmx_av *av, size_t need)
{
	size_t cap = RDMX_MAX(av->cap, RDMX_AV_MIN_CAP);
	uint8_t *addrs, *valid;

	while (cap < need) {
		if (cap > SIZE_MAX / 2 / av->addr_size)
			return -FI_ENOMEM;
		cap *= 2;
	}
	if (cap == av->cap)
		return 0;
	addrs = realloc(av->addrs, cap * av->addr_size);
	if (!addrs)
		return -FI_ENOMEM;
	av->addrs = addrs;
	valid = realloc(av->valid, cap);
	if (!valid)
		return -FI_ENOMEM;
	memset(valid + av->cap, 0, cap - av->cap);
	av->valid = valid;
	av->cap = cap;
	return 0;
}

fi_addr_t rdmx_av_store(struct rdmx_av *av, const void *canon)
{
	fi_addr_t slot;

	if (av->type == FI_AV_MAP && av->free_cnt) {
		slot = av->free_slots[--av->free_cnt];
	} else {
		if (rdmx_av_grow(av, av->count + 1))
			return FI_ADDR_NOTAVAIL;
		slot = av->count++;
	}
	memcpy(av->addrs + slot * av->addr_size, canon, av->addr_size);
	av->valid[slot] = 1;
	/* A repeated address keeps answering to its first entry. */
	if (rdmx_av_reverse(av, canon) != FI_ADDR_NOTAVAIL) {
		av->had_dups = true;
	} else if (rdmx_hash_insert(&av->reverse, canon, slot)) {
		av->valid[slot] = 0;
		return FI_ADDR_NOTAVAIL;
	}
	return slot;
}

static int rdmx_av_insert(struct fid_av *av_fid, const void *addr, size_t count,
			  fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	struct rdmx_av *av = rdmx_av(av_fid);
	const struct rdmx_dev_ops *ops = av->domain->dev_ops;
	const uint8_t *next = addr;
	int *errors = (flags & FI_SYNC_ERR) ? context : NULL;
	int inserted = 0;

	if (flags & ~(uint64_t) (FI_MORE | FI_SYNC_ERR)) {
		RDMX_WARN(FI_LOG_AV, "av insert flags %#lx not supported\n",
			  (unsigned long) flags);
		return -FI_EBADFLAGS;
	}
	if (count && !addr)
		return -FI_EINVAL;
	rdmx_lock_acquire(&av->domain->lock);
	for (size_t i = 0; i < count; i++) {
		uint8_t canon[RDMX_DEV_ADDR_MAX];
		fi_addr_t slot = FI_ADDR_NOTAVAIL;
		int err = -FI_EINVAL;

		if (!ops->addr_canon(next, ops->addr_size, canon)) {
			next += ops->addr_len(canon);
			slot = rdmx_av_store(av, canon);
			err = slot == FI_ADDR_NOTAVAIL ? -FI_ENOMEM : 0;
		} else {
			RDMX_WARN(FI_LOG_AV, "entry %zu is not a valid address\n", i);
			next += ops->addr_size;
		}
		if (fi_addr)
			fi_addr[i] = slot;
		if (errors)
			errors[i] = err;
		inserted += !err;
	}
	rdmx_lock_release(&av->domain->lock);
	return inserted;
}

static int rdmx_av_insertsvc(struct fid_av *av_fid, const char *node,
			     const char *service, fi_addr_t *fi_addr,
			     uint64_t flags, void *context)
{
	struct rdmx_av *av = rdmx_av(av_fid);
	uint8_t canon[RDMX_DEV_ADDR_MAX];

	if (!node || !service)
		return -FI_EINVAL;
	if (av->domain->dev_ops->resolve(node, service, canon))
		return -FI_EINVAL;
	return rdmx_av_insert(av_fid, canon, 1, fi_addr, flags, context);
}

static int rdmx_av_insertsym(struct fid_av *av_fid, const char *node,
			     size_t nodecnt, const char *service, size_t svccnt,
			     fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	(void) av_fid; (void) node; (void) nodecnt; (void) service;
	(void) svccnt; (void) fi_addr; (void) flags; (void) context;
	return -FI_ENOSYS;
}

/*
 * Drops the reverse entry of a removed address, handing it to another
 * entry with the same address if the application inserted one (a scan,
 * paid only by AVs that ever held duplicates).
 */
static void rdmx_av_unmap(struct rdmx_av *av, const void *canon)
{
	rdmx_hash_remove(&av->reverse, canon);
	for (size_t i = 0; av->had_dups && i < av->count; i++) {
		if (av->valid[i] &&
		    !memcmp(av->addrs + i * av->addr_size, canon, av->addr_size)) {
			/* On failure the source just reads FI_ADDR_NOTAVAIL. */
			(void) rdmx_hash_insert(&av->reverse, canon, i);
			return;
		}
	}
}

/*
 * Keeps a removed FI_AV_MAP slot for the next insert. The list grows with
 * removes, so an AV that never removes pays nothing for it; without
 * memory the slot is simply not reused.
 */
static void rdmx_av_recycle(struct rdmx_av *av, fi_addr_t slot)
{
	if (av->free_cnt == av->free_cap) {
		size_t cap = RDMX_MAX(av->free_cap * 2, RDMX_AV_MIN_CAP);
		size_t *slots = realloc(av->free_slots, cap * sizeof(*slots));

		if (!slots)
			return;
		av->free_slots = slots;
		av->free_cap = cap;
	}
	av->free_slots[av->free_cnt++] = slot;
}

static int rdmx_av_remove(struct fid_av *av_fid, fi_addr_t *fi_addr,
			  size_t count, uint64_t flags)
{
	struct rdmx_av *av = rdmx_av(av_fid);
	int ret = 0;

	if (flags)
		return -FI_EBADFLAGS;
	rdmx_lock_acquire(&av->domain->lock);
	for (size_t i = 0; i < count; i++) {
		const void *canon = rdmx_av_addr(av, fi_addr[i]);

		if (!canon) {
			RDMX_WARN(FI_LOG_AV, "remove of unknown fi_addr %lu\n",
				  (unsigned long) fi_addr[i]);
			ret = -FI_EINVAL;
			continue;
		}
		for (size_t e = 0; e < av->ep_cnt; e++)
			rdmx_peer_forget(av->eps[e], fi_addr[i]);
		av->valid[fi_addr[i]] = 0;
		if (rdmx_av_reverse(av, canon) == fi_addr[i])
			rdmx_av_unmap(av, canon);
		if (av->type == FI_AV_MAP)
			rdmx_av_recycle(av, fi_addr[i]);
	}
	rdmx_lock_release(&av->domain->lock);
	return ret;
}

static int rdmx_av_lookup(struct fid_av *av_fid, fi_addr_t fi_addr, void *addr,
			  size_t *addrlen)
{
	struct rdmx_av *av = rdmx_av(av_fid);
	const void *canon;
	size_t len;
	int ret = 0;

	rdmx_lock_acquire(&av->domain->lock);
	canon = rdmx_av_addr(av, fi_addr);
	if (!canon) {
		ret = -FI_EINVAL;
	} else {
		len = av->domain->dev_ops->addr_len(canon);
		if (addr)
			memcpy(addr, canon, RDMX_MIN(len, *addrlen));
		*addrlen = len;
	}
	rdmx_lock_release(&av->domain->lock);
	return ret;
}

static const char *rdmx_av_straddr(struct fid_av *av_fid, const void *addr,
				   char *buf, size_t *len)
{
	const struct rdmx_dev_ops *ops = rdmx_av(av_fid)->domain->dev_ops;
	uint8_t canon[RDMX_DEV_ADDR_MAX];
	char str[128] = "(invalid address)";

	if (!ops->addr_canon(addr, ops->addr_size, canon))
		ops->addr_str(canon, str, sizeof(str));
	if (buf && *len) {
		strncpy(buf, str, *len - 1);
		buf[*len - 1] = '\0';
	}
	*len = strlen(str) + 1;
	return buf;
}

static int rdmx_av_no_set(struct fid_av *av_fid, struct fi_av_set_attr *attr,
			  struct fid_av_set **av_set, void *context)
{
	(void) av_fid; (void) attr; (void) av_set; (void) context;
	return -FI_ENOSYS;
}

int rdmx_av_attach(struct rdmx_av *av, struct rdmx_ep *ep)
{
	struct rdmx_ep **eps;

	rdmx_lock_acquire(&av->domain->lock);
	eps = realloc(av->eps, (av->ep_cnt + 1) * sizeof(*eps));
	if (eps) {
		eps[av->ep_cnt++] = ep;
		av->eps = eps;
		rdmx_ref_get(&av->refs);
	}
	rdmx_lock_release(&av->domain->lock);
	return eps ? 0 : -FI_ENOMEM;
}

void rdmx_av_detach(struct rdmx_av *av, struct rdmx_ep *ep)
{
	rdmx_lock_acquire(&av->domain->lock);
	for (size_t i = 0; i < av->ep_cnt; i++) {
		if (av->eps[i] == ep) {
			av->eps[i] = av->eps[--av->ep_cnt];
			rdmx_ref_put(&av->refs);
			break;
		}
	}
	rdmx_lock_release(&av->domain->lock);
}

static int rdmx_av_close(struct fid *fid)
{
	struct rdmx_av *av = rdmx_container_of(fid, struct rdmx_av, av_fid.fid);

	if (rdmx_ref_read(&av->refs)) {
		RDMX_WARN(FI_LOG_AV, "av still bound to %d endpoints\n",
			  rdmx_ref_read(&av->refs));
		return -FI_EBUSY;
	}
	rdmx_hash_destruct(&av->reverse);
	free(av->addrs);
	free(av->valid);
	free(av->free_slots);
	free(av->eps);
	rdmx_ref_put(&av->domain->refs);
	free(av);
	return 0;
}

static struct fi_ops rdmx_av_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = rdmx_av_close,
	.bind = rdmx_no_bind,
	.control = rdmx_no_control,
	.ops_open = rdmx_no_ops_open,
	.tostr = rdmx_no_tostr,
	.ops_set = rdmx_no_ops_set,
};

static struct fi_ops_av rdmx_av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = rdmx_av_insert,
	.insertsvc = rdmx_av_insertsvc,
	.insertsym = rdmx_av_insertsym,
	.remove = rdmx_av_remove,
	.lookup = rdmx_av_lookup,
	.straddr = rdmx_av_straddr,
	.av_set = rdmx_av_no_set,
};

int rdmx_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		 struct fid_av **av_p, void *context)
{
	struct rdmx_domain *dom = rdmx_domain(domain);
	enum fi_av_type type = attr->type;
	struct rdmx_av *av;
	int ret;

	if (attr->count > RDMX_AV_COUNT_MAX) {
		RDMX_WARN(FI_LOG_AV, "av count %zu above %d\n", attr->count,
			  RDMX_AV_COUNT_MAX);
		return -FI_EINVAL;
	}
	if (type == FI_AV_UNSPEC)
		type = dom->av_type != FI_AV_UNSPEC ? dom->av_type : FI_AV_TABLE;
	if ((type != FI_AV_MAP && type != FI_AV_TABLE) ||
	    (dom->av_type != FI_AV_UNSPEC && type != dom->av_type)) {
		RDMX_WARN(FI_LOG_AV, "av type %d does not fit the domain\n", type);
		return -FI_EINVAL;
	}
	if (attr->flags & FI_EVENT || attr->name || attr->rx_ctx_bits ||
	    (attr->flags & FI_READ)) {
		RDMX_WARN(FI_LOG_AV, "asynchronous, shared or context AVs are not supported\n");
		return -FI_ENOSYS;
	}
	av = calloc(1, sizeof(*av));
	if (!av)
		return -FI_ENOMEM;
	av->domain = dom;
	av->type = type;
	av->addr_size = dom->dev_ops->addr_size;
	ret = rdmx_hash_construct(&av->reverse, av->addr_size, rdmx_av_key);
	if (ret)
		goto err_free_av;
	ret = rdmx_av_grow(av, RDMX_MAX(attr->count, RDMX_AV_MIN_CAP));
	if (ret)
		goto err_destruct_hash;

	av->av_fid.fid.fclass = FI_CLASS_AV;
	av->av_fid.fid.context = context;
	av->av_fid.fid.ops = &rdmx_av_fi_ops;
	av->lookups.ops = &rdmx_av_addrs_ops;
	av->av_fid.ops = &rdmx_av_ops;
	rdmx_ref_get(&dom->refs);
	*av_p = &av->av_fid;
	return 0;

err_destruct_hash:
	rdmx_hash_destruct(&av->reverse);
	free(av->addrs);
	free(av->valid);
	free(av->free_slots);
err_free_av:
	free(av);
	return ret;
}
