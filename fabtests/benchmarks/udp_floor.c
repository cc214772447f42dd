/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * udp_floor: a bare UDP ping-pong with busy polling, the latency floor of
 * rdmx's udp device. No libfabric: one socket per side, non-blocking
 * recv in a spin loop, send with send/sendto.
 *
 *   server: udp_floor [-p port] [-b addr]
 *   client: udp_floor [options] server_host
 *
 * The server prints "listening on <addr> port <n> (provider udp_floor)"
 * (-p 0 lets the kernel pick the port) and echoes every datagram back to
 * its sender, until an empty datagram, which it echoes and then exits.
 * The client times each round trip with CLOCK_MONOTONIC and prints the
 * same RESULT lines as rdmx_bench -T lat:
 *   RESULT test=lat size=8 median_us=2.95 p99_us=4.10 iters=10000 prov=udp_floor
 * A size above the largest UDP payload prints n/a. Every wait times out
 * after -t seconds and exits non-zero; -c checks every echoed byte.
 */
#include <errno.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "ft_common.h"

#define UF_NAME			"udp_floor"
#define UF_DEFAULT_PORT		"47630"
#define UF_DEFAULT_ITERS	10000
#define UF_DEFAULT_WARMUP	100
#define UF_DEFAULT_TIMEOUT	30
#define UF_SIZES_MAX		32
#define UF_DEFAULT_TOP		(4u << 20)
#define UF_SIZE_LIMIT		(64ULL << 20)
/* Largest UDP payload: 65535 less the IPv4 (20) or IPv6 (40) and UDP headers. */
#define UF_MAX_PAYLOAD_V4	65507
#define UF_MAX_PAYLOAD_V6	65487
#define UF_BUF_LEN		65536
/* The scaling of rdmx_bench -T lat, so both run the same iterations. */
#define UF_SCALE_ABOVE		65536
#define UF_FIN_TRIES		10

struct uf_opts {
	const char	*port;
	const char	*bind_addr;
	const char	*host;
	uint32_t	iters;
	uint32_t	warmup;
	int		timeout_s;
	bool		verify;
	size_t		nsizes;
	uint64_t	sizes[UF_SIZES_MAX];
};

const char *const ft_prog = UF_NAME;

static int uf_errno(const char *call)
{
	return ft_fail("%s: %s", call, strerror(errno));
}

/*
 * Spins on a non-blocking recv until a datagram arrives; returns its
 * length, or -1 after the timeout or an error. from may be NULL.
 */
static ssize_t uf_recv(int fd, uint8_t *buf, size_t len, struct sockaddr_storage *from,
		       socklen_t *fromlen, int timeout_s, const char *what)
{
	uint64_t deadline = 0;
	unsigned spins = 0;

	for (;;) {
		ssize_t n = recvfrom(fd, buf, len, MSG_DONTWAIT, (struct sockaddr *) from,
				     fromlen);

		if (n >= 0)
			return n;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return uf_errno("recvfrom");
		if (++spins % 64)
			continue;
		if (!deadline) {
			deadline = ft_deadline_ns(timeout_s);
		} else if (ft_now_ns() > deadline) {
			fprintf(stderr, UF_NAME ": timed out after %d s waiting for %s\n",
				timeout_s, what);
			return -1;
		}
	}
}

/* The payload pattern of one iteration (-c). */
static void uf_fill(uint8_t *buf, size_t len, uint32_t it)
{
	uint64_t x = (uint64_t) it * 0x9E3779B97F4A7C15ULL + len;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (uint8_t) x;
	}
}

static int uf_socket(const struct uf_opts *o, bool server, struct addrinfo **ai_p)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_DGRAM,
		.ai_flags = server ? AI_PASSIVE : 0,
	};
	const char *node = server ? (o->bind_addr ? o->bind_addr : "127.0.0.1") : o->host;
	int ret = getaddrinfo(node, o->port, &hints, ai_p);
	int fd;

	if (ret) {
		fprintf(stderr, UF_NAME ": %s:%s: %s\n", node, o->port, gai_strerror(ret));
		return -1;
	}
	fd = socket((*ai_p)->ai_family, SOCK_DGRAM, 0);
	if (fd < 0)
		return uf_errno("socket");
	if (server ? bind(fd, (*ai_p)->ai_addr, (*ai_p)->ai_addrlen) :
		     connect(fd, (*ai_p)->ai_addr, (*ai_p)->ai_addrlen)) {
		uf_errno(server ? "bind" : "connect");
		close(fd);
		return -1;
	}
	return fd;
}

