/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The shm device between two queues of this process: what a sender
 * enqueues the owner takes in order, a full ring holds sends back, and what
 * the owner cannot trust (a wrong token, an unknown sender, a length
 * past its buffer) is refused or dropped and counted.
 */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rdmx_test.h"
#include "rdmx_clock.h"
#include "rdmx_dev_shm.h"
#include "rdmx_lane.h"

/* Full-size packets the ring holds at once in a test: each its own slot. */
#define RDMX_SHM_TEST_PKTS	16

static struct rdmx_dev *a, *b;
static struct rdmx_shm_addr a_addr, b_addr;

static void setup(void)
{
	struct rdmx_dev_attr attr = { .sq_size = 256, .rq_size = 256 };

	cr_assert_eq(rdmx_dev_shm_ops.open(&attr, &a), 0);
	cr_assert_eq(rdmx_dev_shm_ops.open(&attr, &b), 0);
	a->ops->getname(a, &a_addr);
	b->ops->getname(b, &b_addr);
}

static void teardown(void)
{
	a->ops->close(a);
	b->ops->close(b);
}

TestSuite(dev_shm, .init = setup, .fini = teardown);

/* Polls dev until a completion comes, at most a few thousand times. */
static int poll_one(struct rdmx_dev *dev, struct rdmx_dev_cqe *cqe)
{
	for (int i = 0; i < 4096; i++) {
		int n = dev->ops->poll_cq(dev, cqe, 1);

		if (n)
			return n;
	}
	return 0;
}

/* Maps each queue from the other's side: handles both ways. */
static void handles(struct rdmx_ah **to_b, struct rdmx_ah **to_a)
{
	cr_assert_eq(a->ops->ah_create(a, &b_addr, to_b), 0);
	cr_assert_eq(b->ops->ah_create(b, &a_addr, to_a), 0);
}

static void send_bytes(struct rdmx_ah *to_b, const char *text, uint64_t wr_id)
{
	struct iovec iov[2] = { { (void *) text, 3 }, { (void *) (text + 3), strlen(text) - 3 } };

	cr_assert_eq(a->ops->post_send(a, to_b, iov, 2, wr_id, 0), 0);
}

Test(dev_shm, packets_arrive_in_order_from_their_sender)
{
	struct rdmx_ah *to_b, *to_a;
	struct rdmx_dev_cqe cqe;
	char buf[2][64];

	handles(&to_b, &to_a);
	to_a->context = &to_a;
	for (int i = 0; i < 2; i++)
		cr_assert_eq(b->ops->post_recv(b, buf[i], sizeof(buf[i]), 10 + i), 0);
	send_bytes(to_b, "first packet", 1);
	send_bytes(to_b, "second", 2);
	for (uint64_t i = 1; i <= 2; i++) {
		cr_assert_eq(poll_one(a, &cqe), 1);
		cr_assert_eq(cqe.op, RDMX_DEV_OP_SEND);
		cr_assert_eq(cqe.status, RDMX_DEV_OK);
		cr_assert_eq(cqe.wr_id, i, "sends complete in order");
	}
	/* Each into the buffer posted last: the one in cache. */
	cr_assert_eq(poll_one(b, &cqe), 1);
	cr_assert_eq(cqe.op, RDMX_DEV_OP_RECV);
	cr_assert_eq(cqe.wr_id, 11);
	cr_assert_eq(cqe.len, strlen("first packet"));
	cr_assert_eq(cqe.src_ah, to_a, "the sender's handle names it");
	cr_assert_null(cqe.src_addr);
	cr_assert_eq(memcmp(buf[1], "first packet", cqe.len), 0);
	cr_assert_eq(poll_one(b, &cqe), 1);
	cr_assert_eq(cqe.wr_id, 10);
	cr_assert_eq(memcmp(buf[0], "second", cqe.len), 0);
	a->ops->ah_destroy(a, to_b);
	b->ops->ah_destroy(b, to_a);
}

