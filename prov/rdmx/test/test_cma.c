/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_cma: long-read between processes of one host. A reader reads
 * only what a live exposure covers, offered to it, in the session the
 * key came in, from the process the exposer's handshake announced; a
 * forged, foreign or revoked key, a key bound to another reader or
 * session, a key naming another process than the announced one, or a
 * range outside the exposure, is refused; a bad address fails the read,
 * never the reader. Exposures go only to a peer on this host, one whose
 * handshake says so and that receives at an address of this host, and
 * their tokens are random. Most tests read this process itself, which the
 * kernel allows whenever CMA works at all; one reads a child.
 */
#include <endian.h>
#include <ifaddrs.h>
#include <arpa/inet.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rdmx_test.h"
#include "rdmx_cma.h"
#include "rdmx_dev_udp.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"

/* The session value both sides of the tests' session computed. */
#define SESSION		0x5e5510115e551011ULL

static struct rdmx_cma cma;
static struct rdmx_dev_rkey rkey;
static struct rdmx_dev_cqe cqe_sink[1];
static char src[64] = "the bytes a local peer exposes";

/* A peer as a handshake on this host tells of this process. */
static struct rdmx_dev_read_peer self_peer(void)
{
	return (struct rdmx_dev_read_peer) {
		.host = cma.host, .session = SESSION, .pid = (uint32_t) getpid(),
	};
}

/* Exposes cnt ranges of iov to this very process, in SESSION. */
static int expose_to_self(const struct iovec *iov, size_t cnt, struct rdmx_dev_rkey *out)
{
	memset(out, 0, sizeof(*out));
	out->peer = self_peer();
	return rdmx_cma_expose(&cma, iov, cnt, out);
}

static void cma_setup(void)
{
	struct iovec iov = { src, sizeof(src) };

	cr_assert(rdmx_cma_init(&cma), "process_vm_readv works on this machine");
	cr_assert_neq(cma.host, 0);
	cr_assert_eq(expose_to_self(&iov, 1, &rkey), 0);
}

TestSuite(cma, .init = cma_setup);

/* Reads len bytes at from into dst with the key wire, the exposer being peer. */
static int read_as(const void *wire, struct rdmx_dev_read_peer peer, void *dst,
		   const void *from, size_t len)
{
	struct iovec local = { dst, len }, remote = { (void *) from, len };
	struct rdmx_dev_rkey key = { .peer = peer };

	memcpy(key.wire, wire, sizeof(key.wire));
	return rdmx_cma_read(&cma, &local, 1, &remote, 1, &key, 42);
}

/* The same, the exposer being this process in SESSION. */
static int read_with(const void *wire, void *dst, const void *from, size_t len)
{
	return read_as(wire, self_peer(), dst, from, len);
}

static struct rdmx_dev_cqe poll_one(void)
{
	struct rdmx_dev_cqe cqe = { 0 };

	cr_assert_eq(rdmx_cma_poll(&cma, &cqe, 1), 1);
	cr_assert_eq(cqe.op, RDMX_DEV_OP_READ);
	cr_assert_eq(cqe.wr_id, 42);
	return cqe;
}

Test(cma, reads_what_is_exposed)
{
	char dst[64] = { 0 };

	cr_assert_eq(read_with(rkey.wire, dst, src, sizeof(src)), 0);
	cr_assert_eq(poll_one().status, RDMX_DEV_OK);
	cr_assert_str_eq(dst, src);
	cr_assert_eq(rdmx_cma_poll(&cma, cqe_sink, 1), 0, "one completion per read");
	cr_assert_eq(read_with(rkey.wire, dst, src + 4, 10), 0, "a part of it too");
	cr_assert_eq(poll_one().status, RDMX_DEV_OK);
}

