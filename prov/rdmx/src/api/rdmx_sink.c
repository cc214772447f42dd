/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: an endpoint direction's completion sink (see rdmx_sink.h). */
#include "rdmx.h"
#include "rdmx_cntr.h"
#include "rdmx_cq.h"
#include "rdmx_sink.h"

static struct rdmx_sink *rdmx_sink(struct rdmx_comp *comp)
{
	return rdmx_container_of(comp, struct rdmx_sink, comp);
}

/* The counter of the entry's kind of operation, or NULL. */
static struct rdmx_cntr *rdmx_sink_cntr(const struct rdmx_sink *sink,
					const struct rdmx_cq_entry *entry)
{
	if (entry->flags & (FI_READ | FI_REMOTE_READ))
		return sink->cntrs[RDMX_SINK_READ];
	if (entry->flags & (FI_WRITE | FI_REMOTE_WRITE))
		return sink->cntrs[RDMX_SINK_WRITE];
	return sink->cntrs[RDMX_SINK_MSG];
}

static void rdmx_sink_count(struct rdmx_comp *comp, const struct rdmx_cq_entry *entry)
{
	struct rdmx_cntr *cntr = rdmx_sink_cntr(rdmx_sink(comp), entry);

	if (cntr)
		rdmx_cntr_inc(cntr);
}

/* rdmx_sink_write of a completion a counter counts. */
static RDMX_NOINLINE int rdmx_sink_write_counted(struct rdmx_sink *sink, struct rdmx_cntr *cntr,
						 const struct rdmx_cq_entry *entry)
{
	rdmx_cntr_inc(cntr);
	return sink->cq ? rdmx_cq_write(sink->cq, entry) : 0;
}

static int rdmx_sink_write(struct rdmx_comp *comp, const struct rdmx_cq_entry *entry)
{
	struct rdmx_sink *sink = rdmx_sink(comp);
	struct rdmx_cntr *cntr = rdmx_sink_cntr(sink, entry);

	/* Out of line with its counter: a CQ alone is written without a frame. */
	if (cntr)
		return rdmx_sink_write_counted(sink, cntr, entry);
	return sink->cq ? rdmx_cq_write(sink->cq, entry) : 0;
}

static int rdmx_sink_outcome(struct rdmx_comp *comp, const struct rdmx_cq_entry *entry,
			     int err, size_t olen, const char *text)
{
	struct rdmx_sink *sink = rdmx_sink(comp);

	return sink->cq ? rdmx_cq_write_err(sink->cq, entry, err, olen, text) : 0;
}

static int rdmx_sink_write_err(struct rdmx_comp *comp, const struct rdmx_cq_entry *entry,
			       int err, size_t olen, const char *text)
{
	struct rdmx_cntr *cntr = rdmx_sink_cntr(rdmx_sink(comp), entry);

	if (cntr)
		rdmx_cntr_inc_err(cntr);
	return rdmx_sink_outcome(comp, entry, err, olen, text);
}

static int rdmx_sink_source_err(struct rdmx_comp *comp, const struct rdmx_cq_entry *entry,
				const void *addr, size_t len)
{
	struct rdmx_sink *sink = rdmx_sink(comp);

	rdmx_sink_count(comp, entry);
	return sink->cq ? rdmx_cq_write_source_err(sink->cq, entry, addr, len) : 0;
}

static const struct rdmx_comp_ops rdmx_sink_ops = {
	.write = rdmx_sink_write,
	.write_err = rdmx_sink_write_err,
	.outcome = rdmx_sink_outcome,
	.count = rdmx_sink_count,
	.source_err = rdmx_sink_source_err,
};

void rdmx_sink_construct(struct rdmx_sink *sink)
{
	*sink = (struct rdmx_sink) { .comp.ops = &rdmx_sink_ops };
}