/*
 * A packet longer than RDMX_DEV_RX_PREFIX: its first bytes are copied
 * into the posted buffer, the whole is read in place until the owner's
 * next poll, and its slot is free only then.
 */
Test(dev_shm, a_long_packet_is_read_in_place_until_the_next_poll)
{
	struct rdmx_ah *to_b, *to_a;
	struct rdmx_dev_cqe cqe;
	static char out[4096], in[4096];

	handles(&to_b, &to_a);
	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (char) (i * 7);
	memset(in, 0x5a, sizeof(in));
	cr_assert_eq(b->ops->post_recv(b, in, sizeof(in), 3), 0);
	cr_assert_eq(a->ops->post_send(a, to_b, &(struct iovec) { out, sizeof(out) }, 1, 4, 0), 0);
	cr_assert_eq(poll_one(b, &cqe), 1);
	cr_assert_eq(cqe.len, sizeof(out));
	cr_assert_not_null(cqe.data, "read in place");
	cr_assert_eq(memcmp(cqe.data, out, sizeof(out)), 0);
	cr_assert_eq(memcmp(in, out, RDMX_DEV_RX_PREFIX), 0, "the prefix is copied");
	cr_assert_eq(in[RDMX_DEV_RX_PREFIX], 0x5a, "and nothing after it");
	a->ops->ah_destroy(a, to_b);
	b->ops->ah_destroy(b, to_a);
}

/*
 * a sends to the ring at to until it is full, polling each completion;
 * the last send, the one that found it full, waits. Returns the sends
 * that completed.
 */
static int fill_ring(struct rdmx_ah *to, char *buf)
{
	struct rdmx_dev_cqe cqe[64];
	int sent = 0;

	for (;;) {
		int n;

		cr_assert_eq(a->ops->post_send(a, to, &(struct iovec) { buf, 8 }, 1, sent, 0), 0);
		n = a->ops->poll_cq(a, cqe, 64);
		if (!n)
			return sent;
		cr_assert_eq(n, 1);
		cr_assert_eq(cqe[0].wr_id, (uint64_t) sent++);
	}
}

/*
 * A send to a full ring waits in the device, in order, and completes once
 * the owner made room; past sq_size outstanding sends, -FI_EAGAIN.
 */
Test(dev_shm, a_full_ring_holds_sends_until_the_owner_takes)
{
	struct rdmx_ah *to_b, *to_a;
	struct rdmx_dev_cqe cqe;
	uint64_t due = UINT64_MAX, waiting;
	char buf[64];
	int sent;

	handles(&to_b, &to_a);
	sent = fill_ring(to_b, buf);
	cr_assert_gt(sent, 0);
	for (waiting = 1; waiting < 256; waiting++)
		cr_assert_eq(a->ops->post_send(a, to_b, &(struct iovec) { buf, 8 }, 1,
					       sent + waiting, 0), 0);
	cr_assert_eq(a->ops->post_send(a, to_b, &(struct iovec) { buf, 8 }, 1, 0, 0), -FI_EAGAIN,
		     "sq_size sends outstanding");
	cr_assert_eq(a->ops->poll_cq(a, &cqe, 1), 0, "no room, no completion");
	cr_assert_eq(a->ops->wait_arm(a, &due), 0, "a sender may sleep while the ring is full");
	cr_assert_leq(due, rdmx_clock_ns() + RDMX_DEV_WAIT_TICK_NS, "for a tick at most");
	cr_assert_eq(b->ops->post_recv(b, buf, sizeof(buf), 1), 0);
	cr_assert_eq(poll_one(b, &cqe), 1, "the owner takes one");
	due = UINT64_MAX;
	cr_assert_eq(a->ops->wait_arm(a, &due), 0, "read in place, the slot is not free yet");
	cr_assert_eq(b->ops->poll_cq(b, &cqe, 1), 0, "the owner's next poll frees it");
	due = UINT64_MAX;
	cr_assert_eq(a->ops->wait_arm(a, &due), -FI_EAGAIN, "room: the sender must not sleep");
	cr_assert_eq(poll_one(a, &cqe), 1);
	cr_assert_eq(cqe.status, RDMX_DEV_OK);
	cr_assert_eq(cqe.wr_id, (uint64_t) sent, "the oldest waiting send went first");
	cr_assert_eq(a->ops->poll_cq(a, &cqe, 1), 0, "one slot, one send");
	a->ops->ah_destroy(a, to_b);
	for (uint64_t i = 1; i < waiting; i++) {
		cr_assert_eq(poll_one(a, &cqe), 1);
		cr_assert_eq(cqe.wr_id, sent + i);
		cr_assert_eq(cqe.status, RDMX_DEV_FLUSHED, "the handle's end flushes what waits");
	}
	b->ops->ah_destroy(b, to_a);
}

