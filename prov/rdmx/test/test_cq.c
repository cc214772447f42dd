/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx CQ: completions written the way the provider writes them
 * (rdmx_cq_write, rdmx_cq_write_err), read back the way an application
 * reads them (fi_cq_read, fi_cq_readfrom, fi_cq_readerr, fi_cq_sread;
 * fi_cq(3)).
 */
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <rdma/fi_eq.h>

#include "rdmx_test.h"
#include "rdmx_cq.h"

#define ERR_TEXT	"peer 127.0.0.1:4000 unreachable"

static struct rdmx_test_domain td;
static struct fid_cq *cq;

static void cq_setup(void)
{
	rdmx_test_domain_open(&td, RDMX_API_VERSION);
}

/* For the err_data rules of applications written against API 1.4. */
static void cq_setup_api_1_4(void)
{
	rdmx_test_domain_open(&td, FI_VERSION(1, 4));
}

static void cq_teardown(void)
{
	if (cq)
		cr_assert_eq(fi_close(&cq->fid), 0);
	rdmx_test_domain_close(&td);
}

TestSuite(cq, .init = cq_setup, .fini = cq_teardown);
TestSuite(cq_api_1_4, .init = cq_setup_api_1_4, .fini = cq_teardown);

static void cq_open(enum fi_cq_format format, enum fi_wait_obj wait_obj,
		    size_t size)
{
	struct fi_cq_attr attr = {
		.format = format,
		.wait_obj = wait_obj,
		.size = size,
	};
	int ret;

	ret = fi_cq_open(td.domain, &attr, &cq, NULL);
	cr_assert_eq(ret, 0, "cq open: %s", fi_strerror(-ret));
}

/* Completion n: every field distinct from every other completion's. */
static struct rdmx_cq_entry entry(uint64_t n)
{
	return (struct rdmx_cq_entry) {
		.op_context = (void *) (uintptr_t) (0x1000 + n),
		.flags = FI_RECV | FI_TAGGED | (n % 2 ? FI_REMOTE_CQ_DATA : 0),
		.len = 100 + n,
		.buf = (void *) (uintptr_t) (0x20000 + n),
		.data = 0xd000000000000000ULL + n,
		.tag = 0x7000000000000000ULL + n,
		.src = 20 + n,
	};
}

static void write_entry(uint64_t n)
{
	struct rdmx_cq_entry e = entry(n);

	cr_assert_eq(rdmx_cq_write(rdmx_container_of(cq, struct rdmx_cq, cq_fid), &e), 0);
}

static void write_err(uint64_t n, int err, size_t olen)
{
	struct rdmx_cq_entry e = entry(n);

	cr_assert_eq(rdmx_cq_write_err(rdmx_container_of(cq, struct rdmx_cq, cq_fid),
				       &e, err, olen, ERR_TEXT), 0);
}

/*
 * Reads one completion in the given format and checks each field the
 * format has; each format extends the one before it (fi_cq(3)), and no
 * byte past the format's entry may be written.
 */
static void expect_format(enum fi_cq_format format, size_t size)
{
	struct rdmx_cq_entry want = entry(5);
	union {
		struct fi_cq_tagged_entry e;
		uint8_t bytes[2 * sizeof(struct fi_cq_tagged_entry)];
	} out;
	fi_addr_t src[2] = { 0, 0 };

	cq_open(format, FI_WAIT_NONE, 0);
	write_entry(5);
	memset(&out, 0xa5, sizeof(out));
	cr_assert_eq(fi_cq_readfrom(cq, &out, 1, src), 1);
	cr_assert_eq(out.e.op_context, want.op_context);
	if (format >= FI_CQ_FORMAT_MSG) {
		cr_assert_eq(out.e.flags, want.flags);
		cr_assert_eq(out.e.len, want.len);
	}
	if (format >= FI_CQ_FORMAT_DATA) {
		cr_assert_eq(out.e.buf, want.buf);
		cr_assert_eq(out.e.data, want.data);
	}
	if (format == FI_CQ_FORMAT_TAGGED)
		cr_assert_eq(out.e.tag, want.tag);
	for (size_t i = size; i < sizeof(out); i++)
		cr_assert_eq(out.bytes[i], 0xa5, "byte %zu written past a %zu-byte entry",
			     i, size);
	cr_assert_eq(src[0], want.src);
	cr_assert_eq(src[1], 0, "source written for an entry not read");
	cr_assert_eq(fi_cq_readfrom(cq, &out, 1, src), -FI_EAGAIN);
}

Test(cq, read_context_format)
{
	expect_format(FI_CQ_FORMAT_CONTEXT, sizeof(struct fi_cq_entry));
}

