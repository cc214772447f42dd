/*
 * rdmx_cma: long-read between processes of one host. A reader reads
 * only what a live exposure covers; a forged, foreign or revoked key, or
 * a range outside the exposure, is refused; a bad address fails the
 * read, never the reader. The tests read this process itself, which the
 * kernel allows whenever CMA works at all.
 */
#include <endian.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rdmx_test.h"
#include "rdmx_cma.h"

static struct rdmx_cma cma;
static struct rdmx_dev_rkey rkey;
static struct rdmx_dev_cqe cqe_sink[1];
static char src[64] = "the bytes a local peer exposes";

static void cma_setup(void)
{
	struct iovec iov = { src, sizeof(src) };

	cr_assert(rdmx_cma_init(&cma), "process_vm_readv works on this machine");
	cr_assert_eq(rdmx_cma_expose(&cma, &iov, 1, &rkey), 0);
}

TestSuite(cma, .init = cma_setup);

/* Reads len bytes at from into dst with key; returns the post's result. */
static int read_with(const void *key, void *dst, const void *from, size_t len)
{
	struct iovec local = { dst, len }, remote = { (void *) from, len };

	return rdmx_cma_read(&cma, &local, 1, &remote, 1, key, 42);
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

	cr_assert_eq(rdmx_cma_expose(&cma, exposed, 2, &two), 0);
	cr_assert_eq(rdmx_cma_read(&cma, local, 2, exposed, 2, two.wire, 42), 0);
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

		cr_assert_eq(rdmx_cma_expose(&cma, &mid, 1, &part), 0);
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
	 * host, pidns, record, token. The pid is not flipped like these: a
	 * neighbouring pid may be a thread of this very process, whose memory
	 * process_vm_readv reads as rightly as ours.
	 */
	static const size_t fields[] = { 0, 16, 32, 40 };
	uint32_t pid = htole32(gone_pid());	/* keys are little-endian */

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		memcpy(bad, rkey.wire, sizeof(bad));
		bad[fields[i]] ^= 1;
		cr_assert_eq(read_with(bad, dst, src, sizeof(src)), -FI_EOPNOTSUPP,
			     "key byte %zu changed", fields[i]);
	}
	memcpy(bad, rkey.wire, sizeof(bad));
	memcpy(bad + 24, &pid, sizeof(pid));
	cr_assert_eq(read_with(bad, dst, src, sizeof(src)), -FI_EOPNOTSUPP,
		     "a key naming a process that has ended");
	memset(bad, 0, sizeof(bad));
	cr_assert_eq(read_with(bad, dst, src, sizeof(src)), -FI_EOPNOTSUPP);
	rdmx_cma_revoke(&rkey);
	cr_assert_eq(read_with(rkey.wire, dst, src, sizeof(src)), -FI_EOPNOTSUPP,
		     "a revoked exposure");
	cr_assert_eq(dst[0], 0, "nothing was read");
}

Test(cma, bad_address_fails_the_read)
{
	struct iovec nowhere = { (void *) 8, 8 };
	struct rdmx_dev_rkey bad;
	char dst[8];

	cr_assert_eq(rdmx_cma_expose(&cma, &nowhere, 1, &bad), 0);
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
