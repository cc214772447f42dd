/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx AV through the calls an application makes (fi_av_insert, lookup,
 * straddr, remove; fi_av(3)), on a domain opened on loopback.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef __SANITIZE_ADDRESS__
/* libasan's count of live heap bytes (gcc ships no header for it). */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

#include <rdma/fi_domain.h>

#include "rdmx_test.h"
#include "rdmx_av.h"
#include "rdmx_domain.h"

static struct rdmx_test_domain td;
static struct fid_av *av;

static void av_setup(void)
{
	rdmx_test_domain_open(&td, RDMX_API_VERSION);
}

static void av_teardown(void)
{
	if (av)
		cr_assert_eq(fi_close(&av->fid), 0);
	rdmx_test_domain_close(&td);
}

TestSuite(av, .init = av_setup, .fini = av_teardown);

static void av_open(enum fi_av_type type, size_t count)
{
	struct fi_av_attr attr = { .type = type, .count = count };
	int ret;

	ret = fi_av_open(td.domain, &attr, &av, NULL);
	cr_assert_eq(ret, 0, "av open: %s", fi_strerror(-ret));
}

/* Inserts one socket address and returns its fi_addr. */
static fi_addr_t insert_one(const void *addr)
{
	fi_addr_t fi_addr = FI_ADDR_NOTAVAIL;

	cr_assert_eq(fi_av_insert(av, addr, 1, &fi_addr, 0, NULL), 1);
	cr_assert_neq(fi_addr, FI_ADDR_NOTAVAIL);
	return fi_addr;
}

/* fi_av_lookup must give back exactly the len bytes at want. */
static void expect_lookup(fi_addr_t fi_addr, const void *want, size_t len)
{
	uint8_t got[64];
	size_t got_len = sizeof(got);
	int ret;

	memset(got, 0xee, sizeof(got));
	ret = fi_av_lookup(av, fi_addr, got, &got_len);
	cr_assert_eq(ret, 0, "lookup %lu: %s", (unsigned long) fi_addr,
		     fi_strerror(-ret));
	cr_assert_eq(got_len, len, "lookup %lu length", (unsigned long) fi_addr);
	cr_assert_arr_eq(got, want, len, "lookup %lu bytes", (unsigned long) fi_addr);
}

/* The entry rdmx's receive path would report for a packet from addr. */
static fi_addr_t reverse(const void *addr, size_t len)
{
	struct rdmx_av *rav = rdmx_container_of(av, struct rdmx_av, av_fid);
	uint8_t canon[RDMX_DEV_ADDR_MAX];

	cr_assert_eq(rdmx_domain(td.domain)->dev_ops->addr_canon(addr, len, canon), 0);
	return rdmx_av_reverse(rav, canon);
}

Test(av, fi_addr_of_table_counts_from_zero)
{
	struct sockaddr_in a = rdmx_test_sin("127.0.0.1", 4000);
	struct sockaddr_in b = rdmx_test_sin("127.0.0.1", 4001);

	av_open(FI_AV_TABLE, 0);
	cr_assert_eq(insert_one(&a), 0);
	cr_assert_eq(insert_one(&b), 1);
}

/* Several entries in one call, of mixed families, each its own size. */
Test(av, insert_mixed_families_in_one_call)
{
	struct sockaddr_in a = rdmx_test_sin("127.0.0.1", 4000);
	struct sockaddr_in6 b = rdmx_test_sin6("::1", 4001);
	struct sockaddr_in c = rdmx_test_sin("10.1.2.3", 4002);
	uint8_t buf[sizeof(a) + sizeof(b) + sizeof(c)];
	fi_addr_t fi_addr[3];

	memcpy(buf, &a, sizeof(a));
	memcpy(buf + sizeof(a), &b, sizeof(b));
	memcpy(buf + sizeof(a) + sizeof(b), &c, sizeof(c));
	av_open(FI_AV_TABLE, 0);
	cr_assert_eq(fi_av_insert(av, buf, 3, fi_addr, 0, NULL), 3);
	cr_assert_neq(fi_addr[0], fi_addr[1]);
	cr_assert_neq(fi_addr[1], fi_addr[2]);
	cr_assert_neq(fi_addr[0], fi_addr[2]);
	expect_lookup(fi_addr[0], &a, sizeof(a));
	expect_lookup(fi_addr[1], &b, sizeof(b));
	expect_lookup(fi_addr[2], &c, sizeof(c));
}

