/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: reads from the memory of another process on the same host with
 * process_vm_readv (cross memory attach, CMA): how the udp device offers
 * RDMX_DEV_CAP_RDMA_READ to peers that turn out to be local.
 *
 * An exposure is a record in the exposing process (inside the caller's
 * struct rdmx_dev_rkey): a token of 128 random bits (getrandom), the
 * reader it was offered to (the pid that peer announced in its
 * handshake, and the session value both compute, rdmx_hs_bind) and the
 * ranges exposed. Its key names the host (a digest of the boot id and
 * the pid namespace), the exposing pid, the record's address and the
 * token. It is offered only to a peer whose handshake showed it on this
 * host (rdmx_cma_expose refuses any other).
 *
 * A reader reads only when: the handshake showed the exposer on this
 * host; the key's host is its own and its pid the one the exposer
 * announced in that handshake; the record it finds at that address in
 * that process holds the token, names this reader's pid and the session
 * the key came in; and every range it wants lies inside an exposed one.
 * It checks the record again after copying, so a revoke during the copy
 * fails the read. Anything else is refused (-FI_EOPNOTSUPP: the caller
 * does without) or fails (RDMX_DEV_IO), never the reader. A key is good
 * for one exposure, one reader and one session only: a revoked record
 * holds no token.
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
	uint64_t		host;		/* digest of boot id and pid namespace */
	uint32_t		pid;
	struct rdmx_dev_cqe	done[RDMX_CMA_DONE_MAX];
	size_t			ndone;
};

/* Prepares cma for this process; false when it cannot read (no CMA). */
bool rdmx_cma_init(struct rdmx_cma *cma);

/*
 * This host's identity: a digest, keyed by the boot id, of the boot id
 * and the pid namespace inode; never 0. The boot id does not leave the
 * process: 64 bits of digest from 192 bits of input do not give it back.
 */
uint64_t rdmx_cma_host_digest(const uint8_t boot_id[16], uint64_t pidns);

/*
 * Exposes iov (cnt <= RDMX_CMA_SEGS) to rkey->peer until rdmx_cma_revoke.
 * 0; -FI_EINVAL (too many ranges); -FI_EOPNOTSUPP (the peer is not on
 * this host, or named no pid); -FI_EAGAIN (no random bits for a token).
 */
int rdmx_cma_expose(struct rdmx_cma *cma, const struct iovec *iov, size_t cnt,
		    struct rdmx_dev_rkey *rkey);
void rdmx_cma_revoke(struct rdmx_dev_rkey *rkey);

/*
 * Reads remote (exposed in another process; key: wire, the exposer's key
 * bytes, peer, the exposer as its handshake told) into local; queues
 * its completion. 0, -FI_EAGAIN (queue full) or -FI_EOPNOTSUPP (not an
 * exposure this process may read).
 */
int rdmx_cma_read(struct rdmx_cma *cma, const struct iovec *local, size_t local_cnt,
		  const struct iovec *remote, size_t remote_cnt,
		  const struct rdmx_dev_rkey *key, uint64_t wr_id);

/* Moves up to max queued read completions to cqe; returns how many. */
int rdmx_cma_poll(struct rdmx_cma *cma, struct rdmx_dev_cqe *cqe, int max);

#endif /* RDMX_CMA_H */
