/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_api_test: libfabric API semantics in one process, through the public
 * API only. Two RDM endpoints (A and B) on loopback share a domain, an AV
 * and have a tx and an rx CQ each; a few tests add a third endpoint or a
 * second domain. Each test in the table at the bottom runs on a fresh
 * fixture. Every wait on a CQ is bounded (WAIT_MS) and fails its check
 * rather than hanging. Prints one line per check and "N passed, M failed";
 * exits 1 if any check failed.
 *
 * Usage: rdmx_api_test [NAME...]: run the tests whose names contain a NAME,
 * or all but those containing it when NAME starts with '!'.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <netinet/in.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext_rdmx.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "ft_check.h"

#define TEST_VERSION	FI_VERSION(1, 17)
#define WAIT_MS		5000		/* bound on every wait for a completion */
#define PING_COUNT	2000
#define PING_MAX	1024		/* largest ping message */
#define NAME_MAX_LEN	128
#define MARKER_TAG	0x4d41524b45520000ULL	/* tags no test message uses */
#define TAG_BASE	0xf100000000000000ULL	/* bit 63 set: all 64 bits travel */
#define DATA_BASE	0xc0ffee0000000000ULL
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

enum { A, B, NODES };

static unsigned g_seed;		/* makes each message's payload distinct */

/*
 * "prefix: what" in a buffer that lives until the next call (so its result
 * must not be passed on as another call's prefix).
 */
static const char *nm(const char *prefix, const char *what)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "%s: %s", prefix, what);
	return buf;
}

static const char *err_str(long ret)
{
	return fi_strerror((int) (ret < 0 ? -ret : ret));
}

/* Checks that a call returned want, printing both as codes on failure. */
static bool check_ret(long ret, long want, const char *name)
{
	return ft_check(ret == want, name, "returned %ld (%s), want %ld (%s)", ret,
			err_str(ret), want, err_str(want));
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *xmalloc(size_t len)
{
	void *p = malloc(len ? len : 1);

	if (!p) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	return p;
}

/* Fills buf with a pattern that depends on seed. */
static void fill(void *buf, size_t len, unsigned seed)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t) (seed * 131 + i * 7 + 1);
}

/* Whether buf holds fill(seed) and the tail bytes after it are still zero. */
static bool payload_ok(const void *buf, size_t len, unsigned seed, size_t tail)
{
	const uint8_t *p = buf;

	for (size_t i = 0; i < len; i++) {
		if (p[i] != (uint8_t) (seed * 131 + i * 7 + 1))
			return false;
	}
	for (size_t i = 0; i < tail; i++) {
		if (p[len + i])
			return false;
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* Fixture: fabric, domain, AV and two endpoints with their CQs.       */

struct node {
	struct fid_ep	*ep;
	struct fid_cq	*tx_cq;
	struct fid_cq	*rx_cq;
	fi_addr_t	addr;			/* in the AV it was enabled with */
	uint8_t		name[NAME_MAX_LEN];	/* fi_getname */
	size_t		namelen;
};

struct fixture {
	struct fi_info		*info;
	struct fid_fabric	*fabric;
	struct fid_domain	*domain;
	struct fid_av		*av;
	struct node		node[NODES];
	/*
	 * Endpoints of a transfer that are not fixture nodes: progressed
	 * too, since a send completes only once its receiver acknowledged.
	 */
	struct node		*guest[2];
};

struct fixture_opts {
	enum fi_threading	threading;	/* FI_THREAD_SAFE when unset */
	uint64_t		a_tx_flags;	/* extra flags binding A's tx CQ */
	bool			verbose;	/* report every set-up step */
};

static const char *const node_label[NODES] = { "endpoint A", "endpoint B" };

/* A set-up or tear-down step: reported when it failed or when verbose. */
static bool __attribute__((format(printf, 3, 4)))
step(bool verbose, int ret, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	if (!ret && !verbose)
		return true;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return ft_check(!ret, what, "%d (%s)", ret, err_str(ret));
}

/* The rdmx RDM info with messaging, directed receive and FI_SOURCE. */
static int get_info(enum fi_threading threading, struct fi_info **info)
{
	struct fi_info *hints = fi_allocinfo();
	int ret;

	if (!hints)
		return -FI_ENOMEM;
	hints->caps = FI_MSG | FI_TAGGED | FI_DIRECTED_RECV | FI_SOURCE;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->threading = threading;
	hints->domain_attr->av_type = FI_AV_TABLE;
	hints->fabric_attr->prov_name = strdup("rdmx");
	ret = fi_getinfo(TEST_VERSION, NULL, NULL, 0, hints, info);
	fi_freeinfo(hints);
	return ret;
}

/* Opens an endpoint and its two CQs (nothing bound yet). */
static bool node_create(struct fid_domain *domain, struct fi_info *info,
			struct node *n, bool v, const char *label)
{
	struct fi_cq_attr attr = {
		.format = FI_CQ_FORMAT_TAGGED,
		.wait_obj = FI_WAIT_NONE,
	};

	return step(v, fi_cq_open(domain, &attr, &n->tx_cq, NULL),
		    "%s: fi_cq_open (tx)", label) &&
	       step(v, fi_cq_open(domain, &attr, &n->rx_cq, NULL),
		    "%s: fi_cq_open (rx)", label) &&
	       step(v, fi_endpoint(domain, info, &n->ep, NULL),
		    "%s: fi_endpoint", label);
}

/* Binds av and the CQs, enables, and inserts the endpoint's own name into av. */
static bool node_enable(struct fid_av *av, struct node *n, uint64_t tx_flags,
			bool v, const char *label)
{
	int ret;

	if (!step(v, fi_ep_bind(n->ep, &av->fid, 0), "%s: bind the AV", label) ||
	    !step(v, fi_ep_bind(n->ep, &n->tx_cq->fid, FI_TRANSMIT | tx_flags),
		  "%s: bind the tx CQ", label) ||
	    !step(v, fi_ep_bind(n->ep, &n->rx_cq->fid, FI_RECV),
		  "%s: bind the rx CQ", label) ||
	    !step(v, fi_enable(n->ep), "%s: fi_enable", label))
		return false;
	n->namelen = sizeof(n->name);
	if (!step(v, fi_getname(&n->ep->fid, n->name, &n->namelen),
		  "%s: fi_getname", label))
		return false;
	n->addr = FI_ADDR_NOTAVAIL;
	ret = fi_av_insert(av, n->name, 1, &n->addr, 0, NULL);
	return step(v, ret == 1 ? 0 : ret < 0 ? ret : -FI_EOTHER,
		    "%s: fi_av_insert of its own address", label);
}

/* Closes the endpoint, then its CQs. */
static void node_close(struct node *n, bool v, const char *label)
{
	if (n->ep)
		step(v, fi_close(&n->ep->fid), "%s: fi_close(endpoint)", label);
	if (n->tx_cq)
		step(v, fi_close(&n->tx_cq->fid), "%s: fi_close(tx CQ)", label);
	if (n->rx_cq)
		step(v, fi_close(&n->rx_cq->fid), "%s: fi_close(rx CQ)", label);
	n->ep = NULL;
	n->tx_cq = n->rx_cq = NULL;
}

static bool fixture_open(struct fixture *fx, const struct fixture_opts *o)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE, .count = 16 };
	bool v = o->verbose;

	memset(fx, 0, sizeof(*fx));
	if (!step(v, get_info(o->threading ? o->threading : FI_THREAD_SAFE, &fx->info),
		  "fi_getinfo for rdmx") ||
	    !step(v, fi_fabric(fx->info->fabric_attr, &fx->fabric, NULL), "fi_fabric") ||
	    !step(v, fi_domain(fx->fabric, fx->info, &fx->domain, NULL), "fi_domain") ||
	    !step(v, fi_av_open(fx->domain, &av_attr, &fx->av, NULL), "fi_av_open"))
		return false;
	for (int i = 0; i < NODES; i++) {
		if (!node_create(fx->domain, fx->info, &fx->node[i], v, node_label[i]))
			return false;
	}
	for (int i = 0; i < NODES; i++) {
		if (!node_enable(fx->av, &fx->node[i], i == A ? o->a_tx_flags : 0, v,
				 node_label[i]))
			return false;
	}
	return true;
}

/* Closes what fixture_open opened, children first. */
static void fixture_close(struct fixture *fx, bool v)
{
	for (int i = 0; i < NODES; i++) {
		if (fx->node[i].ep)
			step(v, fi_close(&fx->node[i].ep->fid), "%s: fi_close(endpoint)",
			     node_label[i]);
		fx->node[i].ep = NULL;
	}
	if (fx->av)
		step(v, fi_close(&fx->av->fid), "fi_close(av)");
	for (int i = 0; i < NODES; i++)
		node_close(&fx->node[i], v, node_label[i]);
	if (fx->domain)
		step(v, fi_close(&fx->domain->fid), "fi_close(domain)");
	if (fx->fabric)
		step(v, fi_close(&fx->fabric->fid), "fi_close(fabric)");
	fi_freeinfo(fx->info);
	memset(fx, 0, sizeof(*fx));
}

/* ------------------------------------------------------------------ */
/* Completion helpers.                                                 */

/* Drives progress on the CQs of a node except skip. */
static void progress_node(const struct node *n, struct fid_cq *skip)
{
	struct fid_cq *cqs[] = { n->tx_cq, n->rx_cq };

	for (size_t c = 0; c < ARRAY_SIZE(cqs); c++) {
		if (cqs[c] && cqs[c] != skip)
			(void) fi_cq_read(cqs[c], NULL, 0);
	}
}

/* Drives progress on every CQ of fx except skip (manual progress). */
static void progress_others(struct fixture *fx, struct fid_cq *skip)
{
	if (!fx)
		return;
	for (int i = 0; i < NODES; i++)
		progress_node(&fx->node[i], skip);
	for (size_t i = 0; i < ARRAY_SIZE(fx->guest); i++) {
		if (fx->guest[i])
			progress_node(fx->guest[i], skip);
	}
}

/*
 * Reads cq until it gives one entry, reports an error entry, or WAIT_MS
 * pass; fx's other CQs are progressed meanwhile (fx may be NULL). Returns
 * 1, -FI_EAVAIL, -FI_ETIMEDOUT, or the error fi_cq_readfrom returned.
 */
static ssize_t cq_wait(struct fixture *fx, struct fid_cq *cq,
		       struct fi_cq_tagged_entry *e, fi_addr_t *src)
{
	int64_t end = now_ms() + WAIT_MS;
	fi_addr_t from;
	ssize_t ret;

	do {
		ret = fi_cq_readfrom(cq, e, 1, &from);
		if (ret != -FI_EAGAIN) {
			if (src)
				*src = from;
			return ret;
		}
		progress_others(fx, cq);
	} while (now_ms() < end);
	return -FI_ETIMEDOUT;
}

/* Describes (and consumes) the error entry waiting on cq. */
static const char *take_err_text(struct fid_cq *cq, char *buf, size_t len)
{
	struct fi_cq_err_entry err = { 0 };

	if (fi_cq_readerr(cq, &err, 0) != 1) {
		snprintf(buf, len, "an error entry fi_cq_readerr could not read");
		return buf;
	}
	snprintf(buf, len, "error entry %d (%s) context %p: %s", err.err,
		 fi_strerror(err.err), err.op_context,
		 fi_cq_strerror(cq, err.prov_errno, err.err_data, NULL, 0));
	return buf;
}

/* Describes a cq_wait result that was not an entry. */
static const char *wait_str(ssize_t ret, struct fid_cq *cq, char *buf, size_t len)
{
	if (ret == -FI_EAVAIL)
		return take_err_text(cq, buf, len);
	if (ret == -FI_ETIMEDOUT)
		snprintf(buf, len, "no completion within %d ms", WAIT_MS);
	else
		snprintf(buf, len, "fi_cq_readfrom %zd (%s)", ret, err_str(ret));
	return buf;
}

/*
 * Waits for a successful completion on cq; it must be ctx's and have the
 * given flags. The entry and its source go to e and src if given.
 */
static bool expect_comp(struct fixture *fx, struct fid_cq *cq, void *ctx,
			uint64_t flags, struct fi_cq_tagged_entry *e,
			fi_addr_t *src, const char *name)
{
	struct fi_cq_tagged_entry entry = { 0 };
	fi_addr_t from = FI_ADDR_NOTAVAIL;
	char why[256];
	ssize_t ret = cq_wait(fx, cq, &entry, &from);

	if (e)
		*e = entry;
	if (src)
		*src = from;
	if (ret != 1)
		return ft_check(false, name, "%s", wait_str(ret, cq, why, sizeof(why)));
	return ft_check(entry.op_context == ctx && (entry.flags & flags) == flags, name,
			"context %p (want %p), flags %#llx (want %#llx set)",
			entry.op_context, ctx, (unsigned long long) entry.flags,
			(unsigned long long) flags);
}

/*
 * Waits for an error entry on cq and reads it with fi_cq_readerr into out,
 * offering err_data buffer data (data_size 0: the provider's own). It
 * must carry err and ctx.
 */
static bool expect_err(struct fixture *fx, struct fid_cq *cq, void *ctx, int err,
		       struct fi_cq_err_entry *out, void *data, size_t data_size,
		       const char *name)
{
	struct fi_cq_tagged_entry e = { 0 };
	ssize_t ret = cq_wait(fx, cq, &e, NULL);

	memset(out, 0, sizeof(*out));
	out->err_data = data;
	out->err_data_size = data_size;
	if (ret != -FI_EAVAIL)
		return ft_check(false, name, "fi_cq_read gave %zd (%s, context %p), not an error",
				ret, ret == 1 ? "an entry" : err_str(ret),
				ret == 1 ? e.op_context : NULL);
	ret = fi_cq_readerr(cq, out, 0);
	return ft_check(ret == 1 && out->err == err && out->op_context == ctx, name,
			"fi_cq_readerr %zd, err %d (%s) want %d, context %p want %p",
			ret, out->err, fi_strerror(out->err), err, out->op_context, ctx);
}

/* Checks that cq holds nothing (one more read, which also progresses). */
static bool expect_empty(struct fid_cq *cq, const char *name)
{
	struct fi_cq_tagged_entry e = { 0 };
	ssize_t ret = fi_cq_read(cq, &e, 1);

	return ft_check(ret == -FI_EAGAIN, name, "fi_cq_read gave %zd (%s), context %p",
			ret, ret == 1 ? "an entry" : err_str(ret),
			ret == 1 ? e.op_context : NULL);
}

/* Waits for n successful completions on cq, those of ctxs in any order. */
static bool expect_comp_set(struct fixture *fx, struct fid_cq *cq,
			    void *const *ctxs, size_t n, const char *name)
{
	bool seen[8] = { false };
	char why[256];

	if (n > ARRAY_SIZE(seen))
		return ft_check(false, name, "too many contexts");
	for (size_t i = 0; i < n; i++) {
		struct fi_cq_tagged_entry e = { 0 };
		ssize_t ret = cq_wait(fx, cq, &e, NULL);
		size_t j;

		if (ret != 1)
			return ft_check(false, name, "entry %zu of %zu: %s", i + 1, n,
					wait_str(ret, cq, why, sizeof(why)));
		for (j = 0; j < n && (seen[j] || ctxs[j] != e.op_context); j++)
			;
		if (j == n)
			return ft_check(false, name, "unexpected context %p", e.op_context);
		seen[j] = true;
	}
	return ft_check(true, name, "-");
}

/* Withdraws a receive that did not complete, so its buffer can be freed. */
static void abandon_recv(struct fixture *fx, struct node *n, void *ctx)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err = { 0 };

	if (fi_cancel(&n->ep->fid, ctx))
		return;
	if (cq_wait(fx, n->rx_cq, &e, NULL) == -FI_EAVAIL)
		(void) fi_cq_readerr(n->rx_cq, &err, 0);
}

static ssize_t post_recv(struct fid_ep *ep, void *buf, size_t len, fi_addr_t src,
			 bool tagged, uint64_t tag, uint64_t ignore, void *ctx)
{
	if (tagged)
		return fi_trecv(ep, buf, len, NULL, src, tag, ignore, ctx);
	return fi_recv(ep, buf, len, NULL, src, ctx);
}

/* ------------------------------------------------------------------ */
/* The send calls, one wrapper each, behind one signature.             */

typedef ssize_t (*send_fn)(struct fid_ep *ep, const void *buf, size_t len,
			   void *desc, fi_addr_t dest, uint64_t tag,
			   uint64_t data, void *ctx);

