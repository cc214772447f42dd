/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: datagram endpoints (FI_EP_DGRAM). The endpoint's NIC device is
 * opened unreliable (rdmx_dev_attr.unreliable): each message is one
 * datagram behind a struct rdmx_wire_ud, and none of the rdm layer's
 * machinery runs (no handshake, order, segments or retransmission).
 *
 * A datagram lost on the way is lost. One that arrives before a receive
 * waits for it stays in its receive buffer until one is posted, as a
 * socket keeps it, three quarters of the buffers at most: past that the
 * oldest held is dropped, and the device drops what comes when no
 * buffer is free. Senders are named by a reverse lookup of the address the
 * datagram came from, which nothing authenticates (FI_SOURCE is what the
 * datagram claims, as on any UDP socket).
 *
 * A datagram endpoint is a struct rdmx_ep with dgram set: it shares the
 * RDM endpoint's binds, waits and counters, its txe_pool holds struct
 * rdmx_ud_tx and its rxe_pool struct rdmx_ud_rx.
 */
#ifndef RDMX_UD_H
#define RDMX_UD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rdmx_dev.h"
#include "rdmx_list.h"

struct rdmx_ep;
struct rdmx_send_req;
struct rdmx_recv_req;

/* A datagram received and not taken yet, in its receive buffer. */
struct rdmx_ud_held {
	struct rdmx_dlist	link;		/* on rdmx_ud.arrived */
	uint64_t		src;		/* fi_addr_t, or FI_ADDR_NOTAVAIL */
	uint64_t		data;
	uint32_t		len;		/* the application's bytes */
	uint32_t		flags;		/* RDMX_UD_* */
	/* Its sender's canonical address, looked up again while unknown. */
	uint8_t			addr[RDMX_DEV_ADDR_MAX];
};

struct rdmx_ud {
	struct rdmx_dlist	posted;		/* of rdmx_ud_rx, oldest first */
	struct rdmx_dlist	arrived;	/* of rdmx_ud_held, oldest first */
	struct rdmx_ud_held	*held;		/* one per receive buffer */
	size_t			held_cnt;	/* on arrived */
	/*
	 * Held at most: past it the oldest is dropped for the newcomer, so
	 * that datagrams no receive takes (from a stranger, or for a
	 * directed receive never posted) cannot keep every buffer.
	 */
	size_t			held_max;
	size_t			max_msg;	/* bytes a datagram carries */
};

/*
 * Sizes ep's pools and receive buffers for messages of at most max_msg
 * bytes (what fi_getinfo offered): its NIC is open (unreliable), and
 * tx_size, rx_size and inject_size are set. 0 or -FI_ENOMEM.
 */
int rdmx_ud_alloc(struct rdmx_ep *ep, size_t max_msg);
void rdmx_ud_free(struct rdmx_ep *ep);

/* Posts a send or a receive (domain lock held): 0 or -FI_E*. */
ssize_t rdmx_ud_send(struct rdmx_ep *ep, const struct rdmx_send_req *req);
ssize_t rdmx_ud_recv(struct rdmx_ep *ep, const struct rdmx_recv_req *req);

/* fi_cancel of a posted receive: 0, or -FI_ENOENT when none has context. */
int rdmx_ud_cancel(struct rdmx_ep *ep, void *context);

/* Polls the device and handles what it completed; domain lock held. */
void rdmx_ud_progress(struct rdmx_ep *ep);

/* At close: lets go of posted receives without completions. */
void rdmx_ud_drain(struct rdmx_ep *ep);

#endif /* RDMX_UD_H */
