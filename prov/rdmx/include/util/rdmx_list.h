/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: intrusive doubly linked lists. An element embeds a struct
 * rdmx_dlist and can sit on one list per embedded link.
 */
#ifndef RDMX_LIST_H
#define RDMX_LIST_H

#include <stdbool.h>

struct rdmx_dlist {
	struct rdmx_dlist *next;
	struct rdmx_dlist *prev;
};

static inline void rdmx_dlist_init(struct rdmx_dlist *head)
{
	head->next = head;
	head->prev = head;
}

static inline bool rdmx_dlist_empty(const struct rdmx_dlist *head)
{
	return head->next == head;
}

static inline void rdmx_dlist_insert_tail(struct rdmx_dlist *head,
					  struct rdmx_dlist *item)
{
	item->next = head;
	item->prev = head->prev;
	head->prev->next = item;
	head->prev = item;
}

static inline void rdmx_dlist_remove(struct rdmx_dlist *item)
{
	item->prev->next = item->next;
	item->next->prev = item->prev;
	item->next = item;
	item->prev = item;
}

/* Removes and returns the first element, or NULL when empty. */
static inline struct rdmx_dlist *rdmx_dlist_pop_front(struct rdmx_dlist *head)
{
	struct rdmx_dlist *item = head->next;

	if (item == head)
		return NULL;
	rdmx_dlist_remove(item);
	return item;
}

/* Moves every element of src to the tail of head; src ends empty. */
static inline void rdmx_dlist_splice_tail(struct rdmx_dlist *head,
					  struct rdmx_dlist *src)
{
	if (rdmx_dlist_empty(src))
		return;
	src->next->prev = head->prev;
	head->prev->next = src->next;
	src->prev->next = head;
	head->prev = src->prev;
	rdmx_dlist_init(src);
}

#define rdmx_dlist_foreach(head, it) \
	for ((it) = (head)->next; (it) != (head); (it) = (it)->next)

#endif /* RDMX_LIST_H */
