/* rdmx: the receive memory budget of an endpoint (see rdmx_budget.h). */
#include <assert.h>

#include "rdmx.h"
#include "rdmx_budget.h"

void rdmx_budget_construct(struct rdmx_budget *budget, size_t limit)
{
	budget->limit = limit;
	budget->used = 0;
	budget->peak = 0;
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
