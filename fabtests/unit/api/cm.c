/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * FI_EP_MSG endpoints and their connections, on a fixture opened with
 * .msg (its fabric and domain only, on 127.0.0.1): a listener,
 * connectors and acceptors on one EQ, which every read progresses.
 * Accept and reject with private data both ways, a connect to nobody
 * and one a listener never answers, fi_shutdown seen on both sides, the
 * backlog, 100 connect and disconnect cycles (the valgrind pass checks
 * what they leave behind), connectors at a passive endpoint's address,
 * the addresses each side shows, a passive endpoint of IPv6, and
 * requests built by hand (docs/protocol.md, "Connected endpoints") and
 * sent by a plain RDM endpoint, as any peer could.
 */
#include <endian.h>
#include <errno.h>

#include "api.h"

/* Bound on a connect to nobody: FI_RDMX_UNREACH_MS (5 s) and then some. */
#define CM_NOBODY_MS	15000

/* An active endpoint and its CQ. */
struct conn {
	struct fid_ep	*ep;
	struct fid_cq	*cq;
	struct fi_context rctx;
	uint8_t		rx[64];
};

/* A listener and the EQ everything reports to. */
struct listener {
	struct fid_eq	*eq;
	struct fid_pep	*pep;
	uint8_t		name[NAME_MAX_LEN];
	size_t		namelen;
};

/* A connection event's entry with room for private data. */
struct cm_event {
	struct fi_eq_cm_entry	entry;
	uint8_t			data[256];
};

static bool cm_listen(struct fixture *fx, struct listener *l, int backlog)
{
	struct fi_eq_attr attr = { .wait_obj = FI_WAIT_UNSPEC };

	memset(l, 0, sizeof(*l));
	l->namelen = sizeof(l->name);
	return check_ret(fi_eq_open(fx->fabric, &attr, &l->eq, NULL), 0, "fi_eq_open") &&
	       check_ret(fi_passive_ep(fx->fabric, fx->info, &l->pep, NULL), 0,
			 "fi_passive_ep") &&
	       check_ret(fi_pep_bind(l->pep, &l->eq->fid, 0), 0, "fi_pep_bind") &&
	       (!backlog || check_ret(fi_control(&l->pep->fid, FI_BACKLOG, &backlog), 0,
				      "FI_BACKLOG")) &&
	       check_ret(fi_listen(l->pep), 0, "fi_listen") &&
	       check_ret(fi_getname(&l->pep->fid, l->name, &l->namelen), 0,
			 "fi_getname of the listener");
}

static void cm_unlisten(struct listener *l)
{
	if (l->pep)
		check_ret(fi_close(&l->pep->fid), 0, "fi_close(pep)");
	if (l->eq)
		check_ret(fi_close(&l->eq->fid), 0, "fi_close(eq)");
}

/* c's endpoint, open: a CQ, bound to eq, enabled, a receive posted. */
static bool cm_ready(struct fixture *fx, struct fid_eq *eq, struct conn *c)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_TAGGED };

	return check_ret(fi_cq_open(fx->domain, &attr, &c->cq, NULL), 0, "fi_cq_open") &&
	       check_ret(fi_ep_bind(c->ep, &c->cq->fid, FI_TRANSMIT | FI_RECV), 0,
			 "bind the CQ") &&
	       check_ret(fi_ep_bind(c->ep, &eq->fid, 0), 0, "bind the EQ") &&
	       check_ret(fi_enable(c->ep), 0, "fi_enable") &&
	       check_ret(fi_recv(c->ep, c->rx, sizeof(c->rx), NULL, 0, &c->rctx), 0,
			 "post a receive");
}

/* An active endpoint of info, ready (cm_ready). */
static bool cm_open(struct fixture *fx, struct fi_info *info, struct fid_eq *eq,
		    struct conn *c)
{
	memset(c, 0, sizeof(*c));
	return check_ret(fi_endpoint(fx->domain, info, &c->ep, NULL), 0, "fi_endpoint") &&
	       cm_ready(fx, eq, c);
}

static void cm_close(struct conn *c)
{
	if (c->ep)
		check_ret(fi_close(&c->ep->fid), 0, "fi_close(ep)");
	if (c->cq)
		check_ret(fi_close(&c->cq->fid), 0, "fi_close(cq)");
	memset(c, 0, sizeof(*c));
}

/*
 * The next event of eq within ms: its length (the type in *event), or
 * -FI_EAVAIL with the error entry in *err, or -FI_EAGAIN.
 */
static ssize_t cm_next(struct fid_eq *eq, uint32_t *event, struct cm_event *ev,
		       struct fi_eq_err_entry *err, int64_t ms)
{
	int64_t end = now_ms() + ms;
	ssize_t ret;

