/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx_api_test: rdmx_peer_ops, and sends waiting for a handshake. */
#include "api.h"

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
void test_peer_ops(struct fixture *fx)
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
void test_pending_queue(struct fixture *fx)
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