/*
 * FI_SYNC_ERR: the context is an int per entry; a bad entry is reported
 * there and gets FI_ADDR_NOTAVAIL, the good ones are still inserted, and
 * the return value counts only the successes.
 */
Test(av, sync_err_reports_bad_entry)
{
	struct sockaddr_in a = rdmx_test_sin("127.0.0.1", 4000);
	struct sockaddr_in6 b = rdmx_test_sin6("::1", 4001);
	struct sockaddr_in6 bad = rdmx_test_sin6("::1", 4002);
	uint8_t buf[sizeof(a) + sizeof(b) + sizeof(bad)];
	fi_addr_t fi_addr[3];
	int errors[3] = { 99, 99, 99 };

	bad.sin6_family = AF_UNIX;
	memcpy(buf, &a, sizeof(a));
	memcpy(buf + sizeof(a), &b, sizeof(b));
	memcpy(buf + sizeof(a) + sizeof(b), &bad, sizeof(bad));
	av_open(FI_AV_MAP, 0);
	cr_assert_eq(fi_av_insert(av, buf, 3, fi_addr, FI_SYNC_ERR, errors), 2);
	cr_assert_eq(errors[0], 0);
	cr_assert_eq(errors[1], 0);
	cr_assert_eq(errors[2], -FI_EINVAL);
	cr_assert_eq(fi_addr[2], FI_ADDR_NOTAVAIL);
	expect_lookup(fi_addr[0], &a, sizeof(a));
	expect_lookup(fi_addr[1], &b, sizeof(b));
}

Test(av, insert_bad_entry_without_sync_err)
{
	struct sockaddr_in bad = rdmx_test_sin("127.0.0.1", 4000);
	fi_addr_t fi_addr = 0;

	bad.sin_family = AF_UNIX;
	av_open(FI_AV_TABLE, 0);
	cr_assert_eq(fi_av_insert(av, &bad, 1, &fi_addr, 0, NULL), 0);
	cr_assert_eq(fi_addr, FI_ADDR_NOTAVAIL);
}

/* A short buffer gets what fits, and *addrlen tells the size needed. */
Test(av, lookup_with_small_buffer_copies_prefix)
{
	struct sockaddr_in6 a = rdmx_test_sin6("::1", 4000);
	uint8_t got[8];
	size_t len = sizeof(got);
	fi_addr_t fi_addr;

	av_open(FI_AV_TABLE, 0);
	fi_addr = insert_one(&a);
	cr_assert_eq(fi_av_lookup(av, fi_addr, got, &len), 0);
	cr_assert_eq(len, sizeof(a));
	cr_assert_arr_eq(got, &a, sizeof(got));
}

Test(av, lookup_of_unknown_fi_addr_fails)
{
	uint8_t got[32];
	size_t len = sizeof(got);

	av_open(FI_AV_TABLE, 0);
	cr_assert_eq(fi_av_lookup(av, 0, got, &len), -FI_EINVAL);
	cr_assert_eq(fi_av_lookup(av, 12345, got, &len), -FI_EINVAL);
}

Test(av, straddr_formats_ipv4_and_ipv6)
{
	struct sockaddr_in a = rdmx_test_sin("127.0.0.1", 4000);
	struct sockaddr_in6 b = rdmx_test_sin6("::1", 4001);
	char buf[64];
	size_t len = sizeof(buf);

	av_open(FI_AV_TABLE, 0);
	cr_assert_eq(fi_av_straddr(av, &a, buf, &len), buf);
	cr_assert_str_eq(buf, "fi_sockaddr_in://127.0.0.1:4000");
	cr_assert_eq(len, strlen(buf) + 1);
	len = sizeof(buf);
	cr_assert_eq(fi_av_straddr(av, &b, buf, &len), buf);
	cr_assert_str_eq(buf, "fi_sockaddr_in6://[::1]:4001");
	cr_assert_eq(len, strlen(buf) + 1);
}

