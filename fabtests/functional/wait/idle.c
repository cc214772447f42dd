/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx_wait: idle mode, a receiver blocked in fi_cq_sread with nothing coming. */
#include "wait.h"

/* The receiver's idle sread: -FI_EAGAIN on time, at a small CPU cost. */
int wt_idle_receiver(struct wt *w)
{
	static uint8_t buf[64];
	static struct fi_context ctx;
	const struct wt_opts *o = w->o;
	struct fi_cq_tagged_entry e;
	uint64_t cpu0, cpu1, cs0, cs1, t0, wall_ms, cpu_us;
	ssize_t ret;

	ret = wt_trecv(w, buf, sizeof(buf), WT_TAG_DATA, &ctx, 0);
	if (ret)
		return (int) ret;
	wt_usage(&cpu0, &cs0);
	t0 = ft_now_ns();
	ret = fi_cq_sread(w->rdm.cq, &e, 1, NULL, (int) o->idle_ms);
	wall_ms = (ft_now_ns() - t0) / 1000000;
	wt_usage(&cpu1, &cs1);
	cpu_us = (cpu1 - cpu0) / 1000;
	printf(WT_NAME ": idle fi_cq_sread(%" PRIu64 " ms) returned %zd (%s): "
	       "wall_ms=%" PRIu64 " cpu_ms=%" PRIu64 ".%03" PRIu64 " (cpu_us=%" PRIu64 ") "
	       "wakeups=%" PRIu64 "\n", o->idle_ms, ret, fi_strerror((int) -ret), wall_ms,
	       cpu_us / 1000, cpu_us % 1000, cpu_us, cs1 - cs0);
	if (ret != -FI_EAGAIN)
		return ft_fail("idle sread: %zd, want -FI_EAGAIN", ret);
	if (wall_ms < o->idle_ms || wall_ms >= o->idle_ms + o->max_late_ms)
		return ft_fail("idle sread took %" PRIu64 " ms, want [%" PRIu64 ", %" PRIu64 ")",
			       wall_ms, o->idle_ms, o->idle_ms + o->max_late_ms);
	if (cpu_us * 100 >= wall_ms * 1000 * o->max_cpu_pct)
		return ft_fail("idle sread used %" PRIu64 " us of CPU in %" PRIu64 " ms, "
			       "limit %" PRIu64 "%%", cpu_us, wall_ms, o->max_cpu_pct);
	return 0;
}