/*
 * A peer that maps a queue writes each of its pages once (a no-op add):
 * packets already in it, which fill its slots to the last page, arrive
 * intact, and in order.
 */
Test(dev_shm, a_queue_mapped_by_another_peer_keeps_what_it_holds)
{
	struct rdmx_dev_attr attr = { .sq_size = 256, .rq_size = 256 };
	size_t mtu = b->caps.mtu;
	static char out[RDMX_SHM_TEST_PKTS][65536], in[65536];
	struct rdmx_ah *to_b, *to_a, *c_to_b;
	struct rdmx_dev_cqe cqe;
	struct rdmx_dev *c;

	cr_assert_leq(mtu, sizeof(in));
	handles(&to_b, &to_a);
	for (uint64_t i = 0; i < RDMX_SHM_TEST_PKTS; i++) {
		for (size_t j = 0; j < mtu; j++)
			out[i][j] = (char) (i * 31 + j * 7);
		cr_assert_eq(a->ops->post_send(a, to_b, &(struct iovec) { out[i], mtu }, 1, i, 0), 0);
		cr_assert_eq(poll_one(a, &cqe), 1, "in the ring");
	}
	cr_assert_eq(rdmx_dev_shm_ops.open(&attr, &c), 0);
	cr_assert_eq(c->ops->ah_create(c, &b_addr, &c_to_b), 0);
	for (uint64_t i = 0; i < RDMX_SHM_TEST_PKTS; i++) {
		cr_assert_eq(b->ops->post_recv(b, in, sizeof(in), i), 0);
		cr_assert_eq(poll_one(b, &cqe), 1);
		cr_assert_eq(cqe.len, mtu);
		cr_assert_eq(memcmp(cqe.data ? (const void *) cqe.data : in, out[i], mtu), 0,
			     "packet %lu unchanged", (unsigned long) i);
	}
	c->ops->ah_destroy(c, c_to_b);
	c->ops->close(c);
	a->ops->ah_destroy(a, to_b);
	b->ops->ah_destroy(b, to_a);
}

/*
 * A queue is the lane of one peer: a second peer naming it (one endpoint
 * known at two addresses, or a claim of someone else's queue) stays on
 * the NIC, and the queue's packets keep naming the first, also after the
 * second is gone.
 */
Test(dev_shm, a_queue_is_the_lane_of_one_peer)
{
	struct rdmx_lanes lanes = { .nic = a, .shm = a };
	struct rdmx_lane first, second;
	struct rdmx_dev_cqe cqe;
	struct rdmx_ah *to_a;
	int peer[2];
	char buf[64];

	rdmx_lane_init(&first, &lanes, NULL, &b_addr);
	rdmx_lane_init(&second, &lanes, NULL, &b_addr);
	cr_assert(rdmx_lane_learn(&lanes, &first, &b_addr, &peer[0]));
	cr_assert_not(rdmx_lane_learn(&lanes, &second, &b_addr, &peer[1]),
		      "the second peer naming the queue stays on the NIC");
	cr_assert_not(rdmx_lane_learn(&lanes, &second, &b_addr, &peer[1]), "not tried again");
	rdmx_lane_fini(&lanes, &second);
	cr_assert_eq(b->ops->ah_create(b, &a_addr, &to_a), 0);
	cr_assert_eq(a->ops->post_recv(a, buf, sizeof(buf), 1), 0);
	cr_assert_eq(b->ops->post_send(b, to_a, &(struct iovec) { "hi", 2 }, 1, 2, 0), 0);
	cr_assert_eq(poll_one(a, &cqe), 1);
	cr_assert_eq(cqe.src_ah->context, &peer[0], "the packet names the first peer");
	rdmx_lane_fini(&lanes, &first);
	b->ops->ah_destroy(b, to_a);
}

