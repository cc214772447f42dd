/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the device contract (see docs/DESIGN in shared/ and
 * prov/rdmx/src/README.md). A device moves datagrams of up to caps.mtu
 * bytes between raw queues: sends from a scatter list to an address
 * handle, receives into buffers posted earlier, and reports both through
 * a completion queue polled by the rdm layer. Delivery is unordered; a
 * device either is reliable (efa) or will be made so by swsrd.
 *
 * The rdm layer never asks which device it runs on, only what
 * rdmx_dev_caps says it can do.
 */
#ifndef RDMX_DEV_H
#define RDMX_DEV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <rdma/fi_errno.h>

/*
 * Completion statuses: name, FI_E* code handed to the application, text.
 * Device-specific statuses (errno, ibv_wc_status, EFA's own codes) are
 * translated into these inside the device, in one place. A peer that
 * went away (its queue gone, or silent) is UNREACH on every device, so
 * the same event gives the application the same code whatever the
 * device; ACCESS and NOTCONN are a peer that is there but refuses a
 * one-sided operation: the memory key or range is not one it exposes,
 * or it knows nothing of us.
 */
#define RDMX_DEV_STATUSES(X)						\
	X(OK,		0,			"success")		\
	X(RNR,		FI_ENORX,		"receiver not ready")	\
	X(UNREACH,	FI_EHOSTUNREACH,	"peer unreachable (udp: or a narrow " \
	  "path, see FI_RDMX_MTU)")					\
	X(MSGSIZE,	FI_EMSGSIZE,		"packet too large")	\
	X(FLUSHED,	FI_ECANCELED,		"flushed on close")	\
	X(ACCESS,	FI_EACCES,		"remote access refused") \
	X(NOTCONN,	FI_ENOTCONN,		"peer does not know us") \
	X(IO,		FI_EIO,			"device error")

enum rdmx_dev_status {
#define RDMX_DEV_STATUS_ENUM(name, code, text) RDMX_DEV_##name,
	RDMX_DEV_STATUSES(RDMX_DEV_STATUS_ENUM)
#undef RDMX_DEV_STATUS_ENUM
	RDMX_DEV_STATUS_MAX
};

/* The positive FI_E* code of a status (0 for OK). */
int rdmx_dev_status_errno(enum rdmx_dev_status status);

/* A short lowercase description of a status. */
const char *rdmx_dev_status_str(enum rdmx_dev_status status);

/* Capability flags. */
#define RDMX_DEV_CAP_RDMA_READ	(1ULL << 0)
#define RDMX_DEV_CAP_RDMA_WRITE	(1ULL << 1)
#define RDMX_DEV_CAP_RELIABLE	(1ULL << 2)
/*
 * It takes a packet of a peer's from another address of the peer's host
 * that carries the session's tag (udp: another port; ah_peer's
 * RDMX_DEV_PEER_PATHS on the sending side).
 */
#define RDMX_DEV_CAP_OTHER_PATHS	(1ULL << 3)

/*
 * How often a sleeping thread polls a device that has no descriptor to
 * wait on (wait_fd NULL): its completions are late by this much at most.
 */
#define RDMX_DEV_WAIT_TICK_NS	1000000ULL

/* The largest raw address of any device, in bytes. */
#define RDMX_DEV_ADDR_MAX	32
/* Domains fi_getinfo and fi_domain look through at most. */
#define RDMX_DOMAINS_MAX	16
/* The most scatter entries a send may carry. */
#define RDMX_DEV_SGE_MAX	8
/* The most segments one post_send_segs carries, and their header's bytes. */
#define RDMX_DEV_SEGS_MAX	32
#define RDMX_DEV_SEG_HDR_MAX	80

struct rdmx_dev_caps {
	size_t		mtu;		/* largest datagram, bytes */
	size_t		sq_size;	/* sends outstanding at most */
	size_t		rq_size;	/* receives posted at most */
	/*
	 * Bytes before every posted receive buffer that the device may fill
	 * with its own header, so that a datagram lands whole with one copy
	 * (udp: the swsrd header); the rdm layer leaves them free.
	 */
	size_t		rx_headroom;
	uint64_t	flags;		/* RDMX_DEV_CAP_* */
	/*
	 * RDMX_DEV_CAP_RDMA_READ that reaches only processes of this host
	 * (udp: CMA): a digest naming the host and pid namespace, never 0,
	 * which the handshake announces; the rdm layer then exposes memory
	 * to, and reads, only peers that announced the same. 0: reads reach
	 * any peer (efa) or none.
	 */
	uint64_t	read_host;
	/*
	 * With RDMX_DEV_CAP_RDMA_READ: the smallest message a read moves
	 * faster than sends do (shm: a read pins the sender's pages, a copy
	 * through the ring stays in cache); smaller ones go by sends. 0: any.
	 */
	size_t		read_min;
};

