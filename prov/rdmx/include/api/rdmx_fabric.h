/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: the fabric object (one per device kind) and event queues. */
#ifndef RDMX_FABRIC_H
#define RDMX_FABRIC_H

#include <rdma/fabric.h>
#include <rdma/fi_eq.h>

#include "rdmx_dev.h"
#include "rdmx_list.h"

struct rdmx_fabric {
	struct fid_fabric		fabric_fid;
	const struct rdmx_dev_ops	*dev_ops;
	uint32_t			api_version;
	int				refs;		/* open domains and EQs */
};

/* fi_fabric: opens the fabric named in attr. 0 or -FI_E*. */
int rdmx_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric_p,
		     void *context);

/* fi_eq_open: an event queue (rdm endpoints post nothing to it yet). */
int rdmx_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		 struct fid_eq **eq_p, void *context);

#endif /* RDMX_FABRIC_H */
