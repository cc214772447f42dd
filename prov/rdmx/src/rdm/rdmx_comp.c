/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: the rdm layer's error completions (rdmx_comp.h). */
#include <stdarg.h>
#include <stdio.h>

#include "rdmx_comp.h"

int rdmx_comp_err(struct rdmx_comp *comp, const struct rdmx_cq_entry *entry, int err,
		  size_t olen, const char *fmt, ...)
{
	char text[RDMX_ERR_DATA_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return comp->ops->write_err(comp, entry, err, olen, text);
}
