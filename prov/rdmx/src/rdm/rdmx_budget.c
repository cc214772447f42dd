/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: the receive memory budget of an endpoint (see rdmx_budget.h). */
#include <assert.h>

#include "rdmx.h"
#include "rdmx_budget.h"
#include "rdmx_clock.h"

#define RDMX_BUDGET_NOTE_NS	1000000000ULL

void rdmx_budget_construct(struct rdmx_budget *budget, size_t limit)
{
	budget->limit = limit;
	budget->used = 0;
	budget->peak = 0;
	budget->refused = 0;
	budget->noted = 0;
	budget->note_next = 0;
}

bool rdmx_budget_fits(const struct rdmx_budget *budget, size_t bytes)
{
	return bytes <= budget->limit - budget->used;
}

bool rdmx_budget_charge(struct rdmx_budget *budget, size_t bytes)
{
	if (!rdmx_budget_fits(budget, bytes))
		return false;
	budget->used += bytes;
	budget->peak = RDMX_MAX(budget->peak, budget->used);
	return true;
}

bool rdmx_budget_fits_bulk(const struct rdmx_budget *budget, size_t bytes)
{
	size_t bulk = budget->limit - budget->limit / RDMX_BUDGET_STATE_SHARE;

	return budget->used <= bulk && bytes <= bulk - budget->used;
}

bool rdmx_budget_charge_bulk(struct rdmx_budget *budget, size_t bytes)
{
	return rdmx_budget_fits_bulk(budget, bytes) && rdmx_budget_charge(budget, bytes);
}

void rdmx_budget_credit(struct rdmx_budget *budget, size_t bytes)
{
	assert(bytes <= budget->used);
	budget->used -= bytes;
}

size_t rdmx_budget_used(const struct rdmx_budget *budget)
{
	return budget->used;
}

size_t rdmx_budget_peak(const struct rdmx_budget *budget)
{
	return budget->peak;
}

void rdmx_budget_refused(struct rdmx_budget *budget, const char *what, size_t bytes)
{
	uint64_t now = rdmx_clock_ns();

	budget->refused++;
	if (now < budget->note_next)
		return;
	RDMX_WARN(FI_LOG_EP_DATA,
		  "receive budget full (%zu of %zu bytes): %s of %zu bytes refused, "
		  "%lu refusals since the last note\n", budget->used, budget->limit,
		  what, bytes, (unsigned long) (budget->refused - budget->noted));
	budget->noted = budget->refused;
	budget->note_next = now + RDMX_BUDGET_NOTE_NS;
}

uint64_t rdmx_budget_refusals(const struct rdmx_budget *budget)
{
	return budget->refused;
}
