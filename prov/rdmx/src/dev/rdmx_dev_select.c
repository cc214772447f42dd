/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: which device the provider runs over (FI_RDMX_DEVICE). "auto"
 * takes the first of efa, verbs and udp with a usable device, so that a
 * host with EFA or InfiniBand uses it and any other host runs over UDP;
 * naming a device insists on it.
 */
#include "rdmx.h"
#include "rdmx_dev.h"

/* The devices built in, best first. */
static const struct rdmx_dev_ops *const rdmx_devs[] = {
#ifdef RDMX_HAVE_RDMA
	&rdmx_dev_efa_ops,
	&rdmx_dev_verbs_ops,
#endif
	&rdmx_dev_udp_ops,
};

const struct rdmx_dev_ops *rdmx_dev_by_name(const char *name)
{
	for (size_t i = 0; i < RDMX_ARRAY_SIZE(rdmx_devs); i++)
		if (!strcmp(rdmx_devs[i]->name, name))
			return rdmx_devs[i];
	return NULL;
}

/* Whether a device has somewhere to open an endpoint. */
static bool rdmx_dev_usable(const struct rdmx_dev_ops *ops)
{
	struct rdmx_dev_domain dom;

	return ops->domains(NULL, NULL, &dom, 1) > 0;
}

int rdmx_dev_select(const struct rdmx_dev_ops **ops_p)
{
	const char *want = g_rdmx_params.device;
	const struct rdmx_dev_ops *ops;

	if (!want || !strcmp(want, "auto")) {
		for (size_t i = 0; i < RDMX_ARRAY_SIZE(rdmx_devs); i++) {
			if (rdmx_dev_usable(rdmx_devs[i])) {
				RDMX_INFO(FI_LOG_CORE, "FI_RDMX_DEVICE=auto: using %s\n",
					  rdmx_devs[i]->name);
				*ops_p = rdmx_devs[i];
				return 0;
			}
			RDMX_INFO(FI_LOG_CORE, "FI_RDMX_DEVICE=auto: no usable %s device\n",
				  rdmx_devs[i]->name);
		}
		return -FI_ENODATA;
	}
	ops = rdmx_dev_by_name(want);
	if (!ops) {
		RDMX_WARN(FI_LOG_CORE, "FI_RDMX_DEVICE=%s: %s\n", want,
			  strcmp(want, "efa") && strcmp(want, "verbs") ?
			  "unknown device (auto, efa, verbs or udp)" :
			  "rdmx was built without rdma-core");
		return -FI_ENODEV;
	}
	if (!rdmx_dev_usable(ops)) {
		RDMX_WARN(FI_LOG_CORE, "FI_RDMX_DEVICE=%s: no usable %s device%s%s\n",
			  want, want, g_rdmx_params.iface ? " named " : "",
			  g_rdmx_params.iface ? g_rdmx_params.iface : "");
		return -FI_ENODEV;
	}
	*ops_p = ops;
	return 0;
}
