/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_stream: what its files share (main.c says what the program does):
 * limits, tags, the control message, the options, an operation, a peer
 * and the whole test's state, and the functions one file calls in another.
 */
#ifndef RDMX_STREAM_H
#define RDMX_STREAM_H

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_ext_rdmx.h>

#include "ft_common.h"
#include "ft_fabric.h"

#define ST_NAME			"rdmx_stream"
#define ST_FI_VERSION		FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)
#define ST_DEFAULT_PORT		"47620"
#define ST_DEFAULT_COUNT	10000
#define ST_DEFAULT_TIMEOUT	60
#define ST_DEFAULT_TX_WINDOW	64	/* sends in flight per receiver */
#define ST_DEFAULT_RX_WINDOW	256	/* data receives kept posted */
#define ST_DEFAULT_LINGER_MS	250
#define ST_COUNT_MAX		100000000ULL	/* bounds the receiver's bitmap */
#define ST_SIZE_CAP		65536	/* default largest message of any size mix */
#define ST_PEERS_MAX		16
#define ST_ADDR_MAX		256
#define ST_CQ_BATCH		16
/* The completion flags checked: the kind of operation. */
#define ST_CQ_FLAGS		(FI_SEND | FI_RECV | FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC)
#define ST_ALIGN		64
#define ST_REPORTS		10	/* receiver progress lines per sender */

/* Tags: bit 63 marks control messages; data carries id << 40 | index. */
#define ST_TAG_CTRL		(1ULL << 63)
#define ST_TAG_ID_SHIFT		40
#define ST_TAG_MSG_MASK		((1ULL << ST_TAG_ID_SHIFT) - 1)
#define ST_TAG_DATA_IGNORE	(ST_TAG_CTRL - 1)	/* any data tag */
#define ST_TAG_INDEX_IGNORE	0xffffffffULL		/* any peer index */

#define ST_CTRL_MAGIC		0x52545358u	/* "XSTR" */
#define ST_CTRL_VERSION		1u

enum st_ctrl_type {
	ST_CTRL_HELLO = 1,	/* sender → receiver: stream parameters, address */
	ST_CTRL_ACCEPT,		/* receiver → sender: id and agreed max_msg_size */
	ST_CTRL_DONE,		/* receiver → sender: everything arrived */
	ST_CTRL_TYPES,
};

enum st_completion {
	ST_COMPLETION_DELIVERY,	/* tx op_flags FI_DELIVERY_COMPLETE */
	ST_COMPLETION_INJECT,	/* tx op_flags FI_INJECT_COMPLETE */
	ST_COMPLETION_CNT,
};

/* The completion level of control sends (--ctrl-completion). */
enum st_ctrl_level {
	ST_CTRL_LEVEL_DELIVERY,	/* FI_DELIVERY_COMPLETE */
	ST_CTRL_LEVEL_DEFAULT,	/* no flag: the provider's default */
	ST_CTRL_LEVEL_TRANSMIT,	/* FI_TRANSMIT_COMPLETE */
	ST_CTRL_LEVELS,
};

enum st_sizes {
	ST_SIZES_MIXED,		/* 0..max, mostly small, the edges included */
	ST_SIZES_SMALL,		/* 0..64 bytes */
	ST_SIZES_MAX,		/* every message max_msg_size */
	ST_SIZES_ZERO,		/* every message 0 bytes */
	ST_SIZES_CNT,
};

/* A control message. Both processes run on hosts of one byte order. */
struct st_ctrl {
	uint32_t	magic;
	uint32_t	version;
	uint32_t	type;		/* enum st_ctrl_type */
	uint32_t	index;		/* the receiver's position in -p */
	uint32_t	id;		/* ACCEPT: id in the sender's data tags */
	uint32_t	sizes;		/* enum st_sizes */
	uint32_t	addrlen;
	uint32_t	reserved;
	uint64_t	count;		/* HELLO: to send; DONE: received */
	uint64_t	seed;
	uint64_t	max_msg_size;	/* HELLO: the sender's; ACCEPT: agreed */
	uint64_t	bytes;		/* DONE: payload bytes received */
	uint8_t		addr[ST_ADDR_MAX];
};

struct st_opts {
	bool		receiver;
	const char	*bind_addr;
	const char	*ports[ST_PEERS_MAX];
	uint32_t	nports;
	const char	*host;
	uint32_t	senders;
	uint64_t	count;
	enum st_sizes	sizes;
	enum st_completion completion;
	enum st_ctrl_level ctrl_level;	/* control sends */
	uint32_t	window;		/* 0: the role's default */
	uint64_t	seed;
	uint64_t	hold_ms;
	uint64_t	linger_ms;
	uint64_t	rate;		/* sender: messages a second; 0: no pace */
	bool		expect_rnr;
	bool		expect_eagain;
	int		dead;		/* -1: no receiver is expected to die */
	int		timeout_s;
	bool		ordered;	/* receiver: check send-after-send order */
	bool		untagged;	/* data: fi_senddata / fi_recv */
	uint64_t	max_size;	/* largest message of any size mix */
};

enum st_op_kind {
	ST_OP_DATA_TX,
	ST_OP_DATA_RX,
	ST_OP_CTRL_TX,
	ST_OP_CTRL_RX,
	ST_OP_KINDS,
};

