/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: which libfabric API version rdmx declares, and what differs
 * between the versions applications ask for. Pure functions, so the
 * rules are unit-tested without a libfabric core.
 */
#ifndef RDMX_VERSION_H
#define RDMX_VERSION_H

#include <stdbool.h>
#include <stdint.h>

#include <rdma/fabric.h>

/*
 * The newest libfabric API rdmx was checked against: its man pages,
 * headers and the 2.0 changes (see rdmx_version.c for what was checked).
 */
#define RDMX_API_CHECKED	FI_VERSION(2, 6)

/*
 * libfabric 2.0's "progress" value for manual progress where the
 * application serialises control and data calls itself. The 1.17
 * headers rdmx builds against do not name it; the value is the ABI.
 */
#define RDMX_PROGRESS_CONTROL_UNIFIED	((enum fi_progress) 3)

/*
 * The API version rdmx declares in fi_provider.fi_version when it runs
 * in a core of version core (fi_version()): the older of the two.
 */
uint32_t rdmx_version_declared(uint32_t core);

/*
 * Whether an application asking API version `version` may ask for the
 * progress model `progress` (a domain attribute hint) from rdmx: manual
 * (the default), automatic (rdmx_autoprog.h), and from 2.0 on
 * FI_PROGRESS_CONTROL_UNIFIED.
 */
bool rdmx_version_progress_ok(uint32_t version, enum fi_progress progress);

/*
 * The mr_mode rdmx reports to an application of API version `version`:
 * FI_MR_SCALABLE before 1.5 (the only modes were basic and scalable),
 * no bits from 1.5 on (rdmx needs no registration for local buffers).
 */
int rdmx_version_mr_mode(uint32_t version);

#endif /* RDMX_VERSION_H */