struct send_op {
	const char	*name;
	send_fn		post;
	bool		tagged;
	bool		data;		/* carries remote CQ data */
	bool		completes;	/* writes a send completion */
	bool		copies;		/* buffer is the caller's on return */
};

/* Splits buf into three iovs of about a third each. */
static void split3(const void *buf, size_t len, struct iovec *iov)
{
	size_t third = len / 3;

	iov[0] = (struct iovec) { (void *) buf, third };
	iov[1] = (struct iovec) { (char *) buf + third, third };
	iov[2] = (struct iovec) { (char *) buf + 2 * third, len - 2 * third };
}

static ssize_t post_sendv(struct fid_ep *ep, const void *buf, size_t len,
			  void *desc, fi_addr_t dest, uint64_t tag, void *ctx,
			  bool tagged)
{
	struct iovec iov[3];
	void *descs[3] = { desc, desc, desc };

	split3(buf, len, iov);
	if (tagged)
		return fi_tsendv(ep, iov, descs, 3, dest, tag, ctx);
	return fi_sendv(ep, iov, descs, 3, dest, ctx);
}

static ssize_t post_sendmsg(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, fi_addr_t dest, uint64_t tag,
			    uint64_t data, void *ctx, uint64_t flags, bool tagged)
{
	struct iovec iov = { (void *) buf, len };
	struct fi_msg_tagged tmsg = {
		.msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = dest,
		.tag = tag, .context = ctx, .data = data,
	};
	struct fi_msg msg = {
		.msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = dest,
		.context = ctx, .data = data,
	};

	return tagged ? fi_tsendmsg(ep, &tmsg, flags) : fi_sendmsg(ep, &msg, flags);
}

static ssize_t op_send(struct fid_ep *ep, const void *buf, size_t len, void *desc,
		       fi_addr_t dest, uint64_t tag, uint64_t data, void *ctx)
{
	(void) tag; (void) data;
	return fi_send(ep, buf, len, desc, dest, ctx);
}

static ssize_t op_sendv(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			fi_addr_t dest, uint64_t tag, uint64_t data, void *ctx)
{
	(void) data;
	return post_sendv(ep, buf, len, desc, dest, tag, ctx, false);
}

static ssize_t op_sendmsg(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			  fi_addr_t dest, uint64_t tag, uint64_t data, void *ctx)
{
	return post_sendmsg(ep, buf, len, desc, dest, tag, data, ctx,
			    FI_COMPLETION, false);
}

static ssize_t op_sendmsg_noflags(struct fid_ep *ep, const void *buf, size_t len,
				  void *desc, fi_addr_t dest, uint64_t tag,
				  uint64_t data, void *ctx)
{
	return post_sendmsg(ep, buf, len, desc, dest, tag, data, ctx, 0, false);
}

static ssize_t op_sendmsg_data(struct fid_ep *ep, const void *buf, size_t len,
			       void *desc, fi_addr_t dest, uint64_t tag,
			       uint64_t data, void *ctx)
{
	return post_sendmsg(ep, buf, len, desc, dest, tag, data, ctx,
			    FI_COMPLETION | FI_REMOTE_CQ_DATA, false);
}

static ssize_t op_sendmsg_inject(struct fid_ep *ep, const void *buf, size_t len,
				 void *desc, fi_addr_t dest, uint64_t tag,
				 uint64_t data, void *ctx)
{
	return post_sendmsg(ep, buf, len, desc, dest, tag, data, ctx,
			    FI_COMPLETION | FI_INJECT, false);
}

static ssize_t op_inject(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			 fi_addr_t dest, uint64_t tag, uint64_t data, void *ctx)
{
	(void) desc; (void) tag; (void) data; (void) ctx;
	return fi_inject(ep, buf, len, dest);
}

static ssize_t op_senddata(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			   fi_addr_t dest, uint64_t tag, uint64_t data, void *ctx)
{
	(void) tag;
	return fi_senddata(ep, buf, len, desc, data, dest, ctx);
}

static ssize_t op_injectdata(struct fid_ep *ep, const void *buf, size_t len,
			     void *desc, fi_addr_t dest, uint64_t tag,
			     uint64_t data, void *ctx)
{
	(void) desc; (void) tag; (void) ctx;
	return fi_injectdata(ep, buf, len, data, dest);
}

static ssize_t op_tsend(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			fi_addr_t dest, uint64_t tag, uint64_t data, void *ctx)
{
	(void) data;
	return fi_tsend(ep, buf, len, desc, dest, tag, ctx);
}

static ssize_t op_tsendv(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			 fi_addr_t dest, uint64_t tag, uint64_t data, void *ctx)
{
	(void) data;
	return post_sendv(ep, buf, len, desc, dest, tag, ctx, true);
}

static ssize_t op_tsendmsg(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			   fi_addr_t dest, uint64_t tag, uint64_t data, void *ctx)
{
	return post_sendmsg(ep, buf, len, desc, dest, tag, data, ctx,
			    FI_COMPLETION, true);
}

static ssize_t op_tsendmsg_data(struct fid_ep *ep, const void *buf, size_t len,
				void *desc, fi_addr_t dest, uint64_t tag,
				uint64_t data, void *ctx)
{
	return post_sendmsg(ep, buf, len, desc, dest, tag, data, ctx,
			    FI_COMPLETION | FI_REMOTE_CQ_DATA, true);
}

static ssize_t op_tinject(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			  fi_addr_t dest, uint64_t tag, uint64_t data, void *ctx)
{
	(void) desc; (void) data; (void) ctx;
	return fi_tinject(ep, buf, len, dest, tag);
}

static ssize_t op_tsenddata(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, fi_addr_t dest, uint64_t tag,
			    uint64_t data, void *ctx)
{
	return fi_tsenddata(ep, buf, len, desc, data, dest, tag, ctx);
}

static ssize_t op_tinjectdata(struct fid_ep *ep, const void *buf, size_t len,
			      void *desc, fi_addr_t dest, uint64_t tag,
			      uint64_t data, void *ctx)
{
	(void) desc; (void) ctx;
	return fi_tinjectdata(ep, buf, len, data, dest, tag);
}

static const struct send_op send_ops[] = {
	{ "fi_send", op_send, false, false, true, false },
	{ "fi_sendv (3 iovs)", op_sendv, false, false, true, false },
	{ "fi_sendmsg", op_sendmsg, false, false, true, false },
	{ "fi_sendmsg (flags 0)", op_sendmsg_noflags, false, false, true, false },
	{ "fi_sendmsg FI_REMOTE_CQ_DATA", op_sendmsg_data, false, true, true, false },
	{ "fi_sendmsg FI_INJECT", op_sendmsg_inject, false, false, true, true },
	{ "fi_inject", op_inject, false, false, false, true },
	{ "fi_senddata", op_senddata, false, true, true, false },
	{ "fi_injectdata", op_injectdata, false, true, false, true },
	{ "fi_tsend", op_tsend, true, false, true, false },
	{ "fi_tsendv (3 iovs)", op_tsendv, true, false, true, false },
	{ "fi_tsendmsg", op_tsendmsg, true, false, true, false },
	{ "fi_tsendmsg FI_REMOTE_CQ_DATA", op_tsendmsg_data, true, true, true, false },
	{ "fi_tinject", op_tinject, true, false, false, true },
	{ "fi_tsenddata", op_tsenddata, true, true, true, false },
	{ "fi_tinjectdata", op_tinjectdata, true, true, false, true },
};

static const struct send_op *find_op(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(send_ops); i++) {
		if (!strcmp(send_ops[i].name, name))
			return &send_ops[i];
	}
	fprintf(stderr, "no send op %s\n", name);
	exit(2);
}

/* ------------------------------------------------------------------ */
/* Transfers.                                                          */

/* Who sends to whom, and the fi_addrs each side knows the other by. */
struct route {
	struct node	*from, *to;
	fi_addr_t	dest;		/* from's fi_addr for to */
	fi_addr_t	src;		/* to's fi_addr for from */
};

static struct route fx_route(struct fixture *fx, int from, int to)
{
	return (struct route) {
		&fx->node[from], &fx->node[to], fx->node[to].addr, fx->node[from].addr
	};
}

/* A one-byte tagged message sent with FI_COMPLETION, to order events. */
struct marker {
	struct fi_context	rctx, sctx;
	uint8_t			tx, rx;
};

static bool post_marker(struct route *r, struct marker *m, const char *prefix)
{
	ssize_t ret;

	m->tx = 0x5a;
	ret = fi_trecv(r->to->ep, &m->rx, 1, NULL, FI_ADDR_UNSPEC, MARKER_TAG, 0,
		       &m->rctx);
	if (!check_ret(ret, 0, nm(prefix, "post the marker receive")))
		return false;
	ret = post_sendmsg(r->from->ep, &m->tx, 1, NULL, r->dest, MARKER_TAG, 0,
			   &m->sctx, FI_COMPLETION, true);
	return check_ret(ret, 0, nm(prefix, "send the marker"));
}

/*
 * Checks that r->from's tx CQ holds no entry for what it sent so far: a
 * marker sent with FI_COMPLETION afterwards must give the next entry, and
 * nothing may follow it.
 */
static void expect_no_tx_completion(struct fixture *fx, struct route *r,
				    const char *prefix)
{
	struct marker m;

	if (!post_marker(r, &m, prefix))
		return;
	expect_comp(fx, r->from->tx_cq, &m.sctx, FI_SEND | FI_TAGGED, NULL, NULL,
		    nm(prefix, "no send completion (the marker's comes first)"));
	if (!expect_comp(fx, r->to->rx_cq, &m.rctx, FI_RECV | FI_TAGGED, NULL, NULL,
			 nm(prefix, "marker received")))
		abandon_recv(fx, r->to, &m.rctx);
	expect_empty(r->from->tx_cq, nm(prefix, "no further send completion"));
}

struct xfer {
	const struct send_op	*op;
	size_t			len;
	bool			want_tx;	/* a send completion must come */
	void			*tx;		/* send buffer (NULL: allocated) */
	void			*desc;		/* its descriptor */
};

/*
 * Posts a receive on r->to, sends x->len bytes with x->op, and checks the
 * receive completion (flags, length, tag, data, source fi_addr), the
 * payload, and the send completion or its absence. Returns whether all
 * checks passed.
 */
static bool transfer(struct fixture *fx, struct route *r, const struct xfer *x,
		     const char *prefix)
{
	const struct send_op *op = x->op;
	uint64_t kind = op->tagged ? FI_TAGGED : FI_MSG;
	uint64_t tag = op->tagged ? TAG_BASE | x->len : 0;
	uint64_t data = op->data ? DATA_BASE | x->len : 0;
	size_t cap = x->len + 16;
	uint8_t *tx = x->tx ? x->tx : xmalloc(x->len), *rx = xmalloc(cap);
	unsigned seed = ++g_seed;
	struct fi_context rctx, sctx;
	struct fi_cq_tagged_entry e;
	fi_addr_t src;
	bool ok = false;
	ssize_t ret;

	fill(tx, x->len, seed);
	memset(rx, 0, cap);
	fx->guest[0] = r->from;
	fx->guest[1] = r->to;
	ret = post_recv(r->to->ep, rx, cap, FI_ADDR_UNSPEC, op->tagged, tag, 0, &rctx);
	if (!check_ret(ret, 0, nm(prefix, "post receive")))
		goto out;
	ret = op->post(r->from->ep, tx, x->len, x->desc, r->dest, tag, data, &sctx);
	if (!check_ret(ret, 0, nm(prefix, "post send"))) {
		abandon_recv(fx, r->to, &rctx);
		goto out;
	}
	/* The call copied the data: the buffer is the application's again. */
	if (op->copies)
		memset(tx, 0xee, x->len);
	if (!expect_comp(fx, r->to->rx_cq, &rctx,
			 FI_RECV | kind | (op->data ? FI_REMOTE_CQ_DATA : 0), &e, &src,
			 nm(prefix, "receive completion"))) {
		abandon_recv(fx, r->to, &rctx);
		goto out;
	}
	ok = ft_check(e.len == x->len && (e.flags & (FI_MSG | FI_TAGGED)) == kind &&
		      (!op->tagged || e.tag == tag) && (!op->data || e.data == data),
		      nm(prefix, "entry length, kind, tag and data"),
		      "len %zu (want %zu), flags %#llx, tag %#llx (want %#llx), "
		      "data %#llx (want %#llx)",
		      e.len, x->len, (unsigned long long) e.flags,
		      (unsigned long long) e.tag, (unsigned long long) tag,
		      (unsigned long long) e.data, (unsigned long long) data);
	ok &= ft_check(src == r->src, nm(prefix, "fi_cq_readfrom names the sender"),
		       "source %#llx, want %#llx", (unsigned long long) src,
		       (unsigned long long) r->src);
	ok &= ft_check(payload_ok(rx, x->len, seed, cap - x->len), nm(prefix, "payload"),
		       "received bytes differ from the sent ones (or spill past them)");
	if (x->want_tx) {
		ok &= expect_comp(fx, r->from->tx_cq, &sctx, FI_SEND | kind, NULL, NULL,
				  nm(prefix, "send completion"));
	} else {
		expect_no_tx_completion(fx, r, prefix);
	}
out:
	fx->guest[0] = NULL;
	fx->guest[1] = NULL;
	if (!x->tx)
		free(tx);
	free(rx);
	return ok;
}

/* transfer() with a plain fi_send from one fixture endpoint to another. */
static bool send_between(struct fixture *fx, int from, int to, size_t len,
			 const char *prefix)
{
	struct route r = fx_route(fx, from, to);
	struct xfer x = { find_op("fi_send"), len, true, NULL, NULL };

	return transfer(fx, &r, &x, prefix);
}

/* ------------------------------------------------------------------ */
/* Tests.                                                              */

/*
 * Opening everything, each step reported (verbose fixture); closing is
 * reported step by step by test_close_order.
 */
static void test_objects(struct fixture *fx)
{
	ft_check(fx->info->domain_attr->threading == FI_THREAD_SAFE,
		 "the domain is FI_THREAD_SAFE, as the hints asked", "threading %d",
		 fx->info->domain_attr->threading);
}

static size_t addr_size(const struct fi_info *info)
{
	return info->addr_format == FI_SOCKADDR_IN6 ? sizeof(struct sockaddr_in6) :
	       sizeof(struct sockaddr_in);
}

/* Sets the port of a sockaddr_in or sockaddr_in6. */
static void set_port(void *addr, uint16_t port)
{
	struct sockaddr_in *sin = addr;
	struct sockaddr_in6 *sin6 = addr;

	if (sin->sin_family == AF_INET6)
		sin6->sin6_port = htons(port);
	else
		sin->sin_port = htons(port);
}

static uint16_t get_port(const void *addr)
{
	const struct sockaddr_in *sin = addr;
	const struct sockaddr_in6 *sin6 = addr;

	return ntohs(sin->sin_family == AF_INET6 ? sin6->sin6_port : sin->sin_port);
}

static void test_getname(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	uint8_t buf[NAME_MAX_LEN];
	size_t want = addr_size(fx->info), len = 0;
	int ret;

	ret = fi_getname(&a->ep->fid, buf, &len);
	ft_check(ret == -FI_ETOOSMALL && len == want,
		 "fi_getname with addrlen 0: -FI_ETOOSMALL and the needed length",
		 "ret %d (%s), addrlen %zu (want %zu)", ret, err_str(ret), len, want);
	ret = fi_getname(&a->ep->fid, buf, &len);
	ft_check(ret == 0 && len == want && get_port(buf) != 0,
		 "fi_getname with that length succeeds", "ret %d (%s), addrlen %zu, port %u",
		 ret, err_str(ret), len, ret ? 0 : get_port(buf));
	ft_check(len == a->namelen && !memcmp(buf, a->name, len),
		 "fi_getname is stable", "two calls gave different addresses");
	ft_check(a->namelen != b->namelen || memcmp(a->name, b->name, a->namelen),
		 "two endpoints have different addresses", "A and B share an address");
}

