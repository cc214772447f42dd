/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: packing a udp send batch into UDP_SEGMENT runs (rdmx_udp_gso.h).
 */
#include <string.h>
#include <netinet/in.h>
#include <netinet/udp.h>

#include "rdmx.h"
#include "rdmx_udp_gso.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT	103
#endif

/* Whether b goes to the same peer from the same local address as a. */
static bool rdmx_udp_gso_same_path(const struct msghdr *a, const struct msghdr *b)
{
	return a->msg_namelen == b->msg_namelen &&
	       !memcmp(a->msg_name, b->msg_name, a->msg_namelen) &&
	       a->msg_controllen == b->msg_controllen &&
	       (!a->msg_controllen ||
		!memcmp(a->msg_control, b->msg_control, a->msg_controllen));
}

/* Whether batch[k] goes on m's path and is seg bytes long. */
static bool rdmx_udp_gso_joins(const struct msghdr *m, const struct mmsghdr *batch, size_t k,
			       size_t seg)
{
	return rdmx_udp_gso_same_path(m, &batch[k].msg_hdr) &&
	       rdmx_iov_len(batch[k].msg_hdr.msg_iov, batch[k].msg_hdr.msg_iovlen) == seg;
}

/*
 * A datagram of len < seg bytes at batch[j] that would end the run of
 * m's path started at batch[i] (bytes so far) moves behind the datagrams
 * of seg bytes on that path right after it, as many as the run has room
 * for beside it: a medium message's last packet, shorter, would cut the
 * run of the next message's packets, and every run costs the kernel
 * about as much as a whole one. Returns where it is now.
 */
static size_t rdmx_udp_gso_trail(struct rdmx_udp_gso *g, struct mmsghdr *batch, size_t i,
				 size_t j, size_t n, size_t seg, size_t bytes, size_t len)
{
	const struct msghdr *m = &batch[i].msg_hdr;
	struct mmsghdr short_one = batch[j];
	size_t k = j + 1;

	while (k < n && k - i < RDMX_UDP_GSO_SEGS &&
	       bytes + (k - j) * seg + len <= RDMX_UDP_GSO_BYTES &&
	       rdmx_udp_gso_joins(m, batch, k, seg))
		k++;
	if (k == j + 1)
		return j;
	memmove(&batch[j], &batch[j + 1], (k - j - 1) * sizeof(*batch));
	batch[k - 1] = short_one;
	g->trail_at[g->trails] = k - 1;
	g->trail_by[g->trails++] = (unsigned) (k - j - 1);
	return k - 1;
}

/*
 * The end of the run that starts at batch[i]: datagrams on its path, each
 * as long as the first, the last perhaps shorter (moved to the end:
 * rdmx_udp_gso_trail), within the kernel's limits.
 */
static size_t rdmx_udp_gso_run(struct rdmx_udp_gso *g, struct mmsghdr *batch, size_t i,
			       size_t n, size_t seg)
{
	const struct msghdr *m = &batch[i].msg_hdr;
	size_t j = i + 1, bytes = seg;

	while (j < n && j - i < RDMX_UDP_GSO_SEGS &&
	       rdmx_udp_gso_same_path(m, &batch[j].msg_hdr)) {
		size_t len = rdmx_iov_len(batch[j].msg_hdr.msg_iov,
					  batch[j].msg_hdr.msg_iovlen);

		if (len > seg || bytes + len > RDMX_UDP_GSO_BYTES)
			break;
		if (len < seg) {
			size_t at = rdmx_udp_gso_trail(g, batch, i, j, n, seg, bytes, len);

			return at + 1;
		}
		bytes += len;
		j++;
	}
	return j;
}

/*
 * Gives m the bytes of the run batch[i..j) of datagrams of seg bytes, in
 * iov: small datagrams copied into the stage, one piece, as the kernel
 * copies one piece much faster than the header and payload of each
 * datagram apart (a third more bandwidth at 1,472-byte datagrams, Linux
 * 6.18 in a VM); larger ones as their iovecs one after another (staging
 * 9,000-byte datagrams cost 7%).
 */
static void rdmx_udp_gso_gather(struct rdmx_udp_gso *g, struct msghdr *m, struct iovec *iov,
				const struct mmsghdr *batch, size_t i, size_t j, size_t seg)
{
	m->msg_iov = iov;
	m->msg_iovlen = 0;
	if (seg <= RDMX_UDP_GSO_STAGE_SEG) {
		uint8_t *to = g->stage + g->staged;

		for (; i < j; i++)
			to += rdmx_copy_from_iov(to, batch[i].msg_hdr.msg_iov,
						 batch[i].msg_hdr.msg_iovlen);
		*iov = (struct iovec) { g->stage + g->staged,
					(size_t) (to - (g->stage + g->staged)) };
		g->staged += iov->iov_len;
		m->msg_iovlen = 1;
		return;
	}
	for (; i < j; i++) {
		const struct msghdr *d = &batch[i].msg_hdr;

		memcpy(iov + m->msg_iovlen, d->msg_iov, d->msg_iovlen * sizeof(*iov));
		m->msg_iovlen += d->msg_iovlen;
	}
}

/* Makes g->msgs[k] the run batch[i..j) of datagrams of seg bytes. */
static void rdmx_udp_gso_join(struct rdmx_udp_gso *g, size_t k, struct iovec *iov,
			      const struct mmsghdr *batch, size_t i, size_t j,
			      size_t seg)
{
	const struct msghdr *first = &batch[i].msg_hdr;
	struct msghdr *m = &g->msgs[k].msg_hdr;
	uint16_t size = (uint16_t) seg;
	struct cmsghdr *c;

	*m = *first;
	rdmx_udp_gso_gather(g, m, iov, batch, i, j, seg);
	m->msg_control = g->ctl[k].buf;
	if (first->msg_controllen)
		memcpy(m->msg_control, first->msg_control, first->msg_controllen);
	m->msg_controllen = first->msg_controllen + CMSG_SPACE(sizeof(size));
	c = (struct cmsghdr *) ((uint8_t *) m->msg_control + first->msg_controllen);
	c->cmsg_level = SOL_UDP;
	c->cmsg_type = UDP_SEGMENT;
	c->cmsg_len = CMSG_LEN(sizeof(size));
	memcpy(CMSG_DATA(c), &size, sizeof(size));
}

size_t rdmx_udp_gso_pack(struct rdmx_udp_gso *g, struct mmsghdr *batch, size_t n)
{
	struct iovec *iov = g->iov;
	size_t i = 0;

	g->cnt = 0;
	g->trails = 0;
	g->staged = 0;
	while (i < n) {
		const struct msghdr *m = &batch[i].msg_hdr;
		size_t seg = rdmx_iov_len(m->msg_iov, m->msg_iovlen);
		size_t j = seg && seg <= UINT16_MAX ? rdmx_udp_gso_run(g, batch, i, n, seg) :
			   i + 1;

		g->first[g->cnt] = i;
		if (j - i == 1) {
			g->msgs[g->cnt].msg_hdr = *m;
		} else {
			rdmx_udp_gso_join(g, g->cnt, iov, batch, i, j, seg);
			iov += g->msgs[g->cnt].msg_hdr.msg_iovlen;
		}
		g->msgs[g->cnt].msg_len = 0;
		g->cnt++;
		i = j;
	}
	g->first[g->cnt] = n;
	return g->cnt;
}
