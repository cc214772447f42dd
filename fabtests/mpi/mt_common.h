/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mt_common: what the MPI test programs (fabtests/mpi, run by
 * scripts/mpi.sh) share: start-up, failing the whole job with a message
 * that names the rank and what differed, payload buffers followed by
 * guard bytes, the payload of a message (ft_common's pattern, seeded by
 * its sender, receiver, iteration and size), and the checks of a
 * receive's bytes and status.
 *
 * Every check that fails prints "<prog>: rank <r>: ..." on stderr and
 * aborts the job (MPI_Abort), so mpirun exits non-zero. MPI errors keep
 * MPI_ERRORS_ARE_FATAL, which names the call that failed.
 */
#ifndef MT_COMMON_H
#define MT_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

/* This process's rank in MPI_COMM_WORLD and the number of ranks (mt_init). */
extern int g_mt_rank;
extern int g_mt_size;

/*
 * MPI_Init_thread asking for thread_level; fails the job when MPI
 * provides less. Sets g_mt_rank and g_mt_size.
 */
void mt_init(int *argc, char ***argv, int thread_level);

/* Prints "<prog>: rank <r>: <message>" on stderr and aborts the job. */
void mt_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/*
 * The rank this one pairs with (rank ^ 1); fails the job when the
 * number of ranks is odd.
 */
int mt_partner(void);

/* A buffer of len payload bytes and FT_GUARD guard bytes, all FT_POISON; free() it. */
uint8_t *mt_buf_open(size_t len);
/* Sets the len payload bytes and the guard bytes after them to FT_POISON. */
void mt_buf_poison(uint8_t *buf, size_t len);

/* Writes the payload of the message src sends dst at iteration it, of len bytes. */
void mt_fill(uint8_t *buf, size_t len, int src, int dst, uint64_t it);
/*
 * Checks that buf holds that payload followed by FT_GUARD bytes of
 * FT_POISON; fails the job naming the first wrong byte and, formatted
 * like printf, what was received.
 */
void mt_check_data(const uint8_t *buf, size_t len, int src, int dst, uint64_t it,
		   const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/*
 * Checks a receive's status: its source, tag and byte count; fails the
 * job naming what was received otherwise.
 */
void mt_check_status(const MPI_Status *st, int src, int tag, size_t len,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * Polls req with MPI_Test until it completes, for at most timeout_s
 * seconds (a completion that a broken provider would never give); fails
 * the job naming what when the time is up.
 */
void mt_wait_within(MPI_Request *req, MPI_Status *st, double timeout_s, const char *what);

/* Rank 0 prints "<prog>: <message>" on stdout: a case that passed. */
void mt_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Ends the program: a barrier, rank 0's "<prog>: PASS (<n> ranks)" line,
 * MPI_Finalize; returns main's exit status.
 */
int mt_finish(void);

#endif /* MT_COMMON_H */
