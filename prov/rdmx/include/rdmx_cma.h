/*
 * rdmx: reads from the memory of another process on the same host with
 * process_vm_readv (cross memory attach, CMA): how the udp device offers
 * RDMX_DEV_CAP_RDMA_READ to peers that turn out to be local.
 *
 * An exposure is a record in the exposing process (inside the caller's
 * struct rdmx_dev_rkey): a random token and the ranges exposed. Its key
 * names the host (boot id), the pid namespace, the pid, the record's
 * address and the token. A reader reads only when host and pid
 * namespace are its own, the record it finds at that address in that
 * process holds the token, and every range it wants lies inside an
 * exposed one; it checks the token again after copying, so a revoke
 * during the copy fails the read. Anything else is refused
 * (-FI_EOPNOTSUPP: the caller does without) or fails (RDMX_DEV_IO),
 * never the reader. A key is good for one exposure only: a revoked
 * record holds no token.
 *
 * Reads are done when posted: their completions wait in a small queue
 * until the device's next poll.
 */
#ifndef RDMX_CMA_H
#define RDMX_CMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "rdmx_dev.h"

/* Read completions waiting for a poll, at most. */
#define RDMX_CMA_DONE_MAX	64
/* Ranges one exposure covers, at most. */
#define RDMX_CMA_SEGS		4

struct rdmx_cma {
	uint64_t		secret;		/* random: tokens derive from it */
	uint64_t		count;		/* exposures so far */
	uint8_t			host[16];	/* boot id */
	uint64_t		pidns;		/* pid namespace inode */
	uint32_t		pid;
	struct rdmx_dev_cqe	done[RDMX_CMA_DONE_MAX];
	size_t			ndone;
};

/* Prepares cma for this process; false when it cannot read (no CMA). */
bool rdmx_cma_init(struct rdmx_cma *cma);

/* Exposes iov (cnt <= RDMX_CMA_SEGS) until rdmx_cma_revoke; 0 or -FI_EINVAL. */
int rdmx_cma_expose(struct rdmx_cma *cma, const struct iovec *iov, size_t cnt,
		    struct rdmx_dev_rkey *rkey);
void rdmx_cma_revoke(struct rdmx_dev_rkey *rkey);

/*
 * Reads remote (exposed in another process, named by key: the rkey's
 * wire bytes) into local; queues its completion. 0, -FI_EAGAIN (queue
 * full) or -FI_EOPNOTSUPP (not an exposure this process can read).
 */
int rdmx_cma_read(struct rdmx_cma *cma, const struct iovec *local, size_t local_cnt,
		  const struct iovec *remote, size_t remote_cnt, const void *key,
		  uint64_t wr_id);

/* Moves up to max queued read completions to cqe; returns how many. */
int rdmx_cma_poll(struct rdmx_cma *cma, struct rdmx_dev_cqe *cqe, int max);

#endif /* RDMX_CMA_H */
