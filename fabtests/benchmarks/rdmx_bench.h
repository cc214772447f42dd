/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_bench.h: what the two files of rdmx_bench share: limits, the
 * run's parameters and control messages, the state of one side, and the
 * calls between rdmx_bench.c (setup, completions, posting and waiting,
 * control messages, options) and rdmx_bench_tests.c (plans, the tests,
 * their output). Public libfabric headers only.
 */
#ifndef RDMX_BENCH_H
#define RDMX_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include "ft_common.h"
#include "ft_fabric.h"

#define RB_NAME			"rdmx_bench"
#define RB_FI_VERSION		FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)
#define RB_DEFAULT_PORT		"47620"
#define RB_DEFAULT_TIMEOUT	30
#define RB_SIZES_MAX		32
#define RB_SIZE_LIMIT		(64ULL << 20)	/* largest -S accepted */
#define RB_ADDR_MAX		256
#define RB_CQ_BATCH		64
/* -M sread: the longest sleep of one fi_cq_sread, so timeouts are seen. */
#define RB_SREAD_MS		100
#define RB_WINDOW_MAX		1024
#define RB_ALIGN		4096
/* Bytes a verified window may use per direction (one buffer per slot). */
#define RB_VERIFY_BUDGET	(32ULL << 20)
/* Bytes one bw/bibw/rate repetition aims to move (fewer windows if big). */
#define RB_REP_BYTES		(64ULL << 20)
/* Above this size lat runs proportionally fewer iterations. */
#define RB_LAT_SCALE_ABOVE	65536
#define RB_LAT_MIN_ITERS	20
#define RB_DEFAULT_REPS		5
#define RB_WARMUP_DEFAULT	UINT32_MAX	/* "not given" */

/* Control messages travel with their own tags, data with others. */
#define RB_CTRL_MAGIC		0x52424d58u	/* "XMBR" */
#define RB_CTRL_VERSION		2u
#define RB_TAG_CTRL		0x4354524c00000000ULL
#define RB_TAG_DATA		0x2000000000000000ULL
/* Receives posted first and never matched (-D): what matching must skip. */
#define RB_TAG_DECOY		0x4445434f00000000ULL
#define RB_DECOYS_MAX		1000000

enum rb_test {
	RB_LAT = 0,
	RB_BW,
	RB_BIBW,
	RB_RATE,
	RB_NTESTS,
};

/* Each test's defaults; -n, -w, -W and -S override them. */
struct rb_test_desc {
	const char	*name;
	uint32_t	iters;		/* lat: iterations; others: windows per rep */
	uint32_t	window;
	size_t		top;		/* default sizes: 1 B up to this */
};

/* Defined in rdmx_bench_tests.c. */
extern const struct rb_test_desc rb_tests[RB_NTESTS];

enum rb_ctrl_type {
	RB_CTRL_HELLO = 1,	/* client → server: parameters and address */
	RB_CTRL_WELCOME,	/* server → client: agreed limits */
	RB_CTRL_READY,		/* receiver → sender: receives are posted */
	RB_CTRL_GO,		/* bibw client → server: mine are posted too */
	RB_CTRL_ACK,		/* a window arrived, the next one's receives are posted */
	RB_CTRL_FIN,		/* client → server: all done */
	RB_CTRL_FIN_ACK,	/* server → client: safe to close */
	RB_CTRL_NTYPES,
};

/* What the client asks for; sent in HELLO, so the server needs no options. */
struct rb_params {
	uint32_t	ntests;
	uint32_t	tests[RB_NTESTS];	/* enum rb_test, in run order */
	uint32_t	nsizes;			/* 0: each test's default sizes */
	uint32_t	iters;			/* 0: each test's default */
	uint32_t	warmup;			/* RB_WARMUP_DEFAULT: default */
	uint32_t	window;			/* 0: each test's default */
	uint32_t	reps;			/* 0: RB_DEFAULT_REPS */
	uint32_t	verify;
	uint32_t	inject;			/* lat: fi_tinject when it fits */
	uint32_t	decoys;			/* receives posted before the tests */
	uint64_t	sizes[RB_SIZES_MAX];
};

/* Both processes run this program on hosts of one byte order. */
struct rb_ctrl {
	uint32_t	magic;
	uint32_t	version;
	uint32_t	type;
	uint32_t	addrlen;
	uint64_t	inject_size;
	uint64_t	max_msg_size;
	struct rb_params params;
	uint8_t		addr[RB_ADDR_MAX];
};