	memset(ev, 0, sizeof(*ev));
	do {
		ret = fi_eq_read(eq, event, ev, sizeof(*ev), 0);
	} while (ret == -FI_EAGAIN && now_ms() < end);
	if (ret == -FI_EAVAIL) {
		memset(err, 0, sizeof(*err));
		if (fi_eq_readerr(eq, err, 0) != sizeof(*err))
			ret = -FI_EOTHER;
	}
	return ret;
}

/* Expects event for fid next, with len bytes of data; true when it came. */
static bool cm_expect(struct fid_eq *eq, uint32_t want, fid_t fid, const void *data,
		      size_t len, struct cm_event *ev, const char *name)
{
	struct fi_eq_err_entry err;
	uint32_t event = 0;
	ssize_t ret = cm_next(eq, &event, ev, &err, WAIT_MS);

	return ft_check(ret == (ssize_t) (sizeof(ev->entry) + len) && event == want &&
			ev->entry.fid == fid && (!len || !memcmp(ev->data, data, len)), name,
			"read %zd (%s), event %u (want %u), fid %p (want %p)", ret,
			ret < 0 ? err_str(ret) : "bytes", event, want, (void *) ev->entry.fid,
			(void *) fid);
}

/* Expects an error entry for fid with err and len bytes of data. */
static bool cm_expect_err(struct fid_eq *eq, fid_t fid, int want, const void *data,
			  size_t len, int64_t ms, const char *name)
{
	struct fi_eq_err_entry err;
	struct cm_event ev;
	uint32_t event;
	ssize_t ret = cm_next(eq, &event, &ev, &err, ms);

	return ft_check(ret == -FI_EAVAIL && err.fid == fid && err.err == want &&
			err.err_data_size == len && (!len || !memcmp(err.err_data, data, len)),
			name, "read %zd (%s), err %d (want %d), err_data_size %zu (want %zu)",
			ret, err_str(ret), err.err, want, err.err_data_size, len);
}

/*
 * Events want for x (no data) and for y (len bytes of data), in either
 * order: the two sides of one connection report to one EQ.
 */
static bool cm_pair(struct fid_eq *eq, uint32_t want, const struct conn *x,
		    const struct conn *y, const void *data, size_t len, const char *name)
{
	bool seen_x = false, seen_y = false;

	for (int i = 0; i < 2; i++) {
		struct fi_eq_err_entry err;
		struct cm_event ev;
		uint32_t event = 0;
		ssize_t ret = cm_next(eq, &event, &ev, &err, WAIT_MS);

		if (ret < 0 || event != want)
			return ft_check(false, name, "read %zd (%s), event %u (want %u)", ret,
					ret < 0 ? err_str(ret) : "bytes", event, want);
		seen_x |= ev.entry.fid == &x->ep->fid && ret == sizeof(ev.entry);
		seen_y |= ev.entry.fid == &y->ep->fid && ret == (ssize_t) (sizeof(ev.entry) + len) &&
			  (!len || !memcmp(ev.data, data, len));
	}
	return ft_check(seen_x && seen_y, name, "one side %d, the other %d", seen_x, seen_y);
}

/* Connects c (already open) to l with data; the request's info in *info. */
static bool cm_request(struct listener *l, struct conn *c, const char *data,
		       struct fi_info **info)
{
	struct cm_event ev;
	size_t len = data ? strlen(data) : 0;

	*info = NULL;
	if (!check_ret(fi_connect(c->ep, l->name, data, len), 0, "fi_connect") ||
	    !cm_expect(l->eq, FI_CONNREQ, &l->pep->fid, data, len, &ev,
		       "FI_CONNREQ at the listener with the connector's data"))
		return false;
	*info = ev.entry.info;
	return ft_check(*info && (*info)->handle && (*info)->handle->fclass == FI_CLASS_CONNREQ &&
			(*info)->ep_attr->type == FI_EP_MSG, "its info names the request",
			"info %p", (void *) *info);
}

/* A full connection: c, opened from cinfo, connects to l; a accepts with data. */
static bool cm_connect(struct fixture *fx, struct listener *l, struct fi_info *cinfo,
		       struct conn *c, struct conn *a)
{
	struct fi_info *info = NULL;
	bool ok = cm_open(fx, cinfo, l->eq, c) && cm_request(l, c, "hello", &info) &&
		  cm_open(fx, info, l->eq, a) &&
		  check_ret(fi_accept(a->ep, "world", 5), 0, "fi_accept") &&
		  cm_pair(l->eq, FI_CONNECTED, a, c, "world", 5,
			  "FI_CONNECTED on both sides, the acceptor's data at the connector");

	fi_freeinfo(info);
	return ok;
}

/*
 * Sends len bytes from one side to the other and waits for both ends,
 * progressing both (the first packet waits for their handshake).
 */
