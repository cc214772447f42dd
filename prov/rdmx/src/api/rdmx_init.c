/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: provider entry. libfabric dlopens librdmx-fi.so and calls
 * fi_prov_ini, which defines the FI_RDMX_* parameters and hands back the
 * provider descriptor.
 */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_fabric.h"
#include "rdmx_info.h"
#include "rdmx_version.h"

struct rdmx_params g_rdmx_params = {
	.tx_size	= 1024,
	.rx_size	= 1024,
	.inject_size	= 4096,
	.mtu		= 0,
	.rx_bufs	= 256,
	.sockbuf	= 8 << 20,
	.cq_size	= 1024,
	.unexp_max	= 64 << 20,
	.rx_budget	= 64 << 20,
	.medium_max	= 65536,
	.cts_window	= 2 << 20,
	.long_read	= 1,
	.shm		= 1,
	.shm_read_min	= 0,
	.hs_retry_ms	= 100,
	.ping_interval_ms = 5000,
	.ping_timeout_ms = 5000,
	.ping_retries	= 5,
	.pending_max	= 4096,
	.tx_batch	= 32,
	.rto_min_us	= 500,
	.unreach_ms	= 5000,
	.connect_ms	= 30000,
	.rnr_retry	= 3,
	.rnr_backoff_max_us = 1000000,
	.wait_spin_us	= 50,
	.udp_gso	= 1,
	.udp_gro	= 1,
	.paths		= 1,
};