enum rdmx_dev_op {
	RDMX_DEV_OP_SEND,
	RDMX_DEV_OP_RECV,
	RDMX_DEV_OP_READ,
	/*
	 * The owner of src_ah's queue is gone (shm: its process exited), so
	 * what it received and never answered never will be; sends to it fail
	 * RDMX_DEV_UNREACH from now on. Once per handle, status
	 * RDMX_DEV_UNREACH, wr_id 0; only a device that can know it says it.
	 */
	RDMX_DEV_OP_GONE,
};

/*
 * What a peer's device does, for ah_peer. WIDE: it takes a wide window of
 * packets in flight (swsrd: RDMX_SRD_WINDOW_MAX rather than 64). PATHS:
 * it takes a packet of ours from any source address of our host that
 * carries the session's tag (swsrd: from every path, FI_RDMX_PATHS).
 */
#define RDMX_DEV_PEER_WIDE	(1u << 0)
#define RDMX_DEV_PEER_PATHS	(1u << 1)

/* Bytes of the key with which a peer reads memory a device exposes. */
#define RDMX_DEV_RKEY_LEN	48

/*
 * A peer of a read, as its handshake told of it: for read_expose the
 * peer the exposure is offered to, for post_read the peer that offered.
 * A device whose reads reach only this host (caps.read_host) binds an
 * exposure to it and checks a read against it; others ignore it.
 */
struct rdmx_dev_read_peer {
	uint64_t	host;		/* caps.read_host when the handshake showed
					   the peer on this host; else 0 */
	uint64_t	session;	/* a value of the session that both sides
					   compute alike (rdmx_hs_bind) */
	uint32_t	pid;		/* the peer's process, as it announced */
};

/*
 * Memory a device exposes to peers' post_read: filled by read_expose and
 * kept by the caller, unmoved, until read_revoke. wire is what a peer
 * needs (it travels to the peer); priv is the device's own; peer is the
 * caller's, set before read_expose.
 */
struct rdmx_dev_rkey {
	uint8_t				wire[RDMX_DEV_RKEY_LEN];
	uint64_t			priv[12];
	struct rdmx_dev_read_peer	peer;
};

struct rdmx_ah;

/*
 * A receive completion's packet may stay in the device's memory (data):
 * the posted buffer then holds its first RDMX_DEV_RX_PREFIX bytes, which
 * the device copied once (every header fits), and the caller copies the
 * rest only if it needs the packet whole.
 */
#define RDMX_DEV_RX_PREFIX	64

struct rdmx_dev_cqe {
	uint64_t		wr_id;
	enum rdmx_dev_op	op;
	enum rdmx_dev_status	status;
	/*
	 * Received bytes; a post_send_segs that failed: its payload bytes
	 * before the first of its packets that failed.
	 */
	uint32_t		len;
	struct rdmx_ah		*src_ah;	/* sender's handle, if one exists */
	const void		*src_addr;	/* sender's raw address, or NULL */
	/*
	 * Receives: NULL, the packet is whole in the posted buffer; else all
	 * len bytes of it, valid until the device's next poll_cq or
	 * wait_arm, and the posted buffer holds the first
	 * RDMX_MIN(len, RDMX_DEV_RX_PREFIX). The device's memory may be
	 * written by the sender meanwhile: read what must stay consistent
	 * from the posted buffer.
	 */
	const uint8_t		*data;
};

/* An address handle: the device's reference to one remote queue. */
struct rdmx_ah {
	void		*context;	/* the rdm layer's peer, or NULL */
};

struct rdmx_dev;

/* One place a device can be opened: for udp, an interface address. */
struct rdmx_dev_domain {
	char		name[32];			/* domain name */
	uint8_t		addr[RDMX_DEV_ADDR_MAX];	/* canonical source */
	size_t		mtu;				/* datagram bytes */
};