/* One operation; its fi_context is the op_context. */
struct st_op {
	struct fi_context		fctx;	/* first: op_context points here */
	enum st_op_kind			kind;
	uint32_t			peer;	/* index in st.peers (not DATA_RX) */
	bool				posted;	/* in the provider's hands */
	bool				done;	/* control: completion not yet used */
	uint8_t				*buf;
	size_t				len;	/* DATA_TX: the message's length */
	uint64_t			msg;	/* DATA_TX: the message's index;
						   DATA_RX: its posting order */
	uint64_t			filled;	/* DATA_TX: index + 1 of the payload in buf */
	uint64_t			post_ns;
	struct fi_cq_tagged_entry	entry;	/* CTRL_RX: its completion */
};

/* The other side of one stream: a receiver (sender role) or a sender. */
struct st_peer {
	fi_addr_t	addr;
	uint32_t	index;		/* the receiver's position in -p */
	uint32_t	id;		/* tag id of the stream's data */

	uint64_t	count;
	uint64_t	seed;
	enum st_sizes	sizes;
	size_t		max_msg_size;	/* agreed by both sides */
	uint64_t	total_bytes;	/* sender: payload bytes of the stream */

	uint64_t	next;		/* sender: next message to post */
	uint64_t	msgs;		/* completed sends / messages received */
	uint64_t	bytes;
	uint64_t	first_ns, last_ns;
	uint64_t	next_report;	/* receiver: messages at the next line */
	uint64_t	*seen;		/* receiver: bitmap by message index */

	struct st_op	*tx;		/* sender: the window of sends */
	uint32_t	*free_tx;	/* sender: stack of free window slots */
	uint32_t	nfree;
	uint32_t	outstanding;

	struct st_ctrl	*ctrl_out;	/* HELLO, or ACCEPT then DONE */
	struct st_ctrl	*accept_in;	/* sender: ACCEPT */
	struct st_ctrl	*done_in;	/* sender: DONE */
	struct st_op	ctrl_tx, accept_rx, done_rx;
	bool		done;		/* sender: DONE checked; receiver: sent */

	bool		dead;		/* sender: --dead K failed */
	uint64_t	errors;
	uint64_t	err_msg;	/* the earliest posted send that failed */
	uint64_t	err_post_ns, err_ns;
};

struct st {
	struct st_opts		opts;
	struct fi_info		*info;
	struct ft_rdm		rdm;
	struct fid_mr		*mr;
	void			*desc;
	uint8_t			*mem;
	size_t			mem_len, mem_used;
	size_t			max_msg_size;	/* this side's, capped */
	uint32_t		window;
	struct st_peer		peers[ST_PEERS_MAX];
	uint32_t		npeers;
	struct st_op		*rx;		/* receiver: the data window */
	bool			rx_window_up;	/* receiver: the window was posted */
	bool			rx_unposted;	/* receiver: some of it to repost */
	struct st_op		hello_rx;
	struct st_ctrl		*hello;
	uint64_t		eagain;		/* posts answered -FI_EAGAIN */
	uint64_t		rx_posted;	/* receiver: data receives posted */
	uint64_t		last_event_ns;	/* last completion or start */
	uint64_t		start_ns, end_ns;	/* sender: the stream */
	char			pass[256];	/* the PASS line, printed at exit */
};

/* opts.c */
extern const char *const st_completion_names[ST_COMPLETION_CNT];
extern const char *const st_sizes_names[ST_SIZES_CNT];
int st_parse_opts(int argc, char **argv, struct st_opts *o);

/* setup.c */
int st_open(struct st *st);
int st_close(struct st *st);

/* comp.c */
size_t st_min(size_t a, size_t b);
size_t st_msg_len(enum st_sizes sizes, uint64_t seed, uint64_t i, size_t max);
uint64_t st_msg_seed(uint64_t seed, uint64_t i, size_t len);
ssize_t st_repost_rx(struct st *st, struct st_op *op);
int st_progress(struct st *st);
int st_poll(struct st *st, const char *what);
uint64_t st_ctrl_tag(enum st_ctrl_type type, uint32_t index);
int st_ctrl_post(struct st *st, struct st_op *op, struct st_ctrl *buf,
		 fi_addr_t addr, uint64_t tag, uint64_t ignore);
void st_ctrl_init(struct st_ctrl *c, enum st_ctrl_type type, uint32_t index);
int st_ctrl_send(struct st *st, struct st_peer *p, enum st_ctrl_type type);
int st_ctrl_check(const struct st_op *op, const struct st_ctrl *c,
		  enum st_ctrl_type type);

/* receiver.c */
int st_receiver_run(struct st *st);
int st_receiver_report(struct st *st);

/* sender.c */
int st_sender_connect(struct st *st);
int st_sender_stream(struct st *st);
int st_sender_report(struct st *st);

/* stats.c */
double st_seconds(uint64_t from_ns, uint64_t to_ns);
double st_mbps(uint64_t bytes, double seconds);
bool st_stats(struct st *st, struct fi_rdmx_ep_stats *stats);

#endif /* RDMX_STREAM_H */
