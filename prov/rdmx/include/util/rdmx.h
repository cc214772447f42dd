/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: root header. Everything in the provider includes this first: the
 * provider descriptor, logging, run-time parameters and small helpers.
 */
#ifndef RDMX_H
#define RDMX_H

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_prov.h>
#include <rdma/providers/fi_log.h>

#define RDMX_PROV_NAME		"rdmx"
#define RDMX_PROV_VERSION	FI_VERSION(0, 1)
#define RDMX_API_VERSION	FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)

/* Protocol spoken on the wire; bumped only with negotiated feature bits. */
#define RDMX_WIRE_VERSION	1

/* The value reported in ep_attr->protocol: a provider-specific protocol. */
#define RDMX_PROTO		(FI_PROV_SPECIFIC | 0x52444d)

#define RDMX_EXPORT		__attribute__((visibility("default")))

/*
 * The rare path of a hot function, kept out of it: the compiler saves
 * the registers a function uses on its entry, whichever path then runs,
 * so a slow path inlined into a function makes each of its calls pay.
 */
#define RDMX_COLD		__attribute__((cold, noinline))
/* The same for a path that is not rare but not the common one either. */
#define RDMX_NOINLINE		__attribute__((noinline))

extern struct fi_provider rdmx_prov;

#define RDMX_WARN(subsys, ...)	FI_WARN(&rdmx_prov, subsys, __VA_ARGS__)
#define RDMX_INFO(subsys, ...)	FI_INFO(&rdmx_prov, subsys, __VA_ARGS__)
/*
 * What a peer or a forger sends can happen at line rate: a warning about
 * it is logged at most once per RDMX_LOG_GAP_NS at each call site, and the
 * next one says how many were left out.
 */
#define RDMX_LOG_GAP_NS		1000000000ULL

struct rdmx_log_limit {
	uint64_t	next_ns;	/* the next line may go at or after */
	uint64_t	skipped;	/* left out since the last line */
};

/* Whether a line may go now; *skipped: how many were left out before it. */
bool rdmx_log_limit_pass(struct rdmx_log_limit *limit, uint64_t *skipped);

#define RDMX_WARN_WIRE(subsys, ...)					\
	do {								\
		static struct rdmx_log_limit rdmx_limit_;		\
		uint64_t rdmx_skipped_;					\
									\
		if (!rdmx_log_limit_pass(&rdmx_limit_, &rdmx_skipped_))	\
			break;						\
		if (rdmx_skipped_)					\
			RDMX_WARN(subsys, "%lu more like the next left out\n", \
				  (unsigned long) rdmx_skipped_);	\
		RDMX_WARN(subsys, __VA_ARGS__);				\
	} while (0)

#ifdef RDMX_DEBUG
#define RDMX_DBG(subsys, ...)	FI_LOG(&rdmx_prov, FI_LOG_DEBUG, subsys, __VA_ARGS__)
#else
#define RDMX_DBG(subsys, ...)	do { } while (0)
#endif

/* Run-time parameters (FI_RDMX_*), read once at provider load. */
struct rdmx_params {
	char	*device;	/* FI_RDMX_DEVICE: auto, efa, verbs or udp */
	char	*iface;		/* FI_RDMX_IFACE: only this interface */
	size_t	tx_size;	/* FI_RDMX_TX_SIZE: send queue depth */
	size_t	rx_size;	/* FI_RDMX_RX_SIZE: receive queue depth */
	size_t	inject_size;	/* FI_RDMX_INJECT_SIZE */
	size_t	mtu;		/* FI_RDMX_MTU: cap on the device packet size */
	size_t	rx_bufs;	/* FI_RDMX_RX_BUFS: device buffers posted */
	size_t	sockbuf;	/* FI_RDMX_SOCKBUF: UDP socket buffer bytes */
	size_t	cq_size;	/* FI_RDMX_CQ_SIZE: default CQ depth */
	size_t	unexp_max;	/* FI_RDMX_UNEXP_MAX: unexpected bytes copied */
	size_t	rx_budget;	/* FI_RDMX_RX_BUDGET: bytes peers make us hold */
	size_t	medium_max;	/* FI_RDMX_MEDIUM_MAX: largest medium message */
	size_t	cts_window;	/* FI_RDMX_CTS_WINDOW: long-message credit */
	size_t	long_read;	/* FI_RDMX_LONG_READ: receivers may read */
	size_t	shm;		/* FI_RDMX_SHM: same-host peers by shm */
	size_t	mr_prov_key;	/* FI_RDMX_MR_PROV_KEY: random keys */
	size_t	shm_read_min;	/* FI_RDMX_SHM_READ_MIN: 0, never read by shm */
	size_t	hs_retry_ms;	/* FI_RDMX_HS_RETRY_MS: handshake resend */
	size_t	ping_interval_ms; /* FI_RDMX_PING_INTERVAL (ms) */
	size_t	ping_timeout_ms; /* FI_RDMX_PING_TIMEOUT (ms) */
	size_t	ping_retries;	/* FI_RDMX_PING_RETRIES */
	size_t	pending_max;	/* FI_RDMX_PENDING_MAX: sends a stub keeps */
	size_t	tx_batch;	/* FI_RDMX_TX_BATCH: sends in a row before
				   they go to the device in batches */
	size_t	rto_min_us;	/* FI_RDMX_RTO_MIN_US: least RTO margin over SRTT */
	size_t	unreach_ms;	/* FI_RDMX_UNREACH_MS: silence before failure */
	size_t	connect_ms;	/* FI_RDMX_CONNECT_MS: fi_connect's time-out */
	size_t	rnr_retry;	/* FI_RDMX_RNR_RETRY: device RNR retries */
	size_t	rnr_backoff_max_us; /* FI_RDMX_RNR_BACKOFF_MAX_US */
	size_t	wait_spin_us;	/* FI_RDMX_WAIT_SPIN_US: poll before sleeping */
	size_t	udp_gso;	/* FI_RDMX_UDP_GSO: segmentation offload */
	size_t	udp_gro;	/* FI_RDMX_UDP_GRO: receive offload */
	size_t	paths;		/* FI_RDMX_PATHS: source ports per endpoint */
	size_t	udp_drop;	/* FI_RDMX_UDP_DROP: test only, percent */
	size_t	udp_dup;	/* FI_RDMX_UDP_DUP: test only, percent */
	size_t	udp_reorder;	/* FI_RDMX_UDP_REORDER: test only, percent */
	size_t	udp_seed;	/* FI_RDMX_UDP_SEED: fault injection seed */
};

