/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the efa device's completion statuses, through one table
 * (RDMX_EFA_IO_STATUSES in rdmx_dev_efa.h).
 */
#include <stdbool.h>

#include "rdmx.h"
#include "rdmx_dev_efa.h"
#include "rdmx_dev_ibv.h"

static const struct {
	bool			known;
	enum rdmx_dev_status	status;
	const char		*text;
} rdmx_efa_io_statuses[] = {
#define RDMX_EFA_IO_STATUS_ROW(name, value, status, text) \
	[value] = { true, RDMX_DEV_##status, text },
	RDMX_EFA_IO_STATUSES(RDMX_EFA_IO_STATUS_ROW)
#undef RDMX_EFA_IO_STATUS_ROW
};

/* Whether the table has a row for vendor_err. */
static bool rdmx_efa_io_known(uint32_t vendor_err)
{
	return vendor_err < RDMX_ARRAY_SIZE(rdmx_efa_io_statuses) &&
	       rdmx_efa_io_statuses[vendor_err].known;
}

enum rdmx_dev_status rdmx_efa_status(enum ibv_wc_status status, uint32_t vendor_err)
{
	if (status == IBV_WC_SUCCESS)
		return RDMX_DEV_OK;
	if (vendor_err != RDMX_EFA_IO_OK && rdmx_efa_io_known(vendor_err))
		return rdmx_efa_io_statuses[vendor_err].status;
	return rdmx_ibv_status(status);
}

const char *rdmx_efa_status_str(uint32_t vendor_err)
{
	return rdmx_efa_io_known(vendor_err) ? rdmx_efa_io_statuses[vendor_err].text :
	       "unknown";
}
