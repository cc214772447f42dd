/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: what the efa device's files share (rdmx_dev_efa.c, the device;
 * rdmx_dev_efa_status.c, its completion statuses).
 *
 * An EFA completion carries the device's own status, which
 * ibv_wc_read_vendor_err returns; libefa folds several of them into one
 * ibv_wc_status (BAD_DEST_QPN and a remote abort are distinct codes, but
 * a remote BAD_LENGTH and FEATURE_MISMATCH are both REM_INV_REQ_ERR), so
 * the device translates a failed completion by its EFA code. The codes
 * are the kernel's enum efa_io_comp_status (drivers/infiniband/hw/efa/
 * efa_io_defs.h, which rdma-core does not install): their values are
 * copied here. Each row: name, value, the contract's status, text.
 */
#ifndef RDMX_DEV_EFA_H
#define RDMX_DEV_EFA_H

#include <stdint.h>

#include "rdmx_dev.h"
#include "rdmx_ibv.h"

#define RDMX_EFA_IO_STATUSES(X)							\
	X(OK,				0,  OK,		"success")		\
	X(FLUSHED,			1,  FLUSHED,	"flushed when the queue pair was destroyed") \
	X(LOCAL_ERROR_QP_INTERNAL_ERROR, 2, IO,		"internal queue pair error") \
	X(LOCAL_ERROR_UNSUPPORTED_OP,	3,  IO,		"unsupported operation") \
	X(LOCAL_ERROR_INVALID_AH,	4,  IO,		"invalid address handle") \
	X(LOCAL_ERROR_INVALID_LKEY,	5,  IO,		"invalid local memory key") \
	X(LOCAL_ERROR_BAD_LENGTH,	6,  MSGSIZE,	"message too long")	\
	X(REMOTE_ERROR_BAD_ADDRESS,	7,  ACCESS,	"remote memory key or range refused") \
	X(REMOTE_ERROR_ABORT,		8,  UNREACH,	"reset by the remote queue pair") \
	X(REMOTE_ERROR_BAD_DEST_QPN,	9,  UNREACH,	"no such remote queue pair") \
	X(REMOTE_ERROR_RNR,		10, RNR,	"receiver not ready")	\
	X(REMOTE_ERROR_BAD_LENGTH,	11, MSGSIZE,	"remote receive buffer too short") \
	X(REMOTE_ERROR_BAD_STATUS,	12, IO,		"unexpected status from the responder") \
	X(LOCAL_ERROR_UNRESP_REMOTE,	13, UNREACH,	"remote stopped responding") \
	X(REMOTE_ERROR_UNKNOWN_PEER,	14, NOTCONN,	"remote has no address handle for us") \
	X(LOCAL_ERROR_UNREACH_REMOTE,	15, UNREACH,	"remote never responded") \
	X(REMOTE_ERROR_FEATURE_MISMATCH, 18, IO,	"remote feature mismatch")

enum rdmx_efa_io_status {
#define RDMX_EFA_IO_STATUS_ENUM(name, value, status, text) RDMX_EFA_IO_##name = value,
	RDMX_EFA_IO_STATUSES(RDMX_EFA_IO_STATUS_ENUM)
#undef RDMX_EFA_IO_STATUS_ENUM
};

/*
 * The contract's status of a completion: OK when it succeeded; else the
 * status of its EFA code (vendor_err), or for a code the table does not
 * know (or OK, which libefa never gives a failure) that of its
 * ibv_wc_status (rdmx_ibv_status).
 */
enum rdmx_dev_status rdmx_efa_status(enum ibv_wc_status status, uint32_t vendor_err);

/* What an EFA code means, for logs ("unknown" for a code not listed). */
const char *rdmx_efa_status_str(uint32_t vendor_err);

#endif /* RDMX_DEV_EFA_H */
