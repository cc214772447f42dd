/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: SipHash-2-4 (see rdmx_siphash.h), written from the paper. */

#include "rdmx_siphash.h"

static inline uint64_t rdmx_rotl(uint64_t x, unsigned b)
{
	return (x << b) | (x >> (64 - b));
}

static void rdmx_sip_round(uint64_t v[4])
{
	v[0] += v[1];
	v[1] = rdmx_rotl(v[1], 13) ^ v[0];
	v[0] = rdmx_rotl(v[0], 32);
	v[2] += v[3];
	v[3] = rdmx_rotl(v[3], 16) ^ v[2];
	v[0] += v[3];
	v[3] = rdmx_rotl(v[3], 21) ^ v[0];
	v[2] += v[1];
	v[1] = rdmx_rotl(v[1], 17) ^ v[2];
	v[2] = rdmx_rotl(v[2], 32);
}

/* Mixes one 64-bit message word in: two compression rounds. */
static void rdmx_sip_word(uint64_t v[4], uint64_t m)
{
	v[3] ^= m;
	rdmx_sip_round(v);
	rdmx_sip_round(v);
	v[0] ^= m;
}

/* The little-endian value of n (< 8) bytes at p. */
static uint64_t rdmx_sip_tail(const uint8_t *p, size_t n)
{
	uint64_t w = 0;

	for (size_t i = 0; i < n; i++)
		w |= (uint64_t) p[i] << (8 * i);
	return w;
}

uint64_t rdmx_siphash(uint64_t k0, uint64_t k1, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t v[4] = {
		k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL,
		k0 ^ 0x6c7967656e657261ULL, k1 ^ 0x7465646279746573ULL,
	};
	size_t i;

	for (i = 0; i + 8 <= len; i += 8)
		rdmx_sip_word(v, rdmx_sip_tail(p + i, 8));
	rdmx_sip_word(v, rdmx_sip_tail(p + i, len - i) | (uint64_t) len << 56);
	v[2] ^= 0xff;
	for (int r = 0; r < 4; r++)
		rdmx_sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}