extern struct rdmx_params g_rdmx_params;

/* Defines the FI_RDMX_* parameters and reads their values. */
void rdmx_params_initialize(void);

/* Reference counts of parent objects, changed from any thread. */
static inline void rdmx_ref_get(int *refs)
{
	__atomic_add_fetch(refs, 1, __ATOMIC_RELAXED);
}

static inline void rdmx_ref_put(int *refs)
{
	__atomic_sub_fetch(refs, 1, __ATOMIC_RELAXED);
}

static inline int rdmx_ref_read(int *refs)
{
	return __atomic_load_n(refs, __ATOMIC_RELAXED);
}

#define rdmx_container_of(ptr, type, field) \
	((type *) ((char *) (ptr) - offsetof(type, field)))

#define RDMX_MIN(a, b)	((a) < (b) ? (a) : (b))
#define RDMX_MAX(a, b)	((a) > (b) ? (a) : (b))

#define RDMX_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
/* x rounded up to a multiple of 64 (a cache line). */
#define RDMX_ALIGN64(x)		(((x) + 63) & ~(size_t) 63)

/* Scrambles the bits of x (splitmix64's finalizer): hashes, tokens. */
static inline uint64_t rdmx_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Raises the little-endian 64-bit value at field (any alignment) by n. */
static inline void rdmx_le64_add(void *field, uint64_t n)
{
	uint64_t v;

	memcpy(&v, field, sizeof(v));
	v = htole64(le64toh(v) + n);
	memcpy(field, &v, sizeof(v));
}

/* Total length of an iovec array. */
static inline size_t rdmx_iov_len(const struct iovec *iov, size_t count)
{
	size_t len = 0;

	for (size_t i = 0; i < count; i++)
		len += iov[i].iov_len;
	return len;
}

/*
 * Copies up to len bytes from buf into the iovec array; returns the number
 * of bytes copied.
 */
size_t rdmx_copy_to_iov(const struct iovec *iov, size_t count,
			const void *buf, size_t len);

/* Copies the whole iovec array into buf; returns the bytes copied. */
size_t rdmx_copy_from_iov(void *buf, const struct iovec *iov, size_t count);

/*
 * Copies len bytes from buf into the iovec array starting off bytes into
 * it; the caller keeps off + len within the array.
 */
void rdmx_copy_to_iov_at(const struct iovec *iov, size_t count, size_t off,
			 const void *buf, size_t len);

/*
 * Copies len bytes of the iovec array starting off bytes into it to buf;
 * the caller keeps off + len within the array.
 */
void rdmx_copy_from_iov_at(void *buf, const struct iovec *iov, size_t count,
			   size_t off, size_t len);

/*
 * Writes to dst the entries covering bytes [off, off + len) of the
 * iovec array src (count entries, so dst needs at most count); returns
 * how many it wrote.
 */
size_t rdmx_iov_slice(struct iovec *dst, const struct iovec *src, size_t count,
		      size_t off, size_t len);

/*
 * The out-parameter contract of fi_getname and fi_getpeer: copies what
 * fits of the len bytes at src into dst (*dst_len bytes; dst may be NULL
 * when that is 0), sets *dst_len to len; 0, or -FI_ETOOSMALL when it did
 * not all fit.
 */
int rdmx_copy_out(const void *src, size_t len, void *dst, size_t *dst_len);

/*
 * fi_getopt's for an option of type size_t: val into optval; 0, or
 * -FI_ETOOSMALL (with *optlen the size wanted) when there is no room.
 */
int rdmx_opt_size_out(size_t val, void *optval, size_t *optlen);

/*
 * 64 random bits for identities that must differ between processes and
 * opens (incarnations, connection ids): the kernel's, or, before it has
 * entropy (early boot), time, pid and a count mixed.
 */
uint64_t rdmx_random64(void);

#endif /* RDMX_H */
