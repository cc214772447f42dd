/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx unit tests: two endpoints of one process talking through the
 * libfabric calls an application makes (fi_endpoint, fi_av_insert,
 * fi_tsend, fi_cq_read ...), over whichever device FI_RDMX_DEVICE names.
 * The efa and verbs tests run them over the fake rdma-core, so the whole
 * rdm layer (handshake, protocols, RNR backoff) meets those devices.
 */
#ifndef RDMX_TEST_PAIR_H
#define RDMX_TEST_PAIR_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_ext_rdmx.h>

#include "rdmx_test.h"

struct rdmx_test_pair {
	struct fi_info		*info;
	struct fid_fabric	*fabric;
	struct fid_domain	*domain;
	struct fid_ep		*ep[2];
	struct fid_av		*av[2];
	struct fid_cq		*cq[2];
	fi_addr_t		peer[2];	/* each one's address of the other */
};

/*
 * Opens an enabled endpoint of info on domain, with an address vector of
 * its own, bound to cq for both directions (a CQ may serve several).
 */
static inline void rdmx_test_pair_ep_open(struct fid_domain *domain, struct fi_info *info,
					  struct fid_cq *cq, struct fid_ep **ep_p,
					  struct fid_av **av_p)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	int ret;

	cr_assert_eq(fi_endpoint(domain, info, ep_p, NULL), 0);
	cr_assert_eq(fi_av_open(domain, &av_attr, av_p, NULL), 0);
	cr_assert_eq(fi_ep_bind(*ep_p, &(*av_p)->fid, 0), 0);
	cr_assert_eq(fi_ep_bind(*ep_p, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
	ret = fi_enable(*ep_p);
	cr_assert_eq(ret, 0, "fi_enable: %s", fi_strerror(-ret));
}

/* Inserts the name of endpoint `to` into av; its address there. */
static inline fi_addr_t rdmx_test_pair_insert(struct fid_av *av, struct fid_ep *to)
{
	uint8_t addr[64];
	size_t len = sizeof(addr);
	fi_addr_t fi_addr;

	cr_assert_eq(fi_getname(&to->fid, addr, &len), 0);
	cr_assert_eq(fi_av_insert(av, addr, 1, &fi_addr, 0, NULL), 1);
	return fi_addr;
}

/*
 * Opens a fabric, a domain and two connected endpoints of type with
 * caps on device dev; the two, in one process, talk by dev itself, not
 * by a shm lane.
 */
static inline void rdmx_test_pair_open_type(struct rdmx_test_pair *tp, const char *dev,
					    enum fi_ep_type type, uint64_t caps)
{
	static char name[16];
	struct fi_info *hints = fi_allocinfo();
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	int ret;

	cr_assert_not_null(hints);
	snprintf(name, sizeof(name), "%s", dev);
	g_rdmx_params.device = name;
	g_rdmx_params.iface = NULL;
	g_rdmx_params.shm = 0;
	hints->ep_attr->type = type;
	hints->caps = caps;
	ret = rdmx_getinfo(RDMX_API_VERSION, NULL, NULL, 0, hints, &tp->info);
	fi_freeinfo(hints);
	cr_assert_eq(ret, 0, "getinfo on %s: %s", dev, fi_strerror(-ret));
	cr_assert_str_eq(tp->info->fabric_attr->name, dev);
	cr_assert_eq(rdmx_fabric_open(tp->info->fabric_attr, &tp->fabric, NULL), 0);
	cr_assert_eq(fi_domain(tp->fabric, tp->info, &tp->domain, NULL), 0);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(fi_cq_open(tp->domain, &cq_attr, &tp->cq[i], NULL), 0);
		rdmx_test_pair_ep_open(tp->domain, tp->info, tp->cq[i], &tp->ep[i],
				       &tp->av[i]);
	}
	for (int i = 0; i < 2; i++)
		tp->peer[i] = rdmx_test_pair_insert(tp->av[i], tp->ep[1 - i]);
}

/* The same, FI_EP_RDM. */
static inline void rdmx_test_pair_open_caps(struct rdmx_test_pair *tp, const char *dev,
					    uint64_t caps)
{
	rdmx_test_pair_open_type(tp, dev, FI_EP_RDM, caps);
}

/* The same with the caps of tagged and untagged messages. */
static inline void rdmx_test_pair_open(struct rdmx_test_pair *tp, const char *dev)
{
	rdmx_test_pair_open_caps(tp, dev, FI_TAGGED | FI_MSG);
}

static inline void rdmx_test_pair_close(struct rdmx_test_pair *tp)
{
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(fi_close(&tp->ep[i]->fid), 0);
		cr_assert_eq(fi_close(&tp->cq[i]->fid), 0);
		cr_assert_eq(fi_close(&tp->av[i]->fid), 0);
	}
	cr_assert_eq(fi_close(&tp->domain->fid), 0);
	cr_assert_eq(fi_close(&tp->fabric->fid), 0);
	fi_freeinfo(tp->info);
}

static inline uint64_t rdmx_test_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/*
 * Progresses both endpoints until endpoint `who` has a completion, which
 * goes to *comp and its source to *src_p when given (fi_cq_readfrom);
 * returns 0, or the error entry's err (positive) after reading it into
 * *err_p when given. Fails the test after 10 s.
 */
