/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_hash: the reverse address map. AVs key it by canonical device
 * addresses, so a wrong answer here reports the wrong sender.
 *
 * The map keeps values only and asks key_of for their keys; here a
 * value's low 32 bits are the key number and its high bits a tag, so
 * tests can tell a replaced value from the one it replaced.
 */
#include "rdmx_test.h"
#include "rdmx_hash.h"

/* The size of a canonical udp address, the key length AVs use. */
#define KEY_LEN		28

static struct rdmx_hash hash;

/* A distinct key per n; keys differ in more than the first byte. */
static const uint8_t *key_fill(uint8_t *buf, uint32_t n)
{
	memset(buf, 0x5a, KEY_LEN);
	memcpy(buf + 4, &n, sizeof(n));
	memcpy(buf + KEY_LEN - sizeof(n), &n, sizeof(n));
	return buf;
}

/* The key a caller looks up (its own buffer, not key_of's). */
static const uint8_t *key(uint32_t n)
{
	static uint8_t buf[KEY_LEN];

	return key_fill(buf, n);
}

static const void *key_of(const struct rdmx_hash *map, uint64_t val)
{
	static uint8_t buf[KEY_LEN];

	(void) map;
	return key_fill(buf, (uint32_t) val);
}

/* Key n's value with a tag in the high bits. */
static uint64_t tagged(uint32_t n, uint32_t tag)
{
	return (uint64_t) tag << 32 | n;
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
	cr_assert_eq(rdmx_hash_construct(&hash, KEY_LEN, key_of), 0);
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
	cr_assert_eq(rdmx_hash_insert(&hash, key(1), tagged(1, 100)), 0);
	cr_assert_eq(rdmx_hash_insert(&hash, key(2), tagged(2, 200)), 0);
	expect_val(1, tagged(1, 100));
	expect_val(2, tagged(2, 200));
	expect_absent(3);
}

/* Index 0 (an AV's first entry) and large values are ordinary values. */
Test(hash, zero_and_large_values_are_stored)
{
	uint64_t large = RDMX_HASH_GONE - 1;

	cr_assert_eq(rdmx_hash_insert(&hash, key(0), 0), 0);
	cr_assert_eq(rdmx_hash_insert(&hash, key((uint32_t) large), large), 0);
	expect_val(0, 0);
	expect_val((uint32_t) large, large);
}

/* Replacing must not leave a second, stale entry behind the first. */
Test(hash, insert_replaces_value)
{
	cr_assert_eq(rdmx_hash_insert(&hash, key(7), tagged(7, 1)), 0);
	cr_assert_eq(rdmx_hash_insert(&hash, key(7), tagged(7, 2)), 0);
	expect_val(7, tagged(7, 2));
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
	cr_assert_eq(rdmx_hash_insert(&hash, key(1), tagged(1, 10)), 0);
	rdmx_hash_remove(&hash, key(2));
	rdmx_hash_remove(&hash, key(1));
	rdmx_hash_remove(&hash, key(1));
	expect_absent(1);
	cr_assert_eq(rdmx_hash_insert(&hash, key(1), tagged(1, 11)), 0);
	expect_val(1, tagged(1, 11));
}

Test(hash, remove_then_reinsert)
{
	cr_assert_eq(rdmx_hash_insert(&hash, key(5), tagged(5, 50)), 0);
	rdmx_hash_remove(&hash, key(5));
	cr_assert_eq(rdmx_hash_insert(&hash, key(5), tagged(5, 51)), 0);
	expect_val(5, tagged(5, 51));
	rdmx_hash_remove(&hash, key(5));
	expect_absent(5);
}

/* Many times the initial capacity: every rebuild must keep every entry. */
Test(hash, grows_past_many_entries)
{
	const uint32_t count = 100000;

	for (uint32_t n = 0; n < count; n++)
		cr_assert_eq(rdmx_hash_insert(&hash, key(n), tagged(n, 3)), 0);
	for (uint32_t n = 0; n < count; n++)
		expect_val(n, tagged(n, 3));
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
		cr_assert_eq(rdmx_hash_insert(&hash, key(n), tagged(n, 1)), 0);
	for (uint32_t n = 0; n < count; n++)
		expect_val(n, n % 2 ? n : tagged(n, 1));
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

/* Three-byte keys; value n names short_keys[n]. */
static const uint8_t short_keys[][3] = { { 1, 2, 3 }, { 1, 2, 4 }, { 0, 2, 3 } };

static const void *short_key_of(const struct rdmx_hash *map, uint64_t val)
{
	(void) map;
	return short_keys[val];
}

/* Keys of other lengths compare every byte, and only their own bytes. */
Test(hash, short_keys_compare_all_bytes)
{
	struct rdmx_hash small;
	uint64_t val = 7;

	cr_assert_eq(rdmx_hash_construct(&small, 3, short_key_of), 0);
	cr_assert_eq(rdmx_hash_insert(&small, short_keys[0], 0), 0);
	cr_assert_eq(rdmx_hash_insert(&small, short_keys[1], 1), 0);
	cr_assert(rdmx_hash_find(&small, short_keys[0], &val));
	cr_assert_eq(val, 0);
	cr_assert(rdmx_hash_find(&small, short_keys[1], &val));
	cr_assert_eq(val, 1);
	cr_assert_not(rdmx_hash_find(&small, short_keys[2], &val));
	rdmx_hash_destruct(&small);
}
