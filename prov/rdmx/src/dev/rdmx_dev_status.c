/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the device contract's statuses, through one table
 * (RDMX_DEV_STATUSES in rdmx_dev.h): each one's FI_E* code and text.
 */
#include "rdmx.h"
#include "rdmx_dev.h"

static const struct {
	int		code;
	const char	*text;
} rdmx_dev_statuses[] = {
#define RDMX_DEV_STATUS_ROW(name, code, text) [RDMX_DEV_##name] = { code, text },
	RDMX_DEV_STATUSES(RDMX_DEV_STATUS_ROW)
#undef RDMX_DEV_STATUS_ROW
};

int rdmx_dev_status_errno(enum rdmx_dev_status status)
{
	return status < RDMX_DEV_STATUS_MAX ? rdmx_dev_statuses[status].code : FI_EIO;
}

const char *rdmx_dev_status_str(enum rdmx_dev_status status)
{
	return status < RDMX_DEV_STATUS_MAX ? rdmx_dev_statuses[status].text :
	       "unknown status";
}