/* What the rdm layer asks of a device when it opens one. */
struct rdmx_dev_attr {
	/*
	 * Raw address to bind, or NULL. A device whose addresses can name
	 * "any address of this host" (udp's wildcard) binds them all, and
	 * its name (getname) is the domain's address with the bound queue.
	 */
	const void			*src_addr;
	const struct rdmx_dev_domain	*domain;	/* where; NULL: src_addr's */
	size_t				sq_size;
	size_t				rq_size;
	/*
	 * For a datagram endpoint (FI_EP_DGRAM): no reliability added. A
	 * device that makes its datagrams reliable in software (udp, verbs:
	 * swsrd) sends each as it comes, completes it once handed to the
	 * wire, and drops what arrives with no buffer posted; receive
	 * completions have src_addr and a src_ah only if one exists. A
	 * device reliable by itself (efa) ignores it.
	 */
	bool				unreliable;
};

/* Flags for post_send. */
#define RDMX_DEV_SEND_MORE	(1U << 0)	/* more sends follow: batch */
#define RDMX_DEV_SEND_AWAITED	(1U << 1)	/* the caller waits for this
						   completion: a device that
						   delays acks must not */

struct rdmx_dev_ops {
	const char	*name;
	size_t		addr_size;	/* canonical raw address bytes */

	/* The fi_info addr_format of a canonical address. */
	uint32_t	(*addr_format)(const void *canon);

	/*
	 * Checks an application-supplied address of len bytes and writes its
	 * canonical raw form (addr_size bytes) to canon; returns 0 or
	 * -FI_EINVAL. Needs no open device: AVs use it.
	 */
	int	(*addr_canon)(const void *addr, size_t len, void *canon);
	/* Bytes of the application form of a canonical address. */
	size_t	(*addr_len)(const void *canon);
	/* Printable form ("fi_sockaddr_in://1.2.3.4:5"), NUL-terminated. */
	void	(*addr_str)(const void *canon, char *buf, size_t len);

	/*
	 * Resolves a node/service pair (either may be NULL) to a canonical
	 * address; 0 or -FI_ENODATA.
	 */
	int	(*resolve)(const char *node, const char *service, void *canon);
	/*
	 * Lists where an endpoint could be opened, best first: the domain
	 * owning src when src is given, else the one that routes to dest when
	 * dest is given, else every usable one. Returns how many it wrote
	 * (at most max), 0 when none fits, or a negative -FI_E*.
	 */
	int	(*domains)(const void *src, const void *dest,
			   struct rdmx_dev_domain *out, size_t max);

	int	(*open)(const struct rdmx_dev_attr *attr, struct rdmx_dev **dev_p);
	/*
	 * Frees the device. A device that delays acknowledgements (swsrd)
	 * sends those it owes first, so that its peers do not resend what
	 * arrived until they give it up.
	 */
	void	(*close)(struct rdmx_dev *dev);
	/* Writes the canonical raw address of the open device to canon. */
	void	(*getname)(struct rdmx_dev *dev, void *canon);

	/*
	 * Returns a handle for a canonical raw address; the same address
	 * yields the same handle, reference counted. 0 or -FI_E*.
	 */
	int	(*ah_create)(struct rdmx_dev *dev, const void *canon,
			     struct rdmx_ah **ah_p);
	void	(*ah_destroy)(struct rdmx_dev *dev, struct rdmx_ah *ah);
	/*
	 * Optional (NULL: the device cannot). The rdm layer ended its
	 * session with the peer at ah (it disconnected or restarted): every
	 * send still outstanding to it completes with RDMX_DEV_FLUSHED at
	 * later polls, and nothing posted before this call reaches the peer
	 * after it.
	 */
	void	(*ah_reset)(struct rdmx_dev *dev, struct rdmx_ah *ah);
	/*
	 * Optional (NULL: the device has nothing to adapt). What the peer's
	 * handshake said its device of this kind does (RDMX_DEV_PEER_*),
	 * which a peer of an older version does not.
	 */
	void	(*ah_peer)(struct rdmx_dev *dev, struct rdmx_ah *ah, unsigned flags);
	/*
	 * Optional (NULL: caps.mtu for every peer). The largest datagram the
	 * path to ah carries, at most caps.mtu: a device whose receive side
	 * takes more than one link carries (udp: loopback's 64 KiB beside a
	 * NIC's 1,500 bytes) tells here what suits one peer. May make system
	 * calls: the rdm layer asks once per session.
	 */
	size_t	(*ah_mtu)(struct rdmx_dev *dev, struct rdmx_ah *ah);
	/*
	 * Optional (NULL: never), for a device whose reads reach only this
	 * host (caps.read_host). Whether the peer at ah is on this host by
	 * where it receives: an address of this host's own (udp: of this
	 * network namespace). The device's session tags prove that the peer
	 * receives there, so a host claim in its handshake that this does
	 * not back is not believed (docs/protocol.md, long-read).
	 */
	bool	(*ah_local)(struct rdmx_dev *dev, struct rdmx_ah *ah);

