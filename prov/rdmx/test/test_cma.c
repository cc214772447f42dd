/*
 * rdmx_cma: long-read between processes of one host. A reader reads
 * only what a genuine key names; a forged or foreign key is refused, a
 * bad address fails the read, never the reader. The tests read this
 * process itself, which the kernel allows whenever CMA works at all.
 */
#include "rdmx_test.h"
#include "rdmx_cma.h"

static struct rdmx_cma cma;
static struct rdmx_dev_cqe cqe_sink[1];

static void cma_setup(void)
{
	cr_assert(rdmx_cma_init(&cma), "process_vm_readv works on this machine");
}

TestSuite(cma, .init = cma_setup);

/* Reads len bytes at src into dst with key; returns the post's result. */
static int read_with(const void *key, void *dst, const void *src, size_t len)
{
	struct iovec local = { dst, len }, remote = { (void *) src, len };

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

Test(cma, reads_what_the_key_names)
{
	uint8_t key[RDMX_DEV_RKEY_LEN];
	char src[64] = "the bytes a local peer exposes", dst[64] = { 0 };

	rdmx_cma_key(&cma, key);
	cr_assert_eq(read_with(key, dst, src, sizeof(src)), 0);
	cr_assert_eq(poll_one().status, RDMX_DEV_OK);
	cr_assert_str_eq(dst, src);
	cr_assert_eq(rdmx_cma_poll(&cma, cqe_sink, 1), 0, "one completion per read");
}

Test(cma, scatters_and_gathers)
{
	uint8_t key[RDMX_DEV_RKEY_LEN];
	char src[10] = "abcdefghi", a[3] = { 0 }, b[7] = { 0 };
	struct iovec local[2] = { { a, 3 }, { b, 7 } };
	struct iovec remote[2] = { { src, 6 }, { src + 6, 4 } };

	rdmx_cma_key(&cma, key);
	cr_assert_eq(rdmx_cma_read(&cma, local, 2, remote, 2, key, 42), 0);
	cr_assert_eq(poll_one().status, RDMX_DEV_OK);
	cr_assert(!memcmp(a, "abc", 3) && !memcmp(b, "defghi", 7));
}

Test(cma, refuses_forged_keys)
{
	uint8_t key[RDMX_DEV_RKEY_LEN], bad[RDMX_DEV_RKEY_LEN];
	char src[8] = "secret", dst[8] = { 0 };

	rdmx_cma_key(&cma, key);
	memcpy(bad, key, sizeof(bad));
	bad[40] ^= 1;			/* the cookie */
	cr_assert_eq(read_with(bad, dst, src, sizeof(src)), -FI_EOPNOTSUPP);
	memcpy(bad, key, sizeof(bad));
	bad[0] ^= 1;			/* the host */
	cr_assert_eq(read_with(bad, dst, src, sizeof(src)), -FI_EOPNOTSUPP);
	memcpy(bad, key, sizeof(bad));
	bad[16] ^= 1;			/* the pid namespace */
	cr_assert_eq(read_with(bad, dst, src, sizeof(src)), -FI_EOPNOTSUPP);
	memset(bad, 0, sizeof(bad));
	cr_assert_eq(read_with(bad, dst, src, sizeof(src)), -FI_EOPNOTSUPP);
	cr_assert_eq(dst[0], 0, "nothing was read");
	cr_assert_eq(rdmx_cma_poll(&cma, cqe_sink, 1), 0, "a refusal completes nothing");
}

Test(cma, bad_address_fails_the_read)
{
	uint8_t key[RDMX_DEV_RKEY_LEN];
	char dst[8];

	rdmx_cma_key(&cma, key);
	cr_assert_eq(read_with(key, dst, (void *) 8, sizeof(dst)), 0);
	cr_assert_eq(poll_one().status, RDMX_DEV_IO);
}

Test(cma, full_queue_says_eagain)
{
	uint8_t key[RDMX_DEV_RKEY_LEN];
	char src = 'x', dst;
	struct rdmx_dev_cqe cqe[RDMX_CMA_DONE_MAX];

	rdmx_cma_key(&cma, key);
	for (int i = 0; i < RDMX_CMA_DONE_MAX; i++)
		cr_assert_eq(read_with(key, &dst, &src, 1), 0);
	cr_assert_eq(read_with(key, &dst, &src, 1), -FI_EAGAIN);
	cr_assert_eq(rdmx_cma_poll(&cma, cqe, RDMX_CMA_DONE_MAX), RDMX_CMA_DONE_MAX);
	cr_assert_eq(read_with(key, &dst, &src, 1), 0);
}
