/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_wait: what every mode uses: the messages (their lengths and
 * payloads), time and CPU usage, waiting for completions as the mode
 * says, and posting tagged sends and receives.
 */
#include <errno.h>
#include <poll.h>
#include <sys/resource.h>

#include "wait.h"

/*
 * The length of message i: the first is 1 byte and the second 256 KiB;
 * then 55% up to 4 KiB, 15% up to 60,000 bytes (eager), 15% of
 * 65,448..65,536 (medium: longer than one packet of loopback udp or shm,
 * at most FI_RDMX_MEDIUM_MAX), 15% longer (long).
 */
size_t wt_len(uint64_t i)
{
	uint64_t cls = ft_mix(i) % 100, x = ft_mix(i + 0x9e3779b97f4a7c15ULL);

	if (i == 0)
		return 1;
	if (i == 1)
		return WT_MAX_LEN;
	if (cls < 55)
		return 1 + x % WT_SMALL_MAX;
	if (cls < 70)
		return WT_SMALL_MAX + 1 + x % (60000 - WT_SMALL_MAX);
	if (cls < 85)
		return 65448 + x % 89;
	return 65537 + x % (WT_MAX_LEN - 65536);
}

/* Message i's bytes: the pattern from an offset of its own. */
const uint8_t *wt_payload(const struct wt *w, uint64_t i, size_t len)
{
	return w->pattern + ft_mix(3 * i + 1) % (WT_PATTERN - len + 1);
}

/*
 * Checks a received message i of len bytes in buf (followed by FT_GUARD
 * bytes of FT_POISON); 0 or -FI_EIO after a message.
 */
int wt_check_payload(const struct wt *w, uint64_t i, const uint8_t *buf, size_t len)
{
	const uint8_t *want = wt_payload(w, i, len);

	for (size_t k = 0; k < len + FT_GUARD; k++) {
		uint8_t exp = k < len ? want[k] : FT_POISON;

		if (buf[k] != exp)
			return ft_fail("message %" PRIu64 " (%zu bytes): byte %zu is 0x%02x, "
				       "want 0x%02x%s", i, len, k, buf[k], exp,
				       k < len ? "" : " (guard)");
	}
	return 0;
}

/* Milliseconds until deadline (at least 1), or 0 once it passed. */
int wt_left_ms(uint64_t deadline)
{
	uint64_t now = ft_now_ns();

	if (now >= deadline)
		return 0;
	return (int) WT_MIN((deadline - now + 999999) / 1000000, (uint64_t) INT32_MAX);
}

static uint64_t wt_tv_ns(const struct timeval *tv)
{
	return (uint64_t) tv->tv_sec * 1000000000ULL + (uint64_t) tv->tv_usec * 1000ULL;
}

/* The CPU time of the process (user + system) and its voluntary context switches. */
void wt_usage(uint64_t *cpu_ns, uint64_t *nvcsw)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*cpu_ns = wt_tv_ns(&ru.ru_utime) + wt_tv_ns(&ru.ru_stime);
	*nvcsw = (uint64_t) ru.ru_nvcsw;
}

/*
 * Waits for completions as the mode says (fd mode on the receiver:
 * fi_trywait and poll(); else fi_cq_sread) until deadline: up to max
 * entries into e and their number; -FI_EAVAIL with the error entry in
 * *err (text in text); or an error printed (-FI_ETIMEDOUT on time). With
 * what NULL, a wait that times out returns 0 quietly.
 */
int wt_cq_wait(struct wt *w, struct fi_cq_tagged_entry *e, size_t max,
	       struct fi_cq_err_entry *err, char *text, size_t text_len,
	       uint64_t deadline, const char *what)
{
	bool by_fd = w->o->mode == WT_FD && w->o->receiver;

	for (;;) {
		int left = wt_left_ms(deadline);
		ssize_t ret;

		ret = by_fd ? fi_cq_read(w->rdm.cq, e, max) :
		      fi_cq_sread(w->rdm.cq, e, max, NULL, left ? left : 1);
		if (ret > 0)
			return (int) ret;
		if (ret == -FI_EAVAIL)
			return ft_cq_readerr(w->rdm.cq, err, text, text_len) ?
			       -FI_EIO : -FI_EAVAIL;
		if (ret != -FI_EAGAIN)
			return ft_err(by_fd ? "fi_cq_read" : "fi_cq_sread", ret);
		if (!left && !what)
			return 0;
		if (!left) {
			ft_fail("timed out waiting for %s", what);
			return -FI_ETIMEDOUT;
		}
		if (by_fd) {
			struct fid *fids[1] = { &w->rdm.cq->fid };
			struct pollfd pfd = { .fd = w->fd, .events = POLLIN };

			ret = fi_trywait(w->rdm.fabric, fids, 1);
			if (ret == -FI_EAGAIN)
				continue;
			if (ret)
				return ft_err("fi_trywait", ret);
			w->trywaits++;
			ret = poll(&pfd, 1, left);
			if (ret < 0 && errno != EINTR)
				return ft_fail("poll: %s", strerror(errno));
			w->polls += ret > 0;
		}
	}
}

/*
 * Waits for one completion that must succeed (an error entry fails it):
 * 0 with *e, or an error printed.
 */
int wt_cq_one(struct wt *w, struct fi_cq_tagged_entry *e, uint64_t deadline,
	      const char *what)
{
	struct fi_cq_err_entry err;
	char text[256];
	int ret = wt_cq_wait(w, e, 1, &err, text, sizeof(text), deadline, what);

	if (ret == -FI_EAVAIL)
		return ft_fail("%s: error completion: %s", what, text);
	return ret < 0 ? ret : 0;
}

/* Posts a tagged send, progressing while it gets -FI_EAGAIN until deadline. */
int wt_tsend(struct wt *w, const void *buf, size_t len, uint64_t tag, void *ctx,
	     uint64_t flags, uint64_t deadline)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = w->peer, .tag = tag, .context = ctx,
	};
	ssize_t ret;

	while ((ret = flags ? fi_tsendmsg(w->rdm.ep, &msg, flags) :
		      fi_tsend(w->rdm.ep, buf, len, NULL, w->peer, tag, ctx)) == -FI_EAGAIN) {
		if (ft_now_ns() > deadline)
			return ft_fail("fi_tsend: -FI_EAGAIN until the deadline");
		(void) fi_cq_read(w->rdm.cq, NULL, 0);
	}
	return ret ? ft_err("fi_tsend", ret) : 0;
}

/* Posts a tagged receive with flags (FI_COMPLETION) or the endpoint's. */
int wt_trecv(struct wt *w, void *buf, size_t len, uint64_t tag, void *ctx,
	     uint64_t flags)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC, .tag = tag,
		.context = ctx,
	};
	ssize_t ret = flags ? fi_trecvmsg(w->rdm.ep, &msg, flags) :
		      fi_trecv(w->rdm.ep, buf, len, NULL, FI_ADDR_UNSPEC, tag, 0, ctx);

	return ret ? ft_err("fi_trecv", ret) : 0;
}