	/*
	 * Queues a datagram gathered from iov to ah. The iov memory must stay
	 * untouched until the send completes. Returns 0 or -FI_EAGAIN when
	 * the send queue is full.
	 */
	int	(*post_send)(struct rdmx_dev *dev, struct rdmx_ah *ah,
			     const struct iovec *iov, size_t iov_cnt,
			     uint64_t wr_id, unsigned flags);
	/*
	 * Optional (NULL: the caller posts each packet). Queues cnt packets
	 * to ah, each the header iov[0] then seg_len bytes of the payload
	 * iov[1..iov_cnt) in order (the last packet the rest): cnt is the
	 * payload's length divided by seg_len, rounded up, at most
	 * rdmx_dev_segs_max, and the header at most RDMX_DEV_SEG_HDR_MAX
	 * bytes. Each packet's header is iov[0]'s with the little-endian
	 * 64-bit value at byte off_at (a multiple of 8) raised by the payload
	 * bytes before the packet. One completion (wr_id) when all are done:
	 * RDMX_DEV_OK, else a failure's status, RDMX_DEV_RNR only if every
	 * failure was one, with len (struct rdmx_dev_cqe). The iov memory
	 * must stay untouched until then. Returns 0, -FI_EAGAIN when the
	 * send queue lacks room for all, or -FI_EINVAL.
	 */
	int	(*post_send_segs)(struct rdmx_dev *dev, struct rdmx_ah *ah,
				  const struct iovec *iov, size_t iov_cnt, size_t seg_len,
				  size_t off_at, uint64_t wr_id, unsigned flags);
	/*
	 * Optional (NULL: not needed). Every receive buffer the rdm layer
	 * will post lies inside [base, base + len), which stays allocated
	 * until close: a device that must register memory with its hardware
	 * does it here, once, before the first post_recv. 0 or -FI_E*.
	 */
	int	(*rx_memory)(struct rdmx_dev *dev, void *base, size_t len);
	/* Posts a receive buffer; 0 or -FI_EAGAIN when the queue is full. */
	int	(*post_recv)(struct rdmx_dev *dev, void *buf, size_t len,
			     uint64_t wr_id);
	/*
	 * Makes progress and returns up to max completions (0 when none).
	 * A receive completion's src_addr and data stay valid until the next
	 * poll (data also until the next wait_arm).
	 */
	int	(*poll_cq)(struct rdmx_dev *dev, struct rdmx_dev_cqe *cqe,
			   int max);

	/*
	 * Optional, both or neither (NULL: a thread that sleeps polls the
	 * device every RDMX_DEV_WAIT_TICK_NS). wait_fd: a descriptor that
	 * turns readable when poll_cq may have something new, the same for
	 * the device's life; -1 when this device has none after all (the
	 * caller polls it every tick, and still calls wait_arm, which then
	 * asks for nothing but may still say -FI_EAGAIN or lower *due_p).
	 * wait_arm: called after a poll_cq, before the
	 * caller sleeps on that descriptor: -FI_EAGAIN when poll_cq has
	 * something already (poll again, do not sleep); else 0, with *due_p
	 * lowered to the clock (rdmx_clock_ns) at which poll_cq must run
	 * even if nothing arrives (its timers). The next poll_cq ends what
	 * wait_arm began.
	 */
	int	(*wait_fd)(struct rdmx_dev *dev);
	int	(*wait_arm)(struct rdmx_dev *dev, uint64_t *due_p);