Test(cma, scatters_and_gathers)
{
	char text[10] = "abcdefghi", a[3] = { 0 }, b[7] = { 0 };
	struct iovec exposed[2] = { { text, 6 }, { text + 6, 4 } };
	struct iovec local[2] = { { a, 3 }, { b, 7 } };
	struct rdmx_dev_rkey two;

	struct rdmx_dev_rkey key = { .peer = self_peer() };

	cr_assert_eq(expose_to_self(exposed, 2, &two), 0);
	memcpy(key.wire, two.wire, sizeof(key.wire));
	cr_assert_eq(rdmx_cma_read(&cma, local, 2, exposed, 2, &key, 42), 0);
	cr_assert_eq(poll_one().status, RDMX_DEV_OK);
	cr_assert(!memcmp(a, "abc", 3) && !memcmp(b, "defghi", 7));
}

Test(cma, refuses_what_is_not_exposed)
{
	static char secret[16] = "not exposed";
	char dst[64] = { 0 };

	cr_assert_eq(read_with(rkey.wire, dst, secret, sizeof(secret)), -FI_EOPNOTSUPP);
	cr_assert_eq(read_with(rkey.wire, dst, src + 1, sizeof(src)), -FI_EOPNOTSUPP,
		     "one byte past the exposure");
	{
		char text[16] = "0123456789abcde";
		struct iovec mid = { text + 4, 8 };
		struct rdmx_dev_rkey part;

		cr_assert_eq(expose_to_self(&mid, 1, &part), 0);
		cr_assert_eq(read_with(part.wire, dst, text + 3, 2), -FI_EOPNOTSUPP,
			     "one byte before the exposure");
		cr_assert_eq(read_with(part.wire, dst, text + 4, 9), -FI_EOPNOTSUPP,
			     "one byte after it");
	}
	cr_assert_eq(dst[0], 0, "nothing was read");
	cr_assert_eq(rdmx_cma_poll(&cma, cqe_sink, 1), 0, "a refusal completes nothing");
}

/* The pid of a process that has just ended: no process has it. */
static uint32_t gone_pid(void)
{
	pid_t pid = fork();

	if (!pid)
		_exit(0);
	cr_assert_gt(pid, 0);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	return (uint32_t) pid;
}

Test(cma, refuses_forged_and_revoked_keys)
{
	uint8_t bad[RDMX_DEV_RKEY_LEN];
	char dst[64] = { 0 };
	/*
	 * host, reserved, record, token (both halves), reserved. The pid is
	 * not flipped like these: a neighbouring pid may be a thread of this
	 * very process, whose memory process_vm_readv reads as rightly as ours.
	 */
	static const size_t fields[] = { 0, 12, 16, 24, 32, 40 };
	uint32_t pid = htole32(gone_pid());	/* keys are little-endian */

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		memcpy(bad, rkey.wire, sizeof(bad));
		bad[fields[i]] ^= 1;
		cr_assert_eq(read_with(bad, dst, src, sizeof(src)), -FI_EOPNOTSUPP,
			     "key byte %zu changed", fields[i]);
	}
	memcpy(bad, rkey.wire, sizeof(bad));
	memcpy(bad + 8, &pid, sizeof(pid));
	cr_assert_eq(read_as(bad, (struct rdmx_dev_read_peer) {
				.host = cma.host, .session = SESSION, .pid = le32toh(pid) },
			     dst, src, sizeof(src)), -FI_EOPNOTSUPP,
		     "a key naming a process that has ended");
	memset(bad, 0, sizeof(bad));
	cr_assert_eq(read_with(bad, dst, src, sizeof(src)), -FI_EOPNOTSUPP);
	rdmx_cma_revoke(&rkey);
	cr_assert_eq(read_with(rkey.wire, dst, src, sizeof(src)), -FI_EOPNOTSUPP,
		     "a revoked exposure");
	cr_assert_eq(dst[0], 0, "nothing was read");
}