static void test_setname(struct fixture *fx)
{
	struct node probe = { 0 }, e = { 0 };
	uint8_t want[NAME_MAX_LEN], got[NAME_MAX_LEN];
	size_t wantlen = sizeof(want), len = sizeof(got);
	struct route r;
	int ret;

	/* A free address: one a probe endpoint had, released by closing it. */
	if (!node_create(fx->domain, fx->info, &probe, false, "probe endpoint") ||
	    !step(false, fi_getname(&probe.ep->fid, want, &wantlen),
		  "probe endpoint: fi_getname")) {
		node_close(&probe, false, "probe endpoint");
		return;
	}
	node_close(&probe, false, "probe endpoint");
	if (!node_create(fx->domain, fx->info, &e, false, "endpoint E"))
		goto out;
	ret = fi_setname(&e.ep->fid, want, wantlen);
	check_ret(ret, 0, "fi_setname before fi_enable");
	ret = fi_getname(&e.ep->fid, got, &len);
	ft_check(ret == 0 && len == wantlen && !memcmp(got, want, len),
		 "fi_getname reflects fi_setname", "ret %d, port %u (want %u)", ret,
		 get_port(got), get_port(want));
	if (!node_enable(fx->av, &e, 0, false, "endpoint E"))
		goto out;
	ft_check(e.namelen == wantlen && !memcmp(e.name, want, wantlen),
		 "the address survives fi_enable", "port %u (want %u)", get_port(e.name),
		 get_port(want));
	memcpy(got, want, wantlen);
	set_port(got, 0);
	ret = fi_setname(&e.ep->fid, got, wantlen);
	ft_check(ret < 0, "fi_setname after fi_enable fails", "returned %d", ret);
	r = (struct route) { &fx->node[A], &e, e.addr, fx->node[A].addr };
	transfer(fx, &r, &(struct xfer) { find_op("fi_send"), 100, true, NULL, NULL },
		 "message to the address set by fi_setname");
out:
	node_close(&e, false, "endpoint E");
}

static void test_enable_errors(struct fixture *fx)
{
	struct node e = { 0 };
	int ret;

	if (!node_create(fx->domain, fx->info, &e, false, "endpoint E"))
		goto out;
	ret = fi_enable(e.ep);
	check_ret(ret, -FI_ENOAV, "fi_enable without an AV: -FI_ENOAV");
	if (!step(false, fi_ep_bind(e.ep, &fx->av->fid, 0), "endpoint E: bind the AV"))
		goto out;
	ret = fi_enable(e.ep);
	check_ret(ret, -FI_ENOCQ, "fi_enable without CQs: -FI_ENOCQ");
	if (!step(false, fi_ep_bind(e.ep, &e.tx_cq->fid, FI_TRANSMIT),
		  "endpoint E: bind the tx CQ"))
		goto out;
	ret = fi_enable(e.ep);
	check_ret(ret, -FI_ENOCQ, "fi_enable without an rx CQ: -FI_ENOCQ");
	if (!step(false, fi_ep_bind(e.ep, &e.rx_cq->fid, FI_RECV),
		  "endpoint E: bind the rx CQ"))
		goto out;
	ret = fi_enable(e.ep);
	check_ret(ret, 0, "fi_enable with an AV and both CQs");
out:
	node_close(&e, false, "endpoint E");
}

static void test_av(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B], c = { 0 };
	uint8_t buf[NAME_MAX_LEN];
	size_t len = sizeof(buf);
	fi_addr_t old;
	struct route r;
	ssize_t sret;
	int ret;

	ft_check(a->addr != FI_ADDR_NOTAVAIL && b->addr != FI_ADDR_NOTAVAIL &&
		 a->addr != b->addr, "fi_av_insert gives each endpoint its own fi_addr",
		 "A %#llx, B %#llx", (unsigned long long) a->addr,
		 (unsigned long long) b->addr);
	ret = fi_av_lookup(fx->av, b->addr, buf, &len);
	ft_check(ret == 0 && len == b->namelen && !memcmp(buf, b->name, len),
		 "fi_av_lookup returns the inserted address", "ret %d, len %zu", ret, len);

	/* A third endpoint, removed from the AV and inserted again. */
	if (!node_create(fx->domain, fx->info, &c, false, "endpoint C") ||
	    !node_enable(fx->av, &c, 0, false, "endpoint C"))
		goto out;
	r = (struct route) { a, &c, c.addr, a->addr };
	transfer(fx, &r, &(struct xfer) { find_op("fi_send"), 64, true, NULL, NULL },
		 "A to a third endpoint C");
	old = c.addr;
	ret = fi_av_remove(fx->av, &old, 1, 0);
	check_ret(ret, 0, "fi_av_remove of C");
	sret = fi_send(a->ep, buf, 8, NULL, old, NULL);
	check_ret(sret, -FI_EINVAL, "send to a removed fi_addr: -FI_EINVAL");
	ret = fi_av_insert(fx->av, c.name, 1, &c.addr, 0, NULL);
	if (!ft_check(ret == 1 && c.addr != FI_ADDR_NOTAVAIL,
		      "re-inserting a removed address", "ret %d", ret))
		goto out;
	r = (struct route) { &c, a, a->addr, c.addr };
	transfer(fx, &r, &(struct xfer) { find_op("fi_send"), 64, true, NULL, NULL },
		 "C to A after re-insertion (source is the new fi_addr)");
	r = (struct route) { a, &c, c.addr, a->addr };
	transfer(fx, &r, &(struct xfer) { find_op("fi_send"), 64, true, NULL, NULL },
		 "A to C through the new fi_addr");
out:
	node_close(&c, false, "endpoint C");
}

/*
 * fi_av_remove right after a send the application was told is complete:
 * A injects to a new endpoint D, whose handshake has not started yet,
 * and removes D from the AV at once. fi_inject completes on return and
 * fi_av(3) leaves only operations in progress undefined, so the message
 * is rdmx's to deliver: D must receive it, and A's CQ stays clean.
 * (Upstream fabtests' fi_av_xfer removes its peer right after a send.)
 */
static void test_av_remove_after_inject(struct fixture *fx)
{
	struct node *a = &fx->node[A], d = { 0 };
	struct fi_cq_tagged_entry e;
	struct fi_context ctx;
	uint8_t tx[32], rx[32] = { 0 };
	fi_addr_t daddr, src;

	if (!node_create(fx->domain, fx->info, &d, false, "endpoint D") ||
	    !node_enable(fx->av, &d, 0, false, "endpoint D"))
		goto out;
	fill(tx, sizeof(tx), ++g_seed);
	daddr = d.addr;
	if (!check_ret(fi_inject(a->ep, tx, sizeof(tx), daddr), 0,
		       "fi_inject to a new endpoint D") ||
	    !check_ret(fi_av_remove(fx->av, &daddr, 1, 0), 0,
		       "fi_av_remove of D right after the inject"))
		goto out;
	fx->guest[0] = &d;
	if (check_ret(fi_recv(d.ep, rx, sizeof(rx), NULL, FI_ADDR_UNSPEC, &ctx), 0,
		      "D posts a receive") &&
	    expect_comp(fx, d.rx_cq, &ctx, FI_RECV, &e, &src,
			"D receives what A injected before removing D"))
		ft_check(e.len == sizeof(tx) && payload_ok(rx, sizeof(rx), g_seed, 0) &&
			 src == a->addr, "the message removed D got is A's, intact",
			 "len %zu, source %llu (A is %llu)", e.len,
			 (unsigned long long) src, (unsigned long long) a->addr);
	expect_empty(a->tx_cq, "A's tx CQ holds no error for the inject");
out:
	fx->guest[0] = NULL;
	node_close(&d, false, "endpoint D");
}

static void test_self(struct fixture *fx)
{
	send_between(fx, A, A, 200, "self-send through A's own AV entry");
}

/* Every send call, untagged and tagged, A to B. */
static void test_send_calls(struct fixture *fx)
{
	for (size_t i = 0; i < ARRAY_SIZE(send_ops); i++) {
		struct route r = fx_route(fx, A, B);
		struct xfer x = { &send_ops[i], 777, send_ops[i].completes, NULL, NULL };

		transfer(fx, &r, &x, send_ops[i].name);
	}
}

/* fi_recvv into three iovs: the bytes are scattered in order. */
static void test_scatter(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	uint8_t tx[64], rx[3][40];
	struct iovec iov[3] = { { rx[0], 10 }, { rx[1], 20 }, { rx[2], 40 } };
	struct fi_context rctx, sctx;
	struct fi_cq_tagged_entry e;
	unsigned seed = ++g_seed;
	ssize_t ret;

	fill(tx, sizeof(tx), seed);
	memset(rx, 0, sizeof(rx));
	ret = fi_recvv(b->ep, iov, NULL, 3, FI_ADDR_UNSPEC, &rctx);
	if (!check_ret(ret, 0, "fi_recvv with 3 iovs"))
		return;
	ret = fi_send(a->ep, tx, sizeof(tx), NULL, b->addr, &sctx);
	if (!check_ret(ret, 0, "fi_send of 64 bytes to it")) {
		abandon_recv(fx, b, &rctx);
		return;
	}
	if (expect_comp(fx, b->rx_cq, &rctx, FI_RECV | FI_MSG, &e, NULL,
			"fi_recvv completes"))
		ft_check(e.len == 64 && !memcmp(rx[0], tx, 10) && !memcmp(rx[1], tx + 10, 20) &&
			 !memcmp(rx[2], tx + 30, 34) && payload_ok(rx[2] + 34, 0, 0, 6),
			 "fi_recvv scatters 10+20+34 bytes in order", "len %zu", e.len);
	else
		abandon_recv(fx, b, &rctx);
	expect_comp(fx, a->tx_cq, &sctx, FI_SEND | FI_MSG, NULL, NULL,
		    "fi_send completes");
}

/* Posted tag 0x1200 ignore 0xff takes 0x12ab and leaves 0x13ab. */
static void test_tag_ignore(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	const uint64_t tags[2] = { 0x13ab, 0x12ab };
	uint8_t tx[2][32], rx[2][32];
	struct fi_context rctx[2], sctx[2];
	void *sctxs[2] = { &sctx[0], &sctx[1] };
	struct fi_cq_tagged_entry e;
	unsigned seed[2];
	ssize_t ret;

	seed[0] = ++g_seed;
	seed[1] = ++g_seed;
	memset(rx, 0, sizeof(rx));
	ret = fi_trecv(b->ep, rx[0], sizeof(rx[0]), NULL, FI_ADDR_UNSPEC, 0x1200, 0xff,
		       &rctx[0]);
	if (!check_ret(ret, 0, "fi_trecv tag 0x1200 ignore 0xff"))
		return;
	/* The message that must not match goes first. */
	for (int i = 0; i < 2; i++) {
		fill(tx[i], sizeof(tx[i]), seed[i]);
		ret = fi_tsend(a->ep, tx[i], sizeof(tx[i]), NULL, b->addr, tags[i], &sctx[i]);
		check_ret(ret, 0, i ? "fi_tsend tag 0x12ab" : "fi_tsend tag 0x13ab");
	}
	if (expect_comp(fx, b->rx_cq, &rctx[0], FI_RECV | FI_TAGGED, &e, NULL,
			"the masked receive completes"))
		ft_check(e.tag == 0x12ab && payload_ok(rx[0], 32, seed[1], 0),
			 "the masked receive took 0x12ab, not 0x13ab", "tag %#llx",
			 (unsigned long long) e.tag);
	else
		abandon_recv(fx, b, &rctx[0]);
	ret = fi_trecv(b->ep, rx[1], sizeof(rx[1]), NULL, FI_ADDR_UNSPEC, 0x13ab, 0,
		       &rctx[1]);
	check_ret(ret, 0, "fi_trecv tag 0x13ab exactly");
	if (!ret && expect_comp(fx, b->rx_cq, &rctx[1], FI_RECV | FI_TAGGED, &e, NULL,
				"0x13ab waited for its own receive"))
		ft_check(e.tag == 0x13ab && payload_ok(rx[1], 32, seed[0], 0),
			 "0x13ab delivered intact", "tag %#llx", (unsigned long long) e.tag);
	else if (!ret)
		abandon_recv(fx, b, &rctx[1]);
	expect_comp_set(fx, a->tx_cq, sctxs, 2, "both tagged sends complete");
}

/*
 * FI_DIRECTED_RECV: B posts a receive directed at A, then a wildcard one.
 * B's own message (self-send) must skip the first and land in the second;
 * A's message then takes the first.
 */
static void test_directed(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];

	for (int tagged = 0; tagged < 2; tagged++) {
		const char *kind = tagged ? "tagged" : "untagged";
		struct route from_b = fx_route(fx, B, B), from_a = fx_route(fx, A, B);
		struct route *routes[2] = { &from_b, &from_a };
		uint8_t tx[2][48], rx[2][48];
		struct fi_context rctx[2], sctx[2];
		struct fi_cq_tagged_entry e;
		unsigned seed[2];
		char prefix[64];
		fi_addr_t src;
		ssize_t ret;

		seed[0] = ++g_seed;
		seed[1] = ++g_seed;
		memset(rx, 0, sizeof(rx));
		snprintf(prefix, sizeof(prefix), "directed receive (%s)", kind);
		ret = post_recv(b->ep, rx[0], 48, a->addr, tagged, 7, 0, &rctx[0]);
		check_ret(ret, 0, nm(prefix, "post receive from A only"));
		ret = post_recv(b->ep, rx[1], 48, FI_ADDR_UNSPEC, tagged, 7, 0, &rctx[1]);
		check_ret(ret, 0, nm(prefix, "post wildcard receive"));
		for (int i = 0; i < 2; i++) {
			struct route *r = routes[i];
			/* Message i lands in receive 1 - i. */
			int want = 1 - i;

			fill(tx[i], 48, seed[i]);
			ret = tagged ?
			      fi_tsend(r->from->ep, tx[i], 48, NULL, r->dest, 7, &sctx[i]) :
			      fi_send(r->from->ep, tx[i], 48, NULL, r->dest, &sctx[i]);
			check_ret(ret, 0, nm(prefix, i ? "A sends" : "B sends to itself"));
			if (!expect_comp(fx, b->rx_cq, &rctx[want], FI_RECV, &e, &src,
					 nm(prefix, i ?
					    "A's message takes the receive directed at A" :
					    "B's message skips the receive directed at A")))
				continue;
			ft_check(src == r->src && payload_ok(rx[want], 48, seed[i], 0),
				 nm(prefix, i ? "A's message: source and payload" :
				    "B's message: source and payload"),
				 "source %#llx (want %#llx)", (unsigned long long) src,
				 (unsigned long long) r->src);
			expect_comp(fx, r->from->tx_cq, &sctx[i], FI_SEND, NULL, NULL,
				    nm(prefix, i ? "A's send completes" : "B's send completes"));
		}
		abandon_recv(fx, b, &rctx[0]);
		abandon_recv(fx, b, &rctx[1]);
	}
}

/*
 * Unexpected messages: A sends an untagged and a tagged message before B
 * posts anything for them; a marker B did post for shows they arrived.
 * A tagged any-tag receive then takes the tagged one (never the untagged
 * one), an untagged receive the untagged one.
 */
static void test_unexpected(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	struct route r = fx_route(fx, A, B);
	uint8_t tx[2][300], rx[2][300];
	struct fi_context rctx[2], sctx[2];
	struct fi_cq_tagged_entry e;
	struct marker m;
	void *sctxs[3] = { &sctx[0], &sctx[1], &m.sctx };
	unsigned seed[2];
	ssize_t ret;

	seed[0] = ++g_seed;
	seed[1] = ++g_seed;
	memset(rx, 0, sizeof(rx));
	fill(tx[0], 300, seed[0]);
	fill(tx[1], 300, seed[1]);
	ret = fi_send(a->ep, tx[0], 300, NULL, b->addr, &sctx[0]);
	check_ret(ret, 0, "unexpected: fi_send before any receive");
	ret = fi_tsend(a->ep, tx[1], 300, NULL, b->addr, 0x77, &sctx[1]);
	check_ret(ret, 0, "unexpected: fi_tsend before any receive");
	if (!post_marker(&r, &m, "unexpected"))
		return;
	if (!expect_comp(fx, b->rx_cq, &m.rctx, FI_RECV | FI_TAGGED, NULL, NULL,
			 "unexpected: marker received after both"))
		abandon_recv(fx, b, &m.rctx);
	ret = fi_trecv(b->ep, rx[1], 300, NULL, FI_ADDR_UNSPEC, 0, ~0ULL, &rctx[1]);
	check_ret(ret, 0, "unexpected: post a tagged any-tag receive");
	if (!ret && expect_comp(fx, b->rx_cq, &rctx[1], FI_RECV | FI_TAGGED, &e, NULL,
				"unexpected: the tagged receive completes"))
		ft_check(e.tag == 0x77 && e.len == 300 && payload_ok(rx[1], 300, seed[1], 0),
			 "unexpected: it took the tagged message", "tag %#llx len %zu",
			 (unsigned long long) e.tag, e.len);
	else if (!ret)
		abandon_recv(fx, b, &rctx[1]);
	ret = fi_recv(b->ep, rx[0], 300, NULL, FI_ADDR_UNSPEC, &rctx[0]);
	check_ret(ret, 0, "unexpected: post an untagged receive");
	if (!ret && expect_comp(fx, b->rx_cq, &rctx[0], FI_RECV | FI_MSG, &e, NULL,
				"unexpected: the untagged receive completes"))
		ft_check(e.len == 300 && payload_ok(rx[0], 300, seed[0], 0),
			 "unexpected: it took the untagged message", "len %zu", e.len);
	else if (!ret)
		abandon_recv(fx, b, &rctx[0]);
	expect_comp_set(fx, a->tx_cq, sctxs, 3, "unexpected: all three sends complete");
}