static bool cm_transfer(struct conn *from, struct conn *to, size_t len)
{
	struct fi_cq_tagged_entry rx = { 0 }, tx_e = { 0 };
	int64_t end = now_ms() + WAIT_MS;
	struct fi_context sctx;
	ssize_t got_rx = 0, got_tx = 0;
	uint8_t tx[64];

	fill(tx, len, (unsigned) len);
	if (!check_ret(fi_send(from->ep, tx, len, NULL, 0, &sctx), 0, "fi_send"))
		return false;
	while ((got_rx != 1 || got_tx != 1) && now_ms() < end) {
		if (got_rx != 1)
			got_rx = fi_cq_read(to->cq, &rx, 1);
		if (got_tx != 1)
			got_tx = fi_cq_read(from->cq, &tx_e, 1);
	}
	return ft_check(got_rx == 1 && rx.op_context == &to->rctx && rx.len == len &&
			!memcmp(to->rx, tx, len), "the peer receives it whole",
			"read %zd, len %zu", got_rx, rx.len) &&
	       ft_check(got_tx == 1 && tx_e.op_context == &sctx, "the send completes",
			"read %zd", got_tx) &&
	       check_ret(fi_recv(to->ep, to->rx, sizeof(to->rx), NULL, 0, &to->rctx), 0,
			 "post the next receive");
}

/* Whether fid's name is name. */
static bool cm_named(struct fid *fid, const uint8_t *name, size_t len)
{
	uint8_t own[NAME_MAX_LEN];
	size_t own_len = sizeof(own);

	return !fi_getname(fid, own, &own_len) && own_len == len &&
	       !memcmp(own, name, len);
}

/* Whether fi_getpeer of c is name (a connector's: the address it connected to). */
static bool cm_peer_named(struct conn *c, const uint8_t *name, size_t len)
{
	uint8_t peer[NAME_MAX_LEN];
	size_t peer_len = sizeof(peer);

	return !fi_getpeer(c->ep, peer, &peer_len) && peer_len == len && !memcmp(peer, name, len);
}

/* Whether fi_getpeer of one side is fi_getname of the other. */
static bool cm_peer_is(struct conn *c, struct conn *other)
{
	uint8_t name[NAME_MAX_LEN];
	size_t len = sizeof(name);

	return !fi_getname(&other->ep->fid, name, &len) && cm_peer_named(c, name, len);
}

void test_cm_accept(struct fixture *fx)
{
	struct listener l;
	struct conn c = { 0 }, a = { 0 };
	size_t size = 0, size_len = sizeof(size);
	uint8_t byte = 0;

	if (!cm_listen(fx, &l, 0))
		goto out;
	check_ret(fi_getopt(&l.pep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &size, &size_len),
		  0, "FI_OPT_CM_DATA_SIZE of the listener");
	ft_check(size == 256, "256 bytes of private data", "%zu", size);
	if (!cm_connect(fx, &l, fx->info, &c, &a))
		goto out;
	ft_check(cm_peer_is(&c, &a) && cm_peer_is(&a, &c), "fi_getpeer names the other side",
		 "it does not");
	cm_transfer(&c, &a, 40);
	cm_transfer(&a, &c, 24);
	check_ret(fi_tsend(c.ep, &byte, 1, NULL, 0, 1ULL << 63, NULL), -FI_EINVAL,
		  "a tag with bit 63 (the connection's): -FI_EINVAL");
	check_ret(fi_connect(c.ep, l.name, NULL, 0), -FI_EISCONN, "fi_connect again: -FI_EISCONN");
	check_ret(fi_shutdown(c.ep, 0), 0, "fi_shutdown");
	cm_pair(l.eq, FI_SHUTDOWN, &c, &a, NULL, 0, "FI_SHUTDOWN on both sides");
	check_ret(fi_send(c.ep, &byte, 1, NULL, 0, NULL), -FI_ENOTCONN,
		  "a send after fi_shutdown: -FI_ENOTCONN");
	check_ret(fi_send(a.ep, &byte, 1, NULL, 0, NULL), -FI_ENOTCONN,
		  "a send at the peer after it: -FI_ENOTCONN");
	check_ret(fi_shutdown(c.ep, 0), -FI_ENOTCONN, "fi_shutdown again: -FI_ENOTCONN");
out:
	cm_close(&c);
	cm_close(&a);
	cm_unlisten(&l);
}

void test_cm_reject(struct fixture *fx)
{
	struct listener l;
	struct conn c = { 0 };
	struct fi_info *info = NULL;
	uint8_t byte = 0;

	if (!cm_listen(fx, &l, 0) || !cm_open(fx, fx->info, l.eq, &c) ||
	    !cm_request(&l, &c, "may I", &info))
		goto out;
	check_ret(fi_reject(l.pep, info->handle, "nope", 4), 0, "fi_reject with data");
	check_ret(fi_reject(l.pep, info->handle, NULL, 0), -FI_EINVAL,
		  "fi_reject of a request answered: -FI_EINVAL");
	fi_freeinfo(info);
	cm_expect_err(l.eq, &c.ep->fid, FI_ECONNREFUSED, "nope", 4, WAIT_MS,
		      "FI_ECONNREFUSED at the connector, with the listener's data");
	check_ret(fi_send(c.ep, &byte, 1, NULL, 0, NULL), -FI_ENOTCONN,
		  "a send of the refused: -FI_ENOTCONN");
out:
	cm_close(&c);
	cm_unlisten(&l);
}

