/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ft_common: what the test and benchmark programs share that needs no
 * libfabric call: messages with the program's name in front, the clock,
 * options (numbers, -t, the server's host), latency statistics, the
 * payload pattern, and the "listening on <addr> port <n>" line the
 * scripts wait for. udp_floor links it without libfabric; ft_fabric.h
 * has the libfabric part.
 */
#ifndef FT_COMMON_H
#define FT_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* Poisoned bytes after a receive buffer's payload, checked afterwards. */
#define FT_GUARD	16
#define FT_POISON	0xA5

/* The program's name, in front of its messages; each program defines it. */
extern const char *const ft_prog;

/* Prints "<prog>: <message>" on stderr; returns -FI_EIO. */
int ft_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t ft_now_ns(void);
/* The ft_now_ns() time timeout_s seconds from now. */
uint64_t ft_deadline_ns(int timeout_s);

/*
 * Parses an unsigned decimal number within [min, max] into *out; 0, or
 * -1 after a message.
 */
int ft_parse_num(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* Parses -t: the timeout of every wait, 1 s up to a day; 0, or -1 after a message. */
int ft_parse_timeout(const char *s, int *timeout_s);
/*
 * Takes, after getopt, the one argument a client has: the server's host
 * (NULL for a server, which has none); 0, or -1 when more are left.
 */
int ft_parse_host(int argc, char **argv, const char **host);

/* Sorts the n values of v and returns their median. */
double ft_median(uint64_t *v, size_t n);
/* The 99th percentile of n sorted values (the value at rank ceil(0.99 n)). */
uint64_t ft_p99(const uint64_t *sorted, size_t n);

/* splitmix64's finaliser: a 64-bit mix of x. */
uint64_t ft_mix(uint64_t x);

/* xorshift64*: the next of a sequence that is the same on every host. */
uint64_t ft_xorshift(uint64_t *state);
/*
 * The payload seed of one message: its direction, iteration (or window),
 * slot in the window and size.
 */
uint64_t ft_pattern_seed(unsigned dir, uint64_t it, uint32_t slot, size_t size);
/* Writes the len-byte pattern of seed to buf. */
void ft_pattern_fill(uint8_t *buf, size_t len, uint64_t seed);
/*
 * Checks that buf holds the len-byte pattern of seed followed by guard
 * bytes of FT_POISON; 0, or -FI_EIO after naming (with what) the first
 * wrong byte.
 */
int ft_pattern_check(const uint8_t *buf, size_t len, uint64_t seed, size_t guard,
		     const char *what);

/*
 * The port of an address: of a socket address, or after the last ':' of
 * a string address ("fi_ns://host:port"); 0 when it has none.
 */
unsigned ft_port_of(const void *name, size_t len);
/*
 * Prints "<prog>: listening on <addr> port <port> (<details>)", the line
 * the scripts read a server's port from, and flushes stdout.
 */
void ft_print_listening(const char *addr, unsigned port, const char *details);

#endif /* FT_COMMON_H */
