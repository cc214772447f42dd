/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_osc: MPI one-sided communication (MPI-3 RMA), which Open MPI's osc
 * rdma carries over btl ofi as libfabric RMA and atomics (scripts/mpi.sh
 * runs it so, with rdmx alone). Each rank exposes one window
 * (MPI_Win_create over its own memory): a few int64 counters, then one
 * block of OSC_BLOCK bytes (and FT_GUARD guard bytes) per rank.
 *
 *  1. fence epochs, for each size of osc_sizes: every rank puts a
 *     payload (mt_fill, seeded by sender, target and size) into its own
 *     block of every rank; after the fence each rank checks every block
 *     and the guard bytes after it; then every rank gets back what it put
 *     into each rank, and checks it;
 *  2. lock epochs: OSC_ROUNDS rounds, each an MPI_Accumulate (MPI_SUM) of
 *     1 and an MPI_Fetch_and_op (MPI_SUM) of 1 into counters of rank 0;
 *     then an MPI_Fetch_and_op (MPI_REPLACE) and an MPI_Accumulate
 *     (MPI_REPLACE) of rank + 1 into two slots of rank 0 that hold 0. Rank
 *     0 checks the sums, that the old values all ranks fetched are each of
 *     0 .. ranks x rounds - 1 once, that the swap's old values and the
 *     slot's last value are each of 0 .. ranks once, and that the
 *     replaced slot holds one rank's value. With the argument "all-ops",
 *     also an MPI_Accumulate each of MPI_MAX, MPI_MIN, MPI_BOR, MPI_BAND
 *     and MPI_BXOR of a value made from the rank, with their results
 *     checked: Open MPI 4.1's btl ofi aborts on these five as network
 *     atomics (it maps only sum and swap to libfabric), so scripts/mpi.sh
 *     runs all-ops with osc_rdma_acc_use_amo=0, where osc rdma applies
 *     them itself under its accumulate lock;
 *  3. compare-and-swap: every rank but 0 tries to claim a slot of rank 0
 *     that holds -1 (exactly one wins, the others see the winner), and
 *     then tries again (all fail, seeing the winner); rank 0 claims the
 *     slot of rank 1. No rank swaps in its own window: Open MPI 4.1's osc
 *     rdma passes btl ofi no key for a rank's own window, and btl ofi
 *     dereferences it before it calls the provider (a crash whatever the
 *     provider).
 *
 *   mpirun -np <n> mpi_osc [all-ops]
 *
 * Exit status: 0 after rank 0 printed "mpi_osc: PASS (<n> ranks)";
 * otherwise the job is aborted with a message naming what differed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ft_common.h"
#include "mt_common.h"

#define OSC_BLOCK	(256 * 1024)
#define OSC_ROUNDS	200

const char *const ft_prog = "mpi_osc";

/* Put and get sizes: one element, a page, a block (several btl puts). */
static const size_t osc_sizes[] = { 8, 4096, OSC_BLOCK };

/* The counters at the start of every window; the blocks follow. */
enum osc_slot {
	OSC_SUM,
	OSC_FOP,
	OSC_MAX,
	OSC_MIN,
	OSC_BOR,
	OSC_BAND,
	OSC_BXOR,
	OSC_SWAP,
	OSC_REPL,
	OSC_CAS,
	OSC_SLOTS
};

#define OSC_STRIDE	(OSC_BLOCK + FT_GUARD)
#define OSC_BLOCKS_AT	(OSC_SLOTS * sizeof(int64_t))

static int osc_all_ops;
static int64_t *osc_slots;
static uint8_t *osc_blocks;
static MPI_Win osc_win;

/* The window displacement (the unit is a byte) of rank src's block. */
static MPI_Aint osc_block_at(int src)
{
	return (MPI_Aint) (OSC_BLOCKS_AT + (size_t) src * OSC_STRIDE);
}

static MPI_Aint osc_slot_at(enum osc_slot slot)
{
	return (MPI_Aint) (slot * sizeof(int64_t));
}

static void osc_open(void)
{
	size_t len = OSC_BLOCKS_AT + (size_t) g_mt_size * OSC_STRIDE;
	uint8_t *base = malloc(len);

	if (!base)
		mt_die("out of memory for a %zu-byte window", len);
	osc_slots = (int64_t *) base;
	osc_blocks = base + OSC_BLOCKS_AT;
	memset(osc_slots, 0, OSC_BLOCKS_AT);
	osc_slots[OSC_MIN] = INT64_MAX;
	osc_slots[OSC_BAND] = -1;
	osc_slots[OSC_CAS] = -1;
	MPI_Win_create(base, (MPI_Aint) len, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &osc_win);
}