/* Echoes every datagram until an empty one; 0 or -1. */
static int uf_server(const struct uf_opts *o)
{
	static uint8_t buf[UF_BUF_LEN];
	struct addrinfo *ai;
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	char text[INET6_ADDRSTRLEN] = "?";
	int fd = uf_socket(o, true, &ai);
	int ret = 0;

	freeaddrinfo(ai);
	if (fd < 0)
		return -1;
	if (getsockname(fd, (struct sockaddr *) &ss, &sslen)) {
		close(fd);
		return uf_errno("getsockname");
	}
	if (ss.ss_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *) &ss)->sin_addr, text,
			  sizeof(text));
	else
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *) &ss)->sin6_addr, text,
			  sizeof(text));
	ft_print_listening(text, ft_port_of(&ss, sslen), "provider udp_floor");
	for (;;) {
		struct sockaddr_storage from;
		socklen_t fromlen = sizeof(from);
		ssize_t n = uf_recv(fd, buf, sizeof(buf), &from, &fromlen, o->timeout_s,
				    "a datagram");

		if (n < 0) {
			ret = -1;
			break;
		}
		if (sendto(fd, buf, (size_t) n, 0, (struct sockaddr *) &from, fromlen) != n) {
			ret = uf_errno("sendto");
			break;
		}
		if (n == 0)
			break;
	}
	close(fd);
	return ret;
}

/* Iterations of one size, scaled as rdmx_bench -T lat scales them. */
static uint32_t uf_iters(uint32_t iters, size_t size)
{
	uint64_t scaled;

	if (size <= UF_SCALE_ABOVE)
		return iters;
	scaled = (uint64_t) iters * UF_SCALE_ABOVE / size;
	return scaled > 20 ? (uint32_t) scaled : (iters < 20 ? iters : 20);
}

/* Times the round trips of one size; prints its row and RESULT line. */
static int uf_client_size(const struct uf_opts *o, int fd, size_t size,
			  uint8_t *tx, uint8_t *rx, uint64_t *rtt)
{
	uint32_t iters = uf_iters(o->iters, size);
	uint32_t total = o->warmup + iters;
	double median, p99;

	for (uint32_t it = 0; it < total; it++) {
		uint64_t t0;
		ssize_t n;

		if (o->verify)
			uf_fill(tx, size, it);
		t0 = ft_now_ns();
		if (send(fd, tx, size, 0) != (ssize_t) size)
			return uf_errno("send");
		n = uf_recv(fd, rx, UF_BUF_LEN, NULL, NULL, o->timeout_s, "the echo");
		if (n < 0)
			return -1;
		if (it >= o->warmup)
			rtt[it - o->warmup] = ft_now_ns() - t0;
		if ((size_t) n != size) {
			fprintf(stderr, UF_NAME ": size %zu: echo of %zd bytes\n", size, n);
			return -1;
		}
		if (o->verify && memcmp(tx, rx, size))
			return ft_fail("the echo differs from the datagram sent");
	}
	median = ft_median(rtt, iters) / 2000.0;
	p99 = ft_p99(rtt, iters) / 2000.0;
	printf("# %10zu %8u %12.2f %12.2f\n", size, iters, median, p99);
	printf("RESULT test=lat size=%zu median_us=%.2f p99_us=%.2f iters=%u "
	       "prov=udp_floor\n", size, median, p99, iters);
	return 0;
}

/* Ends the server: an empty datagram, echoed (resent if lost). */
static int uf_client_fin(int fd, uint8_t *rx)
{
	for (int i = 0; i < UF_FIN_TRIES; i++) {
		ssize_t n;

		if (send(fd, rx, 0, 0) != 0)
			return uf_errno("send");
		n = uf_recv(fd, rx, UF_BUF_LEN, NULL, NULL, 1, "the server's last echo");
		if (n == 0)
			return 0;
	}
	return ft_fail("the server did not echo the end datagram");
}

