/* SPDX-License-Identifier: BSD-2-Clause */
/* ft_common: the libfabric-free support of the test programs (see ft_common.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

/* For the FI_EIO constant only: nothing here calls libfabric. */
#include <rdma/fi_errno.h>

#include "ft_common.h"

int ft_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", ft_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -FI_EIO;
}

uint64_t ft_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

uint64_t ft_deadline_ns(int timeout_s)
{
	return ft_now_ns() + (uint64_t) timeout_s * 1000000000ULL;
}

int ft_parse_num(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < min || v > max) {
		fprintf(stderr, "%s: bad number '%s' (want %" PRIu64 "..%" PRIu64 ")\n",
			ft_prog, s, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

int ft_parse_timeout(const char *s, int *timeout_s)
{
	uint64_t v;

	if (ft_parse_num(s, 1, 86400, &v))
		return -1;
	*timeout_s = (int) v;
	return 0;
}

int ft_parse_host(int argc, char **argv, const char **host)
{
	if (optind < argc - 1)
		return -1;
	*host = optind == argc - 1 ? argv[optind] : NULL;
	return 0;
}

static int ft_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

double ft_median(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), ft_cmp_u64);
	return n % 2 ? (double) v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

uint64_t ft_p99(const uint64_t *sorted, size_t n)
{
	return sorted[(n * 99 + 99) / 100 - 1];
}

uint64_t ft_mix(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	return x ^ (x >> 31);
}

uint64_t ft_xorshift(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

uint64_t ft_pattern_seed(unsigned dir, uint64_t it, uint32_t slot, size_t size)
{
	return (it + 1) * 0xD1B54A32D192ED03ULL ^ (uint64_t) size * 0x8CB92BA72F3D8DD7ULL ^
	       (uint64_t) slot << 40 ^ dir;
}

/* Word j of the pattern of seed. */
static uint64_t ft_pattern_word(uint64_t seed, size_t j)
{
	return ft_mix(seed + (uint64_t) j * 0x9E3779B97F4A7C15ULL);
}

void ft_pattern_fill(uint8_t *buf, size_t len, uint64_t seed)
{
	for (size_t off = 0; off < len; off += 8) {
		uint64_t w = ft_pattern_word(seed, off / 8);

		memcpy(buf + off, &w, len - off < 8 ? len - off : 8);
	}
}

int ft_pattern_check(const uint8_t *buf, size_t len, uint64_t seed, size_t guard,
		     const char *what)
{
	for (size_t off = 0; off < len; off += 8) {
		uint64_t w = ft_pattern_word(seed, off / 8);
		size_t n = len - off < 8 ? len - off : 8;
		uint8_t want[8];

		memcpy(want, &w, n);
		if (!memcmp(buf + off, want, n))
			continue;
		for (size_t i = 0; i < n; i++) {
			if (buf[off + i] != want[i])
				return ft_fail("%s: payload byte %zu of %zu is 0x%02x, "
					       "expected 0x%02x", what, off + i, len,
					       buf[off + i], want[i]);
		}
	}
	for (size_t i = len; i < len + guard; i++) {
		if (buf[i] != FT_POISON)
			return ft_fail("%s: byte %zu past the %zu-byte payload was "
				       "overwritten", what, i, len);
	}
	return 0;
}

unsigned ft_port_of(const void *name, size_t len)
{
	const struct sockaddr *sa = name;
	const char *colon;

	if (len >= sizeof(struct sockaddr_in) && sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *) sa)->sin_port);
	if (len >= sizeof(struct sockaddr_in6) && sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *) sa)->sin6_port);
	if (!memchr(name, '\0', len))
		return 0;
	colon = strrchr(name, ':');
	return colon ? (unsigned) strtoul(colon + 1, NULL, 10) : 0;
}

void ft_print_listening(const char *addr, unsigned port, const char *details)
{
	printf("%s: listening on %s port %u (%s)\n", ft_prog, addr, port, details);
	fflush(stdout);
}