/*
 * A request taken by an endpoint that closes before fi_accept is refused;
 * fi_reject cannot answer it meanwhile. 257 bytes of private data are
 * one too many; a refusal's data lands in a buffer the reader gives.
 */
void test_cm_abandon(struct fixture *fx)
{
	struct listener l;
	struct conn c = { 0 }, a = { 0 }, c2 = { 0 };
	struct fi_eq_err_entry err = { 0 };
	struct fi_info *info = NULL;
	char data[257] = { 0 }, mine[8] = { 0 };
	uint32_t event;
	ssize_t ret;

	if (!cm_listen(fx, &l, 0) || !cm_open(fx, fx->info, l.eq, &c) ||
	    !cm_request(&l, &c, "hello", &info) || !cm_open(fx, info, l.eq, &a))
		goto out;
	check_ret(fi_reject(l.pep, info->handle, NULL, 0), -FI_EINVAL,
		  "fi_reject of a request an endpoint took: -FI_EINVAL");
	cm_close(&a);
	fi_freeinfo(info);
	info = NULL;
	cm_expect_err(l.eq, &c.ep->fid, FI_ECONNREFUSED, NULL, 0, WAIT_MS,
		      "FI_ECONNREFUSED once the acceptor closed");
	if (!cm_open(fx, fx->info, l.eq, &c2))
		goto out;
	check_ret(fi_connect(c2.ep, l.name, data, sizeof(data)), -FI_EINVAL,
		  "257 bytes of private data: -FI_EINVAL");
	if (!cm_request(&l, &c2, "x", &info))
		goto out;
	check_ret(fi_reject(l.pep, info->handle, "refused", 7), 0, "fi_reject");
	for (int64_t end = now_ms() + WAIT_MS;
	     (ret = fi_eq_read(l.eq, &event, NULL, 0, 0)) == -FI_EAGAIN && now_ms() < end;)
		;
	err.err_data = mine;
	err.err_data_size = sizeof(mine);
	ft_check(ret == -FI_EAVAIL && fi_eq_readerr(l.eq, &err, 0) == sizeof(err) &&
		 err.err == FI_ECONNREFUSED && err.err_data == mine && err.err_data_size == 7 &&
		 !memcmp(mine, "refused", 7), "the refusal's data in the reader's buffer",
		 "read %zd, err %d, size %zu", ret, err.err, err.err_data_size);
out:
	fi_freeinfo(info);
	cm_close(&c);
	cm_close(&a);
	cm_close(&c2);
	cm_unlisten(&l);
}

/* A connect to an address where nothing listens ends in FI_ETIMEDOUT. */
void test_cm_nobody(struct fixture *fx)
{
	struct listener l;
	struct conn c = { 0 };
	uint8_t nobody[NAME_MAX_LEN];

	if (!cm_listen(fx, &l, 0) || !cm_open(fx, fx->info, l.eq, &c))
		goto out;
	memcpy(nobody, l.name, l.namelen);
	set_port(nobody, (uint16_t) (get_port(l.name) ^ 0x5a5a));
	check_ret(fi_connect(c.ep, nobody, NULL, 0), 0, "fi_connect to nobody");
	cm_expect_err(l.eq, &c.ep->fid, FI_ETIMEDOUT, NULL, 0, CM_NOBODY_MS,
		      "FI_ETIMEDOUT at the connector");
out:
	cm_close(&c);
	cm_unlisten(&l);
}

/*
 * A listener that holds the request and never answers it: the connector
 * gives up with FI_ETIMEDOUT after FI_RDMX_CONNECT_MS (CM_DEADLINE_MS
 * here), not sooner, and not by the unreachable peer's path (5 s): the
 * listener is alive, every EQ read progresses it. The request can still
 * be refused afterwards; the connector is down for good.
 */
