/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ft_check: the tally of the one-process API tests: one line per check
 * ("PASS name" or "FAIL name: detail") and a closing count.
 */
#ifndef FT_CHECK_H
#define FT_CHECK_H

#include <stdbool.h>

/*
 * Records one check (from the main thread only: the tally is not atomic);
 * detail (printf-style) is printed on failure. Returns ok.
 */
bool ft_check(bool ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prints "N passed, M failed"; returns the exit status: 1 if any check failed. */
int ft_check_summary(void);

#endif /* FT_CHECK_H */
