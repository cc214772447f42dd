/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx_api_test: the fixture, payloads and completion checks (api.h). */
#include "api.h"

unsigned g_seed;		/* makes each message's payload distinct */

/*
 * "prefix: what" in a buffer that lives until the next call (so its result
 * must not be passed on as another call's prefix).
 */
const char *nm(const char *prefix, const char *what)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "%s: %s", prefix, what);
	return buf;
}

const char *err_str(long ret)
{
	return fi_strerror((int) (ret < 0 ? -ret : ret));
}

/* Checks that a call returned want, printing both as codes on failure. */
bool check_ret(long ret, long want, const char *name)
{
	return ft_check(ret == want, name, "returned %ld (%s), want %ld (%s)", ret,
			err_str(ret), want, err_str(want));
}

int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void *xmalloc(size_t len)
{
	void *p = malloc(len ? len : 1);

	if (!p) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	return p;
}

/* Fills buf with a pattern that depends on seed. */
void fill(void *buf, size_t len, unsigned seed)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t) (seed * 131 + i * 7 + 1);
}

/* Whether buf holds fill(seed) and the tail bytes after it are still zero. */
bool payload_ok(const void *buf, size_t len, unsigned seed, size_t tail)
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

const char *const node_label[NODES] = { "endpoint A", "endpoint B" };

/* A set-up or tear-down step: reported when it failed or when verbose. */
bool __attribute__((format(printf, 3, 4)))
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
static int get_info(const struct fixture_opts *o, enum fi_threading threading,
		    struct fi_info **info)
{
	struct fi_info *hints = fi_allocinfo();
	int ret;

	if (!hints)
		return -FI_ENOMEM;
	hints->caps = FI_MSG | (o->msg ? 0 : FI_DIRECTED_RECV | FI_SOURCE) |
		      (o->dgram ? 0 : FI_TAGGED) | (o->rma ? FI_RMA : 0) |
		      (o->atomic ? FI_ATOMIC : 0);
	hints->domain_attr->mr_mode = o->mr_mode;
	hints->ep_attr->type = o->dgram ? FI_EP_DGRAM : o->msg ? FI_EP_MSG : FI_EP_RDM;
	hints->domain_attr->threading = threading;
	hints->domain_attr->av_type = FI_AV_TABLE;
	if (o->auto_progress)
		hints->domain_attr->data_progress = hints->domain_attr->control_progress =
			FI_PROGRESS_AUTO;
	hints->fabric_attr->prov_name = strdup("rdmx");
	/* Connected endpoints listen and connect on loopback. */
	ret = fi_getinfo(TEST_VERSION, o->msg ? "127.0.0.1" : NULL, NULL, o->msg ? FI_SOURCE : 0,
			 hints, info);
	fi_freeinfo(hints);
	return ret;
}

/* Opens an endpoint and its two CQs (nothing bound yet). */
bool node_create(struct fid_domain *domain, struct fi_info *info,
		 struct node *n, bool v, const char *label)
{
	struct fi_cq_attr attr = {
		.format = FI_CQ_FORMAT_TAGGED,
		.wait_obj = n->wait_obj,
		.wait_set = n->wait_set,
	};

	return step(v, fi_cq_open(domain, &attr, &n->tx_cq, NULL),
		    "%s: fi_cq_open (tx)", label) &&
	       step(v, fi_cq_open(domain, &attr, &n->rx_cq, NULL),
		    "%s: fi_cq_open (rx)", label) &&
	       step(v, fi_endpoint(domain, info, &n->ep, NULL),
		    "%s: fi_endpoint", label);
}

/*
 * Binds av, the CQs and the counters it has, enables, and inserts the
 * endpoint's own name into av.
 */
