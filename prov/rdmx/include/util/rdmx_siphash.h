/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: SipHash-2-4 (Aumasson and Bernstein, 2012), a keyed hash whose
 * output an attacker cannot predict without the 128-bit key. swsrd
 * derives the tag it offers an unknown sender from it, so that it keeps
 * no state for a sender until the sender proves it receives at its
 * address.
 */
#ifndef RDMX_SIPHASH_H
#define RDMX_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

/* The 64-bit SipHash-2-4 of len bytes at buf under key k0 (low), k1 (high). */
uint64_t rdmx_siphash(uint64_t k0, uint64_t k1, const void *buf, size_t len);

#endif /* RDMX_SIPHASH_H */