void test_cm_deadline(struct fixture *fx)
{
	struct listener l;
	struct conn c = { 0 };
	struct fi_info *info = NULL;
	int64_t start;

	if (!cm_listen(fx, &l, 0) || !cm_open(fx, fx->info, l.eq, &c))
		goto out;
	start = now_ms();
	if (!cm_request(&l, &c, "anyone?", &info))
		goto out;
	if (cm_expect_err(l.eq, &c.ep->fid, FI_ETIMEDOUT, NULL, 0, CM_NOBODY_MS,
			  "FI_ETIMEDOUT at the connector")) {
		int64_t ms = now_ms() - start;

		ft_check(ms >= CM_DEADLINE_MS && ms < 4 * CM_DEADLINE_MS,
			 "after FI_RDMX_CONNECT_MS", "%lld ms, FI_RDMX_CONNECT_MS=%d",
			 (long long) ms, CM_DEADLINE_MS);
	}
	check_ret(fi_reject(l.pep, info->handle, NULL, 0), 0, "fi_reject of the request, late");
	check_ret(fi_connect(c.ep, l.name, NULL, 0), -FI_EOPBADSTATE,
		  "fi_connect after the time-out: -FI_EOPBADSTATE");
out:
	fi_freeinfo(info);
	cm_close(&c);
	cm_unlisten(&l);
}

/* A backlog of 2: the third request waiting is refused, the others held. */
void test_cm_backlog(struct fixture *fx)
{
	struct listener l;
	struct conn c[3] = { 0 };
	struct fi_info *info[2] = { NULL, NULL };
	size_t held = 0, refused = 0;

	if (!cm_listen(fx, &l, 2))
		goto out;
	for (int i = 0; i < 3; i++) {
		if (!cm_open(fx, fx->info, l.eq, &c[i]) ||
		    !check_ret(fi_connect(c[i].ep, l.name, NULL, 0), 0, "fi_connect"))
			goto out;
	}
	for (int i = 0; i < 3; i++) {
		struct fi_eq_err_entry err;
		struct cm_event ev;
		uint32_t event = 0;
		ssize_t ret = cm_next(l.eq, &event, &ev, &err, WAIT_MS);

		if (ret > 0 && event == FI_CONNREQ && held < 2)
			info[held++] = ev.entry.info;
		else if (ret == -FI_EAVAIL && err.err == FI_ECONNREFUSED)
			refused++;
	}
	ft_check(held == 2 && refused == 1, "two held, the third refused", "%zu held, %zu refused",
		 held, refused);
	for (size_t i = 0; i < held; i++) {
		check_ret(fi_reject(l.pep, info[i]->handle, NULL, 0), 0, "fi_reject");
		fi_freeinfo(info[i]);
	}
out:
	for (int i = 0; i < 3; i++)
		cm_close(&c[i]);
	cm_unlisten(&l);
}

/*
 * An accepted endpoint shows its listener's address, as TCP's accepted
 * sockets do (fabtests' fi_msg_sockets checks it), from fi_endpoint on,
 * for every acceptor of one listener, and after the listener closed;
 * each still reaches its own connector. It cannot be renamed, and a
 * short buffer learns the length.
 */
void test_cm_acceptor_names(struct fixture *fx)
{
	struct listener l;
	struct conn c[2] = { 0 }, a[2] = { 0 }, late = { 0 }, late_a = { 0 };
	struct fi_info *info = NULL;
	uint8_t name[NAME_MAX_LEN];
	size_t len = 1;

	if (!cm_listen(fx, &l, 0))
		goto out;
	for (int i = 0; i < 2; i++) {
		if (!cm_open(fx, fx->info, l.eq, &c[i]) || !cm_request(&l, &c[i], NULL, &info) ||
		    !cm_open(fx, info, l.eq, &a[i]))
			goto out;
		fi_freeinfo(info);
		info = NULL;
		ft_check(cm_named(&a[i].ep->fid, l.name, l.namelen),
			 "an acceptor shows its listener's address", "acceptor %d: another", i);
		if (!check_ret(fi_accept(a[i].ep, NULL, 0), 0, "fi_accept") ||
		    !cm_pair(l.eq, FI_CONNECTED, &a[i], &c[i], NULL, 0, "FI_CONNECTED on both sides"))
			goto out;
		ft_check(cm_named(&a[i].ep->fid, l.name, l.namelen) &&
			 cm_peer_named(&c[i], l.name, l.namelen) && cm_peer_is(&a[i], &c[i]),
			 "connected: the acceptor shows the listener's address, the connector "
			 "the address it connected to, the acceptor the connector's",
			 "acceptor %d: another", i);
		ft_check(fi_getname(&a[i].ep->fid, name, &len) == -FI_ETOOSMALL && len == l.namelen,
			 "a short buffer: -FI_ETOOSMALL and the length", "length %zu", len);
		len = 1;
	}
	/* Each acceptor's packets reach its own connector, none the listener. */
	for (int i = 0; i < 2; i++) {
		cm_transfer(&c[i], &a[i], 32);
		cm_transfer(&a[i], &c[i], 32);
	}
	if (!cm_open(fx, fx->info, l.eq, &late) || !cm_request(&l, &late, NULL, &info) ||
	    !check_ret(fi_endpoint(fx->domain, info, &late_a.ep, NULL), 0, "fi_endpoint"))
		goto out;
	check_ret(fi_setname(&late_a.ep->fid, l.name, l.namelen), -FI_EOPBADSTATE,
		  "fi_setname of an acceptor, not enabled: -FI_EOPBADSTATE");
	if (!cm_ready(fx, l.eq, &late_a))
		goto out;
	check_ret(fi_close(&l.pep->fid), 0, "fi_close(pep) with a request taken");
	l.pep = NULL;
	ft_check(cm_named(&late_a.ep->fid, l.name, l.namelen),
		 "an acceptor of a closed listener shows its address", "another");
	check_ret(fi_accept(late_a.ep, NULL, 0), -FI_ECONNABORTED,
		  "fi_accept after the listener closed: -FI_ECONNABORTED");
out:
	fi_freeinfo(info);
	for (int i = 0; i < 2; i++) {
		cm_close(&c[i]);
		cm_close(&a[i]);
	}
	cm_close(&late);
	cm_close(&late_a);
	cm_unlisten(&l);
}