/*
 * Among posted receives that all match, the oldest takes the message:
 * untagged, and tagged with an any-tag receive posted before an exact one.
 */
static void test_posted_order(struct fixture *fx)
{
	struct node *b = &fx->node[B];

	for (int tagged = 0; tagged < 2; tagged++) {
		const struct send_op *op = find_op(tagged ? "fi_tsend" : "fi_send");
		uint64_t tag = TAG_BASE | 64;
		struct route r = fx_route(fx, A, B);
		struct fi_context rctx[2];
		uint8_t rx[2][64];
		struct fi_cq_tagged_entry e;
		char prefix[64];
		ssize_t ret;

		memset(rx, 0, sizeof(rx));
		for (int i = 0; i < 2; i++) {
			snprintf(prefix, sizeof(prefix), "posted order (%s), receive %d",
				 tagged ? "tagged, any tag first" : "untagged", i + 1);
			/* The first tagged receive takes any tag, the second only tag. */
			ret = post_recv(b->ep, rx[i], 64, FI_ADDR_UNSPEC, tagged, tag,
					i == 0 ? ~0ULL : 0, &rctx[i]);
			check_ret(ret, 0, nm(prefix, "post"));
		}
		for (int i = 0; i < 2; i++) {
			struct fi_context sctx;
			uint8_t tx[64];

			snprintf(prefix, sizeof(prefix), "posted order (%s), message %d",
				 tagged ? "tagged, any tag first" : "untagged", i + 1);
			fill(tx, 64, ++g_seed);
			ret = op->post(r.from->ep, tx, 64, NULL, r.dest, tag, 0, &sctx);
			check_ret(ret, 0, nm(prefix, "send"));
			if (expect_comp(fx, b->rx_cq, &rctx[i], FI_RECV, &e, NULL,
					nm(prefix, "goes to the oldest matching receive")))
				ft_check(payload_ok(rx[i], 64, g_seed, 0), nm(prefix, "payload"),
					 "payload mismatch");
			expect_comp(fx, r.from->tx_cq, &sctx, FI_SEND, NULL, NULL,
				    nm(prefix, "send completes"));
		}
		abandon_recv(fx, b, &rctx[0]);
		abandon_recv(fx, b, &rctx[1]);
	}
}

/*
 * A 100-byte message into a 64-byte receive: an FI_ETRUNC error entry with
 * len 64 and olen 36 whose err_data text fi_cq_strerror returns; the first
 * 64 bytes are delivered. unexpected: the message arrives before the
 * receive is posted.
 */
static void truncation(struct fixture *fx, bool unexpected)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	struct route r = fx_route(fx, A, B);
	const char *prefix = unexpected ? "truncation (unexpected)" : "truncation (posted)";
	uint8_t tx[100], rx[100];
	char data[256], text[256];
	unsigned seed = ++g_seed;
	struct fi_context rctx, sctx;
	struct fi_cq_err_entry err;
	struct marker m;
	void *sctxs[2] = { &sctx, &m.sctx };
	const char *str;
	ssize_t ret;

	fill(tx, sizeof(tx), seed);
	memset(rx, 0, sizeof(rx));
	if (!unexpected) {
		ret = fi_recv(b->ep, rx, 64, NULL, FI_ADDR_UNSPEC, &rctx);
		check_ret(ret, 0, nm(prefix, "post a 64-byte receive"));
	}
	ret = fi_send(a->ep, tx, 100, NULL, b->addr, &sctx);
	check_ret(ret, 0, nm(prefix, "send 100 bytes"));
	if (unexpected) {
		if (post_marker(&r, &m, prefix) &&
		    !expect_comp(fx, b->rx_cq, &m.rctx, FI_RECV, NULL, NULL,
				 nm(prefix, "marker received after the message")))
			abandon_recv(fx, b, &m.rctx);
		ret = fi_recv(b->ep, rx, 64, NULL, FI_ADDR_UNSPEC, &rctx);
		check_ret(ret, 0, nm(prefix, "post a 64-byte receive"));
	}
	if (expect_err(fx, b->rx_cq, &rctx, FI_ETRUNC, &err, data, sizeof(data),
		       nm(prefix, "FI_ETRUNC error entry"))) {
		ft_check(err.len == 64 && err.olen == 36 && (err.flags & FI_RECV),
			 nm(prefix, "len 64, olen 36, FI_RECV"), "len %zu olen %zu flags %#llx",
			 err.len, err.olen, (unsigned long long) err.flags);
		ft_check(payload_ok(rx, 64, seed, 0) && payload_ok(rx + 64, 0, 0, 36),
			 nm(prefix, "the first 64 bytes delivered, no more"), "payload mismatch");
		ft_check(err.err_data == data && err.err_data_size > 1 &&
			 err.err_data_size <= sizeof(data) && memchr(data, 0, err.err_data_size),
			 nm(prefix, "err_data copied into the offered buffer"),
			 "err_data %p (offered %p), size %zu", err.err_data, (void *) data,
			 err.err_data_size);
		str = fi_cq_strerror(b->rx_cq, err.prov_errno, err.err_data, text,
				     sizeof(text));
		ft_check(str && *str, nm(prefix, "fi_cq_strerror gives the text"), "%s",
			 str ? "empty string" : "NULL");
		if (str && *str)
			printf("     (text: \"%s\")\n", str);
	} else {
		abandon_recv(fx, b, &rctx);
	}
	expect_comp_set(fx, a->tx_cq, sctxs, unexpected ? 2 : 1,
			nm(prefix, "the send itself succeeds"));
	expect_empty(b->rx_cq, nm(prefix, "nothing else on the rx CQ"));
}

static void test_truncation(struct fixture *fx)
{
	truncation(fx, false);
	truncation(fx, true);
}

/* fi_cancel of a posted receive: FI_ECANCELED; of an unknown one: -FI_ENOENT. */
static void test_cancel(struct fixture *fx)
{
	struct node *b = &fx->node[B];

	for (int tagged = 0; tagged < 2; tagged++) {
		const char *prefix = tagged ? "cancel (tagged)" : "cancel (untagged)";
		struct fi_context rctx, unknown;
		struct fi_cq_err_entry err;
		uint8_t rx[64];
		ssize_t ret;

		memset(rx, 0xcc, sizeof(rx));
		ret = post_recv(b->ep, rx, sizeof(rx), FI_ADDR_UNSPEC, tagged, TAG_BASE | 32,
				0, &rctx);
		check_ret(ret, 0, nm(prefix, "post receive"));
		ret = fi_cancel(&b->ep->fid, &rctx);
		check_ret(ret, 0, nm(prefix, "fi_cancel of the posted receive"));
		if (expect_err(fx, b->rx_cq, &rctx, FI_ECANCELED, &err, NULL, 0,
			       nm(prefix, "FI_ECANCELED error entry")))
			ft_check(err.flags & FI_RECV, nm(prefix, "entry flags include FI_RECV"),
				 "flags %#llx", (unsigned long long) err.flags);
		ret = fi_cancel(&b->ep->fid, &rctx);
		check_ret(ret, -FI_ENOENT, nm(prefix, "second fi_cancel: -FI_ENOENT"));
		ret = fi_cancel(&b->ep->fid, &unknown);
		check_ret(ret, -FI_ENOENT,
			  nm(prefix, "fi_cancel of an unknown context: -FI_ENOENT"));
		struct route r = fx_route(fx, A, B);
		char later[64];

		snprintf(later, sizeof(later), "%s: a later message", prefix);
		transfer(fx, &r, &(struct xfer) { find_op(tagged ? "fi_tsend" : "fi_send"),
						  32, true, NULL, NULL }, later);
		ft_check(rx[0] == 0xcc && !memcmp(rx, rx + 1, sizeof(rx) - 1),
			 nm(prefix, "the canceled buffer is untouched"), "buffer was written");
	}
}

/* fi_trecvmsg with search flags: FI_PEEK, FI_CLAIM, FI_DISCARD. */
static ssize_t search(struct node *n, void *buf, size_t len, uint64_t tag,
		      void *ctx, uint64_t flags)
{
	struct iovec iov = { buf, len };
	struct fi_msg_tagged msg = {
		.msg_iov = buf ? &iov : NULL,
		.iov_count = buf ? 1 : 0,
		.addr = FI_ADDR_UNSPEC,
		.tag = tag,
		.context = ctx,
	};

	return fi_trecvmsg(n->ep, &msg, flags | FI_COMPLETION);
}

/*
 * A peek for tag must find nothing: an FI_ENOMSG error entry without
 * provider data. The err_data buffer offered must stay untouched:
 * callers (upstream fabtests' fi_rdm_tagged_peek) read this entry with
 * an uninitialised fi_cq_err_entry, whose stale err_data a provider that
 * copies data out would write through.
 */
static void expect_no_message(struct fixture *fx, struct node *n, uint64_t tag,
			      const char *name)
{
	struct fi_context ctx;
	struct fi_cq_err_entry err;
	unsigned char guard[64], want[64];

	memset(guard, 0xa5, sizeof(guard));
	memset(want, 0xa5, sizeof(want));
	if (check_ret(search(n, NULL, 0, tag, &ctx, FI_PEEK), 0, name) &&
	    expect_err(fx, n->rx_cq, &ctx, FI_ENOMSG, &err, guard, sizeof(guard), name))
		ft_check(err.err_data_size == 0 && !memcmp(guard, want, sizeof(guard)),
			 nm(name, "no err_data written"),
			 "err_data_size %zu, offered buffer %s", err.err_data_size,
			 memcmp(guard, want, sizeof(guard)) ? "overwritten" : "intact");
}

/* A peek, FI_CLAIM or FI_DISCARD search must complete with the message. */
static void expect_found(struct fixture *fx, struct node *n, void *ctx,
			 uint64_t tag, size_t len, uint64_t data, const char *name)
{
	struct fi_cq_tagged_entry e;
	fi_addr_t src;

	if (expect_comp(fx, n->rx_cq, ctx, FI_RECV | FI_TAGGED, &e, &src, name))
		ft_check(e.tag == tag && e.len == len && src == fx->node[A].addr &&
		      (!data || ((e.flags & FI_REMOTE_CQ_DATA) && e.data == data)),
		      nm(name, "tag, length, source and data"),
		      "tag %#llx len %zu source %llu data %#llx flags %#llx",
		      (unsigned long long) e.tag, e.len, (unsigned long long) src,
		      (unsigned long long) e.data, (unsigned long long) e.flags);
}

/*
 * MPI_Probe, MPI_Improbe + MPI_Mrecv and their discarding forms: B
 * searches messages A sent before any receive was posted.
 */
static void test_peek_claim(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	struct route r = fx_route(fx, A, B);
	const uint64_t t1 = TAG_BASE | 0x501, t2 = TAG_BASE | 0x502, t3 = TAG_BASE | 0x503,
		       t4 = TAG_BASE | 0x504;
	/*
	 * The test reads none of its send completions, so its sends may still
	 * be under way when it returns (a send completes when acknowledged):
	 * their buffers, the marker's included, must outlive it.
	 */
	static uint8_t tx[200];
	static struct marker m;
	uint8_t rx[200];
	struct fi_context claim, claim3, claim4, peek, get, none;
	struct fi_cq_tagged_entry e;
	unsigned seed = ++g_seed;
	ssize_t ret;

	fill(tx, sizeof(tx), seed);
	memset(rx, 0, sizeof(rx));
	memset(&none, 0, sizeof(none));
	expect_no_message(fx, b, t1, "peek: nothing sent yet: FI_ENOMSG");
	check_ret(fi_tsenddata(a->ep, tx, 200, NULL, DATA_BASE | 1, b->addr, t1, NULL), 0,
		  "peek: send t1 with data");
	check_ret(fi_tsend(a->ep, tx, 50, NULL, b->addr, t2, NULL), 0, "peek: send t2");
	check_ret(fi_tsend(a->ep, tx, 10, NULL, b->addr, t3, NULL), 0, "peek: send t3");
	check_ret(fi_tsend(a->ep, tx, 20, NULL, b->addr, t4, NULL), 0, "peek: send t4");
	if (!post_marker(&r, &m, "peek"))
		return;
	if (!expect_comp(fx, b->rx_cq, &m.rctx, FI_RECV | FI_TAGGED, NULL, NULL,
			 "peek: marker received after the four"))
		abandon_recv(fx, b, &m.rctx);

	check_ret(search(b, NULL, 0, t1, &peek, FI_PEEK), 0, "peek: FI_PEEK t1");
	expect_found(fx, b, &peek, t1, 200, DATA_BASE | 1, "peek: t1 found");
	check_ret(search(b, NULL, 0, t1, &peek, FI_PEEK), 0, "peek: FI_PEEK t1 again");
	expect_found(fx, b, &peek, t1, 200, DATA_BASE | 1, "peek: a peek leaves t1 queued");

	check_ret(search(b, NULL, 0, t1, &claim, FI_PEEK | FI_CLAIM), 0,
		  "peek: FI_PEEK | FI_CLAIM t1");
	expect_found(fx, b, &claim, t1, 200, DATA_BASE | 1, "peek: t1 claimed");
	expect_no_message(fx, b, t1, "peek: a claimed message is no longer found");
	ret = search(b, rx, sizeof(rx), t1, &none, FI_CLAIM);
	check_ret(ret, -FI_EINVAL, "peek: FI_CLAIM with a context that claimed nothing");
	ret = search(b, rx, sizeof(rx), t1, &claim, FI_CLAIM);
	if (check_ret(ret, 0, "peek: FI_CLAIM takes t1") &&
	    expect_comp(fx, b->rx_cq, &claim, FI_RECV | FI_TAGGED, &e, NULL,
			"peek: the claimed receive completes"))
		ft_check(e.len == 200 && e.tag == t1 && e.data == (DATA_BASE | 1) &&
		      payload_ok(rx, 200, seed, 0), "peek: it holds t1's payload",
		      "len %zu tag %#llx", e.len, (unsigned long long) e.tag);
	ret = search(b, rx, sizeof(rx), t1, &claim, FI_CLAIM);
	check_ret(ret, -FI_EINVAL, "peek: a claim is taken once");

	check_ret(search(b, NULL, 0, t2, &peek, FI_PEEK | FI_DISCARD), 0,
		  "peek: FI_PEEK | FI_DISCARD t2");
	expect_found(fx, b, &peek, t2, 50, 0, "peek: t2 found and discarded");
	expect_no_message(fx, b, t2, "peek: the discarded t2 is gone");

	check_ret(search(b, NULL, 0, t3, &claim3, FI_PEEK | FI_CLAIM), 0,
		  "peek: FI_PEEK | FI_CLAIM t3");
	expect_found(fx, b, &claim3, t3, 10, 0, "peek: t3 claimed");
	check_ret(search(b, NULL, 0, t3, &claim3, FI_CLAIM | FI_DISCARD), 0,
		  "peek: FI_CLAIM | FI_DISCARD t3");
	expect_found(fx, b, &claim3, t3, 0, 0, "peek: t3 discarded (length 0)");
	expect_no_message(fx, b, t3, "peek: the discarded t3 is gone");

	check_ret(search(b, NULL, 0, t4, &get, FI_DISCARD), -FI_EINVAL,
		  "peek: FI_DISCARD alone: -FI_EINVAL");
	check_ret(search(b, NULL, 0, t4, NULL, FI_PEEK | FI_CLAIM), -FI_EINVAL,
		  "peek: FI_CLAIM without a context: -FI_EINVAL");
	{
		struct fi_msg msg = { .addr = FI_ADDR_UNSPEC, .context = &get };

		check_ret(fi_recvmsg(b->ep, &msg, FI_PEEK), -FI_EBADFLAGS,
			  "peek: FI_PEEK on fi_recvmsg: -FI_EBADFLAGS");
	}
	/* t4 stays claimed: closing the endpoint must free it. */
	check_ret(search(b, NULL, 0, t4, &claim4, FI_PEEK | FI_CLAIM), 0,
		  "peek: FI_PEEK | FI_CLAIM t4, never taken");
	expect_found(fx, b, &claim4, t4, 20, 0, "peek: t4 claimed");
}

