/*
 * rdmx: reads from the memory of another process on the same host with
 * process_vm_readv (cross memory attach, CMA): how the udp device offers
 * RDMX_DEV_CAP_RDMA_READ to peers that turn out to be local.
 *
 * A key names the process (pid), the host and pid namespace it runs in,
 * and a random cookie at a known address in it. A reader on another host
 * or in another pid namespace, or one that does not find the cookie where
 * the key says (a restarted process, a reused pid, a forged key), refuses
 * the read (-FI_EOPNOTSUPP) and the caller does without. A bad address
 * in a key fails the read (RDMX_DEV_IO), never the reader.
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

struct rdmx_cma {
	uint64_t		cookie;		/* random, read back by peers */
	uint8_t			host[16];	/* boot id */
	uint64_t		pidns;		/* pid namespace inode */
	uint32_t		pid;
	struct rdmx_dev_cqe	done[RDMX_CMA_DONE_MAX];
	size_t			ndone;
};

/* Prepares cma for this process; false when it cannot read (no CMA). */
bool rdmx_cma_init(struct rdmx_cma *cma);

/* The key of this process's memory (RDMX_DEV_RKEY_LEN bytes). */
void rdmx_cma_key(const struct rdmx_cma *cma, void *key);

/*
 * Reads remote (memory of the process named by key) into local; queues
 * its completion. 0, -FI_EAGAIN (queue full) or -FI_EOPNOTSUPP (not a
 * process this one can read).
 */
int rdmx_cma_read(struct rdmx_cma *cma, const struct iovec *local, size_t local_cnt,
		  const struct iovec *remote, size_t remote_cnt, const void *key,
		  uint64_t wr_id);

/* Moves up to max queued read completions to cqe; returns how many. */
int rdmx_cma_poll(struct rdmx_cma *cma, struct rdmx_dev_cqe *cqe, int max);

#endif /* RDMX_CMA_H */