static int uf_client(struct uf_opts *o)
{
	struct addrinfo *ai;
	int fd = uf_socket(o, false, &ai);
	size_t max_payload = UF_MAX_PAYLOAD_V4;
	uint8_t *tx = NULL, *rx = NULL;
	uint64_t *rtt = NULL;
	int ret = 0;

	if (fd < 0)
		return -1;
	if (ai->ai_family == AF_INET6)
		max_payload = UF_MAX_PAYLOAD_V6;
	freeaddrinfo(ai);
	if (!o->nsizes) {
		for (uint64_t s = 1; s <= UF_DEFAULT_TOP; s *= 2)
			o->sizes[o->nsizes++] = s;
	}
	tx = calloc(1, UF_BUF_LEN);
	rx = calloc(1, UF_BUF_LEN);
	rtt = calloc(o->iters, sizeof(*rtt));
	if (!tx || !rx || !rtt) {
		ret = ft_fail("out of memory");
		goto out;
	}
	memset(tx, 0x5a, UF_BUF_LEN);
	printf("# lat: provider udp_floor (bare UDP, busy-polling recv), max payload "
	       "%zu%s\n", max_payload, o->verify ? ", payloads checked" : "");
	printf("# %10s %8s %12s %12s\n", "bytes", "iters", "median_us", "p99_us");
	for (size_t i = 0; !ret && i < o->nsizes; i++) {
		size_t size = o->sizes[i];

		if (size > max_payload) {
			printf("# %10zu n/a (above the largest UDP payload %zu)\n", size,
			       max_payload);
			printf("RESULT test=lat size=%zu median_us=n/a p99_us=n/a "
			       "max_msg_size=%zu prov=udp_floor\n", size, max_payload);
			continue;
		}
		ret = uf_client_size(o, fd, size, tx, rx, rtt);
	}
	if (!ret)
		ret = uf_client_fin(fd, rx);
out:
	free(rtt);
	free(rx);
	free(tx);
	close(fd);
	return ret;
}

static void uf_usage(void)
{
	fprintf(stderr,
		"usage: " UF_NAME " [-p port] [-b addr]     (server)\n"
		"       " UF_NAME " [options] server_host   (client)\n"
		"  -S sizes     comma-separated sizes (default 1 B up to 4 MiB by powers\n"
		"               of 2; above the largest UDP payload: n/a)\n"
		"  -n iters     timed round trips per size (default %d, fewer above 64 KiB)\n"
		"  -w warmup    untimed round trips per size (default %d)\n"
		"  -c           check every echoed byte\n"
		"  -p port      server port (default " UF_DEFAULT_PORT "; 0: the kernel picks)\n"
		"  -b addr      server address to bind (default 127.0.0.1)\n"
		"  -t seconds   timeout of every wait (default %d)\n",
		UF_DEFAULT_ITERS, UF_DEFAULT_WARMUP, UF_DEFAULT_TIMEOUT);
}

static int uf_parse_sizes(char *list, struct uf_opts *o)
{
	char *save = NULL;

	for (char *item = strtok_r(list, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		if (o->nsizes == UF_SIZES_MAX)
			return ft_fail("-S lists too many sizes");
		if (ft_parse_num(item, 1, UF_SIZE_LIMIT, &o->sizes[o->nsizes++]))
			return -1;
	}
	return 0;
}

static int uf_parse_opts(int argc, char **argv, struct uf_opts *o)
{
	uint64_t v;
	int c;

	*o = (struct uf_opts) {
		.port = UF_DEFAULT_PORT,
		.iters = UF_DEFAULT_ITERS,
		.warmup = UF_DEFAULT_WARMUP,
		.timeout_s = UF_DEFAULT_TIMEOUT,
	};
	while ((c = getopt(argc, argv, "S:n:w:cp:b:t:h")) != -1) {
		switch (c) {
		case 'S':
			if (uf_parse_sizes(optarg, o))
				return -1;
			break;
		case 'n':
			if (ft_parse_num(optarg, 1, 100000000, &v))
				return -1;
			o->iters = (uint32_t) v;
			break;
		case 'w':
			if (ft_parse_num(optarg, 0, 100000000, &v))
				return -1;
			o->warmup = (uint32_t) v;
			break;
		case 'c':
			o->verify = true;
			break;
		case 'p':
			o->port = optarg;
			break;
		case 'b':
			o->bind_addr = optarg;
			break;
		case 't':
			if (ft_parse_timeout(optarg, &o->timeout_s))
				return -1;
			break;
		default:
			uf_usage();
			return -1;
		}
	}
	if (ft_parse_host(argc, argv, &o->host)) {
		uf_usage();
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct uf_opts o;
	int ret;

	if (uf_parse_opts(argc, argv, &o))
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = o.host ? uf_client(&o) : uf_server(&o);
	if (ret) {
		fprintf(stderr, UF_NAME ": FAIL\n");
		return 1;
	}
	printf(UF_NAME ": PASS\n");
	return 0;
}