/*
 * A's tx CQ is bound with FI_SELECTIVE_COMPLETION: fi_send and fi_sendmsg
 * without FI_COMPLETION write nothing, fi_sendmsg with it does.
 */
static void test_selective(struct fixture *fx)
{
	struct route r = fx_route(fx, A, B);

	transfer(fx, &r, &(struct xfer) { find_op("fi_send"), 50, false, NULL, NULL },
		 "selective: fi_send without FI_COMPLETION");
	transfer(fx, &r,
		 &(struct xfer) { find_op("fi_sendmsg (flags 0)"), 50, false, NULL, NULL },
		 "selective: fi_sendmsg flags 0");
	transfer(fx, &r, &(struct xfer) { find_op("fi_sendmsg"), 50, true, NULL, NULL },
		 "selective: fi_sendmsg FI_COMPLETION");
	transfer(fx, &r, &(struct xfer) { find_op("fi_tsendmsg"), 50, true, NULL, NULL },
		 "selective: fi_tsendmsg FI_COMPLETION");
}

/* fi_recvmsg with FI_MULTI_RECV on node n. */
static ssize_t post_multi(struct node *n, void *buf, size_t len, void *ctx)
{
	struct iovec iov = { buf, len };
	struct fi_msg msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC, .context = ctx,
	};

	return fi_recvmsg(n->ep, &msg, FI_MULTI_RECV | FI_COMPLETION);
}

static bool set_min_multi(struct node *n, size_t min, const char *name)
{
	return check_ret(fi_setopt(&n->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
				   &min, sizeof(min)), 0, name);
}

static void multi_recv_options(struct node *b)
{
	size_t min = 0, len = sizeof(min);
	uint32_t small = 1;

	check_ret(fi_getopt(&b->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min, &len),
		  0, "multi-recv: fi_getopt FI_OPT_MIN_MULTI_RECV");
	ft_check(min == 16384 && len == sizeof(min), "multi-recv: the default minimum is 16 KiB",
		 "%zu (length %zu)", min, len);
	check_ret(fi_setopt(&b->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &small,
			    sizeof(small)), -FI_EINVAL,
		  "multi-recv: fi_setopt with a 4-byte value: -FI_EINVAL");
	check_ret(fi_setopt(&b->ep->fid, FI_OPT_ENDPOINT, -1, &min, sizeof(min)),
		  -FI_ENOPROTOOPT, "multi-recv: fi_setopt of an unknown option");
	if (set_min_multi(b, 777, "multi-recv: fi_setopt FI_OPT_MIN_MULTI_RECV 777"))
		check_ret(fi_getopt(&b->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
				    &min, &len) || min != 777, 0,
			  "multi-recv: fi_getopt reads 777 back");
}

/*
 * Messages packed into one posted buffer, eager and medium, completing in
 * any order: each completion's buf points at its message, packed without
 * gaps in send order; the last completion carries FI_MULTI_RECV, once
 * fewer than the minimum bytes are left; later messages go elsewhere.
 */
static void multi_recv_packed(struct fixture *fx)
{
	static const size_t lens[] = { 1000, 0, 100000, 50000, 10000, 80000 };
	struct node *a = &fx->node[A], *b = &fx->node[B];
	const size_t cap = 300000, n = ARRAY_SIZE(lens);
	uint8_t *tx = xmalloc(100000), *buf = xmalloc(cap + 16);
	struct route r = fx_route(fx, A, B);
	unsigned seed = ++g_seed;
	struct fi_context mctx, sctx[ARRAY_SIZE(lens)];
	size_t off[ARRAY_SIZE(lens)], at = 0, seen = 0, released = 0, last = 0;
	bool order_ok = true;

	fill(tx, 100000, seed);
	memset(buf, 0, cap + 16);
	for (size_t i = 0; i < n; i++) {
		off[i] = at;
		at += lens[i];
	}
	if (!set_min_multi(b, 70000, "multi-recv: minimum 70000") ||
	    !check_ret(post_multi(b, buf, cap, &mctx), 0, "multi-recv: post 300000 bytes"))
		goto out;
	for (size_t i = 0; i < n; i++)
		check_ret(fi_send(a->ep, tx, lens[i], NULL, b->addr, &sctx[i]), 0,
			  "multi-recv: send into the buffer");
	for (size_t k = 0; k < n; k++) {
		struct fi_cq_tagged_entry e = { 0 };
		char why[256];
		ssize_t ret = cq_wait(fx, b->rx_cq, &e, NULL);
		size_t i;

		if (ret != 1) {
			ft_check(false, "multi-recv: every message completes", "%zu of %zu: %s",
				 k, n, wait_str(ret, b->rx_cq, why, sizeof(why)));
			goto out;
		}
		for (i = 0; i < n && lens[i] != e.len; i++)
			;
		order_ok &= i < n && e.op_context == &mctx && e.buf == buf + off[i] &&
			    (e.flags & (FI_RECV | FI_MSG)) == (FI_RECV | FI_MSG) &&
			    payload_ok(buf + off[i], lens[i], seed, 0);
		seen += i < n;
		if (e.flags & FI_MULTI_RECV) {
			released++;
			last = k;
		}
	}
	ft_check(order_ok && seen == n, "multi-recv: each message at its packed offset",
		 "%zu of %zu placed right", seen, n);
	ft_check(released == 1 && last == n - 1,
		 "multi-recv: the last completion alone says FI_MULTI_RECV",
		 "%zu entries flagged, the last at %zu", released, last);
	ft_check(payload_ok(buf + at, 0, 0, cap - at + 16), "multi-recv: nothing past the messages",
		 "bytes written past %zu", at);
	{
		void *sctxs[ARRAY_SIZE(lens)];

		for (size_t i = 0; i < n; i++)
			sctxs[i] = &sctx[i];
		expect_comp_set(fx, a->tx_cq, sctxs, n, "multi-recv: the sends complete");
	}
	transfer(fx, &r, &(struct xfer) { find_op("fi_send"), 10, true, NULL, NULL },
		 "multi-recv: a released buffer takes no more");
out:
	free(tx);
	free(buf);
}

/*
 * Messages waiting before the buffer is posted pack in at once, in order;
 * one too long for the space left takes it and fails with FI_ETRUNC,
 * which releases the buffer (FI_MULTI_RECV on the error entry).
 */
static void multi_recv_unexpected(struct fixture *fx)
{
	static const size_t lens[] = { 300, 400, 500 };
	struct node *a = &fx->node[A], *b = &fx->node[B];
	struct route r = fx_route(fx, A, B);
	uint8_t tx[500], buf[1000 + 16] = { 0 };
	unsigned seed = ++g_seed;
	struct fi_context mctx;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	struct marker m;

	fill(tx, sizeof(tx), seed);
	for (size_t i = 0; i < ARRAY_SIZE(lens); i++)
		check_ret(fi_inject(a->ep, tx, lens[i], b->addr), 0,
			  "multi-recv: send before the buffer is posted");
	if (!post_marker(&r, &m, "multi-recv") ||
	    !expect_comp(fx, b->rx_cq, &m.rctx, FI_RECV, NULL, NULL,
			 "multi-recv: the messages wait unexpected"))
		return;
	expect_comp(fx, a->tx_cq, &m.sctx, FI_SEND, NULL, NULL, "multi-recv: marker sent");
	if (!set_min_multi(b, 100, "multi-recv: minimum 100") ||
	    !check_ret(post_multi(b, buf, 1000, &mctx), 0, "multi-recv: post 1000 bytes"))
		return;
	/* The error entry may be read before the others (fi_cq(3)). */
	for (size_t k = 0; k < 3; k++) {
		ssize_t ret = cq_wait(fx, b->rx_cq, &e, NULL);

		if (ret == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			ret = fi_cq_readerr(b->rx_cq, &err, 0);
			ft_check(ret == 1 && err.err == FI_ETRUNC && err.op_context == &mctx &&
				 err.len == 300 && err.olen == 200 && err.buf == buf + 700 &&
				 (err.flags & FI_MULTI_RECV) &&
				 payload_ok(buf + 700, 300, seed, 16),
				 "multi-recv: the third fills the rest, FI_ETRUNC, released",
				 "err %d len %zu olen %zu flags %#llx", err.err, err.len,
				 err.olen, (unsigned long long) err.flags);
			continue;
		}
		ft_check(ret == 1 && e.op_context == &mctx && (e.len == 300 || e.len == 400) &&
			 e.buf == buf + (e.len == 300 ? 0 : 300) &&
			 !(e.flags & FI_MULTI_RECV) && payload_ok(e.buf, e.len, seed, 0),
			 "multi-recv: a waiting message packs in, in arrival order",
			 "ret %zd len %zu at offset %td", ret, e.len, (uint8_t *) e.buf - buf);
	}
}

/* With a minimum of 0 a buffer is released when full, not before. */
static void multi_recv_exact_fill(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	uint8_t tx[60], buf[100 + 16] = { 0 };
	unsigned seed = ++g_seed;
	struct fi_context mctx;
	struct fi_cq_tagged_entry e;

	fill(tx, sizeof(tx), seed);
	if (!set_min_multi(b, 0, "multi-recv: minimum 0") ||
	    !check_ret(post_multi(b, buf, 100, &mctx), 0, "multi-recv: post 100 bytes"))
		return;
	check_ret(fi_inject(a->ep, tx, 60, b->addr), 0, "multi-recv: send 60 bytes");
	if (expect_comp(fx, b->rx_cq, &mctx, FI_RECV | FI_MSG, &e, NULL,
			"multi-recv: 60 bytes in, 40 left"))
		ft_check(e.len == 60 && !(e.flags & FI_MULTI_RECV), "multi-recv: still posted",
			 "len %zu flags %#llx", e.len, (unsigned long long) e.flags);
	check_ret(fi_inject(a->ep, tx, 40, b->addr), 0, "multi-recv: send 40 bytes");
	if (expect_comp(fx, b->rx_cq, &mctx, FI_RECV | FI_MSG, &e, NULL,
			"multi-recv: 40 bytes fill it"))
		ft_check(e.len == 40 && e.buf == buf + 60 && (e.flags & FI_MULTI_RECV) &&
			 payload_ok(buf + 60, 40, seed, 16),
			 "multi-recv: a full buffer is released (FI_MULTI_RECV)",
			 "len %zu flags %#llx", e.len, (unsigned long long) e.flags);
}

static void test_multi_recv(struct fixture *fx)
{
	struct node *b = &fx->node[B];
	struct fi_context ctx;
	struct fi_cq_err_entry err;
	uint8_t buf[64];
	struct iovec iov = { buf, sizeof(buf) };
	struct fi_msg_tagged tmsg = { .msg_iov = &iov, .iov_count = 1,
				      .addr = FI_ADDR_UNSPEC, .context = &ctx };

	ft_check(fx->info->caps & FI_MULTI_RECV, "multi-recv: fi_getinfo offers FI_MULTI_RECV",
		 "caps %#llx", (unsigned long long) fx->info->caps);
	multi_recv_options(b);
	check_ret(fi_trecvmsg(b->ep, &tmsg, FI_MULTI_RECV), -FI_EBADFLAGS,
		  "multi-recv: not for tagged receives: -FI_EBADFLAGS");
	if (check_ret(post_multi(b, buf, sizeof(buf), &ctx), 0, "multi-recv: post, then cancel") &&
	    check_ret(fi_cancel(&b->ep->fid, &ctx), 0, "multi-recv: fi_cancel") &&
	    expect_err(fx, b->rx_cq, &ctx, FI_ECANCELED, &err, NULL, 0,
		       "multi-recv: FI_ECANCELED"))
		ft_check(err.flags & FI_MULTI_RECV, "multi-recv: the canceled buffer is released",
			 "flags %#llx", (unsigned long long) err.flags);
	multi_recv_packed(fx);
	multi_recv_unexpected(fx);
	multi_recv_exact_fill(fx);
}

/* Zero-byte messages through several calls. */
static void test_zero_bytes(struct fixture *fx)
{
	static const char *const ops[] = { "fi_send", "fi_tsenddata", "fi_tinject",
					   "fi_sendv (3 iovs)" };

	for (size_t i = 0; i < ARRAY_SIZE(ops); i++) {
		struct route r = fx_route(fx, A, B);
		const struct send_op *op = find_op(ops[i]);
		char prefix[64];

		snprintf(prefix, sizeof(prefix), "zero bytes, %s", ops[i]);
		transfer(fx, &r, &(struct xfer) { op, 0, op->completes, NULL, NULL }, prefix);
	}
}

/* A zero-byte fi_sendmsg into a fi_recvmsg, both with no iov at all. */
static void test_zero_iov(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	struct fi_msg rmsg = { .addr = FI_ADDR_UNSPEC }, smsg = { .addr = b->addr };
	struct fi_context rctx, sctx;
	struct fi_cq_tagged_entry e;
	ssize_t ret;

	rmsg.context = &rctx;
	smsg.context = &sctx;
	ret = fi_recvmsg(b->ep, &rmsg, FI_COMPLETION);
	check_ret(ret, 0, "no iov: fi_recvmsg with iov_count 0");
	ret = fi_sendmsg(a->ep, &smsg, FI_COMPLETION);
	check_ret(ret, 0, "no iov: fi_sendmsg with iov_count 0");
	if (expect_comp(fx, b->rx_cq, &rctx, FI_RECV | FI_MSG, &e, NULL,
			"no iov: receive completion"))
		ft_check(e.len == 0, "no iov: length 0", "len %zu", e.len);
	else
		abandon_recv(fx, b, &rctx);
	expect_comp(fx, a->tx_cq, &sctx, FI_SEND | FI_MSG, NULL, NULL,
		    "no iov: send completion");
}

/*
 * max_msg_size and inject_size: one byte more is refused before the
 * buffer is read (so a small buffer stands for the huge one); the largest
 * inject fits. Large messages are exercised by test_sizes.
 */
static void test_size_limits(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	size_t max = fx->info->ep_attr->max_msg_size;
	size_t inject = fx->info->tx_attr->inject_size;
	uint8_t *buf = xmalloc(inject + 1);
	struct route r = fx_route(fx, A, B);
	struct fi_context ctx;
	ssize_t ret;

	ft_check(max >= (1ULL << 30), "max_msg_size is at least 1 GiB", "%zu", max);
	memset(buf, 0, inject + 1);
	ret = fi_send(a->ep, buf, max + 1, NULL, b->addr, &ctx);
	check_ret(ret, -FI_EMSGSIZE, "fi_send of max_msg_size + 1: -FI_EMSGSIZE");
	ret = fi_tsend(a->ep, buf, max + 1, NULL, b->addr, 1, &ctx);
	check_ret(ret, -FI_EMSGSIZE, "fi_tsend of max_msg_size + 1: -FI_EMSGSIZE");
	ret = fi_inject(a->ep, buf, inject + 1, b->addr);
	check_ret(ret, -FI_EMSGSIZE, "fi_inject of inject_size + 1: -FI_EMSGSIZE");
	ret = fi_tinjectdata(a->ep, buf, inject + 1, 1, b->addr, 1);
	check_ret(ret, -FI_EMSGSIZE, "fi_tinjectdata of inject_size + 1: -FI_EMSGSIZE");
	ret = post_sendmsg(a->ep, buf, inject + 1, NULL, b->addr, 0, 0, &ctx, FI_INJECT,
			   false);
	check_ret(ret, -FI_EMSGSIZE, "fi_sendmsg FI_INJECT of inject_size + 1: -FI_EMSGSIZE");
	free(buf);
	transfer(fx, &r, &(struct xfer) { find_op("fi_inject"), inject, false, NULL, NULL },
		 "fi_inject of exactly inject_size");
}

/*
 * Message sizes across the protocols (at the loopback MTU: eager up to
 * about 64 KiB, medium to FI_RDMX_MEDIUM_MAX, long beyond), each sent to
 * a posted receive and as an unexpected message, untagged and tagged
 * with CQ data; an unexpected tagged one is peeked first (its length
 * must show), and every payload is checked byte for byte.
 */
static const size_t test_sizes_list[] = {
	0, 1, 4095, 65000, 65535, 65536, 65537, 200000, 1 << 20, 8 << 20,
};