Test(cq, read_msg_format)
{
	expect_format(FI_CQ_FORMAT_MSG, sizeof(struct fi_cq_msg_entry));
}

Test(cq, read_data_format)
{
	expect_format(FI_CQ_FORMAT_DATA, sizeof(struct fi_cq_data_entry));
}

Test(cq, read_tagged_format)
{
	expect_format(FI_CQ_FORMAT_TAGGED, sizeof(struct fi_cq_tagged_entry));
}

Test(cq, unknown_format_is_invalid)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_TAGGED + 1 };
	struct fid_cq *bad = NULL;

	cr_assert_eq(fi_cq_open(td.domain, &attr, &bad, NULL), -FI_EINVAL);
	cr_assert_null(bad);
}

Test(cq, empty_gives_eagain)
{
	struct fi_cq_tagged_entry out;
	struct fi_cq_err_entry err = { 0 };
	fi_addr_t src;

	cq_open(FI_CQ_FORMAT_TAGGED, FI_WAIT_NONE, 0);
	cr_assert_eq(fi_cq_read(cq, &out, 1), -FI_EAGAIN);
	cr_assert_eq(fi_cq_readfrom(cq, &out, 1, &src), -FI_EAGAIN);
	cr_assert_eq(fi_cq_readerr(cq, &err, 0), -FI_EAGAIN);
}

/* A read takes what is there, up to count, oldest first. */
Test(cq, read_many_in_order)
{
	struct fi_cq_tagged_entry out[8];
	fi_addr_t src[8];

	cq_open(FI_CQ_FORMAT_TAGGED, FI_WAIT_NONE, 0);
	for (uint64_t n = 0; n < 3; n++)
		write_entry(n);
	cr_assert_eq(fi_cq_readfrom(cq, out, 8, src), 3);
	for (uint64_t n = 0; n < 3; n++) {
		cr_assert_eq(out[n].op_context, entry(n).op_context);
		cr_assert_eq(out[n].tag, entry(n).tag);
		cr_assert_eq(src[n], entry(n).src);
	}
	cr_assert_eq(fi_cq_read(cq, out, 8), -FI_EAGAIN);
}

/*
 * A 16-entry CQ takes 5000 completions without losing or reordering one,
 * also when the ring has wrapped before it grows.
 */
Test(cq, ring_grows_past_size)
{
	struct fi_cq_tagged_entry out[7];
	fi_addr_t src[7];
	uint64_t next = 0, total = 10 + 5000;
	ssize_t ret;

	cq_open(FI_CQ_FORMAT_TAGGED, FI_WAIT_NONE, 16);
	for (uint64_t n = 0; n < 10; n++)
		write_entry(n);
	cr_assert_eq(fi_cq_readfrom(cq, out, 5, src), 5);
	next = 5;
	for (uint64_t n = 10; n < total; n++)
		write_entry(n);
	while ((ret = fi_cq_readfrom(cq, out, 7, src)) > 0) {
		for (ssize_t i = 0; i < ret; i++, next++) {
			cr_assert_eq(out[i].op_context, entry(next).op_context,
				     "completion %lu out of order", (unsigned long) next);
			cr_assert_eq(out[i].len, entry(next).len);
			cr_assert_eq(src[i], entry(next).src);
		}
	}
	cr_assert_eq(ret, -FI_EAGAIN);
	cr_assert_eq(next, total, "read %lu of %lu", (unsigned long) next,
		     (unsigned long) total);
}

/*
 * Reads one error entry offering a caller buffer of size bytes. The entry
 * is cleared first: after a read that returned the provider's text,
 * err_data points at a buffer the next read may free (fi_cq(3)).
 */
static void readerr_into(struct fi_cq_err_entry *err, char *mine, size_t size)
{
	memset(err, 0, sizeof(*err));
	err->err_data = mine;
	err->err_data_size = size;
	cr_assert_eq(fi_cq_readerr(cq, err, 0), 1);
}

/* An error waiting blocks fi_cq_read until fi_cq_readerr takes it. */
Test(cq, error_entry_gives_eavail)
{
	struct fi_cq_tagged_entry out;
	struct fi_cq_err_entry err;
	fi_addr_t src;

	cq_open(FI_CQ_FORMAT_TAGGED, FI_WAIT_NONE, 0);
	write_entry(1);
	write_err(2, FI_EHOSTUNREACH, 0);
	cr_assert_eq(fi_cq_read(cq, &out, 1), -FI_EAVAIL);
	cr_assert_eq(fi_cq_readfrom(cq, &out, 1, &src), -FI_EAVAIL);
	readerr_into(&err, NULL, 0);
	cr_assert_eq(fi_cq_read(cq, &out, 1), 1);
	cr_assert_eq(out.op_context, entry(1).op_context);
	memset(&err, 0, sizeof(err));
	cr_assert_eq(fi_cq_readerr(cq, &err, 0), -FI_EAGAIN);
}