/* A key from a peer the handshake did not show on this host: not read. */
Test(cma, refuses_a_peer_not_on_this_host)
{
	struct rdmx_dev_read_peer peer = self_peer();
	char dst[64] = { 0 };

	peer.host = 0;
	cr_assert_eq(read_as(rkey.wire, peer, dst, src, sizeof(src)), -FI_EOPNOTSUPP,
		     "host unknown");
	peer.host = cma.host ^ 1;
	cr_assert_eq(read_as(rkey.wire, peer, dst, src, sizeof(src)), -FI_EOPNOTSUPP,
		     "another host");
	cr_assert_eq(dst[0], 0, "nothing was read");
}

/*
 * A key whose pid is not the one the sender announced in its handshake
 * (a sender naming another process of this host): not read, whatever
 * the record there holds.
 */
Test(cma, refuses_a_pid_other_than_the_announced_one)
{
	struct rdmx_dev_read_peer peer = self_peer();
	char dst[64] = { 0 };

	peer.pid = (uint32_t) getppid();
	cr_assert_eq(read_as(rkey.wire, peer, dst, src, sizeof(src)), -FI_EOPNOTSUPP);
	peer.pid = 0;
	cr_assert_eq(read_as(rkey.wire, peer, dst, src, sizeof(src)), -FI_EOPNOTSUPP);
	cr_assert_eq(dst[0], 0, "nothing was read");
}

/* An exposure offered to another reader, or in another session: not ours. */
Test(cma, refuses_a_key_bound_to_another_reader_or_session)
{
	struct iovec iov = { src, sizeof(src) };
	struct rdmx_dev_rkey other;
	struct rdmx_dev_read_peer peer = self_peer();
	char dst[64] = { 0 };

	memset(&other, 0, sizeof(other));
	other.peer = self_peer();
	other.peer.pid = gone_pid();
	cr_assert_eq(rdmx_cma_expose(&cma, &iov, 1, &other), 0);
	cr_assert_eq(read_with(other.wire, dst, src, sizeof(src)), -FI_EOPNOTSUPP,
		     "offered to another process");
	peer.session ^= 1;
	cr_assert_eq(read_as(rkey.wire, peer, dst, src, sizeof(src)), -FI_EOPNOTSUPP,
		     "a key read in another session than it was offered in");
	cr_assert_eq(dst[0], 0, "nothing was read");
}

/* Nothing is exposed to a peer not on this host: no address to hand out. */
Test(cma, exposes_only_to_a_peer_on_this_host)
{
	struct iovec iov = { src, sizeof(src) };
	struct rdmx_dev_rkey r;
	static const uint8_t zero[RDMX_DEV_RKEY_LEN];

	memset(&r, 0, sizeof(r));
	r.peer = self_peer();
	r.peer.host = 0;
	cr_assert_eq(rdmx_cma_expose(&cma, &iov, 1, &r), -FI_EOPNOTSUPP);
	r.peer.host = cma.host + 1;
	cr_assert_eq(rdmx_cma_expose(&cma, &iov, 1, &r), -FI_EOPNOTSUPP);
	r.peer = self_peer();
	r.peer.pid = 0;
	cr_assert_eq(rdmx_cma_expose(&cma, &iov, 1, &r), -FI_EOPNOTSUPP, "no pid announced");
	cr_assert(!memcmp(r.wire, zero, sizeof(zero)), "no key was written");
}

/* Tokens are 128 random bits: all differ, and not by a counter's step. */
Test(cma, tokens_are_random)
{
	enum { N = 64 };
	struct iovec iov = { src, sizeof(src) };
	uint64_t tok[N][2];
	struct rdmx_dev_rkey r;

	for (int i = 0; i < N; i++) {
		cr_assert_eq(expose_to_self(&iov, 1, &r), 0);
		memcpy(tok[i], r.wire + 24, sizeof(tok[i]));
	}
	for (int i = 0; i < N; i++) {
		cr_assert(tok[i][0] || tok[i][1]);
		for (int j = 0; j < i; j++)
			cr_assert(tok[i][0] != tok[j][0] && tok[i][1] != tok[j][1],
				  "tokens %d and %d share a half", i, j);
		if (i >= 2)
			cr_assert(tok[i][0] - tok[i - 1][0] != tok[i - 1][0] - tok[i - 2][0],
				  "tokens step by a constant");
	}
}

