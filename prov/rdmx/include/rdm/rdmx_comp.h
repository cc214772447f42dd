/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: where the rdm layer reports finished operations. The api layer
 * gives each endpoint direction a completion sink (its CQ and counters,
 * rdmx_sink.c) with the ops to write into it; the rdm layer knows the
 * sink only by these ops, never which objects stand behind it. Every
 * operation that ends is reported once: by write or count when it
 * succeeded, by write_err when it failed.
 */
#ifndef RDMX_COMP_H
#define RDMX_COMP_H

#include <stddef.h>
#include <stdint.h>
#include <rdma/fabric.h>

/* One completion, in the form the rdm layer produces it. */
struct rdmx_cq_entry {
	void		*op_context;
	uint64_t	flags;
	size_t		len;
	void		*buf;
	uint64_t	data;
	uint64_t	tag;
	fi_addr_t	src;
};

/* The most err_data bytes an error completion carries, its NUL included. */
#define RDMX_ERR_DATA_MAX	128

struct rdmx_comp;

struct rdmx_comp_ops {
	/* Queues a completion; 0, or -FI_ENOMEM if it cannot be kept. */
	int	(*write)(struct rdmx_comp *comp, const struct rdmx_cq_entry *entry);
	/*
	 * Queues an error completion for the operation in entry with
	 * positive FI_E* code err and olen overflow bytes; text (at most
	 * RDMX_ERR_DATA_MAX bytes with its NUL) is its err_data, or with
	 * text NULL it has none. 0 or -FI_ENOMEM.
	 */
	int	(*write_err)(struct rdmx_comp *comp, const struct rdmx_cq_entry *entry,
			     int err, size_t olen, const char *text);
	/*
	 * An error entry, as write_err, for an outcome the application asked
	 * for rather than a failed operation (rdmx_comp_outcome): not counted
	 * as an error.
	 */
	int	(*outcome)(struct rdmx_comp *comp, const struct rdmx_cq_entry *entry,
			   int err, size_t olen, const char *text);
	/*
	 * An operation that succeeded without asking for an entry
	 * (FI_SELECTIVE_COMPLETION, fi_inject): counted, no entry.
	 */
	void	(*count)(struct rdmx_comp *comp, const struct rdmx_cq_entry *entry);
	/*
	 * A message received from a sender outside the AV, by an endpoint
	 * with FI_SOURCE_ERR (fi_cq(3)): counted as done, its entry an
	 * FI_EADDRNOTAVAIL error whose err_data is the sender's address
	 * (len bytes, the form fi_av_insert takes). 0 or -FI_ENOMEM.
	 */
	int	(*source_err)(struct rdmx_comp *comp, const struct rdmx_cq_entry *entry,
			      const void *addr, size_t len);
};

struct rdmx_comp {
	const struct rdmx_comp_ops	*ops;
};

static inline int rdmx_comp_write(struct rdmx_comp *comp, const struct rdmx_cq_entry *entry)
{
	return comp->ops->write(comp, entry);
}

static inline void rdmx_comp_count(struct rdmx_comp *comp, const struct rdmx_cq_entry *entry)
{
	comp->ops->count(comp, entry);
}

static inline int rdmx_comp_source_err(struct rdmx_comp *comp,
				       const struct rdmx_cq_entry *entry,
				       const void *addr, size_t len)
{
	return comp->ops->source_err(comp, entry, addr, len);
}

/* An error completion whose err_data is the printf-style text. */
int rdmx_comp_err(struct rdmx_comp *comp, const struct rdmx_cq_entry *entry, int err,
		  size_t olen, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * An error entry with code err and no err_data (err_data NULL,
 * err_data_size 0): an outcome the application asked for rather than a
 * failure of the provider, such as a peek that found nothing. Readers
 * that test only err and never initialise err_data_size (as upstream
 * fabtests' fi_rdm_tagged_peek does) then never get data written
 * through their err_data. 0 or -FI_ENOMEM.
 */
static inline int rdmx_comp_outcome(struct rdmx_comp *comp,
				    const struct rdmx_cq_entry *entry, int err)
{
	return comp->ops->outcome(comp, entry, err, 0, NULL);
}

#endif /* RDMX_COMP_H */
