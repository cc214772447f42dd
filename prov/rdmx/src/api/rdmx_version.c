/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the API version rdmx declares and the rules that depend on the
 * version an application asks for (see rdmx_version.h).
 *
 * Why declaring up to 2.6 is safe although rdmx is compiled with the
 * 1.17 headers (checked against libfabric 2.6.0's headers, man pages
 * and NEWS):
 * - Layout: every structure 2.x changed grew at its end
 *   (fi_domain_attr: max_ep_auth_key, max_group_id, max_cntr_value,
 *   max_err_cntr_value; fi_cq_err_entry: src_addr; fi_mr_attr) or
 *   renamed a field in place (data_progress is a union with progress).
 *   rdmx reads and writes only the fields 1.17 knows, and gets every
 *   fi_info from fi_allocinfo(), which a 2.x core answers with its own
 *   full-size, zeroed structures; rdmx never copies an fi_info by its
 *   1.17 size. The fields it cannot see keep their zero, which 2.x
 *   defines as "no limit" for max_cntr_value and max_err_cntr_value
 *   (rdmx counters are full 64-bit) and as "none" for max_ep_auth_key
 *   and max_group_id. A 2.x fi_cq_readerr sets src_addr to
 *   FI_ADDR_NOTAVAIL before it calls the provider.
 * - Operation tables: rdmx fills its 1.17 tables and sets .size, so
 *   the calls 2.x added (fi_av_insert_auth_key, ...) find no slot and
 *   return -FI_ENOSYS in the application's inline wrappers.
 * - Semantics 2.0 removed or changed: FI_MR_BASIC/FI_MR_SCALABLE
 *   (reported only before 1.5), the mode bits FI_NOTIFY_FLAGS_ONLY,
 *   FI_RESTRICTED_COMP and FI_BUFFERED_RECV and total_buffered_recv
 *   (rdmx sets none of them), comp_order (deprecated; rdmx refuses any
 *   ordering of completions, as upstream's own providers do), the
 *   capability bits 45, 46 and 48 that 2.0 gave new meanings (rdmx
 *   offers none of them, so asking for one fails in every version) and
 *   FI_PROGRESS_CONTROL_UNIFIED (accepted from 2.0 on: it is manual
 *   progress with fewer promises from rdmx).
 * What rdmx cannot do: refuse a max_ep_auth_key or max_group_id hint it
 * cannot read. Both only mean something with authorization keys or peer
 * groups; rdmx refuses authorization keys (auth_key_size, which also
 * carries FI_AV_AUTH_KEY), and a peer-group address is an fi_addr_t
 * beyond every AV index, which rdmx rejects as invalid.
 * A core newer than 2.6 gets 2.6: rdmx has not been checked against it.
 */
#include "rdmx_version.h"

uint32_t rdmx_version_declared(uint32_t core)
{
	return FI_VERSION_LT(core, RDMX_API_CHECKED) ? core : RDMX_API_CHECKED;
}

bool rdmx_version_progress_ok(uint32_t version, enum fi_progress progress)
{
	switch (progress) {
	case FI_PROGRESS_UNSPEC:
	case FI_PROGRESS_MANUAL:
	case FI_PROGRESS_AUTO:
		return true;
	default:
		return progress == RDMX_PROGRESS_CONTROL_UNIFIED &&
		       FI_VERSION_GE(version, FI_VERSION(2, 0));
	}
}

int rdmx_version_mr_mode(uint32_t version)
{
	return FI_VERSION_LT(version, FI_VERSION(1, 5)) ? FI_MR_SCALABLE : 0;
}