/* Step 1 at one size. */
static void osc_put_get(size_t size)
{
	uint8_t *out = mt_buf_open(size), *back = mt_buf_open(size);

	mt_buf_poison(osc_blocks, (size_t) g_mt_size * OSC_STRIDE - FT_GUARD);
	MPI_Win_fence(0, osc_win);
	for (int t = 0; t < g_mt_size; t++) {
		mt_fill(out, size, g_mt_rank, t, size);
		MPI_Put(out, (int) size, MPI_BYTE, t, osc_block_at(g_mt_rank), (int) size,
			MPI_BYTE, osc_win);
		/* The origin buffer is the put's until the fence: one per target. */
		MPI_Win_fence(0, osc_win);
	}
	for (int src = 0; src < g_mt_size; src++)
		mt_check_data(osc_blocks + (size_t) src * OSC_STRIDE, size, src, g_mt_rank, size,
			      "MPI_Put of %zu bytes from rank %d", size, src);
	for (int t = 0; t < g_mt_size; t++) {
		mt_buf_poison(back, size);
		MPI_Get(back, (int) size, MPI_BYTE, t, osc_block_at(g_mt_rank), (int) size,
			MPI_BYTE, osc_win);
		MPI_Win_fence(0, osc_win);
		mt_check_data(back, size, g_mt_rank, t, size, "MPI_Get of %zu bytes from rank %d",
			      size, t);
	}
	free(out);
	free(back);
}

static void osc_acc(int64_t value, enum osc_slot slot, MPI_Op op)
{
	MPI_Accumulate(&value, 1, MPI_INT64_T, 0, osc_slot_at(slot), 1, MPI_INT64_T, op, osc_win);
}

static void osc_expect(enum osc_slot slot, int64_t want, const char *what)
{
	if (osc_slots[slot] != want)
		mt_die("%s: rank 0 holds %lld, want %lld", what, (long long) osc_slots[slot],
		       (long long) want);
}

/* Fails the job unless the n values of got are each of 0 .. n - 1 once. */
static void osc_each_once(const int64_t *got, int64_t n, int64_t per_rank, const char *what)
{
	uint8_t *seen = calloc((size_t) n, 1);

	if (!seen)
		mt_die("out of memory");
	for (int64_t i = 0; i < n; i++) {
		if (got[i] < 0 || got[i] >= n || seen[got[i]])
			mt_die("%s: value %lld seen twice or out of range (rank %lld, round %lld)",
			       what, (long long) got[i], (long long) (i / per_rank),
			       (long long) (i % per_rank));
		seen[got[i]] = 1;
	}
	free(seen);
}

/* Step 2's checks of rank 0's own window, and of what every rank fetched. */
static void osc_counters_check(const int64_t *fetched, const int64_t *swapped)
{
	int64_t n = g_mt_size, bits = ((int64_t) 1 << n) - 1, total = n * OSC_ROUNDS;
	int64_t *swaps = malloc((size_t) (n + 1) * sizeof(*swaps));

	if (!swaps)
		mt_die("out of memory");
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, osc_win);
	osc_expect(OSC_SUM, total, "MPI_Accumulate MPI_SUM");
	osc_expect(OSC_FOP, total, "MPI_Fetch_and_op MPI_SUM");
	if (osc_slots[OSC_REPL] < 1 || osc_slots[OSC_REPL] > n)
		mt_die("MPI_Accumulate MPI_REPLACE: rank 0 holds %lld, no rank's value",
		       (long long) osc_slots[OSC_REPL]);
	if (osc_all_ops) {
		osc_expect(OSC_MAX, n, "MPI_Accumulate MPI_MAX");
		osc_expect(OSC_MIN, 1, "MPI_Accumulate MPI_MIN");
		osc_expect(OSC_BOR, bits, "MPI_Accumulate MPI_BOR");
		osc_expect(OSC_BAND, ~bits, "MPI_Accumulate MPI_BAND");
		osc_expect(OSC_BXOR, bits, "MPI_Accumulate MPI_BXOR");
	}
	memcpy(swaps, swapped, (size_t) n * sizeof(*swaps));
	swaps[n] = osc_slots[OSC_SWAP];
	MPI_Win_unlock(0, osc_win);
	osc_each_once(fetched, total, OSC_ROUNDS, "MPI_Fetch_and_op MPI_SUM's old values");
	osc_each_once(swaps, n + 1, 1, "MPI_Fetch_and_op MPI_REPLACE's old values and the last");
	free(swaps);
}