Test(dev_shm, a_queue_named_with_a_wrong_token_is_not_mapped)
{
	struct rdmx_shm_addr forged = b_addr;
	struct rdmx_ah *ah;

	forged.token ^= 1;
	cr_assert_neq(a->ops->ah_create(a, &forged, &ah), 0);
	forged = b_addr;
	forged.fd = 0;	/* stdin: not a queue */
	cr_assert_neq(a->ops->ah_create(a, &forged, &ah), 0);
}

Test(dev_shm, packets_of_a_sender_without_a_handle_are_dropped)
{
	struct rdmx_dev_cqe cqe;
	struct rdmx_ah *to_b;
	char buf[64];

	cr_assert_eq(a->ops->ah_create(a, &b_addr, &to_b), 0);
	cr_assert_eq(b->ops->post_recv(b, buf, sizeof(buf), 1), 0);
	send_bytes(to_b, "from nobody", 1);
	cr_assert_eq(poll_one(b, &cqe), 0);
	cr_assert_eq(b->stats.rx_dropped, 1);
	a->ops->ah_destroy(a, to_b);
}

Test(dev_shm, a_packet_longer_than_the_buffer_is_dropped_as_malformed)
{
	struct rdmx_ah *to_b, *to_a;
	struct rdmx_dev_cqe cqe;
	char small[4], big[64];

	handles(&to_b, &to_a);
	cr_assert_eq(b->ops->post_recv(b, small, sizeof(small), 1), 0);
	send_bytes(to_b, "longer than four", 1);
	cr_assert_eq(poll_one(b, &cqe), 0);
	cr_assert_eq(b->stats.rx_malformed, 1);
	send_bytes(to_b, "ok!", 2);
	cr_assert_eq(poll_one(b, &cqe), 1, "the buffer still serves the next packet");
	cr_assert_eq(cqe.wr_id, 1);
	cr_assert_eq(b->ops->post_recv(b, big, sizeof(big), 2), 0);
	a->ops->ah_destroy(a, to_b);
	b->ops->ah_destroy(b, to_a);
}

Test(dev_shm, a_packet_past_the_mtu_fails_its_send)
{
	struct rdmx_ah *to_b, *to_a;
	struct rdmx_dev_cqe cqe;
	static char huge[1 << 17];
	struct iovec iov = { huge, a->caps.mtu + 1 };

	handles(&to_b, &to_a);
	cr_assert_eq(a->ops->post_send(a, to_b, &iov, 1, 5, 0), 0);
	cr_assert_eq(poll_one(a, &cqe), 1);
	cr_assert_eq(cqe.status, RDMX_DEV_MSGSIZE);
	a->ops->ah_destroy(a, to_b);
	b->ops->ah_destroy(b, to_a);
}

/*
 * A child process that opens a shm device, hands its address over, and
 * exits once *go_fd is written to or closed; its pid.
 */
static pid_t child_ring(struct rdmx_shm_addr *addr, int *go_fd)
{
	struct rdmx_dev_attr attr = { .sq_size = 4, .rq_size = 4 };
	int up[2], down[2];
	char go;
	pid_t pid;

	cr_assert_eq(pipe(up), 0);
	cr_assert_eq(pipe(down), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		struct rdmx_dev *c;

		close(up[0]);
		close(down[1]);
		if (rdmx_dev_shm_ops.open(&attr, &c))
			_exit(1);
		c->ops->getname(c, addr);
		if (write(up[1], addr, sizeof(*addr)) != sizeof(*addr))
			_exit(1);
		_exit(read(down[0], &go, 1) < 0);
	}
	close(up[1]);
	close(down[0]);
	cr_assert_eq(read(up[0], addr, sizeof(*addr)), sizeof(*addr));
	close(up[0]);
	*go_fd = down[1];
	return pid;
}

