/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_version: the API version rdmx declares to the core that loads it,
 * and the rules that depend on the version an application asks for.
 */
#include <stdlib.h>

#include "rdmx_test.h"
#include "rdmx_version.h"

/* A core older than what rdmx was checked against gets its own version. */
Test(version, declares_the_core_version_up_to_the_checked_one)
{
	cr_assert_eq(rdmx_version_declared(FI_VERSION(1, 17)), FI_VERSION(1, 17));
	cr_assert_eq(rdmx_version_declared(FI_VERSION(1, 21)), FI_VERSION(1, 21));
	cr_assert_eq(rdmx_version_declared(FI_VERSION(2, 0)), FI_VERSION(2, 0));
	cr_assert_eq(rdmx_version_declared(FI_VERSION(2, 6)), FI_VERSION(2, 6));
}

/* A newer core is not promised what rdmx was never checked against. */
Test(version, caps_a_newer_core_at_the_checked_version)
{
	cr_assert_eq(rdmx_version_declared(FI_VERSION(2, 7)), RDMX_API_CHECKED);
	cr_assert_eq(rdmx_version_declared(FI_VERSION(3, 0)), RDMX_API_CHECKED);
	cr_assert_eq(RDMX_API_CHECKED, FI_VERSION(2, 6));
}

/* FI_PROGRESS_CONTROL_UNIFIED exists from 2.0; automatic progress never. */
Test(version, progress_models_by_version)
{
	cr_assert(rdmx_version_progress_ok(FI_VERSION(1, 17), FI_PROGRESS_UNSPEC));
	cr_assert(rdmx_version_progress_ok(FI_VERSION(1, 17), FI_PROGRESS_MANUAL));
	cr_assert(rdmx_version_progress_ok(FI_VERSION(1, 17), FI_PROGRESS_AUTO));
	cr_assert(rdmx_version_progress_ok(FI_VERSION(2, 6), FI_PROGRESS_AUTO));
	cr_assert_not(rdmx_version_progress_ok(FI_VERSION(1, 21),
					       RDMX_PROGRESS_CONTROL_UNIFIED));
	cr_assert(rdmx_version_progress_ok(FI_VERSION(2, 0),
					   RDMX_PROGRESS_CONTROL_UNIFIED));
	cr_assert_not(rdmx_version_progress_ok(FI_VERSION(2, 6),
					       (enum fi_progress) 4));
}

/* FI_MR_SCALABLE before 1.5 only; 2.x deprecates it. */
Test(version, mr_mode_by_version)
{
	cr_assert_eq(rdmx_version_mr_mode(FI_VERSION(1, 4)), FI_MR_SCALABLE);
	cr_assert_eq(rdmx_version_mr_mode(FI_VERSION(1, 5)), 0);
	cr_assert_eq(rdmx_version_mr_mode(FI_VERSION(2, 6)), 0);
}

/* Through getinfo: a 2.x application may ask for unified control progress. */
Test(version, getinfo_takes_control_unified_from_2_0)
{
	struct fi_info *hints, *info = NULL;

	rdmx_test_use_loopback();
	hints = fi_allocinfo();
	cr_assert_not_null(hints);
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_TAGGED;
	hints->domain_attr->data_progress = RDMX_PROGRESS_CONTROL_UNIFIED;
	cr_assert_eq(rdmx_getinfo(FI_VERSION(1, 21), NULL, NULL, 0, hints, &info),
		     -FI_ENODATA);
	cr_assert_eq(rdmx_getinfo(FI_VERSION(2, 6), NULL, NULL, 0, hints, &info), 0);
	cr_assert_eq(info->domain_attr->data_progress, RDMX_PROGRESS_CONTROL_UNIFIED);
	cr_assert_eq(info->fabric_attr->api_version, FI_VERSION(2, 6));
	cr_assert_eq(info->domain_attr->mr_mode, 0);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}