/* fi_av(3): the string is truncated and *len set to the size needed. */
Test(av, straddr_truncates_to_small_buffer)
{
	static const char full[] = "fi_sockaddr_in://127.0.0.1:4000";
	struct sockaddr_in a = rdmx_test_sin("127.0.0.1", 4000);
	char buf[11];
	size_t len = 10;

	memset(buf, 'x', sizeof(buf));
	av_open(FI_AV_TABLE, 0);
	cr_assert_eq(fi_av_straddr(av, &a, buf, &len), buf);
	cr_assert_eq(len, sizeof(full));
	cr_assert_eq(memcmp(buf, full, 9), 0);
	cr_assert_eq(buf[9], '\0');
	cr_assert_eq(buf[10], 'x', "wrote past the length given");
}

/* Removes fi_addr and checks it answers to nothing afterwards. */
static void remove_and_check(fi_addr_t fi_addr, const void *addr, size_t len)
{
	uint8_t got[32];
	size_t got_len = sizeof(got);

	cr_assert_eq(fi_av_remove(av, &fi_addr, 1, 0), 0);
	cr_assert_eq(fi_av_lookup(av, fi_addr, got, &got_len), -FI_EINVAL);
	cr_assert_eq(reverse(addr, len), FI_ADDR_NOTAVAIL);
}

Test(av, remove_then_lookup_fails)
{
	struct sockaddr_in a = rdmx_test_sin("127.0.0.1", 4000);
	struct sockaddr_in b = rdmx_test_sin("127.0.0.1", 4001);
	fi_addr_t fa, fb;

	av_open(FI_AV_TABLE, 0);
	fa = insert_one(&a);
	fb = insert_one(&b);
	remove_and_check(fa, &a, sizeof(a));
	expect_lookup(fb, &b, sizeof(b));
	cr_assert_eq(fi_av_remove(av, &fa, 1, 0), -FI_EINVAL, "removed twice");
}

/* fi_av(3): a table's indices are never handed out again. */
Test(av, table_never_reuses_removed_index)
{
	struct sockaddr_in a = rdmx_test_sin("127.0.0.1", 4000);
	struct sockaddr_in b = rdmx_test_sin("127.0.0.1", 4001);
	struct sockaddr_in c = rdmx_test_sin("127.0.0.1", 4002);
	fi_addr_t fa, fb, fc;

	av_open(FI_AV_TABLE, 0);
	fa = insert_one(&a);
	fb = insert_one(&b);
	remove_and_check(fa, &a, sizeof(a));
	fc = insert_one(&c);
	cr_assert_neq(fc, fa);
	cr_assert_neq(fc, fb);
	expect_lookup(fc, &c, sizeof(c));
}

Test(av, map_reuses_removed_slot)
{
	struct sockaddr_in a = rdmx_test_sin("127.0.0.1", 4000);
	struct sockaddr_in b = rdmx_test_sin("127.0.0.1", 4001);
	struct sockaddr_in c = rdmx_test_sin("127.0.0.1", 4002);
	fi_addr_t fa, fc;

	av_open(FI_AV_MAP, 0);
	fa = insert_one(&a);
	insert_one(&b);
	remove_and_check(fa, &a, sizeof(a));
	fc = insert_one(&c);
	cr_assert_eq(fc, fa);
	expect_lookup(fc, &c, sizeof(c));
	cr_assert_eq(reverse(&c, sizeof(c)), fc);
}

/* The count hint is a hint: inserts go on far past it, in one call. */
Test(av, grows_past_count_hint)
{
	const size_t count = 10000;
	struct sockaddr_in *addrs = calloc(count, sizeof(*addrs));
	fi_addr_t *fi_addr = calloc(count, sizeof(*fi_addr));
	char ip[INET_ADDRSTRLEN];

	cr_assert(addrs && fi_addr);
	for (size_t i = 0; i < count; i++) {
		snprintf(ip, sizeof(ip), "10.0.%zu.%zu", i / 250, i % 250 + 1);
		addrs[i] = rdmx_test_sin(ip, (uint16_t) (4000 + i % 3));
	}
	av_open(FI_AV_TABLE, 4);
	cr_assert_eq(fi_av_insert(av, addrs, count, fi_addr, 0, NULL), (int) count);
	for (size_t i = 0; i < count; i++) {
		cr_assert_eq(fi_addr[i], i);
		expect_lookup(fi_addr[i], &addrs[i], sizeof(addrs[i]));
		cr_assert_eq(reverse(&addrs[i], sizeof(addrs[i])), fi_addr[i]);
	}
	free(addrs);
	free(fi_addr);
}