/* The size_t parameters: name, where the value goes, help text. */
static const struct {
	const char	*name;
	size_t		*value;
	const char	*help;
} rdmx_size_params[] = {
	{ "tx_size", &g_rdmx_params.tx_size,
	  "Send queue depth of an endpoint (default 1024)." },
	{ "rx_size", &g_rdmx_params.rx_size,
	  "Receive queue depth of an endpoint (default 1024)." },
	{ "inject_size", &g_rdmx_params.inject_size,
	  "Largest message fi_inject accepts, capped at the largest message (default 4096)." },
	{ "mtu", &g_rdmx_params.mtu,
	  "Cap on the device packet size in bytes; 0 uses the interface MTU (default 0)." },
	{ "rx_bufs", &g_rdmx_params.rx_bufs,
	  "Packet buffers each endpoint keeps posted to its device (default 256)." },
	{ "sockbuf", &g_rdmx_params.sockbuf,
	  "udp device: socket send and receive buffer bytes (default 8 MiB)." },
	{ "cq_size", &g_rdmx_params.cq_size,
	  "Completion queue depth when fi_cq_open asks for none (default 1024)." },
	{ "unexp_max", &g_rdmx_params.unexp_max,
	  "Bytes of unexpected eager messages an endpoint copies out of its packet buffers, within FI_RDMX_RX_BUDGET; beyond, a message stays in its packet buffer until a receive takes it (default 64 MiB)." },
	{ "rx_budget", &g_rdmx_params.rx_budget,
	  "Bytes of memory the senders to an endpoint can make it hold: packets held for ordering, unexpected messages and their reassembly, anonymous peers. Beyond, arriving data is refused (default 64 MiB)." },
	{ "medium_max", &g_rdmx_params.medium_max,
	  "Largest message sent as segments all at once (medium protocol); larger ones wait for the receiver's clear-to-send (long protocol). Capped at 16 MiB (default 65536)." },
	{ "cts_window", &g_rdmx_params.cts_window,
	  "Long protocol: bytes a receiver lets a sender have in flight past what arrived (default 2 MiB)." },
	{ "long_read", &g_rdmx_params.long_read,
	  "1: a long message offers the receiver to read it straight from the sender's memory when the device can (udp: peers on the same host, by cross memory attach); 0: always clear-to-send and data packets (default 1)." },
	{ "shm", &g_rdmx_params.shm,
	  "1: peers on the same host (same user, same pid namespace) exchange packets through shared memory instead of the device, once their handshake shows it; 0: every peer goes by the device (default 1)." },
	{ "mr_prov_key", &g_rdmx_params.mr_prov_key,
	  "1: when the application's mr_mode allows FI_MR_PROV_KEY (and FI_MR_VIRT_ADDR), rdmx returns them and chooses every remote key at random; 0: mr_mode 0, the application's requested keys and offsets, as tcp;ofi_rxm (default 0)." },
	{ "shm_read_min", &g_rdmx_params.shm_read_min,
	  "Shared memory: long messages of at least this many bytes are read by the receiver straight from the sender's memory (cross memory attach: one copy, but every page pinned); shorter ones, and all when 0, are copied through the receiver's ring (default 0: the ring was faster at every size measured)." },
	{ "hs_retry_ms", &g_rdmx_params.hs_retry_ms,
	  "Handshake: milliseconds between resends of a RESET or of probes; the handshake gives up after FI_RDMX_UNREACH_MS (default 100)." },
	{ "ping_interval", &g_rdmx_params.ping_interval_ms,
	  "Keepalive: milliseconds a connected peer may stay silent before it is pinged (default 5000)." },
	{ "ping_timeout", &g_rdmx_params.ping_timeout_ms,
	  "Keepalive: milliseconds to wait for a ping's answer (default 5000)." },
	{ "ping_retries", &g_rdmx_params.ping_retries,
	  "Keepalive: pings unanswered before the peer is disconnected and every send to it fails with FI_EHOSTUNREACH (default 5)." },
	{ "pending_max", &g_rdmx_params.pending_max,
	  "Sends a peer keeps while its handshake runs; beyond, sends to it return -FI_EAGAIN (default 4096)." },
	{ "tx_batch", &g_rdmx_params.tx_batch,
	  "Sends an endpoint takes in a row, with no progress between (a completion queue or counter read that finds nothing ready, or a wait), before it hands the later ones to the device in batches of this many: each batch leaves with its last send, and what is left at the next completion queue or counter read or with a send to another peer of the same device. A lone send or a shorter burst leaves at once; 0: every send leaves at once (default 32)." },
	{ "rto_min_us", &g_rdmx_params.rto_min_us,
	  "swsrd: least margin of the retransmission timeout over the smoothed round trip, in microseconds (default 500)." },
	{ "unreach_ms", &g_rdmx_params.unreach_ms,
	  "swsrd: milliseconds a packet may go unacknowledged before its peer is unreachable and its sends fail (default 5000)." },
	{ "connect_ms", &g_rdmx_params.connect_ms,
	  "FI_EP_MSG: milliseconds fi_connect waits for the listener's answer before FI_ETIMEDOUT (default 30000)." },
	{ "rnr_retry", &g_rdmx_params.rnr_retry,
	  "Times a device resends a packet the receiver refused for lack of a buffer before completing it with an RNR error (default 3)." },
	{ "rnr_backoff_max_us", &g_rdmx_params.rnr_backoff_max_us,
	  "Longest wait, in microseconds, of a peer in RNR backoff; it starts at 40-120 us and doubles per refusal (default 1000000)." },
	{ "wait_spin_us", &g_rdmx_params.wait_spin_us,
	  "Blocking calls (fi_cq_sread, fi_cntr_wait, fi_wait, fi_eq_sread) poll this many microseconds before they sleep in the kernel: an answer that comes within it costs no wake-up (default 50; 0: sleep at once)." },
	{ "udp_gso", &g_rdmx_params.udp_gso,
	  "udp device: 1: consecutive equal datagrams to one peer go to the kernel as one segmentation offload send (UDP_SEGMENT); it turns itself off for an endpoint whose route refuses it; 0: a datagram at a time (default 1)." },
	{ "udp_gro", &g_rdmx_params.udp_gro,
	  "udp device: 1: the kernel may hand several datagrams of one sender over in one read (UDP_GRO), which the device splits; on only where every read can hold 65,535 bytes (an interface with a 64 KiB MTU, as loopback, is up and FI_RDMX_MTU does not cap it), and only from the read after one that brought 4 datagrams or more (then it stays on: a lone datagram reads faster without it); 0: a datagram per read (default 1)." },
	{ "paths", &g_rdmx_params.paths,
	  "udp device: source ports each endpoint sends from, 1 to 8. Above 1, a peer's packets go from each in turn, in runs of 32, so that a fabric spreading flows over routes by their ports (ECMP) carries them on several; a port that loses far more than the best one, or whose round trips are far longer, carries one short run in 32 until it recovers. Only peers whose handshake says they take it are sent by more than one (default 1)." },
	{ "udp_drop", &g_rdmx_params.udp_drop,
	  "Testing only: percent of udp datagrams dropped on send (default 0)." },
	{ "udp_dup", &g_rdmx_params.udp_dup,
	  "Testing only: percent of udp datagrams sent twice (default 0)." },
	{ "udp_reorder", &g_rdmx_params.udp_reorder,
	  "Testing only: percent of udp datagrams held back behind the next one (default 0)." },
	{ "udp_seed", &g_rdmx_params.udp_seed,
	  "Testing only: seed of the udp fault injection (default 1)." },
};