bool node_enable(struct fid_av *av, struct node *n, uint64_t tx_flags,
		 bool v, const char *label)
{
	int ret;

	if (!step(v, fi_ep_bind(n->ep, &av->fid, 0), "%s: bind the AV", label) ||
	    !step(v, fi_ep_bind(n->ep, &n->tx_cq->fid, FI_TRANSMIT | tx_flags),
		  "%s: bind the tx CQ", label) ||
	    !step(v, fi_ep_bind(n->ep, &n->rx_cq->fid, FI_RECV | n->rx_flags),
		  "%s: bind the rx CQ", label) ||
	    (n->tx_cntr && !step(v, fi_ep_bind(n->ep, &n->tx_cntr->fid, FI_SEND),
				 "%s: bind the tx counter", label)) ||
	    (n->rx_cntr && !step(v, fi_ep_bind(n->ep, &n->rx_cntr->fid, FI_RECV),
				 "%s: bind the rx counter", label)) ||
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

/* Closes the endpoint, then its CQs and counters. */
void node_close(struct node *n, bool v, const char *label)
{
	if (n->ep)
		step(v, fi_close(&n->ep->fid), "%s: fi_close(endpoint)", label);
	if (n->tx_cq)
		step(v, fi_close(&n->tx_cq->fid), "%s: fi_close(tx CQ)", label);
	if (n->rx_cq)
		step(v, fi_close(&n->rx_cq->fid), "%s: fi_close(rx CQ)", label);
	if (n->tx_cntr)
		step(v, fi_close(&n->tx_cntr->fid), "%s: fi_close(tx counter)", label);
	if (n->rx_cntr)
		step(v, fi_close(&n->rx_cntr->fid), "%s: fi_close(rx counter)", label);
	n->ep = NULL;
	n->tx_cq = n->rx_cq = NULL;
	n->tx_cntr = n->rx_cntr = NULL;
}

bool fixture_open(struct fixture *fx, const struct fixture_opts *o)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE, .count = 16 };
	bool v = o->verbose;

	memset(fx, 0, sizeof(*fx));
	if (!step(v, get_info(o, o->threading ? o->threading : FI_THREAD_SAFE, &fx->info),
		  "fi_getinfo for rdmx") ||
	    !step(v, fi_fabric(fx->info->fabric_attr, &fx->fabric, NULL), "fi_fabric") ||
	    !step(v, fi_domain(fx->fabric, fx->info, &fx->domain, NULL), "fi_domain"))
		return false;
	if (o->msg)
		return true;
	if (!step(v, fi_av_open(fx->domain, &av_attr, &fx->av, NULL), "fi_av_open"))
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
void fixture_close(struct fixture *fx, bool v)
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
ssize_t cq_wait(struct fixture *fx, struct fid_cq *cq,
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
const char *wait_str(ssize_t ret, struct fid_cq *cq, char *buf, size_t len)
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
bool expect_comp(struct fixture *fx, struct fid_cq *cq, void *ctx,
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
bool expect_err(struct fixture *fx, struct fid_cq *cq, void *ctx, int err,
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

/*
 * expect_err for an outcome the application asked for (a peek that found
 * nothing, a canceled receive): the entry must carry no provider data,
 * and the err_data buffer offered must stay untouched. Callers such as
 * upstream fabtests' fi_rdm_tagged_peek and fi_recv_cancel read these
 * entries with an uninitialised fi_cq_err_entry, whose stale err_data a
 * provider that copies data out would write through.
 */
bool expect_err_no_data(struct fixture *fx, struct fid_cq *cq, void *ctx, int err,
			struct fi_cq_err_entry *out, const char *name)
{
	unsigned char guard[64], want[64];
	char what[256];

	/* name may be nm's buffer: copied before nm is called again. */
	snprintf(what, sizeof(what), "%s: no err_data written", name);
	memset(guard, 0xa5, sizeof(guard));
	memset(want, 0xa5, sizeof(want));
	if (!expect_err(fx, cq, ctx, err, out, guard, sizeof(guard), name))
		return false;
	return ft_check(out->err_data_size == 0 && !memcmp(guard, want, sizeof(guard)), what,
			"err_data_size %zu, offered buffer %s", out->err_data_size,
			memcmp(guard, want, sizeof(guard)) ? "overwritten" : "intact");
}

/* Checks that cq holds nothing (one more read, which also progresses). */
bool expect_empty(struct fid_cq *cq, const char *name)
{
	struct fi_cq_tagged_entry e = { 0 };
	ssize_t ret = fi_cq_read(cq, &e, 1);

	return ft_check(ret == -FI_EAGAIN, name, "fi_cq_read gave %zd (%s), context %p",
			ret, ret == 1 ? "an entry" : err_str(ret),
			ret == 1 ? e.op_context : NULL);
}

/* Waits for n successful completions on cq, those of ctxs in any order. */
bool expect_comp_set(struct fixture *fx, struct fid_cq *cq,
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
void abandon_recv(struct fixture *fx, struct node *n, void *ctx)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err = { 0 };

	if (fi_cancel(&n->ep->fid, ctx))
		return;
	if (cq_wait(fx, n->rx_cq, &e, NULL) == -FI_EAVAIL)
		(void) fi_cq_readerr(n->rx_cq, &err, 0);
}

ssize_t post_recv(struct fid_ep *ep, void *buf, size_t len, fi_addr_t src,
		  bool tagged, uint64_t tag, uint64_t ignore, void *ctx)
{
	if (tagged)
		return fi_trecv(ep, buf, len, NULL, src, tag, ignore, ctx);
	return fi_recv(ep, buf, len, NULL, src, ctx);
}

size_t addr_size(const struct fi_info *info)
{
	return info->addr_format == FI_SOCKADDR_IN6 ? sizeof(struct sockaddr_in6) :
	       sizeof(struct sockaddr_in);
}

/* Sets the port of a sockaddr_in or sockaddr_in6. */
void set_port(void *addr, uint16_t port)
{
	struct sockaddr_in *sin = addr;
	struct sockaddr_in6 *sin6 = addr;

	if (sin->sin_family == AF_INET6)
		sin6->sin6_port = htons(port);
	else
		sin->sin_port = htons(port);
}

uint16_t get_port(const void *addr)
{
	const struct sockaddr_in *sin = addr;
	const struct sockaddr_in6 *sin6 = addr;

	return ntohs(sin->sin_family == AF_INET6 ? sin6->sin6_port : sin->sin_port);
}
