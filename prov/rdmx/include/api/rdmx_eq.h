/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: event queues (fi_eq_open is declared with the fabric's ops, rdmx_fabric.h). */
#ifndef RDMX_EQ_H
#define RDMX_EQ_H

#include <rdma/fabric.h>

#include "rdmx_wait.h"

/* The EQ's part in waits (fi_trywait), from its fid. */
struct rdmx_waitable *rdmx_eq_waitable(struct fid *fid);

#endif /* RDMX_EQ_H */
