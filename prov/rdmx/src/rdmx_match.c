/* rdmx: receive matching (see rdmx_match.h). */
#include "rdmx.h"
#include "rdmx_match.h"

void rdmx_match_queue_construct(struct rdmx_match_queue *q)
{
	rdmx_dlist_init(&q->posted);
	rdmx_dlist_init(&q->unexp);
}

struct rdmx_rxe *rdmx_match_posted(struct rdmx_match_queue *q,
				   fi_addr_t src, uint64_t tag)
{
	struct rdmx_dlist *it;

	rdmx_dlist_foreach(&q->posted, it) {
		struct rdmx_rxe *rxe = rdmx_container_of(it, struct rdmx_rxe, link);

		if (rdmx_match_addr(rxe->addr, src) &&
		    rdmx_match_tag(rxe->tag, rxe->ignore, tag)) {
			rdmx_dlist_remove(it);
			return rxe;
		}
	}
	return NULL;
}

struct rdmx_unexp *rdmx_match_unexp_find(struct rdmx_match_queue *q,
					 fi_addr_t addr, uint64_t tag,
					 uint64_t ignore)
{
	struct rdmx_dlist *it;

	rdmx_dlist_foreach(&q->unexp, it) {
		struct rdmx_unexp *ux = rdmx_container_of(it, struct rdmx_unexp, link);

		if (rdmx_match_addr(addr, ux->addr) &&
		    rdmx_match_tag(tag, ignore, ux->tag))
			return ux;
	}
	return NULL;
}

struct rdmx_unexp *rdmx_match_unexp(struct rdmx_match_queue *q,
				    fi_addr_t addr, uint64_t tag,
				    uint64_t ignore)
{
	struct rdmx_unexp *ux = rdmx_match_unexp_find(q, addr, tag, ignore);

	if (ux)
		rdmx_dlist_remove(&ux->link);
	return ux;
}

struct rdmx_rxe *rdmx_match_cancel(struct rdmx_match_queue *q, void *context)
{
	struct rdmx_dlist *it;

	rdmx_dlist_foreach(&q->posted, it) {
		struct rdmx_rxe *rxe = rdmx_container_of(it, struct rdmx_rxe, link);

		if (rxe->context == context) {
			rdmx_dlist_remove(it);
			return rxe;
		}
	}
	return NULL;
}