/*
 * A passive endpoint opened from an IPv6 entry whose address was taken
 * out (fabtests' fi_msg_sockets does so before fi_setname) is IPv6, also
 * where the first domain is IPv4: fi_setname then gives it ::1.
 */
void test_cm_pep_ipv6(struct fixture *fx)
{
	struct sockaddr_in6 lo6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	struct sockaddr_in6 got = { 0 };
	size_t len = sizeof(got);
	struct fid_pep *pep = NULL;
	int ret;

	if (!ft_check(hints != NULL, "fi_allocinfo", "NULL"))
		return;
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG;
	hints->addr_format = FI_SOCKADDR_IN6;
	hints->fabric_attr->prov_name = strdup("rdmx");
	ret = fi_getinfo(TEST_VERSION, "::1", NULL, FI_SOURCE, hints, &info);
	if (ret == -FI_ENODATA) {
		printf("# no IPv6 loopback on this host: not checked\n");
		goto out;
	}
	if (!check_ret(ret, 0, "fi_getinfo of ::1"))
		goto out;
	free(info->src_addr);
	info->src_addr = NULL;
	info->src_addrlen = 0;
	if (check_ret(fi_passive_ep(fx->fabric, info, &pep, NULL), 0, "fi_passive_ep") &&
	    check_ret(fi_setname(&pep->fid, &lo6, sizeof(lo6)), 0, "fi_setname(::1)") &&
	    check_ret(fi_getname(&pep->fid, &got, &len), 0, "fi_getname"))
		ft_check(len == sizeof(got) && got.sin6_family == AF_INET6 && got.sin6_port &&
			 !memcmp(&got.sin6_addr, &lo6.sin6_addr, sizeof(lo6.sin6_addr)),
			 "the passive endpoint is at ::1, a port of its own", "length %zu, family %d",
			 len, got.sin6_family);
out:
	if (pep)
		check_ret(fi_close(&pep->fid), 0, "fi_close(pep)");
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

/* 100 connections, each up, used, shut down and closed; then one more. */
void test_cm_cycles(struct fixture *fx)
{
	struct listener l;
	int done = 0;

	if (!cm_listen(fx, &l, 0))
		goto out;
	for (; done < 100; done++) {
		struct conn c, a;
		bool ok = cm_connect(fx, &l, fx->info, &c, &a) && cm_transfer(&c, &a, 8) &&
			  !fi_shutdown(a.ep, 0) &&
			  cm_pair(l.eq, FI_SHUTDOWN, &a, &c, NULL, 0, "FI_SHUTDOWN on both sides");

		cm_close(&c);
		cm_close(&a);
		if (!ok)
			break;
	}
	ft_check(done == 100, "100 connect and shutdown cycles", "%d", done);
out:
	cm_unlisten(&l);
}

/*
 * An endpoint opened from info, whose handle is a passive endpoint at
 * name, fails while another socket holds that address.
 */
static bool cm_port_taken(struct fixture *fx, struct fi_info *info, const uint8_t *name,
			  size_t len)
{
	int fd = socket(((const struct sockaddr *) name)->sa_family, SOCK_DGRAM, 0);
	struct fid_ep *ep = NULL;
	bool ok = ft_check(fd >= 0 && !bind(fd, (const struct sockaddr *) name, (socklen_t) len),
			   "a socket takes the address between two connectors", "%s",
			   strerror(errno)) &&
		  ft_check(fi_endpoint(fx->domain, info, &ep, NULL) < 0,
			   "fi_endpoint fails while the address is taken", "it did not");

	if (ep)
		fi_close(&ep->fid);
	if (fd >= 0)
		close(fd);
	return ok;
}

/*
 * A connector opened from a passive endpoint's handle takes its address
 * (fabtests' fi_msg_sockets does so); the passive endpoint can no longer
 * listen, and once that connector closed, and after an fi_endpoint that
 * failed, the next one takes it again.
 */
void test_cm_handle(struct fixture *fx)
{
	struct fi_info *hints = fi_dupinfo(fx->info), *info = NULL;
	struct fid_pep *pep = NULL;
	struct listener l;
	struct conn c = { 0 }, a = { 0 };
	uint8_t name[NAME_MAX_LEN];
	size_t len = sizeof(name);

	if (!cm_listen(fx, &l, 0) || !ft_check(hints != NULL, "fi_dupinfo", "NULL") ||
	    !check_ret(fi_passive_ep(fx->fabric, fx->info, &pep, NULL), 0, "fi_passive_ep") ||
	    !check_ret(fi_getname(&pep->fid, name, &len), 0, "fi_getname of the passive endpoint") ||
	    !check_ret(fi_pep_bind(pep, &l.eq->fid, 0), 0, "fi_pep_bind"))
		goto out;
	hints->handle = &pep->fid;
	if (!check_ret(fi_getinfo(TEST_VERSION, NULL, NULL, 0, hints, &info), 0,
		       "fi_getinfo with the passive endpoint as handle") ||
	    !ft_check(info->handle == &pep->fid, "its info keeps the handle", "%p",
		      (void *) info->handle))
		goto out;
	for (int round = 0; round < 2; round++) {
		if (round && !cm_port_taken(fx, info, name, len))
			break;
		if (!cm_connect(fx, &l, info, &c, &a))
			break;
		ft_check(cm_named(&c.ep->fid, name, len),
			 "the connector has the passive endpoint's address", "round %d: another one",
			 round);
		check_ret(fi_listen(pep), -FI_EOPBADSTATE,
			  "fi_listen of a passive endpoint whose address was taken");
		ft_check(cm_named(&pep->fid, name, len), "the passive endpoint keeps its name",
			 "round %d: another one", round);
		cm_transfer(&c, &a, 16);
		cm_transfer(&a, &c, 16);
		cm_close(&c);
		cm_close(&a);
	}
out:
	cm_close(&c);
	cm_close(&a);
	if (pep)
		check_ret(fi_close(&pep->fid), 0, "fi_close(pep)");
	fi_freeinfo(info);
	fi_freeinfo(hints);
	cm_unlisten(&l);
}

#define CM_TAG		0xc34d434d434d434dULL	/* RDMX_CM_TAG */
#define CM_HDR_LEN	48
#define CM_REQ		1
#define CM_REJECT	3

/* An RDM endpoint of the fixture's fabric that speaks connection steps. */
struct forger {
	struct fi_info		*info;
	struct fid_domain	*domain;
	struct fid_av		*av;
	struct fid_cq		*cq;
	struct fid_ep		*ep;
	fi_addr_t		listener;
	uint8_t			name[NAME_MAX_LEN];
	size_t			namelen;
	uint8_t			rx[CM_HDR_LEN + 256];
	struct fi_context	rctx;
};

static bool forger_open(struct fixture *fx, struct forger *f, const void *listener)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	bool ok;

	memset(f, 0, sizeof(*f));
	if (!hints)
		return false;
	hints->caps = FI_TAGGED;
	hints->ep_attr->type = FI_EP_RDM;
	hints->fabric_attr->prov_name = strdup("rdmx");
	ok = check_ret(fi_getinfo(TEST_VERSION, "127.0.0.1", NULL, FI_SOURCE, hints, &f->info), 0,
		       "the forger's fi_getinfo");
	fi_freeinfo(hints);
	f->namelen = sizeof(f->name);
	return ok &&
	       check_ret(fi_domain(fx->fabric, f->info, &f->domain, NULL), 0, "its fi_domain") &&
	       check_ret(fi_av_open(f->domain, &av_attr, &f->av, NULL), 0, "its fi_av_open") &&
	       check_ret(fi_cq_open(f->domain, &cq_attr, &f->cq, NULL), 0, "its fi_cq_open") &&
	       check_ret(fi_endpoint(f->domain, f->info, &f->ep, NULL), 0, "its fi_endpoint") &&
	       check_ret(fi_ep_bind(f->ep, &f->av->fid, 0), 0, "bind its AV") &&
	       check_ret(fi_ep_bind(f->ep, &f->cq->fid, FI_TRANSMIT | FI_RECV), 0,
			 "bind its CQ") &&
	       check_ret(fi_enable(f->ep), 0, "enable it") &&
	       check_ret(fi_getname(&f->ep->fid, f->name, &f->namelen), 0, "its fi_getname") &&
	       check_ret(fi_av_insert(f->av, listener, 1, &f->listener, 0, NULL), 1,
			 "it knows the listener") &&
	       check_ret(fi_trecv(f->ep, f->rx, sizeof(f->rx), NULL, FI_ADDR_UNSPEC, CM_TAG, 0,
				  &f->rctx), 0, "it waits for steps");
}

