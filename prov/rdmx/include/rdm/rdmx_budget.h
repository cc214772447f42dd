/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the receive memory budget of an endpoint (FI_RDMX_RX_BUDGET).
 * Every byte a remote peer can make the receiver allocate is charged
 * here before it is allocated and credited when it is freed: packets
 * held for ordering, unexpected copies, reassembly buffers and the state
 * of messages arriving in pieces, anonymous peers. A charge past the
 * limit is refused and the caller refuses the data instead
 * (docs/protocol.md, receiver memory budget).
 */
#ifndef RDMX_BUDGET_H
#define RDMX_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rdmx_budget {
	size_t		limit;		/* bytes that may be charged at once */
	size_t		used;		/* bytes charged now */
	size_t		peak;		/* the most ever charged at once */
	uint64_t	refused;	/* refusals for want of room */
	uint64_t	noted;		/* refusals the log has told of */
	uint64_t	note_next;	/* ns: the next log line is due */
};

/* An empty budget of limit bytes. */
void rdmx_budget_construct(struct rdmx_budget *budget, size_t limit);

/* Charges bytes; false (nothing charged) when they do not fit. */
bool rdmx_budget_charge(struct rdmx_budget *budget, size_t bytes);

/* Gives back bytes charged earlier. */
void rdmx_budget_credit(struct rdmx_budget *budget, size_t bytes);

/* Whether bytes would fit now. */
bool rdmx_budget_fits(const struct rdmx_budget *budget, size_t bytes);

/*
 * Payload copies (unexpected bytes, reassembly buffers, packets held for
 * order) stop short of the limit by 1/RDMX_BUDGET_STATE_SHARE of it: the
 * rest is kept for the small state of messages that have a receive
 * waiting, so a peer that fills the budget with bytes it never completes
 * does not stop every other peer's messages.
 */
#define RDMX_BUDGET_STATE_SHARE	8

/* rdmx_budget_fits and rdmx_budget_charge for payload copies. */
bool rdmx_budget_fits_bulk(const struct rdmx_budget *budget, size_t bytes);
bool rdmx_budget_charge_bulk(struct rdmx_budget *budget, size_t bytes);

/*
 * A site refused what (a short noun) of bytes because its charge did not
 * fit: counted, and logged at most once a second with the count since
 * the last line, so a flood of hostile packets does not flood the log.
 */
void rdmx_budget_refused(struct rdmx_budget *budget, const char *what, size_t bytes);

/* Refusals since construction. */
uint64_t rdmx_budget_refusals(const struct rdmx_budget *budget);

/* Bytes charged now. */
size_t rdmx_budget_used(const struct rdmx_budget *budget);

/* The most bytes charged at once since construction. */
size_t rdmx_budget_peak(const struct rdmx_budget *budget);

#endif /* RDMX_BUDGET_H */
