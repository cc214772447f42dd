/*
 * rdmx_hash: the reverse address map. AVs key it by canonical device
 * addresses, so a wrong answer here reports the wrong sender.
 */
#include "rdmx_test.h"
#include "rdmx_hash.h"

/* The size of a canonical udp address, the key length AVs use. */
#define KEY_LEN		28

static struct rdmx_hash hash;

/* A distinct key per n; keys differ in more than the first byte. */
static const uint8_t *key(uint32_t n)
{
	static uint8_t buf[KEY_LEN];

	memset(buf, 0x5a, sizeof(buf));
	memcpy(buf + 4, &n, sizeof(n));
	memcpy(buf + KEY_LEN - sizeof(n), &n, sizeof(n));
	return buf;
}

static void expect_val(uint32_t n, uint64_t want)
{
	uint64_t val = ~want;

	cr_assert(rdmx_hash_find(&hash, key(n), &val), "key %u missing", n);
	cr_assert_eq(val, want, "key %u: %lu, want %lu", n,
		     (unsigned long) val, (unsigned long) want);
}

static void expect_absent(uint32_t n)
{
	uint64_t val = 77;

	cr_assert_not(rdmx_hash_find(&hash, key(n), &val), "key %u present", n);
	cr_assert_eq(val, 77, "a miss must not write *val_p");
}

static void hash_setup(void)
{
	cr_assert_eq(rdmx_hash_construct(&hash, KEY_LEN), 0);
}

static void hash_teardown(void)
{
	rdmx_hash_destruct(&hash);
}

TestSuite(hash, .init = hash_setup, .fini = hash_teardown);

Test(hash, empty_finds_nothing)
{
	expect_absent(0);
	expect_absent(12345);
}

Test(hash, insert_then_find)
{
	cr_assert_eq(rdmx_hash_insert(&hash, key(1), 100), 0);
	cr_assert_eq(rdmx_hash_insert(&hash, key(2), 200), 0);
	expect_val(1, 100);
	expect_val(2, 200);
	expect_absent(3);
}

Test(hash, zero_and_max_values_are_stored)
{
	cr_assert_eq(rdmx_hash_insert(&hash, key(1), 0), 0);
	cr_assert_eq(rdmx_hash_insert(&hash, key(2), UINT64_MAX), 0);
	expect_val(1, 0);
	expect_val(2, UINT64_MAX);
}

/* Replacing must not leave a second, stale entry behind the first. */
Test(hash, insert_replaces_value)
{
	cr_assert_eq(rdmx_hash_insert(&hash, key(7), 1), 0);
	cr_assert_eq(rdmx_hash_insert(&hash, key(7), 2), 0);
	expect_val(7, 2);
	rdmx_hash_remove(&hash, key(7));
	expect_absent(7);
}

Test(hash, remove_only_that_key)
{
	for (uint32_t n = 0; n < 8; n++)
		cr_assert_eq(rdmx_hash_insert(&hash, key(n), n), 0);
	rdmx_hash_remove(&hash, key(3));
	expect_absent(3);
	for (uint32_t n = 0; n < 8; n++) {
		if (n != 3)
			expect_val(n, n);
	}
}

Test(hash, remove_absent_key_is_harmless)
{
	cr_assert_eq(rdmx_hash_insert(&hash, key(1), 10), 0);
	rdmx_hash_remove(&hash, key(2));
	rdmx_hash_remove(&hash, key(1));
	rdmx_hash_remove(&hash, key(1));
	expect_absent(1);
	cr_assert_eq(rdmx_hash_insert(&hash, key(1), 11), 0);
	expect_val(1, 11);
}

Test(hash, remove_then_reinsert)
{
	cr_assert_eq(rdmx_hash_insert(&hash, key(5), 50), 0);
	rdmx_hash_remove(&hash, key(5));
	cr_assert_eq(rdmx_hash_insert(&hash, key(5), 51), 0);
	expect_val(5, 51);
	rdmx_hash_remove(&hash, key(5));
	expect_absent(5);
}

/* Many times the initial capacity: every rebuild must keep every entry. */
Test(hash, grows_past_many_entries)
{
	const uint32_t count = 100000;

	for (uint32_t n = 0; n < count; n++)
		cr_assert_eq(rdmx_hash_insert(&hash, key(n), (uint64_t) n * 3), 0);
	for (uint32_t n = 0; n < count; n++)
		expect_val(n, (uint64_t) n * 3);
	for (uint32_t n = count; n < count + 1000; n++)
		expect_absent(n);
}

/*
 * Removed slots must not end a probe: keys inserted after a key that is
 * later removed may sit beyond its slot.
 */
Test(hash, lookups_probe_past_removed_slots)
{
	const uint32_t count = 5000;

	for (uint32_t n = 0; n < count; n++)
		cr_assert_eq(rdmx_hash_insert(&hash, key(n), n), 0);
	for (uint32_t n = 0; n < count; n += 2)
		rdmx_hash_remove(&hash, key(n));
	for (uint32_t n = 0; n < count; n++) {
		if (n % 2)
			expect_val(n, n);
		else
			expect_absent(n);
	}
	for (uint32_t n = 0; n < count; n += 2)
		cr_assert_eq(rdmx_hash_insert(&hash, key(n), n + 1), 0);
	for (uint32_t n = 0; n < count; n++)
		expect_val(n, n % 2 ? n : n + 1);
}

/*
 * An AV that keeps adding and removing peers holds few live entries: the
 * table must reuse removed slots instead of growing without bound, and a
 * miss must still end when the table is full of removed slots.
 */
Test(hash, churn_keeps_table_small)
{
	const uint32_t rounds = 200000, live = 8;

	for (uint32_t n = 0; n < rounds; n++) {
		cr_assert_eq(rdmx_hash_insert(&hash, key(n), n), 0);
		if (n >= live)
			rdmx_hash_remove(&hash, key(n - live));
	}
	for (uint32_t n = rounds - live; n < rounds; n++)
		expect_val(n, n);
	expect_absent(0);
	expect_absent(rounds);
	cr_assert_leq(hash.cap, 1024, "capacity %zu for %u live keys", hash.cap, live);
}

/* Keys of other lengths compare every byte, and only their own bytes. */
Test(hash, short_keys_compare_all_bytes)
{
	struct rdmx_hash small;
	uint8_t a[3] = { 1, 2, 3 }, b[3] = { 1, 2, 4 }, c[3] = { 0, 2, 3 };
	uint64_t val = 0;

	cr_assert_eq(rdmx_hash_construct(&small, sizeof(a)), 0);
	cr_assert_eq(rdmx_hash_insert(&small, a, 1), 0);
	cr_assert_eq(rdmx_hash_insert(&small, b, 2), 0);
	cr_assert(rdmx_hash_find(&small, a, &val));
	cr_assert_eq(val, 1);
	cr_assert(rdmx_hash_find(&small, b, &val));
	cr_assert_eq(val, 2);
	cr_assert_not(rdmx_hash_find(&small, c, &val));
	rdmx_hash_destruct(&small);
}
