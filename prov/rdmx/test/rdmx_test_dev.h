/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx unit tests: checks the efa and verbs device tests share, run
 * against the fake rdma-core (fake_ibv.h).
 */
#ifndef RDMX_TEST_DEV_H
#define RDMX_TEST_DEV_H

#include "fake_ibv.h"
#include "rdmx_test.h"

/* An rdma-core call that fails while a device opens, and what open says. */
struct rdmx_test_open_fail {
	enum fake_ibv_call	call;
	unsigned		skip;	/* calls of it that succeed first */
	int			err;	/* the errno it fails with */
	int			ret;	/* what open must return */
};

/*
 * Opens a device of ops on the one fake device cfg once per row, with
 * that row's call failing: open must return the row's code, write no
 * device and leave no rdma-core object behind.
 */
static inline void rdmx_test_failed_opens(const struct rdmx_dev_ops *ops,
					  const struct fake_ibv_dev_cfg *cfg,
					  const struct rdmx_test_open_fail *rows,
					  size_t n)
{
	struct rdmx_dev_attr attr = { .sq_size = 64, .rq_size = 64 };

	for (size_t i = 0; i < n; i++) {
		struct rdmx_dev *dev = NULL;
		int ret;

		fake_ibv_install(cfg, 1);
		fake_ibv_fail_after(rows[i].call, rows[i].skip, rows[i].err, 1);
		ret = ops->open(&attr, &dev);
		cr_assert_eq(ret, rows[i].ret, "row %zu: open gave %s, not %s", i,
			     fi_strerror(-ret), fi_strerror(-rows[i].ret));
		cr_assert_null(dev);
		cr_assert_eq(fake_ibv_live(), 0, "row %zu: objects leaked", i);
	}
}

/*
 * ibv_create_ah failing makes a's ah_create for b fail with its code,
 * keeping nothing; the next one works and is returned.
 */
static inline struct rdmx_ah *rdmx_test_failed_ah(struct rdmx_dev *a,
						  struct rdmx_dev *b)
{
	uint8_t addr[RDMX_DEV_ADDR_MAX];
	struct rdmx_ah *ah = NULL;
	size_t live = fake_ibv_live();

	b->ops->getname(b, addr);
	fake_ibv_fail(FAKE_IBV_CREATE_AH, ENOMEM, 1);
	cr_assert_eq(a->ops->ah_create(a, addr, &ah), -FI_ENOMEM);
	cr_assert_null(ah);
	cr_assert_eq(fake_ibv_live(), live, "a failed ah_create kept objects");
	cr_assert_eq(a->ops->ah_create(a, addr, &ah), 0);
	return ah;
}

/* Closes both devices of a test; nothing of the fake may be left. */
static inline void rdmx_test_close_devs(struct rdmx_dev *a, struct rdmx_dev *b)
{
	a->ops->close(a);
	b->ops->close(b);
	cr_assert_eq(fake_ibv_live(), 0, "objects leaked at close");
}

#endif /* RDMX_TEST_DEV_H */
