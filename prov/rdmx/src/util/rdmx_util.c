/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: small helpers shared by all layers. */
#include <sched.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/uio.h>

#include "rdmx.h"
#include "rdmx_clock.h"
#include "rdmx_dev.h"
#include "rdmx_lock.h"

uint64_t rdmx_random64(void)
{
	static uint64_t drawn;
	uint64_t val;

	if (getrandom(&val, sizeof(val), GRND_NONBLOCK) == sizeof(val))
		return val;
	return rdmx_mix64(rdmx_clock_ns() ^ ((uint64_t) getpid() << 32) ^
			  __atomic_add_fetch(&drawn, 1, __ATOMIC_RELAXED));
}

bool rdmx_log_limit_pass(struct rdmx_log_limit *limit, uint64_t *skipped)
{
	uint64_t now = rdmx_clock_ns();

	if (now < limit->next_ns) {
		limit->skipped++;
		return false;
	}
	limit->next_ns = now + RDMX_LOG_GAP_NS;
	*skipped = limit->skipped;
	limit->skipped = 0;
	return true;
}

void rdmx_lock_wait(struct rdmx_lock *lock, uint32_t ticket)
{
	unsigned spins = 0;

	while (__atomic_load_n(&lock->turn, __ATOMIC_ACQUIRE) != ticket) {
		if (++spins < RDMX_LOCK_SPINS) {
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#endif
		} else {
			spins = 0;
			sched_yield();
		}
	}
}

/* rdmx_copy_to_iov into several entries. */
static RDMX_NOINLINE size_t rdmx_copy_to_iovs(const struct iovec *iov, size_t count,
					       const void *buf, size_t len)
{
	const char *src = buf;
	size_t done = 0;

	for (size_t i = 0; i < count && done < len; i++) {
		size_t n = RDMX_MIN(iov[i].iov_len, len - done);

		/* A zero-length entry may carry a NULL base. */
		if (n)
			memcpy(iov[i].iov_base, src + done, n);
		done += n;
	}
	return done;
}

size_t rdmx_copy_to_iov(const struct iovec *iov, size_t count,
			const void *buf, size_t len)
{
	size_t n;

	/* One entry, as most receives have: no loop to set up. */
	if (count != 1)
		return rdmx_copy_to_iovs(iov, count, buf, len);
	n = RDMX_MIN(iov->iov_len, len);
	/* A zero-length entry may carry a NULL base. */
	if (n)
		memcpy(iov->iov_base, buf, n);
	return n;
}

size_t rdmx_copy_from_iov(void *buf, const struct iovec *iov, size_t count)
{
	char *dst = buf;
	size_t done = 0;

	for (size_t i = 0; i < count; i++) {
		if (!iov[i].iov_len)
			continue;
		memcpy(dst + done, iov[i].iov_base, iov[i].iov_len);
		done += iov[i].iov_len;
	}
	return done;
}

int rdmx_copy_out(const void *src, size_t len, void *dst, size_t *dst_len)
{
	if (dst && *dst_len)
		memcpy(dst, src, RDMX_MIN(len, *dst_len));
	if (*dst_len < len) {
		*dst_len = len;
		return -FI_ETOOSMALL;
	}
	*dst_len = len;
	return 0;
}

int rdmx_opt_size_out(size_t val, void *optval, size_t *optlen)
{
	if (!optval || !optlen || *optlen < sizeof(size_t)) {
		if (optlen)
			*optlen = sizeof(size_t);
		return -FI_ETOOSMALL;
	}
	*(size_t *) optval = val;
	*optlen = sizeof(size_t);
	return 0;
}

void rdmx_copy_to_iov_at(const struct iovec *iov, size_t count, size_t off,
			 const void *buf, size_t len)
{
	struct iovec part[RDMX_DEV_SGE_MAX];
	size_t n = rdmx_iov_slice(part, iov, RDMX_MIN(count, RDMX_DEV_SGE_MAX), off, len);

	rdmx_copy_to_iov(part, n, buf, len);
}

void rdmx_copy_from_iov_at(void *buf, const struct iovec *iov, size_t count,
			   size_t off, size_t len)
{
	struct iovec part[RDMX_DEV_SGE_MAX];
	size_t n = rdmx_iov_slice(part, iov, RDMX_MIN(count, RDMX_DEV_SGE_MAX), off, len);

	rdmx_copy_from_iov(buf, part, n);
}

size_t rdmx_iov_slice(struct iovec *dst, const struct iovec *src, size_t count,
		      size_t off, size_t len)
{
	size_t n = 0;

	/* One entry, as most sends have: no loop. */
	if (count == 1) {
		if (!len || off >= src->iov_len)
			return 0;
		/* In integers, as below. */
		dst->iov_base = (void *) ((uintptr_t) src->iov_base + off);
		dst->iov_len = RDMX_MIN(src->iov_len - off, len);
		return 1;
	}

	for (size_t i = 0; i < count && len; i++) {
		size_t take;

		if (off >= src[i].iov_len) {
			off -= src[i].iov_len;
			continue;
		}
		take = RDMX_MIN(src[i].iov_len - off, len);
		/*
		 * In integers: src may be a peer's memory as its read
		 * descriptor names it, where address 0 is valid data and
		 * NULL + 0 would be undefined.
		 */
		dst[n].iov_base = (void *) ((uintptr_t) src[i].iov_base + off);
		dst[n].iov_len = take;
		n++;
		len -= take;
		off = 0;
	}
	return n;
}