/* The host digest depends on both inputs and does not carry the boot id. */
Test(cma, host_digest_hides_the_boot_id)
{
	uint8_t boot[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	uint64_t h = rdmx_cma_host_digest(boot, 4026531836ULL), lo, hi;

	memcpy(&lo, boot, 8);
	memcpy(&hi, boot + 8, 8);
	cr_assert_neq(h, 0);
	cr_assert_neq(h, lo);
	cr_assert_neq(h, hi);
	cr_assert_eq(rdmx_cma_host_digest(boot, 4026531836ULL), h, "stable");
	cr_assert_neq(rdmx_cma_host_digest(boot, 4026531837ULL), h, "another pid namespace");
	boot[15] ^= 1;
	cr_assert_neq(rdmx_cma_host_digest(boot, 4026531836ULL), h, "another boot");
}

/* What the child of the next test exposes; the parent's copy says otherwise. */
static char child_msg[32] = "the parent's copy";

/*
 * Between two processes: a child exposes a buffer first to another
 * reader, then to us. The first key is refused though the child is the
 * announced peer and the token is right; the second is read.
 */
Test(cma, reads_another_process_only_when_offered_to_it)
{
	int keys[2], done[2];
	struct rdmx_dev_rkey got[2], key = { .peer = self_peer() };
	struct iovec local, remote = { child_msg, sizeof(child_msg) };
	char dst[sizeof(child_msg)] = { 0 };
	int first, second;
	pid_t pid;

	cr_assert_eq(pipe(keys), 0);
	cr_assert_eq(pipe(done), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		struct rdmx_dev_rkey r[2];
		char c;

		strcpy(child_msg, "the child's message");
		if (!rdmx_cma_init(&cma))	/* a process of its own: its pid */
			_exit(1);
		memset(r, 0, sizeof(r));
		r[0].peer = self_peer();
		r[0].peer.pid = (uint32_t) getpid();	/* a reader other than the parent */
		r[1].peer = self_peer();
		r[1].peer.pid = (uint32_t) getppid();
		if (rdmx_cma_expose(&cma, &remote, 1, &r[0]) ||
		    rdmx_cma_expose(&cma, &remote, 1, &r[1]) ||
		    write(keys[1], r, sizeof(r)) != (ssize_t) sizeof(r))
			_exit(1);
		(void) !read(done[0], &c, 1);
		_exit(0);
	}
	cr_assert_eq(read(keys[0], got, sizeof(got)), (ssize_t) sizeof(got));
	key.peer.pid = (uint32_t) pid;		/* as the child's handshake said */
	local = (struct iovec) { dst, sizeof(dst) };
	memcpy(key.wire, got[0].wire, sizeof(key.wire));
	first = rdmx_cma_read(&cma, &local, 1, &remote, 1, &key, 42);
	memcpy(key.wire, got[1].wire, sizeof(key.wire));
	second = rdmx_cma_read(&cma, &local, 1, &remote, 1, &key, 42);
	cr_assert_eq(write(done[1], "x", 1), 1);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	cr_assert_eq(first, -FI_EOPNOTSUPP, "offered to another reader");
	cr_assert_eq(second, 0);
	cr_assert_eq(poll_one().status, RDMX_DEV_OK);
	cr_assert_str_eq(dst, "the child's message");
}

Test(cma, bad_address_fails_the_read)
{
	struct iovec nowhere = { (void *) 8, 8 };
	struct rdmx_dev_rkey bad;
	char dst[8];

	cr_assert_eq(expose_to_self(&nowhere, 1, &bad), 0);
	cr_assert_eq(read_with(bad.wire, dst, (void *) 8, sizeof(dst)), 0);
	cr_assert_eq(poll_one().status, RDMX_DEV_IO);
}

Test(cma, full_queue_says_eagain)
{
	char dst;
	struct rdmx_dev_cqe cqe[RDMX_CMA_DONE_MAX];

	for (int i = 0; i < RDMX_CMA_DONE_MAX; i++)
		cr_assert_eq(read_with(rkey.wire, &dst, src, 1), 0);
	cr_assert_eq(read_with(rkey.wire, &dst, src, 1), -FI_EAGAIN);
	cr_assert_eq(rdmx_cma_poll(&cma, cqe, RDMX_CMA_DONE_MAX), RDMX_CMA_DONE_MAX);
	cr_assert_eq(read_with(rkey.wire, &dst, src, 1), 0);
}

/* The stub device of the next test: where its one peer receives. */
static bool stub_here;
static int stub_asked;

static bool stub_ah_local(struct rdmx_dev *dev, struct rdmx_ah *ah)
{
	(void) dev; (void) ah;
	stub_asked++;
	return stub_here;
}

/*
 * A host claim counts only from a peer that receives at an address of
 * this host: a remote peer copying this host's digest into its
 * handshake is not on this host, and gets no descriptor. The device is
 * asked once per peer.
 */
Test(cma, a_host_claim_counts_only_from_an_address_of_this_host)
{
	static const struct rdmx_dev_ops ops = { .ah_local = stub_ah_local };
	struct rdmx_hs_local local = { .features = RDMX_HS_FEAT_HOST, .host = 42 };
	struct rdmx_dev dev = { .ops = &ops, .caps = { .read_host = 42 } };
	struct rdmx_ep ep = { .lanes.nic = &dev };
	struct rdmx_peer away = { 0 }, here = { 0 };

	away.hs.local = here.hs.local = &local;
	away.hs.peer_features = here.hs.peer_features = RDMX_HS_FEAT_HOST;
	away.hs.peer_host = here.hs.peer_host = 42;
	cr_assert(rdmx_hs_same_host(&away.hs), "both claim this host");
	stub_here = false;
	cr_assert_not(rdmx_peer_on_host(&ep, &away));
	cr_assert_not(rdmx_peer_on_host(&ep, &away));
	cr_assert_eq(stub_asked, 1);
	stub_here = true;
	cr_assert(rdmx_peer_on_host(&ep, &here));
	here.hs.peer_host = 43;
	cr_assert_not(rdmx_peer_on_host(&ep, &here), "nor does an address back another claim");
}

static bool udp_local(const char *ip)
{
	union rdmx_udp_addr a;

	cr_assert_eq(rdmx_udp_resolve(ip, "7", &a), 0, "%s", ip);
	return rdmx_udp_addr_local(&a);
}

/* udp: loopback and the interfaces' own addresses are this host's. */
Test(cma, udp_knows_the_addresses_of_this_host)
{
	struct ifaddrs *ifas;
	char ip[INET6_ADDRSTRLEN];

	cr_assert(udp_local("127.0.0.1") && udp_local("127.3.2.1") && udp_local("::1"));
	cr_assert_not(udp_local("198.51.100.7"), "TEST-NET-2 is no address of ours");
	cr_assert_not(udp_local("2001:db8::7"));
	cr_assert_eq(getifaddrs(&ifas), 0);
	for (const struct ifaddrs *ifa = ifas; ifa; ifa = ifa->ifa_next) {
		if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET)
			continue;
		inet_ntop(AF_INET, &((const struct sockaddr_in *) ifa->ifa_addr)->sin_addr,
			  ip, sizeof(ip));
		cr_assert(udp_local(ip), "%s of %s", ip, ifa->ifa_name);
	}
	freeifaddrs(ifas);
}
