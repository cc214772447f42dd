/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_api_test: libfabric API semantics in one process, through the public
 * API only. Two RDM endpoints (A and B) on loopback share a domain, an AV
 * and have a tx and an rx CQ each; a few tests add a third endpoint or a
 * second domain. Each test in the table of main.c runs on a fresh
 * fixture. Every wait on a CQ is bounded (WAIT_MS) and fails its check
 * rather than hanging. Prints one line per check and "N passed, M failed";
 * exits 1 if any check failed.
 *
 * This header is what the files of the program share: the fixture, the
 * completion checks and the send calls; each other file holds the tests
 * of one object or feature.
 */
#ifndef RDMX_API_TEST_H
#define RDMX_API_TEST_H

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
#define NAME_MAX_LEN	128
#define MARKER_TAG	0x4d41524b45520000ULL	/* tags no test message uses */
#define TAG_BASE	0xf100000000000000ULL	/* bit 63 set: all 64 bits travel */
#define DATA_BASE	0xc0ffee0000000000ULL
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

enum { A, B, NODES };

struct node {
	struct fid_ep	*ep;
	struct fid_cq	*tx_cq;
	struct fid_cq	*rx_cq;
	fi_addr_t	addr;			/* in the AV it was enabled with */
	uint8_t		name[NAME_MAX_LEN];	/* fi_getname */
	size_t		namelen;
	/* Set before node_create and node_enable; zero: the defaults. */
	enum fi_wait_obj wait_obj;		/* of its CQs (FI_WAIT_NONE) */
	struct fid_wait	*wait_set;		/* with FI_WAIT_SET */
	struct fid_cntr	*tx_cntr;		/* bound FI_SEND, closed by */
	struct fid_cntr	*rx_cntr;		/* bound FI_RECV, node_close */
	uint64_t	rx_flags;		/* extra flags binding its rx CQ */
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
	bool			auto_progress;	/* FI_PROGRESS_AUTO */
	uint64_t		a_tx_flags;	/* extra flags binding A's tx CQ */
	bool			verbose;	/* report every set-up step */
	bool			rma;		/* FI_RMA asked for too */
	bool			atomic;		/* FI_ATOMIC asked for too */
	uint64_t		mr_mode;	/* the hints' */
	bool			dgram;		/* FI_EP_DGRAM endpoints */
	bool			msg;		/* FI_EP_MSG: fabric and domain only */
	const char		*env;		/* NAME=VALUE: run in a child
						   process with it (main.c) */
};

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

/* Who sends to whom, and the fi_addrs each side knows the other by. */
struct route {
	struct node	*from, *to;
	fi_addr_t	dest;		/* from's fi_addr for to */
	fi_addr_t	src;		/* to's fi_addr for from */
};

/* A one-byte tagged message sent with FI_COMPLETION, to order events. */
struct marker {
	struct fi_context	rctx, sctx;
	uint8_t			tx, rx;
};

struct xfer {
	const struct send_op	*op;
	size_t			len;
	bool			want_tx;	/* a send completion must come */
	void			*tx;		/* send buffer (NULL: allocated) */
	void			*desc;		/* its descriptor */
};

