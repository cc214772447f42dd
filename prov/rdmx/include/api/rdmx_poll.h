/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: poll sets (fi_poll(3)), uDAPL's consumer notification object
 * without the sleep: fi_poll progresses the endpoints behind every CQ and
 * counter added, and returns the contexts of those that have something:
 * a CQ with an entry or an error, a counter that moved since it was last
 * reported.
 */
#ifndef RDMX_POLL_H
#define RDMX_POLL_H

#include <rdma/fi_domain.h>

/* fi_poll_open. 0 or -FI_E*. */
int rdmx_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		   struct fid_poll **pollset_p);

#endif /* RDMX_POLL_H */