static inline int rdmx_test_pair_wait_from(struct rdmx_test_pair *tp, int who,
					   struct fi_cq_tagged_entry *comp,
					   struct fi_cq_err_entry *err_p, fi_addr_t *src_p)
{
	uint64_t deadline = rdmx_test_now_ms() + 10000;
	struct fi_cq_err_entry err = { 0 };

	for (;;) {
		ssize_t ret = fi_cq_readfrom(tp->cq[who], comp, 1, src_p);

		if (ret == 1)
			return 0;
		if (ret == -FI_EAVAIL) {
			cr_assert_eq(fi_cq_readerr(tp->cq[who], &err, 0), 1);
			if (err_p)
				*err_p = err;
			return err.err;
		}
		cr_assert_eq(ret, -FI_EAGAIN, "cq read: %s", fi_strerror((int) -ret));
		(void) fi_cq_read(tp->cq[1 - who], NULL, 0);
		cr_assert_lt(rdmx_test_now_ms(), deadline,
			     "no completion on endpoint %d in 10 s", who);
	}
}

/* The same without the source. */
static inline int rdmx_test_pair_wait(struct rdmx_test_pair *tp, int who,
				      struct fi_cq_tagged_entry *comp,
				      struct fi_cq_err_entry *err_p)
{
	return rdmx_test_pair_wait_from(tp, who, comp, err_p, NULL);
}

/* Sends len patterned bytes from endpoint 0 to 1 and checks what lands. */
static inline void rdmx_test_pair_transfer(struct rdmx_test_pair *tp, size_t len,
					   uint64_t tag)
{
	uint8_t *out = malloc(len + 1), *in = calloc(1, len + 1);
	struct fi_cq_tagged_entry comp;
	ssize_t ret;

	cr_assert(out && in);
	for (size_t i = 0; i < len; i++)
		out[i] = (uint8_t) (i * 7 + tag);
	cr_assert_eq(fi_trecv(tp->ep[1], in, len, NULL, tp->peer[1], tag, 0, in), 0);
	do {
		ret = fi_tsend(tp->ep[0], out, len, NULL, tp->peer[0], tag, out);
		if (ret == -FI_EAGAIN)
			(void) fi_cq_read(tp->cq[1], NULL, 0);
	} while (ret == -FI_EAGAIN);
	cr_assert_eq(ret, 0, "tsend: %s", fi_strerror((int) -ret));
	cr_assert_eq(rdmx_test_pair_wait(tp, 1, &comp, NULL), 0);
	cr_assert_eq(comp.op_context, in);
	cr_assert_eq(comp.len, len);
	cr_assert_eq(comp.tag, tag);
	cr_assert_eq(memcmp(in, out, len), 0, "%zu bytes arrived changed", len);
	cr_assert_eq(rdmx_test_pair_wait(tp, 0, &comp, NULL), 0);
	cr_assert_eq(comp.op_context, out);
	free(out);
	free(in);
}

/*
 * Over FI_EP_DGRAM endpoints: a datagram of len bytes (at most
 * max_msg_size) with CQ data data from 0 to 1, named by its sender.
 */
static inline void rdmx_test_pair_datagram(struct rdmx_test_pair *tp, size_t len,
					   uint64_t data)
{
	uint8_t *out = malloc(len + 1), *in = calloc(1, len + 1);
	struct fi_cq_tagged_entry comp;
	fi_addr_t src = FI_ADDR_UNSPEC;

	cr_assert(out && in);
	for (size_t i = 0; i < len; i++)
		out[i] = (uint8_t) (i * 7 + data);
	cr_assert_eq(fi_recv(tp->ep[1], in, len + 1, NULL, FI_ADDR_UNSPEC, in), 0);
	cr_assert_eq(fi_senddata(tp->ep[0], out, len, NULL, data, tp->peer[0], out), 0);
	cr_assert_eq(rdmx_test_pair_wait_from(tp, 1, &comp, NULL, &src), 0);
	cr_assert_eq(comp.op_context, in);
	cr_assert_eq(comp.len, len);
	cr_assert_eq(comp.flags, FI_RECV | FI_MSG | FI_REMOTE_CQ_DATA);
	cr_assert_eq(comp.data, data);
	cr_assert_eq(src, tp->peer[1], "the sender is named");
	cr_assert_eq(memcmp(in, out, len), 0, "%zu bytes arrived changed", len);
	cr_assert_eq(rdmx_test_pair_wait(tp, 0, &comp, NULL), 0);
	cr_assert_eq(comp.op_context, out);
	free(out);
	free(in);
}

/* The endpoint's counters (fi_rdmx_ep_ops). */
static inline struct fi_rdmx_ep_stats rdmx_test_pair_stats(struct rdmx_test_pair *tp,
							   int who)
{
	struct fi_rdmx_ep_stats stats;
	struct fi_rdmx_ep_ops *ops;

	cr_assert_eq(fi_open_ops(&tp->ep[who]->fid, FI_RDMX_EP_OPS, 0,
				 (void **) &ops, NULL), 0);
	cr_assert_eq(ops->query_stats(tp->ep[who], &stats), 0);
	return stats;
}

#endif /* RDMX_TEST_PAIR_H */