struct rb_opts {
	const char	*port;
	const char	*bind_addr;
	const char	*host;		/* NULL for the server */
	const char	*prov_name;	/* -P: exact fabric_attr->prov_name */
	int		timeout_s;
	bool		sread;		/* -M sread: wait in fi_cq_sread */
	struct rb_params params;
};

/* One outstanding operation; its fi_context2 is the op_context. */
struct rb_op {
	struct fi_context2	fctx;	/* first: op_context points here */
	bool			posted;
	bool			done;
	bool			is_rx;
	size_t			len;	/* rx: length expected */
	uint64_t		tag;	/* rx: tag expected */
	uint64_t		got_len;
};

/* One size of one test, as both sides compute it. */
struct rb_plan {
	enum rb_test	test;
	size_t		size;
	uint32_t	iters;		/* lat: timed iterations; others: windows per rep */
	uint32_t	warmup;		/* lat: iterations; others: windows */
	uint32_t	window;
	uint32_t	reps;
	bool		skip;		/* above max_msg_size */
};

struct rb {
	struct rb_opts		opts;
	struct rb_params	*params;	/* the run's: opts' or the HELLO's */
	struct fi_info		*info;		/* the whole list from fi_getinfo */
	struct fi_info		*fi;		/* the entry used */
	struct ft_rdm		rdm;
	struct fid_mr		*ctrl_mr;
	struct fid_mr		*data_mr;
	void			*ctrl_desc;
	void			*data_desc;
	struct rb_ctrl		*ctrl_tx;	/* ctrl area: two rb_ctrl, two words */
	struct rb_ctrl		*ctrl_rx;
	uint64_t		*word_tx;	/* small control messages (READY, ACK...) */
	uint64_t		*word_rx;
	uint8_t			*ctrl_mem;
	uint8_t			*data_mem;
	uint8_t			*tx_buf;
	uint8_t			*rx_buf;
	size_t			buf_len;	/* bytes of each of tx_buf, rx_buf */
	fi_addr_t		peer;
	size_t			inject_size;	/* agreed by both sides */
	size_t			max_msg_size;	/* agreed by both sides */
	struct rb_op		*tx_ops;	/* RB_WINDOW_MAX each */
	struct rb_op		*rx_ops;
	struct rb_op		ctrl_tx_op;
	struct rb_op		ctrl_rx_op;
	struct fi_context2	*decoy_ctx;	/* params->decoys of them */
	uint8_t			decoy_buf;
	uint64_t		tx_done;	/* data completions so far */
	uint64_t		rx_done;
	uint64_t		*samples;	/* lat: round trips; others: per rep */
	size_t			samples_len;
	const char		*what;		/* the test and size, for messages */
	char			what_buf[64];
};

/* The provider name of the fi_info in use, e.g. "tcp;ofi_rxm". */
static inline const char *rb_prov(const struct rb *rb)
{
	return rb->fi->fabric_attr->prov_name;
}

/* rdmx_bench.c */

/*
 * Progresses until *count reaches target or, with count NULL, until op is
 * done; 0, or an error (timeout, error completion) already printed.
 */
int rb_wait(struct rb *rb, const uint64_t *count, uint64_t target,
	    const struct rb_op *op, const char *for_what);
/* rb_wait for one operation. */
int rb_wait_op(struct rb *rb, const struct rb_op *op, const char *for_what);
/* fi_tsend / fi_tinject / fi_trecv to or from the peer, retried while
 * the provider answers -FI_EAGAIN; 0 or an error already printed. */
int rb_post_send(struct rb *rb, struct rb_op *op, void *buf, size_t len,
		 void *desc, uint64_t tag);
int rb_post_inject(struct rb *rb, void *buf, size_t len, uint64_t tag);
int rb_post_recv(struct rb *rb, struct rb_op *op, void *buf, size_t len,
		 void *desc, uint64_t tag);
/* Control messages: one receive and one send outstanding at most. */
int rb_ctrl_post_recv(struct rb *rb, enum rb_ctrl_type type);
int rb_ctrl_send(struct rb *rb, enum rb_ctrl_type type, uint64_t value);
int rb_ctrl_wait_recv(struct rb *rb, enum rb_ctrl_type type, uint64_t value);

/* rdmx_bench_tests.c */

/* The sizes test t runs (the -S list or its defaults); returns how many. */
size_t rb_sizes(const struct rb_params *p, enum rb_test t, uint64_t *sizes);
/* What both sides run for test t at size (both compute the same). */
void rb_plan(const struct rb *rb, enum rb_test t, size_t size, struct rb_plan *plan);
/* Runs every test and size of the run on this side; 0 or an error. */
int rb_run(struct rb *rb);

#endif /* RDMX_BENCH_H */
