/* SPDX-License-Identifier: BSD-2-Clause */
/* ft_check: the tally of checks (see ft_check.h). */
#include <stdarg.h>
#include <stdio.h>

#include "ft_check.h"

/* Written by the main thread only. */
static int g_ft_passed, g_ft_failed;

bool ft_check(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		g_ft_passed++;
		printf("PASS %s\n", name);
		return true;
	}
	g_ft_failed++;
	printf("FAIL %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return false;
}

int ft_check_summary(void)
{
	printf("%d passed, %d failed\n", g_ft_passed, g_ft_failed);
	return g_ft_failed ? 1 : 0;
}
