/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_stream: a streaming functional test over the public libfabric API
 * (plus the optional rdmx counters extension, <rdma/fi_ext_rdmx.h>). A
 * sender streams tagged messages to one or more receivers with many sends
 * in flight; every message is checked exactly once, byte for byte. It
 * reaches what a ping-pong never does: unexpected messages, receiver-not-
 * ready flow control, -FI_EAGAIN, loss recovery, and a receiver that dies
 * mid-run.
 *
 *   receiver: rdmx_stream -r [-b addr] [-p port] [-s senders] [--window W]
 *                         [--hold-ms N] [--ordered] [--max-size N] [--untagged]
 *                         [--ctrl-completion default|transmit|delivery]
 *                         [-t timeout_s]
 *   sender:   rdmx_stream -p port[,port...] [-n count] [--sizes mixed|small|max|zero]
 *                         [--completion delivery|inject] [--window W]
 *                         [--seed S] [--expect-rnr] [--expect-eagain]
 *                         [--dead K] [--linger-ms N] [--rate R] [--max-size N]
 *                         [--untagged] [--ctrl-completion L] [-t timeout_s] host
 *
 * Handshake: the sender posts its control receives, then sends each
 * receiver a HELLO carrying its address (fi_getname), the message count,
 * the seed, the size mix and its max_msg_size. The receiver inserts the
 * address into its AV and answers ACCEPT with the id the sender puts in
 * its data tags and the agreed max_msg_size (the smaller of both sides).
 *
 * Data: message i to a receiver has tag id << 40 | i, a length computed
 * from (seed, i, size mix, max_msg_size) and a payload computed from
 * (seed, i, length), so the receiver knows each message's exact length and
 * every byte before it arrives. Messages may arrive in any order: the
 * receiver keeps a window of wildcard tagged receives posted and a bitmap
 * of the messages seen, so an unknown tag, a message seen twice, a wrong
 * length, a wrong byte, a byte written past the message, a wrong source or
 * a message still missing at the timeout fails the run. When all of a
 * sender's messages arrived, the receiver sends it DONE (messages and
 * bytes received) and waits for that send's completion before closing;
 * the sender checks the DONE against what it sent.
 *
 * Completions: control messages ask for FI_DELIVERY_COMPLETE unless
 * --ctrl-completion says default (no flag: whatever the provider's
 * default level is, the way a program that exits once its last send
 * completed relies on it) or transmit (FI_TRANSMIT_COMPLETE). Data
 * sends do too by default (--completion delivery), so a send completes
 * once the receiver took the message and a lost receiver shows up as
 * error completions; --completion inject asks FI_INJECT_COMPLETE in the
 * tx op_flags (rdmx completes a send up to inject_size when it is
 * posted), so that path is checked end to end as well, through the
 * receiver's bitmap and its DONE.
 *
 * --ordered (receiver, one sender): send-after-send order. The receiver
 * numbers its data receives in the order it posts them; the n-th posted
 * receive must take the n-th message sent (FI_ORDER_SAS), whatever order
 * the completions of different sizes come in.
 *
 * --untagged (both sides): data travels as untagged messages (fi_senddata,
 * fi_recv) carrying what would have been the tag as remote CQ data.
 *
 * --max-size N (both sides): the largest message of any size mix (default
 * 65536; the agreed value is also capped by max_msg_size). The receiver
 * keeps --window buffers of that size.
 *
 * --rate R (sender): message i to a receiver is posted no sooner than i / R
 * seconds after the stream began, so a stream of N messages lasts at least
 * N / R seconds however fast the path: a stream that must still run when
 * something else ends (an attack in scripts/attack.sh) takes its time
 * from the pace, not from the speed of the machine.
 *
 * --dead K: receiver K (0-based in the -p list) is expected to die mid-run.
 * Its sends must then fail with FI_EHOSTUNREACH, nothing else may fail;
 * the sender stops sending to it, prints the time from the first send to
 * K that went unanswered to that send's error completion
 * (time_to_error_ms=N), and still completes everything to the others.
 *
 * Every wait fails after -t seconds (default 60) without a completion,
 * naming what it waited for. Exit status: 0 with a last line
 * "rdmx_stream: PASS ..." on full success, 1 on any failure, 2 on bad
 * options.
 */
#include "stream.h"

const char *const ft_prog = ST_NAME;

int main(int argc, char **argv)
{
	struct st st = { 0 };
	int ret, close_ret;

	if (st_parse_opts(argc, argv, &st.opts))
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (uint32_t r = 0; r < st.opts.nports && !st.opts.receiver; r++) {
		st.peers[r].index = r;
		st.peers[r].count = st.opts.count;
		st.peers[r].seed = st.opts.seed;
		st.peers[r].sizes = st.opts.sizes;
	}

	ret = st_open(&st);
	if (!ret && st.opts.receiver) {
		ret = ft_rdm_print_listening(&st.rdm, "provider %s, pid %ld, max_msg_size %zu",
					     st.info->fabric_attr->prov_name,
					     (long) getpid(), st.max_msg_size);
		if (!ret)
			ret = st_receiver_run(&st);
		if (!ret)
			ret = st_receiver_report(&st);
	} else if (!ret) {
		ret = st_sender_connect(&st);
		if (!ret)
			ret = st_sender_stream(&st);
		if (!ret)
			ret = st_sender_report(&st);
	}
	if (ret && st.rdm.ep) {
		struct fi_rdmx_ep_stats stats;

		st_stats(&st, &stats);	/* the provider's view of the failure */
	}
	close_ret = st_close(&st);
	if (ret || close_ret) {
		fprintf(stderr, ST_NAME ": FAIL\n");
		return 1;
	}
	printf(ST_NAME ": PASS %s\n", st.pass);
	return 0;
}