/* Sends len bytes before any receive, then peeks (tagged) and receives. */
static void unexpected_transfer(struct fixture *fx, const struct send_op *op,
				size_t len, const char *prefix)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	struct route r = fx_route(fx, A, B);
	uint64_t tag = TAG_BASE | len, data = DATA_BASE | len;
	uint8_t *tx = xmalloc(len), *rx = xmalloc(len + 16);
	unsigned seed = ++g_seed;
	struct fi_context rctx, sctx, pctx;
	struct fi_cq_tagged_entry e;
	struct marker m;
	void *sctxs[2] = { &sctx, &m.sctx };
	ssize_t ret;

	fill(tx, len, seed);
	memset(rx, 0, len + 16);
	ret = op->post(a->ep, tx, len, NULL, b->addr, tag, data, &sctx);
	if (!check_ret(ret, 0, nm(prefix, "send before any receive")))
		goto out;
	if (post_marker(&r, &m, prefix) &&
	    !expect_comp(fx, b->rx_cq, &m.rctx, FI_RECV, NULL, NULL,
			 nm(prefix, "a later message overtakes no match")))
		abandon_recv(fx, b, &m.rctx);
	if (op->tagged) {
		struct fi_msg_tagged msg = { .tag = tag, .context = &pctx,
					     .addr = FI_ADDR_UNSPEC };

		ret = fi_trecvmsg(b->ep, &msg, FI_PEEK);
		if (check_ret(ret, 0, nm(prefix, "FI_PEEK")) &&
		    expect_comp(fx, b->rx_cq, &pctx, FI_RECV | FI_TAGGED, &e, NULL,
				nm(prefix, "FI_PEEK finds it")))
			ft_check(e.len == len, nm(prefix, "FI_PEEK reports its length"),
				 "len %zu, want %zu", e.len, len);
	}
	ret = post_recv(b->ep, rx, len + 16, FI_ADDR_UNSPEC, op->tagged, tag, 0, &rctx);
	if (!check_ret(ret, 0, nm(prefix, "post the receive")))
		goto out;
	if (expect_comp(fx, b->rx_cq, &rctx, FI_RECV, &e, NULL, nm(prefix, "receive completes")))
		ft_check(e.len == len && payload_ok(rx, len, seed, 16) &&
			 (!op->data || e.data == data),
			 nm(prefix, "length, data and payload"), "len %zu (want %zu)",
			 e.len, len);
	else
		abandon_recv(fx, b, &rctx);
	expect_comp_set(fx, a->tx_cq, sctxs, 2, nm(prefix, "the sends complete"));
out:
	free(tx);
	free(rx);
}

/* A long message into a receive of half its size: FI_ETRUNC, olen, no spill. */
static void long_truncation(struct fixture *fx, size_t len)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	uint8_t *tx = xmalloc(len), *rx = xmalloc(len);
	unsigned seed = ++g_seed;
	struct fi_context rctx, sctx;
	struct fi_cq_err_entry err;
	char data[256];
	ssize_t ret;

	fill(tx, len, seed);
	memset(rx, 0, len);
	ret = fi_recv(b->ep, rx, len / 2, NULL, FI_ADDR_UNSPEC, &rctx);
	check_ret(ret, 0, "sizes: post a half-size receive");
	ret = fi_send(a->ep, tx, len, NULL, b->addr, &sctx);
	check_ret(ret, 0, "sizes: send into the half-size receive");
	if (expect_err(fx, b->rx_cq, &rctx, FI_ETRUNC, &err, data, sizeof(data),
		       "sizes: truncated long message: FI_ETRUNC"))
		ft_check(err.len == len / 2 && err.olen == len - len / 2 &&
			 payload_ok(rx, len / 2, seed, len - len / 2),
			 "sizes: truncated long message: len, olen, the first half only",
			 "len %zu olen %zu", err.len, err.olen);
	else
		abandon_recv(fx, b, &rctx);
	expect_comp(fx, a->tx_cq, &sctx, FI_SEND, NULL, NULL,
		    "sizes: the truncated send completes");
	free(tx);
	free(rx);
}

/*
 * len bytes from 3 iovs (fi_sendv) into 4 iovs of uneven lengths
 * (fi_recvv) that are consecutive pieces of one buffer: the bytes must
 * come out in order whatever packets carried them.
 */
static void iov_transfer(struct fixture *fx, size_t len)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	uint8_t *tx = xmalloc(len), *rx = xmalloc(len + 16);
	size_t cut[5] = { 0, 1, len / 3 + 7, len / 2 + 13, len + 16 };
	struct iovec iov[4];
	struct fi_context rctx, sctx;
	struct fi_cq_tagged_entry e;
	unsigned seed = ++g_seed;
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "sizes: %zu bytes, 3 iovs into 4", len);
	fill(tx, len, seed);
	memset(rx, 0, len + 16);
	for (int i = 0; i < 4; i++)
		iov[i] = (struct iovec) { rx + cut[i], cut[i + 1] - cut[i] };
	if (!check_ret(fi_recvv(b->ep, iov, NULL, 4, FI_ADDR_UNSPEC, &rctx), 0,
		       nm(prefix, "fi_recvv")))
		goto out;
	if (!check_ret(op_sendv(a->ep, tx, len, NULL, b->addr, 0, 0, &sctx), 0,
		       nm(prefix, "fi_sendv"))) {
		abandon_recv(fx, b, &rctx);
		goto out;
	}
	if (expect_comp(fx, b->rx_cq, &rctx, FI_RECV | FI_MSG, &e, NULL,
			nm(prefix, "receive completes")))
		ft_check(e.len == len && payload_ok(rx, len, seed, 16),
			 nm(prefix, "every byte in place"), "len %zu", e.len);
	else
		abandon_recv(fx, b, &rctx);
	expect_comp(fx, a->tx_cq, &sctx, FI_SEND | FI_MSG, NULL, NULL,
		    nm(prefix, "send completes"));
out:
	free(tx);
	free(rx);
}

/* MPI_Improbe + MPI_Mrecv of a long message: its RTS waits claimed. */
static void claim_long(struct fixture *fx, size_t len)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	struct route r = fx_route(fx, A, B);
	const uint64_t tag = TAG_BASE | 0x10c;
	uint8_t *tx = xmalloc(len), *rx = xmalloc(len + 16);
	struct fi_context claim, sctx;
	struct fi_cq_tagged_entry e;
	unsigned seed = ++g_seed;
	struct marker m;

	fill(tx, len, seed);
	memset(rx, 0, len + 16);
	if (!check_ret(fi_tsend(a->ep, tx, len, NULL, b->addr, tag, &sctx), 0,
		       "sizes: claim: send a long message first") ||
	    !post_marker(&r, &m, "sizes: claim"))
		goto out;
	if (!expect_comp(fx, b->rx_cq, &m.rctx, FI_RECV, NULL, NULL,
			 "sizes: claim: the marker overtakes no match"))
		abandon_recv(fx, b, &m.rctx);
	if (check_ret(search(b, NULL, 0, tag, &claim, FI_PEEK | FI_CLAIM), 0,
		      "sizes: claim: FI_PEEK | FI_CLAIM"))
		expect_found(fx, b, &claim, tag, len, 0, "sizes: claim: the long message");
	if (check_ret(search(b, rx, len + 16, tag, &claim, FI_CLAIM), 0,
		      "sizes: claim: FI_CLAIM receive") &&
	    expect_comp(fx, b->rx_cq, &claim, FI_RECV | FI_TAGGED, &e, NULL,
			"sizes: claim: the claimed receive completes"))
		ft_check(e.len == len && payload_ok(rx, len, seed, 16),
			 "sizes: claim: every byte of the long message", "len %zu", e.len);
	{
		void *sctxs[2] = { &sctx, &m.sctx };

		expect_comp_set(fx, a->tx_cq, sctxs, 2, "sizes: claim: the sends complete");
	}
out:
	free(tx);
	free(rx);
}

static void test_sizes(struct fixture *fx)
{
	struct route r = fx_route(fx, A, B);
	static const char *const ops[] = { "fi_send", "fi_tsenddata" };
	char prefix[96];

	for (size_t i = 0; i < ARRAY_SIZE(test_sizes_list); i++) {
		for (size_t o = 0; o < ARRAY_SIZE(ops); o++) {
			const struct send_op *op = find_op(ops[o]);
			size_t len = test_sizes_list[i];

			snprintf(prefix, sizeof(prefix), "sizes: %s of %zu bytes", ops[o], len);
			transfer(fx, &r, &(struct xfer) { op, len, true, NULL, NULL }, prefix);
			snprintf(prefix, sizeof(prefix), "sizes: unexpected %s of %zu bytes",
				 ops[o], len);
			unexpected_transfer(fx, op, len, prefix);
		}
	}
	long_truncation(fx, 1 << 20);
	iov_transfer(fx, 200000);
	iov_transfer(fx, 8 << 20);
	claim_long(fx, 4 << 20);
}

/* More iovs than iov_limit: -FI_EINVAL from every vector call. */
static void test_iov_limit(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	size_t tx_n = fx->info->tx_attr->iov_limit + 1;
	size_t rx_n = fx->info->rx_attr->iov_limit + 1;
	size_t n = tx_n > rx_n ? tx_n : rx_n;
	struct iovec *iov = xmalloc(n * sizeof(*iov));
	uint8_t *bytes = xmalloc(n);
	struct fi_context ctx;
	ssize_t ret;

	for (size_t i = 0; i < n; i++)
		iov[i] = (struct iovec) { bytes + i, 1 };
	ret = fi_sendv(a->ep, iov, NULL, tx_n, b->addr, &ctx);
	check_ret(ret, -FI_EINVAL, "fi_sendv with iov_limit + 1 iovs: -FI_EINVAL");
	ret = fi_tsendv(a->ep, iov, NULL, tx_n, b->addr, 1, &ctx);
	check_ret(ret, -FI_EINVAL, "fi_tsendv with iov_limit + 1 iovs: -FI_EINVAL");
	ret = fi_recvv(b->ep, iov, NULL, rx_n, FI_ADDR_UNSPEC, &ctx);
	check_ret(ret, -FI_EINVAL, "fi_recvv with iov_limit + 1 iovs: -FI_EINVAL");
	if (!ret)
		abandon_recv(fx, b, &ctx);
	ret = fi_trecvv(b->ep, iov, NULL, rx_n, FI_ADDR_UNSPEC, 1, 0, &ctx);
	check_ret(ret, -FI_EINVAL, "fi_trecvv with iov_limit + 1 iovs: -FI_EINVAL");
	if (!ret)
		abandon_recv(fx, b, &ctx);
	free(iov);
	free(bytes);
}

/* Sending to an fi_addr that was never inserted: -FI_EINVAL. */
static void test_bad_dest(struct fixture *fx)
{
	struct fid_ep *ep = fx->node[A].ep;
	const fi_addr_t never = 1000;
	uint8_t buf[8] = { 0 };
	struct fi_context ctx;
	ssize_t ret;

	ret = fi_send(ep, buf, sizeof(buf), NULL, never, &ctx);
	check_ret(ret, -FI_EINVAL, "fi_send to an fi_addr never inserted: -FI_EINVAL");
	ret = fi_tsend(ep, buf, sizeof(buf), NULL, never, 1, &ctx);
	check_ret(ret, -FI_EINVAL, "fi_tsend to an fi_addr never inserted: -FI_EINVAL");
	ret = fi_inject(ep, buf, sizeof(buf), never);
	check_ret(ret, -FI_EINVAL, "fi_inject to an fi_addr never inserted: -FI_EINVAL");
	send_between(fx, A, B, 16, "the endpoint still works afterwards");
}

/*
 * Completion levels: a small send asked FI_INJECT_COMPLETE completes
 * before its receiver did anything; with FI_TRANSMIT_COMPLETE or
 * FI_DELIVERY_COMPLETE not before the receiver progressed (and took it).
 */
static void test_completion_levels(struct fixture *fx)
{
	static const struct {
		uint64_t	flag;
		bool		at_once;
		const char	*name;
	} levels[] = {
		{ FI_INJECT_COMPLETE, true, "FI_INJECT_COMPLETE" },
		{ FI_TRANSMIT_COMPLETE, false, "FI_TRANSMIT_COMPLETE" },
		{ FI_DELIVERY_COMPLETE, false, "FI_DELIVERY_COMPLETE" },
	};
	struct route r = fx_route(fx, A, B);

	if (!send_between(fx, A, B, 16, "A and B connected"))
		return;
	for (size_t i = 0; i < ARRAY_SIZE(levels); i++) {
		const char *name = levels[i].name;
		uint8_t tx[64], rx[64];
		struct fi_context sctx, rctx;
		struct fi_cq_tagged_entry e;
		ssize_t got = -FI_EAGAIN;

		fill(tx, sizeof(tx), (unsigned) i);
		memset(rx, 0, sizeof(rx));
		if (!check_ret(post_recv(r.to->ep, rx, sizeof(rx), FI_ADDR_UNSPEC, true, 7, 0,
					 &rctx), 0, nm(name, "post receive")))
			continue;
		if (!check_ret(post_sendmsg(r.from->ep, tx, sizeof(tx), NULL, r.dest, 7, 0, &sctx,
					    FI_COMPLETION | levels[i].flag, true),
			       0, nm(name, "fi_tsendmsg"))) {
			abandon_recv(fx, r.to, &rctx);
			continue;
		}
		/* Only A progresses: B cannot have taken or acknowledged anything. */
		for (int n = 0; n < 1000 && got == -FI_EAGAIN; n++)
			got = fi_cq_read(r.from->tx_cq, &e, 1);
		ft_check((got == 1) == levels[i].at_once,
			 nm(name, levels[i].at_once ? "completes before the receiver progressed" :
				  "no completion before the receiver progressed"),
			 "fi_cq_read returned %zd", got);
		if (!expect_comp(fx, r.to->rx_cq, &rctx, FI_RECV | FI_TAGGED, NULL, NULL,
				 nm(name, "received")))
			abandon_recv(fx, r.to, &rctx);
		ft_check(payload_ok(rx, sizeof(rx), (unsigned) i, 0), nm(name, "payload"),
			 "the bytes differ");
		if (got != 1)
			expect_comp(fx, r.from->tx_cq, &sctx, FI_SEND | FI_TAGGED, NULL, NULL,
				    nm(name, "the send completes once the receiver progressed"));
	}
}

/* What the rdmx_peer_ops callback saw. */
struct peer_events {
	struct fid_ep	*ep;
	fi_addr_t	addr;
	int		connected;
	int		disconnected;
};

static void on_peer(struct fid_ep *ep, fi_addr_t addr, enum fi_rdmx_peer_state state,
		    int err, void *arg)
{
	struct peer_events *ev = arg;

	(void) err;
	ev->ep = ep;
	ev->addr = addr;
	ev->connected += state == FI_RDMX_PEER_CONNECTED;
	ev->disconnected += state == FI_RDMX_PEER_DISCONNECTED;
}

/* rdmx_peer_ops: a peer's state before and after the first send, the callback. */
static void test_peer_ops(struct fixture *fx)
{
	struct fid_ep *a = fx->node[A].ep;
	fi_addr_t b = fx->node[B].addr;
	struct fi_rdmx_peer_ops *ops = NULL;
	struct fi_rdmx_peer_attr attr;
	struct peer_events ev = { 0 };
	int ret;

	ret = fi_open_ops(&fx->domain->fid, "rdmx_peer_ops_v9", 0, (void **) &ops, NULL);
	check_ret(ret, -FI_ENOSYS, "fi_open_ops with an unknown name: -FI_ENOSYS");
	ret = fi_open_ops(&fx->domain->fid, FI_RDMX_PEER_OPS, 0, (void **) &ops, NULL);
	if (!check_ret(ret, 0, "fi_open_ops(domain, FI_RDMX_PEER_OPS)"))
		return;
	ft_check(ops->size == sizeof(*ops), "ops->size", "is %zu", ops->size);
	check_ret(ops->set_callback(a, on_peer, &ev), 0, "set_callback");
	ret = ops->query(a, b, &attr);
	if (check_ret(ret, 0, "query a peer nothing was sent to"))
		ft_check(attr.state == FI_RDMX_PEER_IDLE && attr.version == 0,
			 "it is IDLE, no version", "state %d version %u", attr.state,
			 attr.version);
	check_ret(ops->query(a, 1000, &attr), -FI_EINVAL,
		  "query an fi_addr never inserted: -FI_EINVAL");
	check_ret(ops->query(a, b, NULL), -FI_EINVAL, "query without attr: -FI_EINVAL");
	check_ret(ops->query(NULL, b, &attr), -FI_EINVAL, "query without ep: -FI_EINVAL");

	send_between(fx, A, B, 16, "a first send connects A to B");
	ft_check(ev.connected == 1 && ev.disconnected == 0,
		 "the callback saw CONNECTED once", "connected %d disconnected %d",
		 ev.connected, ev.disconnected);
	ft_check(ev.ep == a && ev.addr == b, "the callback named A's endpoint and B",
		 "ep %p addr %lu", (void *) ev.ep, (unsigned long) ev.addr);
	ret = ops->query(a, b, &attr);
	if (check_ret(ret, 0, "query B from A"))
		ft_check(attr.state == FI_RDMX_PEER_CONNECTED && attr.version == 2,
			 "B is CONNECTED at protocol level 2", "state %d version %u",
			 attr.state, attr.version);
	ret = ops->query(fx->node[B].ep, fx->node[A].addr, &attr);
	if (check_ret(ret, 0, "query A from B"))
		ft_check(attr.state == FI_RDMX_PEER_CONNECTED, "B sees A CONNECTED too",
			 "state %d", attr.state);
	check_ret(ops->set_callback(a, NULL, NULL), 0, "clear the callback");
	send_between(fx, A, B, 16, "sends go on without a callback");
}