Test(cq, readerr_fills_every_field)
{
	struct rdmx_cq_entry want = entry(3);
	struct fi_cq_err_entry err;

	cq_open(FI_CQ_FORMAT_TAGGED, FI_WAIT_NONE, 0);
	write_err(3, FI_ETRUNC, 42);
	readerr_into(&err, NULL, 0);
	cr_assert_eq(err.op_context, want.op_context);
	cr_assert_eq(err.flags, want.flags);
	cr_assert_eq(err.len, want.len);
	cr_assert_eq(err.buf, want.buf);
	cr_assert_eq(err.data, want.data);
	cr_assert_eq(err.tag, want.tag);
	cr_assert_eq(err.olen, 42);
	cr_assert_eq(err.err, FI_ETRUNC, "err is the positive code");
	cr_assert_eq(err.prov_errno, FI_ETRUNC);
}

/* Error entries come out in the order they were written. */
Test(cq, readerr_oldest_first)
{
	struct fi_cq_err_entry err;

	cq_open(FI_CQ_FORMAT_CONTEXT, FI_WAIT_NONE, 0);
	write_err(1, FI_EIO, 0);
	write_err(2, FI_ECANCELED, 0);
	readerr_into(&err, NULL, 0);
	cr_assert_eq(err.op_context, entry(1).op_context);
	cr_assert_eq(err.err, FI_EIO);
	readerr_into(&err, NULL, 0);
	cr_assert_eq(err.op_context, entry(2).op_context);
	cr_assert_eq(err.err, FI_ECANCELED);
}

/* API >= 1.5 with a buffer: the text is copied into it (fi_cq(3)). */
Test(cq, readerr_copies_err_data_into_caller_buffer)
{
	struct fi_cq_err_entry err;
	char mine[64];

	cq_open(FI_CQ_FORMAT_CONTEXT, FI_WAIT_NONE, 0);
	write_err(1, FI_EHOSTUNREACH, 0);
	memset(mine, 'x', sizeof(mine));
	readerr_into(&err, mine, sizeof(mine));
	cr_assert_eq(err.err_data, mine);
	cr_assert_eq(err.err_data_size, sizeof(ERR_TEXT));
	cr_assert_str_eq(mine, ERR_TEXT);
	cr_assert_eq(mine[sizeof(ERR_TEXT)], 'x', "copied more than err_data_size");
}

Test(cq, readerr_truncates_err_data_to_small_buffer)
{
	struct fi_cq_err_entry err;
	char mine[8];

	cq_open(FI_CQ_FORMAT_CONTEXT, FI_WAIT_NONE, 0);
	write_err(1, FI_EHOSTUNREACH, 0);
	memset(mine, 'x', sizeof(mine));
	readerr_into(&err, mine, 5);
	cr_assert_eq(err.err_data, mine);
	cr_assert_eq(err.err_data_size, 5);
	cr_assert_eq(memcmp(mine, ERR_TEXT, 5), 0);
	cr_assert_eq(mine[5], 'x', "wrote past the caller's err_data_size");
}

/*
 * err_data_size 0: the caller's pointer is ignored and the provider's own
 * text returned, valid until the next read of the CQ.
 */
Test(cq, readerr_without_buffer_returns_provider_text)
{
	struct fi_cq_err_entry err;
	char mine[64];

	cq_open(FI_CQ_FORMAT_CONTEXT, FI_WAIT_NONE, 0);
	write_err(1, FI_EHOSTUNREACH, 0);
	memset(mine, 'x', sizeof(mine));
	readerr_into(&err, mine, 0);
	cr_assert_not_null(err.err_data);
	cr_assert_neq(err.err_data, mine);
	cr_assert_eq(err.err_data_size, sizeof(ERR_TEXT));
	cr_assert_str_eq(err.err_data, ERR_TEXT);
	cr_assert_eq(mine[0], 'x', "an ignored buffer was written");

	/* New completions are not reads: the text must survive them. */
	write_err(2, FI_EIO, 0);
	write_entry(3);
	cr_assert_str_eq(err.err_data, ERR_TEXT);
}

/*
 * A fabric opened at API 1.4 always gets the provider's text (fi_cq(3)),
 * in the 1.0 entry, which ends before err_data_size: nothing past it is
 * written (the caller's struct may be that short).
 */