static void forger_close(struct forger *f)
{
	if (f->ep)
		fi_close(&f->ep->fid);
	if (f->cq)
		fi_close(&f->cq->fid);
	if (f->av)
		fi_close(&f->av->fid);
	if (f->domain)
		fi_close(&f->domain->fid);
	fi_freeinfo(f->info);
}

/* Sends a REQ with id conn_id that names name (len bytes), and waits until it is out. */
static bool forger_request(struct listener *l, struct forger *f, uint64_t conn_id,
			   const void *name, size_t len)
{
	uint8_t req[CM_HDR_LEN] = { 0x43, 0x4d, 1, CM_REQ, 0, 0, (uint8_t) len, 0 };
	uint64_t id = htole64(conn_id);
	struct fi_cq_tagged_entry e;
	struct fi_context sctx;
	int64_t end = now_ms() + WAIT_MS;
	ssize_t got = 0;

	memcpy(req + 8, &id, sizeof(id));
	memcpy(req + 16, name, len);
	if (!check_ret(fi_tsend(f->ep, req, sizeof(req), NULL, f->listener, CM_TAG, &sctx), 0,
		       "the forger sends a request"))
		return false;
	while (got != 1 && now_ms() < end) {
		got = fi_cq_read(f->cq, &e, 1);
		/* The listener progresses when its EQ is read: nothing may be taken yet. */
		if (got != 1)
			(void) fi_eq_read(l->eq, &(uint32_t) { 0 }, NULL, 0, FI_PEEK);
	}
	return ft_check(got == 1 && e.op_context == &sctx, "the request is delivered",
			"read %zd", got);
}