/*
 * A UDP socket on endpoint A's address that never answers; *silent gets
 * its address in the endpoint's format. The socket, or -1.
 */
static int silent_socket(struct fixture *fx, void *silent)
{
	socklen_t len = (socklen_t) addr_size(fx->info);
	int fd;

	memcpy(silent, fx->node[A].name, len);
	set_port(silent, 0);
	fd = socket(((struct sockaddr *) silent)->sa_family, SOCK_DGRAM, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, silent, len) || getsockname(fd, silent, &len)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Wireup (issue 4): sends to a peer whose handshake never completes wait
 * on its pending queue, up to FI_RDMX_PENDING_MAX (default 4096) or the
 * endpoint's tx size, whichever is less, then -FI_EAGAIN; below tx size,
 * sends to other peers are unaffected. Closing the endpoint completes
 * every waiting send with FI_ECANCELED. The sends ask FI_TRANSMIT_COMPLETE:
 * small sends otherwise complete when posted (inject complete), and a
 * completed send has no entry left to cancel.
 */
static void test_pending_queue(struct fixture *fx)
{
	const char *env = getenv("FI_RDMX_PENDING_MAX");
	size_t pending_max = env ? strtoul(env, NULL, 0) : 4096;
	size_t tx_size = fx->info->tx_attr->size;
	size_t max = pending_max < tx_size ? pending_max : tx_size;
	struct fi_context *ctx = xmalloc((max + 1) * sizeof(*ctx));
	struct node *a = &fx->node[A];
	uint8_t silent[NAME_MAX_LEN], buf[8] = { 0 };
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct fi_msg_tagged msg = { .msg_iov = &iov, .iov_count = 1, .tag = 7 };
	size_t posted = 0, cancelled = 0;
	struct fi_cq_err_entry err;
	ssize_t ret = 0;
	int fd = silent_socket(fx, silent);

	if (!ft_check(fd >= 0, "a silent UDP socket", "socket/bind failed") ||
	    !check_ret(fi_av_insert(fx->av, silent, 1, &msg.addr, 0, NULL), 1,
		       "insert the silent address")) {
		free(ctx);
		return;
	}
	while (posted <= max) {
		msg.context = &ctx[posted];
		ret = fi_tsendmsg(a->ep, &msg, FI_COMPLETION | FI_TRANSMIT_COMPLETE);
		if (ret)
			break;
		posted++;
	}
	check_ret(ret, -FI_EAGAIN, "the send past the pending queue: -FI_EAGAIN");
	ft_check(posted == max, "the queue took min(FI_RDMX_PENDING_MAX, tx size) sends",
		 "took %zu of %zu", posted, max);
	if (pending_max < tx_size)
		send_between(fx, A, B, 16, "sends to another peer still go out");

	check_ret(fi_close(&a->ep->fid), 0, "close the endpoint with sends waiting");
	a->ep = NULL;
	/* The close wrote the entries: nothing is left to wait for. */
	while (cancelled < posted) {
		struct fi_cq_tagged_entry entry;

		ret = fi_cq_read(a->tx_cq, &entry, 1);
		if (ret != -FI_EAVAIL) {
			ft_check(ret == -FI_EAGAIN, "no successful send completion",
				 "fi_cq_read %zd", ret);
			break;
		}
		memset(&err, 0, sizeof(err));
		if (fi_cq_readerr(a->tx_cq, &err, 0) != 1 || err.err != FI_ECANCELED ||
		    err.op_context != &ctx[cancelled])
			break;
		cancelled++;
	}
	ft_check(cancelled == posted,
		 "every waiting send completed FI_ECANCELED, in posting order",
		 "%zu of %zu (last: err %d, context %p)", cancelled, posted,
		 err.err, err.op_context);
	close(fd);
	free(ctx);
}

/*
 * Closing an object something still uses: -FI_EBUSY, and the objects keep
 * working; then the right order closes everything (reported step by step).
 */
static void test_close_order(struct fixture *fx)
{
	struct {
		const char	*name;
		struct fid	*fid;
	} busy[] = {
		{ "fi_close(tx CQ) while an endpoint is bound: -FI_EBUSY",
		  &fx->node[A].tx_cq->fid },
		{ "fi_close(rx CQ) while an endpoint is bound: -FI_EBUSY",
		  &fx->node[B].rx_cq->fid },
		{ "fi_close(av) while endpoints are bound: -FI_EBUSY", &fx->av->fid },
		{ "fi_close(domain) with open children: -FI_EBUSY", &fx->domain->fid },
		{ "fi_close(fabric) with an open domain: -FI_EBUSY", &fx->fabric->fid },
	};

	for (size_t i = 0; i < ARRAY_SIZE(busy); i++) {
		int ret = fi_close(busy[i].fid);

		check_ret(ret, -FI_EBUSY, busy[i].name);
	}
	send_between(fx, A, B, 64, "after refused closes, A to B still works");
	send_between(fx, B, A, 64, "after refused closes, B to A still works");
	fixture_close(fx, true);
}

/* Each unsupported call, returning what it returned (objects it opened closed). */
static int try_cntr_open(struct fixture *fx)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP };
	struct fid_cntr *cntr = NULL;
	int ret = fi_cntr_open(fx->domain, &attr, &cntr, NULL);

	if (!ret)
		fi_close(&cntr->fid);
	return ret;
}

static int try_read(struct fixture *fx)
{
	uint8_t buf[8];

	return (int) fi_read(fx->node[A].ep, buf, sizeof(buf), NULL, fx->node[B].addr,
			     0, 0, NULL);
}

static int try_write(struct fixture *fx)
{
	uint8_t buf[8] = { 0 };

	return (int) fi_write(fx->node[A].ep, buf, sizeof(buf), NULL, fx->node[B].addr,
			      0, 0, NULL);
}

static int try_atomic(struct fixture *fx)
{
	uint64_t val = 1;

	return (int) fi_atomic(fx->node[A].ep, &val, 1, NULL, fx->node[B].addr, 0, 0,
			       FI_UINT64, FI_SUM, NULL);
}

static int try_scalable_ep(struct fixture *fx)
{
	struct fid_ep *sep = NULL;
	int ret = fi_scalable_ep(fx->domain, fx->info, &sep, NULL);

	if (!ret)
		fi_close(&sep->fid);
	return ret;
}

static int try_srx_context(struct fixture *fx)
{
	struct fid_ep *srx = NULL;
	int ret = fi_srx_context(fx->domain, fx->info->rx_attr, &srx, NULL);

	if (!ret)
		fi_close(&srx->fid);
	return ret;
}

static int try_stx_context(struct fixture *fx)
{
	struct fid_stx *stx = NULL;
	int ret = fi_stx_context(fx->domain, fx->info->tx_attr, &stx, NULL);

	if (!ret)
		fi_close(&stx->fid);
	return ret;
}

static int try_poll_open(struct fixture *fx)
{
	struct fi_poll_attr attr = { 0 };
	struct fid_poll *pollset = NULL;
	int ret = fi_poll_open(fx->domain, &attr, &pollset);

	if (!ret)
		fi_close(&pollset->fid);
	return ret;
}

static int try_wait_open(struct fixture *fx)
{
	struct fi_wait_attr attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fid_wait *waitset = NULL;
	int ret = fi_wait_open(fx->fabric, &attr, &waitset);

	if (!ret)
		fi_close(&waitset->fid);
	return ret;
}

static int try_passive_ep(struct fixture *fx)
{
	struct fid_pep *pep = NULL;
	int ret = fi_passive_ep(fx->fabric, fx->info, &pep, NULL);

	if (!ret)
		fi_close(&pep->fid);
	return ret;
}

static int try_connect(struct fixture *fx)
{
	return fi_connect(fx->node[A].ep, fx->node[B].name, NULL, 0);
}

static void test_unsupported(struct fixture *fx)
{
	static const struct {
		const char	*name;
		int		(*call)(struct fixture *fx);
	} calls[] = {
		{ "fi_cntr_open", try_cntr_open },
		{ "fi_read", try_read },
		{ "fi_write", try_write },
		{ "fi_atomic", try_atomic },
		{ "fi_scalable_ep", try_scalable_ep },
		{ "fi_srx_context", try_srx_context },
		{ "fi_stx_context", try_stx_context },
		{ "fi_poll_open", try_poll_open },
		{ "fi_wait_open", try_wait_open },
		{ "fi_passive_ep", try_passive_ep },
		{ "fi_connect", try_connect },
	};

	for (size_t i = 0; i < ARRAY_SIZE(calls); i++) {
		int ret = calls[i].call(fx);

		check_ret(ret, -FI_ENOSYS, nm(calls[i].name, "-FI_ENOSYS"));
	}
	send_between(fx, A, B, 16, "the endpoints still work afterwards");
}

static void test_eq(struct fixture *fx)
{
	struct fi_eq_attr attr = { .size = 8, .flags = FI_WRITE,
				   .wait_obj = FI_WAIT_UNSPEC };
	struct fi_eq_entry in = { .fid = &fx->fabric->fid, .data = 0x1234 }, out;
	struct fid_eq *eq = NULL;
	uint32_t event = 0;
	int64_t start, took;
	ssize_t ret;
	int marker;

	ret = fi_eq_open(fx->fabric, &attr, &eq, NULL);
	if (!check_ret(ret, 0, "fi_eq_open"))
		return;
	in.context = &marker;
	ret = fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0);
	check_ret(ret, (ssize_t) sizeof(in), "fi_eq_write");
	memset(&out, 0, sizeof(out));
	ret = fi_eq_read(eq, &event, &out, sizeof(out), 0);
	ft_check(ret == (ssize_t) sizeof(out) && event == FI_NOTIFY &&
		 out.context == &marker && out.data == 0x1234 && out.fid == in.fid,
		 "fi_eq_read returns the written event", "ret %zd, event %u, data %#llx",
		 ret, event, (unsigned long long) out.data);
	ret = fi_eq_read(eq, &event, &out, sizeof(out), 0);
	check_ret(ret, -FI_EAGAIN, "fi_eq_read of an empty EQ: -FI_EAGAIN");
	start = now_ms();
	ret = fi_eq_sread(eq, &event, &out, sizeof(out), 200, 0);
	took = now_ms() - start;
	ft_check(ret == -FI_EAGAIN && took >= 150 && took < WAIT_MS,
		 "fi_eq_sread with a 200 ms timeout on an empty EQ: -FI_EAGAIN after it",
		 "%zd (%s) after %lld ms", ret, err_str(ret), (long long) took);
	ret = fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0);
	check_ret(ret, (ssize_t) sizeof(in), "fi_eq_write of a second event");
	start = now_ms();
	ret = fi_eq_sread(eq, &event, &out, sizeof(out), WAIT_MS, 0);
	took = now_ms() - start;
	ft_check(ret == (ssize_t) sizeof(out) && took < 1000,
		 "fi_eq_sread returns a waiting event at once", "%zd (%s) after %lld ms",
		 ret, err_str(ret), (long long) took);
	ret = fi_close(&eq->fid);
	check_ret(ret, 0, "fi_close(eq)");
}

static void test_mr(struct fixture *fx)
{
	const uint64_t key = 0x1234;
	size_t len = 256;
	uint8_t *buf = xmalloc(len);
	struct fid_mr *mr = NULL;
	struct route r = fx_route(fx, A, B);
	int ret;

	memset(buf, 0, len);
	ret = fi_mr_reg(fx->domain, buf, len, FI_SEND | FI_RECV, 0, key, 0, &mr, NULL);
	if (check_ret(ret, 0, "fi_mr_reg of a send buffer")) {
		bool prov_key = fx->info->domain_attr->mr_mode & FI_MR_PROV_KEY;
		uint64_t got = fi_mr_key(mr);

		ft_check(prov_key ? got != FI_KEY_NOTAVAIL : got == key,
			 "fi_mr_key: the requested key (no FI_MR_PROV_KEY)", "key %#llx",
			 (unsigned long long) got);
		transfer(fx, &r, &(struct xfer) { find_op("fi_send"), len, true, buf,
						  fi_mr_desc(mr) },
			 "fi_send with the fi_mr_desc descriptor");
		ret = fi_close(&mr->fid);
		check_ret(ret, 0, "fi_close(mr)");
	}
	mr = NULL;
	ret = fi_mr_reg(fx->domain, buf, len, FI_TAGGED, 0, key + 1, 0, &mr, NULL);
	check_ret(ret, -FI_EINVAL, "fi_mr_reg with bad access flags: -FI_EINVAL");
	if (!ret)
		fi_close(&mr->fid);
	free(buf);
}

/*
 * C, not yet in A's AV, sends A an untagged and a tagged message that
 * wait unexpected at A; then A inserts C (into *c_in1) and receives both
 * with receives directed at C, which name C as their source: what C sent
 * before it joined is C's (fabtests' fi_unexpected_msg relies on it).
 */
static bool early_sender_joins(struct fixture *fx, struct node *c, struct node *a,
			       fi_addr_t a_in2, fi_addr_t *c_in1)
{
	struct fi_context sctx[2], rctx[2], mctx[2];
	uint8_t sbuf[2][64], rbuf[2][64] = { { 0 } };
	uint32_t marker = 0x4d524b, marker_in = 0;
	fi_addr_t src[2] = { FI_ADDR_NOTAVAIL, FI_ADDR_NOTAVAIL };
	bool ok;
	int ret;

	fill(sbuf[0], sizeof(sbuf[0]), 21);
	fill(sbuf[1], sizeof(sbuf[1]), 22);
	fx->guest[0] = c;
	/* A matches C's messages in order: once the marker is in, so are they. */
	ok = check_ret(fi_send(c->ep, sbuf[0], sizeof(sbuf[0]), NULL, a_in2, &sctx[0]), 0,
		       "C sends A a message before A knows C") &&
	     check_ret(fi_tsend(c->ep, sbuf[1], sizeof(sbuf[1]), NULL, a_in2, 0x77, &sctx[1]), 0,
		       "C sends A a tagged message before A knows C") &&
	     check_ret(fi_tsend(c->ep, &marker, sizeof(marker), NULL, a_in2, 0x78, &mctx[0]),
		       0, "C sends A a marker") &&
	     check_ret(fi_trecv(a->ep, &marker_in, sizeof(marker_in), NULL, FI_ADDR_UNSPEC,
				0x78, 0, &mctx[1]), 0, "A receives the marker from any source") &&
	     expect_comp(fx, a->rx_cq, &mctx[1], FI_RECV, NULL, NULL,
			 "A got the marker: C's two messages wait unexpected") &&
	     expect_comp_set(fx, c->tx_cq, (void *[]) { &sctx[0], &sctx[1], &mctx[0] }, 3,
			     "C's three sends complete");
	if (ok) {
		ret = fi_av_insert(fx->av, c->name, 1, c_in1, 0, NULL);
		ok = ft_check(ret == 1, "insert C into A's AV", "%d", ret) &&
		     check_ret(fi_recv(a->ep, rbuf[0], sizeof(rbuf[0]), NULL, *c_in1, &rctx[0]),
			       0, "A posts a receive directed at C") &&
		     check_ret(fi_trecv(a->ep, rbuf[1], sizeof(rbuf[1]), NULL, *c_in1, 0x77, 0,
					&rctx[1]), 0, "A posts a tagged receive directed at C");
	}
	ok = ok &&
	     expect_comp(fx, a->rx_cq, &rctx[0], FI_RECV, NULL, &src[0],
			 "a receive directed at C takes what C sent before joining A's AV") &&
	     expect_comp(fx, a->rx_cq, &rctx[1], FI_RECV, NULL, &src[1],
			 "a tagged receive directed at C takes what C sent before joining") &&
	     ft_check(src[0] == *c_in1 && src[1] == *c_in1,
		      "they name C as the source", "%llu and %llu, want %llu",
		      (unsigned long long) src[0], (unsigned long long) src[1],
		      (unsigned long long) *c_in1) &&
	     ft_check(payload_ok(rbuf[0], sizeof(rbuf[0]), 21, 0) &&
		      payload_ok(rbuf[1], sizeof(rbuf[1]), 22, 0),
		      "with C's bytes", "payload differs");
	fx->guest[0] = NULL;
	return ok;
}