	/*
	 * RDMX_DEV_CAP_RDMA_READ only. Exposes iov (at most 4 entries) to
	 * peers' reads until read_revoke; rkey->wire is what they need. 0 or
	 * -FI_E* when this memory cannot be exposed (with caps.read_host: to
	 * rkey->peer, which must be on this host). Reads of anything else,
	 * or after the revoke, or (with caps.read_host) by another reader
	 * than rkey->peer in that session, fail.
	 */
	int	(*read_expose)(struct rdmx_dev *dev, const struct iovec *iov,
			       size_t cnt, struct rdmx_dev_rkey *rkey);
	void	(*read_revoke)(struct rdmx_dev *dev, struct rdmx_dev_rkey *rkey);
	/*
	 * RDMX_DEV_CAP_RDMA_READ only. Reads remote, memory of the peer at
	 * ah exposed with key (a struct rdmx_dev_rkey: wire, first, the
	 * exposer's key bytes; peer, the exposer as the handshake told of
	 * it), into local (of the same total length); a
	 * completion with op RDMX_DEV_OP_READ and wr_id says when the bytes
	 * are there. 0, -FI_EAGAIN when the queue is full, or -FI_EOPNOTSUPP
	 * when this peer cannot be read (the caller does without).
	 */
	int	(*post_read)(struct rdmx_dev *dev, struct rdmx_ah *ah,
			     const struct iovec *local, size_t local_cnt,
			     const struct iovec *remote, size_t remote_cnt,
			     const void *key, uint64_t wr_id);
};

/* What a device counts; a device leaves at zero what it cannot see. */
struct rdmx_dev_stats {
	uint64_t	rx_malformed;	/* datagrams failing the device's checks */
	uint64_t	rx_dropped;	/* other datagrams dropped (too many peers) */
	uint64_t	retransmits;	/* timeouts that resent a packet */
	uint64_t	fast_retransmits; /* holes resent on selective acks */
	uint64_t	rnr_sent;	/* refusals of packets with no buffer */
	uint64_t	rnr_received;	/* refusals of our packets */
	uint64_t	duplicates;	/* packets received twice */
	uint64_t	stale;		/* packets of an old session or window */
	uint64_t	rx_unauth;	/* packets without our session tag */
	uint64_t	challenges;	/* CHALLENGE packets sent */
	uint64_t	acks_sent;	/* acknowledgement-only packets */
	uint64_t	unreachable;	/* peers declared unreachable */
	uint64_t	tx_gso;		/* datagrams sent in segmentation runs */
	uint64_t	tx_segs;	/* packets posted by post_send_segs */
	uint64_t	rx_gro;		/* datagrams received in merged reads */
	uint64_t	path_probes;	/* runs sent by a bad path to measure it */
	uint64_t	rx_other_path;	/* datagrams of a peer from another of
					   its addresses (its paths) */
	uint64_t	tx_calls;	/* system calls that sent datagrams */
	uint64_t	rx_calls;	/* system calls that read datagrams */
	uint64_t	rx_empty;	/* of those, the ones that found none */
};

/*
 * What the layer above may tell a device that acknowledges in software
 * (udp, verbs): before it takes a packet with a payload from src (len
 * bytes at pkt, in a posted buffer), it asks fn; false refuses the packet
 * as if no buffer were posted (RNR), before it is acknowledged, so the
 * sender backs off and sends it again. The rdm layer refuses what it
 * could only keep past its receive budget. A device that acknowledges in
 * hardware (efa) cannot ask.
 */
struct rdmx_dev_admit {
	bool	(*fn)(void *ctx, struct rdmx_ah *src, const void *pkt, size_t len);
	void	*ctx;
};

struct rdmx_dev {
	const struct rdmx_dev_ops	*ops;
	struct rdmx_dev_caps		caps;
	struct rdmx_dev_stats		stats;
	struct rdmx_dev_admit		admit;	/* set by the layer above */
};

/*
 * The packets one post may carry on dev: 1 without post_send_segs, else
 * RDMX_DEV_SEGS_MAX or a quarter of the send queue, whichever is less.
 */
static inline size_t rdmx_dev_segs_max(const struct rdmx_dev *dev)
{
	size_t quarter = dev->caps.sq_size / 4;

	if (!dev->ops->post_send_segs || !quarter)
		return 1;
	return quarter < RDMX_DEV_SEGS_MAX ? quarter : RDMX_DEV_SEGS_MAX;
}

extern const struct rdmx_dev_ops rdmx_dev_udp_ops;
extern const struct rdmx_dev_ops rdmx_dev_efa_ops;
extern const struct rdmx_dev_ops rdmx_dev_verbs_ops;

/* The device built in under this name ("efa", "verbs", "udp"), or NULL. */
const struct rdmx_dev_ops *rdmx_dev_by_name(const char *name);

/*
 * The device FI_RDMX_DEVICE asks for: auto picks the first usable of efa,
 * verbs and udp. 0, -FI_ENODATA when auto finds none, or -FI_ENODEV
 * (logged) when the device asked for is not built in or has no usable
 * device here.
 */
int rdmx_dev_select(const struct rdmx_dev_ops **ops_p);

#endif /* RDMX_DEV_H */