/* Step 2. */
static void osc_counters(void)
{
	int64_t one = 1, mine = g_mt_rank + 1, swapped, *old = calloc(OSC_ROUNDS, sizeof(*old));
	int64_t *fetched = NULL, *swaps = NULL;

	if (!old)
		mt_die("out of memory");
	for (int r = 0; r < OSC_ROUNDS; r++) {
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, osc_win);
		osc_acc(1, OSC_SUM, MPI_SUM);
		MPI_Fetch_and_op(&one, &old[r], MPI_INT64_T, 0, osc_slot_at(OSC_FOP), MPI_SUM,
				 osc_win);
		MPI_Win_unlock(0, osc_win);
	}
	MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, osc_win);
	MPI_Fetch_and_op(&mine, &swapped, MPI_INT64_T, 0, osc_slot_at(OSC_SWAP), MPI_REPLACE,
			 osc_win);
	osc_acc(mine, OSC_REPL, MPI_REPLACE);
	if (osc_all_ops) {
		osc_acc(mine, OSC_MAX, MPI_MAX);
		osc_acc(mine, OSC_MIN, MPI_MIN);
		osc_acc((int64_t) 1 << g_mt_rank, OSC_BOR, MPI_BOR);
		osc_acc(~((int64_t) 1 << g_mt_rank), OSC_BAND, MPI_BAND);
		osc_acc((int64_t) 1 << g_mt_rank, OSC_BXOR, MPI_BXOR);
	}
	MPI_Win_unlock(0, osc_win);
	if (!g_mt_rank) {
		fetched = calloc((size_t) g_mt_size * OSC_ROUNDS, sizeof(*fetched));
		swaps = calloc((size_t) g_mt_size, sizeof(*swaps));
		if (!fetched || !swaps)
			mt_die("out of memory");
	}
	MPI_Gather(old, OSC_ROUNDS, MPI_INT64_T, fetched, OSC_ROUNDS, MPI_INT64_T, 0,
		   MPI_COMM_WORLD);
	MPI_Gather(&swapped, 1, MPI_INT64_T, swaps, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
	free(old);
	/* Every rank's epochs are over: rank 0 reads its own window. */
	if (!g_mt_rank)
		osc_counters_check(fetched, swaps);
	free(fetched);
	free(swaps);
}

/* One MPI_Compare_and_swap of the rank into target's slot if it holds -1. */
static int64_t osc_claim(int target)
{
	int64_t mine = g_mt_rank, free_mark = -1, old;

	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, osc_win);
	MPI_Compare_and_swap(&mine, &free_mark, &old, MPI_INT64_T, target, osc_slot_at(OSC_CAS),
			     osc_win);
	MPI_Win_unlock(target, osc_win);
	return old;
}

/* Step 3. */
static void osc_cas(void)
{
	int64_t first, again, winner, *firsts = NULL;
	int winners = 0;

	first = osc_claim(g_mt_rank ? 0 : 1);
	MPI_Barrier(MPI_COMM_WORLD);
	winner = g_mt_rank ? -1 : osc_slots[OSC_CAS];
	MPI_Bcast(&winner, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
	if (winner < 1 || winner >= g_mt_size)
		mt_die("MPI_Compare_and_swap: rank 0's slot holds %lld, not a rank's claim",
		       (long long) winner);
	if (g_mt_rank == 1 && osc_slots[OSC_CAS] != 0)
		mt_die("MPI_Compare_and_swap: rank 1's slot holds %lld, not rank 0's claim",
		       (long long) osc_slots[OSC_CAS]);
	if (!g_mt_rank && first != -1)
		mt_die("MPI_Compare_and_swap: rank 0 alone claimed rank 1's slot and saw %lld",
		       (long long) first);
	if (g_mt_rank && first != (g_mt_rank == winner ? -1 : winner))
		mt_die("MPI_Compare_and_swap: saw %lld in rank 0's slot, rank %lld won",
		       (long long) first, (long long) winner);
	if (g_mt_rank && (again = osc_claim(0)) != winner)
		mt_die("MPI_Compare_and_swap again: saw %lld, rank %lld won before",
		       (long long) again, (long long) winner);
	if (!g_mt_rank && !(firsts = calloc((size_t) g_mt_size, sizeof(*firsts))))
		mt_die("out of memory");
	MPI_Gather(&first, 1, MPI_INT64_T, firsts, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
	if (g_mt_rank)
		return;
	for (int r = 1; r < g_mt_size; r++)
		winners += firsts[r] == -1;
	if (winners != 1)
		mt_die("MPI_Compare_and_swap: %d ranks won rank 0's slot", winners);
	osc_expect(OSC_CAS, winner, "MPI_Compare_and_swap after the failed tries");
	free(firsts);
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, MPI_THREAD_SINGLE);
	osc_all_ops = argc > 1 && !strcmp(argv[1], "all-ops");
	if (g_mt_size < 2)
		mt_die("needs 2 ranks or more");
	if (g_mt_size > 62)
		mt_die("needs 62 ranks or fewer (one bit of an int64 each)");
	osc_open();
	for (size_t i = 0; i < sizeof(osc_sizes) / sizeof(osc_sizes[0]); i++)
		osc_put_get(osc_sizes[i]);
	mt_say("fence: MPI_Put and MPI_Get of 8, 4096 and %d bytes to and from every rank, ok",
	       OSC_BLOCK);
	osc_counters();
	mt_say("lock: %d rounds of MPI_Accumulate and MPI_Fetch_and_op (MPI_SUM) per rank, "
	       "MPI_REPLACE%s, ok", OSC_ROUNDS,
	       osc_all_ops ? ", MPI_MAX, MPI_MIN, MPI_BOR, MPI_BAND, MPI_BXOR" : "");
	osc_cas();
	mt_say("MPI_Compare_and_swap: one winner of %d, every later try failed, ok",
	       g_mt_size - 1);
	MPI_Win_free(&osc_win);
	free(osc_slots);
	return mt_finish();
}