/*
 * A second domain: its CQ and AV do not bind to the first domain's
 * endpoints; its endpoint C talks to A. A reports C as FI_ADDR_NOTAVAIL
 * until C is in A's AV.
 */
static void test_second_domain(struct fixture *fx)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fid_domain *dom2 = NULL;
	struct fid_av *av2 = NULL;
	struct node *a = &fx->node[A], c = { 0 }, e = { 0 };
	fi_addr_t a_in2 = FI_ADDR_NOTAVAIL, c_in1 = FI_ADDR_NOTAVAIL;
	struct route r;
	int ret;

	if (!step(true, fi_domain(fx->fabric, fx->info, &dom2, NULL),
		  "second domain: fi_domain") ||
	    !step(true, fi_av_open(dom2, &av_attr, &av2, NULL), "second domain: fi_av_open") ||
	    !node_create(dom2, fx->info, &c, false, "endpoint C") ||
	    !node_create(fx->domain, fx->info, &e, false, "endpoint E"))
		goto out;
	ret = fi_ep_bind(e.ep, &c.tx_cq->fid, FI_TRANSMIT);
	ft_check(ret < 0, "binding another domain's CQ fails", "returned %d", ret);
	ret = fi_ep_bind(e.ep, &av2->fid, 0);
	ft_check(ret < 0, "binding another domain's AV fails", "returned %d", ret);
	if (!node_enable(av2, &c, 0, false, "endpoint C"))
		goto out;
	ret = fi_av_insert(av2, a->name, 1, &a_in2, 0, NULL);
	if (!ft_check(ret == 1, "second domain: insert A", "%d", ret))
		goto out;
	r = (struct route) { &c, a, a_in2, FI_ADDR_NOTAVAIL };
	transfer(fx, &r, &(struct xfer) { find_op("fi_send"), 80, true, NULL, NULL },
		 "C to A, C not in A's AV (source FI_ADDR_NOTAVAIL)");
	if (!early_sender_joins(fx, &c, a, a_in2, &c_in1))
		goto out;
	r.src = c_in1;
	transfer(fx, &r, &(struct xfer) { find_op("fi_send"), 80, true, NULL, NULL },
		 "C to A, C now in A's AV");
	r = (struct route) { a, &c, c_in1, a_in2 };
	transfer(fx, &r, &(struct xfer) { find_op("fi_tsenddata"), 80, true, NULL, NULL },
		 "A to C across domains");
out:
	node_close(&e, false, "endpoint E");
	node_close(&c, false, "endpoint C");
	if (av2)
		step(true, fi_close(&av2->fid), "second domain: fi_close(av)");
	if (dom2)
		step(true, fi_close(&dom2->fid), "second domain: fi_close(domain)");
}

/* ------------------------------------------------------------------ */
/* Ping: PING_COUNT tagged messages each way between A and B.          */

/* The context of one ping operation (fi_context first: its address is it). */
struct ping_op {
	struct fi_context	ctx;
	int			node;		/* the endpoint that posted it */
	int			k;		/* message number, also the tag */
	bool			recv;
};

/*
 * Shared by the threads: each drives (posts on) its own endpoints, and
 * every thread reaps every CQ, so completions of one thread's operations
 * are often read by the other. Counters written by several threads are
 * updated atomically.
 */
struct ping {
	struct fixture		*fx;
	struct ping_op		*ops;		/* [node][send, recv][k] */
	uint8_t			*tx, *rx;	/* [node][k][PING_MAX] */
	int			sent[NODES], posted[NODES];	/* by the driver */
	int			sends_done[NODES], recvs_done[NODES];	/* atomic */
	int			failed;		/* atomic: set by the first failure */
	char			error[256];
};

#define PING_WINDOW	32		/* operations in flight per direction */

static size_t ping_len(int k)
{
	return (size_t) k * 97 % PING_MAX;
}

static unsigned ping_seed(int node, int k)
{
	return (unsigned) k * 2 + (unsigned) node;
}

static struct ping_op *ping_op(struct ping *pg, int node, bool recv, int k)
{
	return &pg->ops[(node * 2 + recv) * PING_COUNT + k];
}

static uint8_t *ping_buf(uint8_t *base, int node, int k)
{
	return base + ((size_t) node * PING_COUNT + (size_t) k) * PING_MAX;
}

static int ping_load(int *counter)
{
	return __atomic_load_n(counter, __ATOMIC_ACQUIRE);
}

/* Records the first failure; later ones are dropped. */
static void __attribute__((format(printf, 2, 3)))
ping_fail(struct ping *pg, const char *fmt, ...)
{
	int expected = 0;
	va_list ap;

	if (!__atomic_compare_exchange_n(&pg->failed, &expected, 1, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	va_start(ap, fmt);
	vsnprintf(pg->error, sizeof(pg->error), fmt, ap);
	va_end(ap);
}

/* Checks and counts one successful completion read from node's CQ. */
static void ping_complete(struct ping *pg, int node, bool rx_cq,
			  const struct fi_cq_tagged_entry *e, fi_addr_t src)
{
	const struct ping_op *op = e->op_context;
	int peer = 1 - node;

	if (op->node != node || op->recv != rx_cq) {
		ping_fail(pg, "%s: a completion on the wrong CQ", node_label[node]);
		return;
	}
	if (!op->recv) {
		__atomic_add_fetch(&pg->sends_done[node], 1, __ATOMIC_ACQ_REL);
		return;
	}
	if (e->tag != (uint64_t) op->k || e->len != ping_len(op->k) ||
	    src != pg->fx->node[peer].addr ||
	    !payload_ok(ping_buf(pg->rx, node, op->k), ping_len(op->k),
			ping_seed(peer, op->k), 0)) {
		ping_fail(pg, "%s: message %d: tag %#llx len %zu source %#llx or payload wrong",
			  node_label[node], op->k, (unsigned long long) e->tag, e->len,
			  (unsigned long long) src);
		return;
	}
	__atomic_add_fetch(&pg->recvs_done[node], 1, __ATOMIC_ACQ_REL);
}

/* Reads one entry from each of the four CQs; returns how many it got. */
static int ping_reap(struct ping *pg)
{
	char why[256];
	int got = 0;

	for (int node = 0; node < NODES; node++) {
		for (int rx = 0; rx < 2; rx++) {
			struct fid_cq *cq = rx ? pg->fx->node[node].rx_cq :
					    pg->fx->node[node].tx_cq;
			struct fi_cq_tagged_entry e;
			fi_addr_t src = FI_ADDR_NOTAVAIL;
			ssize_t ret = fi_cq_readfrom(cq, &e, 1, &src);

			if (ret == 1) {
				ping_complete(pg, node, rx, &e, src);
				got++;
			} else if (ret != -FI_EAGAIN) {
				ping_fail(pg, "%s %s CQ: %s", node_label[node], rx ? "rx" : "tx",
					  wait_str(ret, cq, why, sizeof(why)));
			}
		}
	}
	return got;
}

/* Posts node's next receives and sends, as far as the window allows. */
static void ping_post(struct ping *pg, int node)
{
	struct node *self = &pg->fx->node[node];
	fi_addr_t peer = pg->fx->node[1 - node].addr;
	ssize_t ret;

	while (pg->posted[node] < PING_COUNT &&
	       pg->posted[node] - ping_load(&pg->recvs_done[node]) < PING_WINDOW) {
		int k = pg->posted[node];

		ret = fi_trecv(self->ep, ping_buf(pg->rx, node, k), PING_MAX, NULL, peer,
			       (uint64_t) k, 0, &ping_op(pg, node, true, k)->ctx);
		if (ret == -FI_EAGAIN)
			break;
		if (ret) {
			ping_fail(pg, "%s: fi_trecv %d: %zd (%s)", node_label[node], k, ret,
				  err_str(ret));
			return;
		}
		pg->posted[node]++;
	}
	while (pg->sent[node] < PING_COUNT &&
	       pg->sent[node] - ping_load(&pg->sends_done[node]) < PING_WINDOW) {
		int k = pg->sent[node];

		ret = fi_tsend(self->ep, ping_buf(pg->tx, node, k), ping_len(k), NULL, peer,
			       (uint64_t) k, &ping_op(pg, node, false, k)->ctx);
		if (ret == -FI_EAGAIN)
			break;
		if (ret) {
			ping_fail(pg, "%s: fi_tsend %d: %zd (%s)", node_label[node], k, ret,
				  err_str(ret));
			return;
		}
		pg->sent[node]++;
	}
}

static int ping_total(struct ping *pg)
{
	int total = 0;

	for (int node = 0; node < NODES; node++)
		total += ping_load(&pg->sends_done[node]) + ping_load(&pg->recvs_done[node]);
	return total;
}

/*
 * Drives nodes [first, first + count) until all their messages went both
 * ways, reaping every CQ; fails after WAIT_MS without any progress.
 */
static void ping_drive(struct ping *pg, int first, int count)
{
	int64_t last = now_ms();
	int seen = -1;

	while (!ping_load(&pg->failed)) {
		bool done = true;

		for (int node = first; node < first + count; node++) {
			ping_post(pg, node);
			done &= ping_load(&pg->sends_done[node]) == PING_COUNT &&
				ping_load(&pg->recvs_done[node]) == PING_COUNT;
		}
		if (done)
			return;
		ping_reap(pg);
		if (ping_total(pg) != seen) {
			seen = ping_total(pg);
			last = now_ms();
		} else if (now_ms() - last > WAIT_MS) {
			ping_fail(pg, "no progress for %d ms", WAIT_MS);
		}
	}
}

struct ping_thread_arg {
	struct ping	*pg;
	int		node;
};

static void *ping_thread(void *arg)
{
	struct ping_thread_arg *t = arg;

	ping_drive(t->pg, t->node, 1);
	return NULL;
}

static struct ping *ping_new(struct fixture *fx)
{
	struct ping *pg = calloc(1, sizeof(*pg));
	size_t bytes = (size_t) NODES * PING_COUNT * PING_MAX;

	if (!pg)
		exit(2);
	pg->fx = fx;
	pg->ops = calloc((size_t) NODES * 2 * PING_COUNT, sizeof(*pg->ops));
	pg->tx = xmalloc(bytes);
	pg->rx = xmalloc(bytes);
	if (!pg->ops)
		exit(2);
	for (int node = 0; node < NODES; node++) {
		for (int k = 0; k < PING_COUNT; k++) {
			*ping_op(pg, node, false, k) = (struct ping_op) { .node = node, .k = k };
			*ping_op(pg, node, true, k) =
				(struct ping_op) { .node = node, .k = k, .recv = true };
			fill(ping_buf(pg->tx, node, k), ping_len(k), ping_seed(node, k));
		}
	}
	return pg;
}

/*
 * Reports each direction, closes the fixture (so no posted receive
 * outlives its buffer) and frees the ping.
 */
static void ping_finish(struct fixture *fx, struct ping *pg, const char *prefix)
{
	char what[128];

	ft_check(!pg->failed, nm(prefix, "no failure"), "%s", pg->error);
	for (int node = 0; node < NODES; node++) {
		snprintf(what, sizeof(what), "%s: %s sent and received %d messages", prefix,
			 node_label[node], PING_COUNT);
		ft_check(pg->sends_done[node] == PING_COUNT &&
			 pg->recvs_done[node] == PING_COUNT, what,
			 "%d sends and %d receives completed, of %d and %d posted",
			 pg->sends_done[node], pg->recvs_done[node], pg->sent[node],
			 pg->posted[node]);
	}
	fixture_close(fx, false);
	free(pg->ops);
	free(pg->tx);
	free(pg->rx);
	free(pg);
}

/*
 * FI_THREAD_SAFE: one thread per endpoint posts its sends and receives,
 * and both threads read all four CQs at once.
 */
static void test_ping_threads(struct fixture *fx)
{
	struct ping *pg = ping_new(fx);
	struct ping_thread_arg args[NODES];
	pthread_t tid[NODES];
	int started = 0;

	ft_check(fx->info->domain_attr->threading == FI_THREAD_SAFE,
		 "threads: the domain is FI_THREAD_SAFE", "threading %d",
		 fx->info->domain_attr->threading);
	for (; started < NODES; started++) {
		args[started] = (struct ping_thread_arg) { pg, started };
		if (pthread_create(&tid[started], NULL, ping_thread, &args[started]))
			break;
	}
	ft_check(started == NODES, "threads: both threads started", "%d started", started);
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	ping_finish(fx, pg, "threads (FI_THREAD_SAFE)");
}

/* FI_THREAD_DOMAIN: one thread drives both endpoints. */
static void test_ping_domain(struct fixture *fx)
{
	struct ping *pg = ping_new(fx);

	ft_check(fx->info->domain_attr->threading == FI_THREAD_DOMAIN,
		 "one thread: the domain is FI_THREAD_DOMAIN", "threading %d",
		 fx->info->domain_attr->threading);
	ping_drive(pg, 0, NODES);
	ping_finish(fx, pg, "one thread (FI_THREAD_DOMAIN)");
}

/* ------------------------------------------------------------------ */

static const struct {
	const char		*name;
	void			(*run)(struct fixture *fx);
	struct fixture_opts	opts;
} tests[] = {
	{ "objects open", test_objects, { .verbose = true } },
	{ "fi_getname", test_getname, { 0 } },
	{ "fi_setname", test_setname, { 0 } },
	{ "fi_enable errors", test_enable_errors, { 0 } },
	{ "address vector", test_av, { 0 } },
	{ "fi_av_remove after a completed send", test_av_remove_after_inject, { 0 } },
	{ "self-send", test_self, { 0 } },
	{ "send calls", test_send_calls, { 0 } },
	{ "scatter receive", test_scatter, { 0 } },
	{ "tag ignore mask", test_tag_ignore, { 0 } },
	{ "FI_DIRECTED_RECV", test_directed, { 0 } },
	{ "unexpected messages", test_unexpected, { 0 } },
	{ "posted receive order", test_posted_order, { 0 } },
	{ "truncation", test_truncation, { 0 } },
	{ "fi_cancel", test_cancel, { 0 } },
	{ "FI_MULTI_RECV", test_multi_recv, { 0 } },
	{ "FI_PEEK, FI_CLAIM, FI_DISCARD", test_peek_claim, { 0 } },
	{ "FI_SELECTIVE_COMPLETION", test_selective,
	  { .a_tx_flags = FI_SELECTIVE_COMPLETION } },
	{ "zero-byte messages", test_zero_bytes, { 0 } },
	{ "zero-byte message without iov", test_zero_iov, { 0 } },
	{ "size limits", test_size_limits, { 0 } },
	{ "message sizes", test_sizes, { 0 } },
	{ "iov limit", test_iov_limit, { 0 } },
	{ "unknown destination", test_bad_dest, { 0 } },
	{ "rdmx_peer_ops", test_peer_ops, { 0 } },
	{ "pending queue", test_pending_queue, { 0 } },
	{ "completion levels", test_completion_levels, { 0 } },
	{ "close ordering", test_close_order, { 0 } },
	{ "unsupported calls", test_unsupported, { 0 } },
	{ "event queue", test_eq, { 0 } },
	{ "memory registration", test_mr, { 0 } },
	{ "second domain", test_second_domain, { 0 } },
	{ "ping, FI_THREAD_SAFE, two threads", test_ping_threads,
	  { .threading = FI_THREAD_SAFE } },
	{ "ping, FI_THREAD_DOMAIN, one thread", test_ping_domain,
	  { .threading = FI_THREAD_DOMAIN } },
};

/*
 * Whether the test name is selected by the arguments: substrings to run,
 * or to skip when they start with '!'. No argument selects every test.
 */
static bool selected(const char *name, int argc, char **argv)
{
	bool any_include = false, included = false;

	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '!') {
			if (strstr(name, argv[i] + 1))
				return false;
		} else {
			any_include = true;
			included |= strstr(name, argv[i]) != NULL;
		}
	}
	return !any_include || included;
}

int main(int argc, char **argv)
{
	struct fixture fx;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; i < ARRAY_SIZE(tests); i++) {
		if (!selected(tests[i].name, argc, argv))
			continue;
		printf("# %s\n", tests[i].name);
		if (fixture_open(&fx, &tests[i].opts))
			tests[i].run(&fx);
		/* Closes what set-up opened; nothing if the test closed it all. */
		fixture_close(&fx, false);
	}
	return ft_check_summary();
}