/* fixture.c */
extern unsigned g_seed;	/* makes each message's payload distinct */
const char *nm(const char *prefix, const char *what);
const char *err_str(long ret);
bool check_ret(long ret, long want, const char *name);
int64_t now_ms(void);
void *xmalloc(size_t len);
void fill(void *buf, size_t len, unsigned seed);
bool payload_ok(const void *buf, size_t len, unsigned seed, size_t tail);
extern const char *const node_label[NODES];
bool step(bool verbose, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool node_create(struct fid_domain *domain, struct fi_info *info,
		 struct node *n, bool v, const char *label);
bool node_enable(struct fid_av *av, struct node *n, uint64_t tx_flags, bool v,
		 const char *label);
void node_close(struct node *n, bool v, const char *label);
bool fixture_open(struct fixture *fx, const struct fixture_opts *o);
void fixture_close(struct fixture *fx, bool v);
ssize_t cq_wait(struct fixture *fx, struct fid_cq *cq,
		struct fi_cq_tagged_entry *e, fi_addr_t *src);
const char *wait_str(ssize_t ret, struct fid_cq *cq, char *buf, size_t len);
bool expect_comp(struct fixture *fx, struct fid_cq *cq, void *ctx,
		 uint64_t flags, struct fi_cq_tagged_entry *e, fi_addr_t *src,
		 const char *name);
bool expect_err_no_data(struct fixture *fx, struct fid_cq *cq, void *ctx, int err,
			struct fi_cq_err_entry *out, const char *name);
bool expect_err(struct fixture *fx, struct fid_cq *cq, void *ctx, int err,
		struct fi_cq_err_entry *out, void *data, size_t data_size,
		const char *name);
bool expect_empty(struct fid_cq *cq, const char *name);
bool expect_comp_set(struct fixture *fx, struct fid_cq *cq, void *const *ctxs,
		     size_t n, const char *name);
void abandon_recv(struct fixture *fx, struct node *n, void *ctx);
ssize_t post_recv(struct fid_ep *ep, void *buf, size_t len, fi_addr_t src,
		  bool tagged, uint64_t tag, uint64_t ignore, void *ctx);
size_t addr_size(const struct fi_info *info);
void set_port(void *addr, uint16_t port);
uint16_t get_port(const void *addr);

/* send.c */
ssize_t post_sendmsg(struct fid_ep *ep, const void *buf, size_t len, void *desc,
		     fi_addr_t dest, uint64_t tag, uint64_t data, void *ctx,
		     uint64_t flags, bool tagged);
ssize_t op_sendv(struct fid_ep *ep, const void *buf, size_t len, void *desc,
		 fi_addr_t dest, uint64_t tag, uint64_t data, void *ctx);
const struct send_op *find_op(const char *name);
struct route fx_route(struct fixture *fx, int from, int to);
bool post_marker(struct route *r, struct marker *m, const char *prefix);
bool transfer(struct fixture *fx, struct route *r, const struct xfer *x,
	      const char *prefix);
bool send_between(struct fixture *fx, int from, int to, size_t len,
		  const char *prefix);
void test_send_calls(struct fixture *fx);

/* wait.c */
void test_counters(struct fixture *fx);
void test_sread(struct fixture *fx);
void test_wait_fd(struct fixture *fx);
void test_wait_set(struct fixture *fx);
void test_poll_set(struct fixture *fx);
void test_auto_progress(struct fixture *fx);

/* domain.c */
void test_objects(struct fixture *fx);
void test_close_order(struct fixture *fx);
void test_unsupported(struct fixture *fx);
void test_eq(struct fixture *fx);
void test_mr(struct fixture *fx);

/* ep.c */
void test_getname(struct fixture *fx);
void test_setname(struct fixture *fx);
void test_enable_errors(struct fixture *fx);

/* av.c */
void test_av(struct fixture *fx);
void test_av_remove_after_inject(struct fixture *fx);
void test_second_domain(struct fixture *fx);
void test_source_err(struct fixture *fx);

/* msg.c */
void test_self(struct fixture *fx);
void test_scatter(struct fixture *fx);
void test_zero_bytes(struct fixture *fx);
void test_zero_iov(struct fixture *fx);
void test_size_limits(struct fixture *fx);
void test_iov_limit(struct fixture *fx);
void test_bad_dest(struct fixture *fx);
void test_completion_levels(struct fixture *fx);

/* tagged.c */
void test_tag_ignore(struct fixture *fx);
void test_directed(struct fixture *fx);
void test_unexpected(struct fixture *fx);
void test_posted_order(struct fixture *fx);
void test_truncation(struct fixture *fx);
void test_cancel(struct fixture *fx);
void test_selective(struct fixture *fx);

/* peek.c */
ssize_t search(struct node *n, void *buf, size_t len, uint64_t tag, void *ctx,
	       uint64_t flags);
void expect_found(struct fixture *fx, struct node *n, void *ctx, uint64_t tag,
		  size_t len, uint64_t data, const char *name);
void test_peek_claim(struct fixture *fx);

/* multi_recv.c */
void test_multi_recv(struct fixture *fx);

/* sizes.c */
void test_sizes(struct fixture *fx);

/* peer.c */
void test_peer_ops(struct fixture *fx);
void test_pending_queue(struct fixture *fx);

/* rma.c */
void test_rma(struct fixture *fx);

/* atomic.c */
void test_atomics(struct fixture *fx);

/* dgram.c */
void test_dgram_info(struct fixture *fx);
void test_dgram_msg(struct fixture *fx);
void test_dgram_held(struct fixture *fx);
void test_dgram_truncation(struct fixture *fx);
void test_dgram_limits(struct fixture *fx);
void test_dgram_wire(struct fixture *fx);
void test_dgram_loss(struct fixture *fx);
void test_dgram_flood(struct fixture *fx);
void test_dgram_to_rdm(struct fixture *fx);
void test_dgram_selective(struct fixture *fx);

/* cm.c */
void test_cm_accept(struct fixture *fx);
void test_cm_reject(struct fixture *fx);
void test_cm_abandon(struct fixture *fx);
void test_cm_nobody(struct fixture *fx);
/* FI_RDMX_CONNECT_MS of the listener that never answers (a child process). */
#define CM_DEADLINE_MS	400
#define API_STR_(x)	#x
#define API_STR(x)	API_STR_(x)
void test_cm_deadline(struct fixture *fx);
void test_cm_backlog(struct fixture *fx);
void test_cm_cycles(struct fixture *fx);
void test_cm_acceptor_names(struct fixture *fx);
void test_cm_pep_ipv6(struct fixture *fx);
void test_cm_forged_request(struct fixture *fx);
void test_cm_handle(struct fixture *fx);

/* ping.c */
void test_ping_threads(struct fixture *fx);
void test_ping_domain(struct fixture *fx);

#endif /* RDMX_API_TEST_H */