Test(cq_api_1_4, readerr_returns_provider_text)
{
	struct fi_cq_err_entry err;
	char mine[64];

	cq_open(FI_CQ_FORMAT_CONTEXT, FI_WAIT_NONE, 0);
	write_err(1, FI_EHOSTUNREACH, 0);
	memset(mine, 'x', sizeof(mine));
	readerr_into(&err, mine, sizeof(mine));
	cr_assert_neq(err.err_data, mine);
	cr_assert_str_eq(err.err_data, ERR_TEXT);
	cr_assert_eq(err.err_data_size, sizeof(mine), "the 1.0 entry has no err_data_size");
	cr_assert_eq(mine[0], 'x', "an ignored buffer was written");
}

Test(cq, strerror_returns_err_data_text)
{
	struct fi_cq_err_entry err;
	char mine[64], text[16];
	const char *str;

	cq_open(FI_CQ_FORMAT_CONTEXT, FI_WAIT_NONE, 0);
	write_err(1, FI_EHOSTUNREACH, 0);
	readerr_into(&err, mine, sizeof(mine));
	str = fi_cq_strerror(cq, err.prov_errno, err.err_data, NULL, 0);
	cr_assert_str_eq(str, ERR_TEXT);
	str = fi_cq_strerror(cq, err.prov_errno, err.err_data, text, sizeof(text));
	cr_assert_eq(str, text);
	cr_assert_eq(memcmp(text, ERR_TEXT, sizeof(text) - 1), 0);
	cr_assert_eq(text[sizeof(text) - 1], '\0');
}

Test(cq, sread_without_wait_object_is_enosys)
{
	struct fi_cq_entry out;

	cq_open(FI_CQ_FORMAT_CONTEXT, FI_WAIT_NONE, 0);
	cr_assert_eq(fi_cq_sread(cq, &out, 1, NULL, 10), -FI_ENOSYS);
}

static double elapsed_ms(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) * 1e3 +
	       (now.tv_nsec - start->tv_nsec) / 1e6;
}

/* A waiter that never gives up would hang the run: let Criterion end it. */
Test(cq, sread_times_out_on_empty_cq, .timeout = 20)
{
	struct fi_cq_entry out;
	struct timespec start;
	double ms;

	cq_open(FI_CQ_FORMAT_CONTEXT, FI_WAIT_UNSPEC, 0);
	clock_gettime(CLOCK_MONOTONIC, &start);
	cr_assert_eq(fi_cq_sread(cq, &out, 1, NULL, 10), -FI_EAGAIN);
	ms = elapsed_ms(&start);
	/* The provider counts whole milliseconds, so allow it one early. */
	cr_assert_geq(ms, 9.0, "returned after %.3f ms of a 10 ms timeout", ms);
	cr_assert_lt(ms, 5000.0, "returned after %.3f ms of a 10 ms timeout", ms);
}

Test(cq, sread_returns_waiting_entries, .timeout = 20)
{
	struct fi_cq_entry out[2];
	fi_addr_t src[2];

	cq_open(FI_CQ_FORMAT_CONTEXT, FI_WAIT_UNSPEC, 0);
	write_entry(1);
	cr_assert_eq(fi_cq_sreadfrom(cq, out, 2, src, NULL, -1), 1);
	cr_assert_eq(out[0].op_context, entry(1).op_context);
	cr_assert_eq(src[0], entry(1).src);
	write_err(2, FI_EIO, 0);
	cr_assert_eq(fi_cq_sread(cq, out, 2, NULL, -1), -FI_EAVAIL);
}

static int sread_started;

/* Waits on the CQ with no timeout; only fi_cq_signal can end it. */
static void *sread_forever(void *arg)
{
	struct fi_cq_entry out;

	__atomic_store_n(&sread_started, 1, __ATOMIC_RELEASE);
	*(ssize_t *) arg = fi_cq_sread(cq, &out, 1, NULL, -1);
	return NULL;
}

/* Only fi_cq_signal ends this wait; without it the timeout fails the test. */
Test(cq, signal_wakes_pending_sread, .timeout = 20)
{
	pthread_t thread;
	ssize_t ret = 1;

	cq_open(FI_CQ_FORMAT_CONTEXT, FI_WAIT_UNSPEC, 0);
	cr_assert_eq(pthread_create(&thread, NULL, sread_forever, &ret), 0);
	while (!__atomic_load_n(&sread_started, __ATOMIC_ACQUIRE))
		sched_yield();
	cr_assert_eq(fi_cq_signal(cq), 0);
	cr_assert_eq(pthread_join(thread, NULL), 0);
	cr_assert_eq(ret, -FI_EAGAIN);
}