Test(av, reverse_finds_entries)
{
	struct sockaddr_in a = rdmx_test_sin("127.0.0.1", 4000);
	struct sockaddr_in6 b = rdmx_test_sin6("::1", 4000);
	struct sockaddr_in other = rdmx_test_sin("127.0.0.1", 4001);
	fi_addr_t fa, fb;

	av_open(FI_AV_MAP, 0);
	fa = insert_one(&a);
	fb = insert_one(&b);
	cr_assert_eq(reverse(&a, sizeof(a)), fa);
	cr_assert_eq(reverse(&b, sizeof(b)), fb);
	cr_assert_eq(reverse(&other, sizeof(other)), FI_ADDR_NOTAVAIL,
		     "the port is part of the address");
}

/*
 * An address inserted twice answers to its first entry; once that entry
 * is removed, packets from the address still come from an AV entry (the
 * second), so FI_SOURCE and directed receives keep working.
 */
Test(av, reverse_survives_removal_of_duplicate)
{
	struct sockaddr_in a = rdmx_test_sin("127.0.0.1", 4000);
	fi_addr_t first, second;

	av_open(FI_AV_TABLE, 0);
	first = insert_one(&a);
	second = insert_one(&a);
	cr_assert_neq(first, second);
	cr_assert_eq(reverse(&a, sizeof(a)), first);
	cr_assert_eq(fi_av_remove(av, &first, 1, 0), 0);
	expect_lookup(second, &a, sizeof(a));
	cr_assert_eq(reverse(&a, sizeof(a)), second,
		     "the address is still in the AV at %lu",
		     (unsigned long) second);
}

/* fi_domain(3): a domain with open children must refuse to close. */
Test(av, domain_close_busy_while_av_open)
{
	av_open(FI_AV_TABLE, 0);
	cr_assert_eq(fi_close(&td.domain->fid), -FI_EBUSY);
	cr_assert_eq(fi_close(&av->fid), 0);
	av = NULL;
}

/* Bytes the process holds on its heap now. */
static size_t heap_in_use(void)
{
#ifdef __SANITIZE_ADDRESS__
	return __sanitizer_get_current_allocated_bytes();
#else
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
#endif
}

/*
 * MPI jobs insert every rank at once, far past the count hint, and talk
 * to few of them: an entry nobody sends to must stay cheap (issue: AVs
 * of 100,000 addresses, under 100 bytes an entry). Peers and device
 * handles are made on first use, so an insert only stores the address.
 */
static void expect_cheap_entries(enum fi_av_type type)
{
	const size_t count = 100000;
	struct sockaddr_in *addrs = calloc(count, sizeof(*addrs));
	fi_addr_t *fi_addrs = calloc(count, sizeof(*fi_addrs));
	size_t before, per_entry;

	cr_assert(addrs && fi_addrs);
	for (size_t i = 0; i < count; i++) {
		addrs[i] = rdmx_test_sin("10.0.0.0", 4000 + i % 1000);
		addrs[i].sin_addr.s_addr = htonl(0x0a000000 + i / 1000);
	}
	av_open(type, 16);
	before = heap_in_use();
	cr_assert_eq(fi_av_insert(av, addrs, count, fi_addrs, 0, NULL),
		     (int) count);
	per_entry = (heap_in_use() - before) / count;
	printf("av %s: %zu addresses cost %zu bytes each\n",
	       type == FI_AV_MAP ? "map" : "table", count, per_entry);
	cr_assert_lt(per_entry, 100, "%zu bytes an entry", per_entry);
	for (size_t i = 0; i < count; i += count / 10) {
		expect_lookup(fi_addrs[i], &addrs[i], sizeof(addrs[i]));
		cr_assert_eq(reverse(&addrs[i], sizeof(addrs[i])), fi_addrs[i]);
	}
	free(addrs);
	free(fi_addrs);
}

Test(av, map_entries_cost_under_100_bytes)
{
	expect_cheap_entries(FI_AV_MAP);
}

Test(av, table_entries_cost_under_100_bytes)
{
	expect_cheap_entries(FI_AV_TABLE);
}