/*
 * Waits for the step the forger hears next, reading the listener's EQ
 * meanwhile, which must stay empty; true when it is a REJECT of conn_id.
 */
static bool forger_rejected(struct listener *l, struct forger *f, uint64_t conn_id,
			    const char *name)
{
	struct fi_cq_tagged_entry e;
	int64_t end = now_ms() + WAIT_MS;
	ssize_t got = 0, ev = -FI_EAGAIN;
	uint64_t id = 0;
	uint32_t event;

	while (got != 1 && ev == -FI_EAGAIN && now_ms() < end) {
		got = fi_cq_read(f->cq, &e, 1);
		ev = fi_eq_read(l->eq, &event, NULL, 0, 0);
	}
	if (got == 1)
		memcpy(&id, f->rx + 8, sizeof(id));
	return ft_check(ev == -FI_EAGAIN, name, "the listener's EQ gave %zd", ev) &&
	       ft_check(got == 1 && e.op_context == &f->rctx && e.len >= CM_HDR_LEN &&
			f->rx[3] == CM_REJECT && le64toh(id) == conn_id, name,
			"read %zd, type %u, id %#llx", got, f->rx[3],
			(unsigned long long) le64toh(id)) &&
	       check_ret(fi_trecv(f->ep, f->rx, sizeof(f->rx), NULL, FI_ADDR_UNSPEC, CM_TAG, 0,
				  &f->rctx), 0, "the forger waits for the next step");
}

/*
 * A request naming a bystander's address: the listener's FI_CONNREQ
 * names the forger, and the refusal reaches the forger. A second
 * request from it, while the first is held, is refused at once.
 */
void test_cm_forged_request(struct fixture *fx)
{
	struct listener l;
	struct forger f = { 0 };
	struct cm_event ev;
	struct fi_info *info = NULL;
	uint8_t bystander[NAME_MAX_LEN];

	if (!cm_listen(fx, &l, 0) || !forger_open(fx, &f, l.name))
		goto out;
	memcpy(bystander, f.name, f.namelen);
	set_port(bystander, (uint16_t) (get_port(f.name) ^ 0x5a5a));
	if (!forger_request(&l, &f, 0x1001, bystander, f.namelen) ||
	    !cm_expect(l.eq, FI_CONNREQ, &l.pep->fid, NULL, 0, &ev,
		       "FI_CONNREQ for the forged request"))
		goto out;
	info = ev.entry.info;
	ft_check(info->dest_addrlen == f.namelen && !memcmp(info->dest_addr, f.name, f.namelen),
		 "it names its sender, not the address it claims", "%zu bytes",
		 info->dest_addrlen);
	if (forger_request(&l, &f, 0x1002, f.name, f.namelen))
		forger_rejected(&l, &f, 0x1002, "a second request from one sender: refused");
	if (check_ret(fi_reject(l.pep, info->handle, NULL, 0), 0, "fi_reject of the first"))
		forger_rejected(&l, &f, 0x1001, "the refusal reaches the sender");
out:
	fi_freeinfo(info);
	forger_close(&f);
	cm_unlisten(&l);
}