/* Lets the child of child_ring exit, and waits until it has. */
static void child_exit(pid_t pid, int go_fd)
{
	close(go_fd);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
}

/* Polls dev for the RDMX_DEV_OP_GONE of ah: it comes once. */
static void gone_told_once(struct rdmx_dev *dev, struct rdmx_ah *ah)
{
	struct rdmx_dev_cqe cqe;

	cr_assert_eq(poll_one(dev, &cqe), 1, "the owner's exit is told");
	cr_assert_eq(cqe.op, RDMX_DEV_OP_GONE);
	cr_assert_eq(cqe.status, RDMX_DEV_UNREACH);
	cr_assert_eq(cqe.src_ah, ah);
	cr_assert_eq(poll_one(dev, &cqe), 0, "and told once");
}

/* A ring whose owner exited: sends to it fail UNREACH, not -FI_EAGAIN forever. */
Test(dev_shm, sends_to_a_ring_whose_owner_exited_fail_unreachable)
{
	struct rdmx_shm_addr child_addr;
	struct rdmx_dev_cqe cqe;
	struct rdmx_ah *to_child;
	char go = 0, buf[8] = { 0 };
	int waiting, go_fd;
	pid_t pid;

	pid = child_ring(&child_addr, &go_fd);
	cr_assert_eq(a->ops->ah_create(a, &child_addr, &to_child), 0, "the child's ring maps");
	waiting = fill_ring(to_child, buf);
	child_exit(pid, go_fd);
	for (int i = 0; i < 4096 && a->ops->poll_cq(a, &cqe, 1) == 0; i++)
		;
	cr_assert_eq(a->stats.unreachable, 1, "a poll found the owner gone");
	cr_assert_eq(cqe.wr_id, (uint64_t) waiting);
	cr_assert_eq(cqe.status, RDMX_DEV_UNREACH, "the send waiting for room fails");
	cr_assert_eq(a->ops->post_send(a, to_child, &(struct iovec) { &go, 1 }, 1, 9, 0), 0);
	cr_assert_eq(poll_one(a, &cqe), 1);
	cr_assert_eq(cqe.wr_id, 9);
	cr_assert_eq(cqe.status, RDMX_DEV_UNREACH);
	gone_told_once(a, to_child);
	a->ops->ah_destroy(a, to_child);
}

/*
 * What a ring's owner received and never answered it never will: its
 * exit is told with nothing left to fail, and a sleeper wakes for it.
 */
Test(dev_shm, an_owner_that_exits_is_told_with_no_send_waiting)
{
	struct rdmx_shm_addr child_addr;
	struct rdmx_dev_cqe cqe;
	struct rdmx_ah *to_child;
	char byte = 1;
	uint64_t due = UINT64_MAX;
	int go_fd;
	pid_t pid;

	pid = child_ring(&child_addr, &go_fd);
	cr_assert_eq(a->ops->ah_create(a, &child_addr, &to_child), 0);
	cr_assert_eq(a->ops->post_send(a, to_child, &(struct iovec) { &byte, 1 }, 1, 3, 0), 0);
	cr_assert_eq(poll_one(a, &cqe), 1);
	cr_assert_eq(cqe.status, RDMX_DEV_OK, "the packet is in the child's ring");
	cr_assert_eq(a->ops->wait_arm(a, &due), 0, "nothing to do: a thread may sleep");
	cr_assert_leq(due, rdmx_clock_ns() + 1000000000ULL, "until the owners' next check");
	child_exit(pid, go_fd);
	gone_told_once(a, to_child);
	a->ops->ah_destroy(a, to_child);
}