void rdmx_params_initialize(void)
{
	fi_param_define(&rdmx_prov, "device", FI_PARAM_STRING,
			"Device to run over: efa, verbs, udp, or auto (default): "
			"the first of efa, verbs and udp that has a usable device.");
	fi_param_get_str(&rdmx_prov, "device", &g_rdmx_params.device);
	fi_param_define(&rdmx_prov, "iface", FI_PARAM_STRING,
			"Interface the udp device uses (e.g. lo, eth0), or the "
			"rdma-core device efa and verbs use (e.g. rdmap0s6, "
			"mlx5_0); default: every interface that is up but "
			"loopback (unless it is alone or named), one address "
			"family, or every usable device.");
	fi_param_get_str(&rdmx_prov, "iface", &g_rdmx_params.iface);

	for (size_t i = 0; i < RDMX_ARRAY_SIZE(rdmx_size_params); i++) {
		size_t val;

		fi_param_define(&rdmx_prov, rdmx_size_params[i].name,
				FI_PARAM_SIZE_T, "%s", rdmx_size_params[i].help);
		if (!fi_param_get_size_t(&rdmx_prov, rdmx_size_params[i].name, &val))
			*rdmx_size_params[i].value = val;
	}
	g_rdmx_params.tx_size = RDMX_MAX(g_rdmx_params.tx_size, 1);
	g_rdmx_params.rx_size = RDMX_MAX(g_rdmx_params.rx_size, 1);
	g_rdmx_params.rx_bufs = RDMX_MAX(g_rdmx_params.rx_bufs, 2);
	g_rdmx_params.cq_size = RDMX_MAX(g_rdmx_params.cq_size, 1);
	g_rdmx_params.cts_window = RDMX_MAX(g_rdmx_params.cts_window, 1);
	g_rdmx_params.hs_retry_ms = RDMX_MAX(g_rdmx_params.hs_retry_ms, 1);
	g_rdmx_params.ping_interval_ms = RDMX_MAX(g_rdmx_params.ping_interval_ms, 1);
	g_rdmx_params.ping_timeout_ms = RDMX_MAX(g_rdmx_params.ping_timeout_ms, 1);
	g_rdmx_params.ping_retries = RDMX_MAX(g_rdmx_params.ping_retries, 1);
	/* A packet must hold the largest header and some payload. */
	if (g_rdmx_params.mtu)
		g_rdmx_params.mtu = RDMX_MAX(g_rdmx_params.mtu, 256);
}

static void rdmx_cleanup(void)
{
}

struct fi_provider rdmx_prov = {
	.name = RDMX_PROV_NAME,
	.version = RDMX_PROV_VERSION,
	.fi_version = RDMX_API_VERSION,
	.getinfo = rdmx_getinfo,
	.fabric = rdmx_fabric_open,
	.cleanup = rdmx_cleanup,
};

/*
 * fi_version is the header's until the core that loads rdmx is known:
 * fi_prov_ini then declares the newest API both the core and rdmx speak
 * (rdmx_version.c says why that is safe beyond the 1.17 headers).
 */
FI_EXT_INI
{
	rdmx_prov.fi_version = rdmx_version_declared(fi_version());
	rdmx_params_initialize();
	return &rdmx_prov;
}
