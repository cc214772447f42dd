/*
 * rdmx_wireup: sends posted before their receiver exists. The sender
 * resolves the receiver's host and port, inserts it into its AV and posts
 * every tagged send at once (-n, default 1000; every hundredth one a
 * 200,000-byte long message, the others up to 3000 bytes), then waits for
 * their completions, which ask for FI_DELIVERY_COMPLETE. It counts each
 * post that returned -FI_EAGAIN: with --no-eagain (rdmx: sends to a peer
 * not yet connected wait on its pending queue) any fails the run. The
 * receiver may start seconds later on that port: it keeps wildcard
 * receives posted and checks that the n-th one it posted took message n
 * (send-after-send order), with its length and every byte.
 *
 *   receiver: rdmx_wireup -r [-b addr] -p port [-n count] [-t timeout_s]
 *   sender:   rdmx_wireup -p port [-n count] [--no-eagain] [-t timeout_s] host
 *
 * Exit status: 0 with a last line "rdmx_wireup: PASS ...", 1 on failure,
 * 2 on bad options.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_tagged.h>

#include "ft_common.h"
#include "ft_fabric.h"

#define WU_NAME		"rdmx_wireup"
#define WU_VERSION	FI_VERSION(1, 17)
#define WU_LONG		200000
#define WU_WINDOW	64
#define WU_ANY_TAG	(~0ULL)

const char *const ft_prog = WU_NAME;

struct wu_opts {
	bool		receiver;
	bool		no_eagain;
	const char	*bind_addr;
	const char	*port;
	const char	*host;
	uint64_t	count;
	int		timeout_s;
};

struct wu_rx {
	struct fi_context	ctx;	/* first: op_context points here */
	uint64_t		posted;	/* its rank among the receives posted */
	uint8_t			*buf;
};

/* The length of message i. */
static size_t wu_len(uint64_t i)
{
	return i % 100 == 99 ? WU_LONG : 1 + ft_mix(i) % 3000;
}

static uint64_t wu_seed(uint64_t i)
{
	return ft_pattern_seed(0, i, 0, wu_len(i));
}

static struct fi_info *wu_getinfo(const struct wu_opts *o)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	int ret;

	if (!hints)
		return NULL;
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_TAGGED;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY |
				      FI_MR_VIRT_ADDR;
	hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
	ret = o->receiver ?
	      fi_getinfo(WU_VERSION, o->bind_addr, o->port, FI_SOURCE, hints, &info) :
	      fi_getinfo(WU_VERSION, o->host, o->port, 0, hints, &info);
	fi_freeinfo(hints);
	if (ret)
		ft_err("fi_getinfo", ret);
	return ret ? NULL : info;
}

/* Reads one completion (or error) within the deadline; 1, 0 or an error. */
static int wu_read(struct ft_rdm *rdm, struct fi_cq_tagged_entry *e, uint64_t deadline,
		   const char *what)
{
	struct fi_cq_err_entry err;
	char text[256];
	ssize_t ret = fi_cq_read(rdm->cq, e, 1);

	if (ret == 1)
		return 1;
	if (ret == -FI_EAVAIL) {
		if (!ft_cq_readerr(rdm->cq, &err, text, sizeof(text)))
			ft_fail("%s: error completion: %s", what, text);
		return -FI_EIO;
	}
	if (ret != -FI_EAGAIN)
		return ft_err("fi_cq_read", ret);
	return ft_now_ns() > deadline ? ft_fail("%s: timed out", what) : 0;
}

static int wu_sender(struct ft_rdm *rdm, const struct fi_info *info, const struct wu_opts *o)
{
	uint8_t **own = calloc(o->count, sizeof(*own));
	struct fi_context *ctx = calloc(o->count, sizeof(*ctx));
	uint64_t eagain = 0, done = 0, deadline;
	fi_addr_t dest;
	int ret = -FI_ENOMEM;

	if (!own || !ctx)
		goto out;
	ret = ft_rdm_insert(rdm, info->dest_addr, &dest, "the receiver's address");
	for (uint64_t i = 0; !ret && i < o->count; i++) {
		/* Every send keeps its bytes until it completes (delivery complete). */
		uint8_t *payload = own[i] = malloc(wu_len(i));

		if (!payload) {
			ret = -FI_ENOMEM;
			break;
		}
		ft_pattern_fill(payload, wu_len(i), wu_seed(i));
		while ((ret = (int) fi_tsend(rdm->ep, payload, wu_len(i), NULL, dest, i,
					     &ctx[i])) == -FI_EAGAIN) {
			struct fi_cq_tagged_entry e;

			eagain++;
			if (wu_read(rdm, &e, UINT64_MAX, "send") == 1)
				done++;
		}
		if (ret)
			ft_err("fi_tsend", ret);
	}
	printf(WU_NAME ": posted %" PRIu64 " sends, %" PRIu64 " -FI_EAGAIN\n", o->count,
	       eagain);
	if (!ret && o->no_eagain && eagain)
		ret = ft_fail("%" PRIu64 " posts returned -FI_EAGAIN", eagain);
	deadline = ft_deadline_ns(o->timeout_s);
	while (!ret && done < o->count) {
		struct fi_cq_tagged_entry e;

		ret = wu_read(rdm, &e, deadline, "send completions");
		if (ret == 1) {
			done++;
			ret = 0;
		}
	}
	if (!ret)
		printf(WU_NAME ": PASS sender: %" PRIu64 " sends delivered\n", done);
out:
	for (uint64_t i = 0; own && i < o->count; i++)
		free(own[i]);
	free(own);
	free(ctx);
	return ret;
}

static int wu_post(struct ft_rdm *rdm, struct wu_rx *rx, uint64_t *posted)
{
	int ret = (int) fi_trecv(rdm->ep, rx->buf, WU_LONG + 16, NULL, FI_ADDR_UNSPEC, 0,
				 WU_ANY_TAG, &rx->ctx);

	if (ret)
		return ft_err("fi_trecv", ret);
	rx->posted = (*posted)++;
	return 0;
}

static int wu_check(const struct fi_cq_tagged_entry *e, const struct wu_rx *rx)
{
	char what[64];

	if (e->tag != rx->posted)
		return ft_fail("the receive posted %" PRIu64 "th took message %" PRIu64
			       ": send-after-send order broken", rx->posted + 1,
			       (uint64_t) e->tag);
	if (e->len != wu_len(e->tag))
		return ft_fail("message %" PRIu64 " is %zu bytes, expected %zu",
			       (uint64_t) e->tag, e->len, wu_len(e->tag));
	snprintf(what, sizeof(what), "message %" PRIu64, (uint64_t) e->tag);
	return ft_pattern_check(rx->buf, e->len, wu_seed(e->tag), 16, what);
}

static int wu_receiver(struct ft_rdm *rdm, const struct wu_opts *o)
{
	struct wu_rx *rx = calloc(WU_WINDOW, sizeof(*rx));
	uint64_t posted = 0, got = 0, deadline = ft_deadline_ns(o->timeout_s);
	int ret = rx ? ft_rdm_print_listening(rdm, "count %" PRIu64, o->count) : -FI_ENOMEM;

	for (size_t i = 0; !ret && i < WU_WINDOW && posted < o->count; i++) {
		rx[i].buf = malloc(WU_LONG + 16);
		if (!rx[i].buf)
			ret = -FI_ENOMEM;
		else
			memset(rx[i].buf, FT_POISON, WU_LONG + 16);
		if (!ret)
			ret = wu_post(rdm, &rx[i], &posted);
	}
	while (!ret && got < o->count) {
		struct fi_cq_tagged_entry e;
		struct wu_rx *r;

		ret = wu_read(rdm, &e, deadline, "messages");
		if (ret != 1)
			continue;
		r = e.op_context;
		ret = wu_check(&e, r);
		got++;
		memset(r->buf, FT_POISON, WU_LONG + 16);
		if (!ret && posted < o->count)
			ret = wu_post(rdm, r, &posted);
	}
	if (!ret)
		printf(WU_NAME ": PASS receiver: %" PRIu64 " messages in order\n", got);
	for (size_t i = 0; rx && i < WU_WINDOW; i++)
		free(rx[i].buf);
	free(rx);
	return ret;
}

static int wu_parse(int argc, char **argv, struct wu_opts *o)
{
	static const struct option longs[] = {
		{ "no-eagain", no_argument, NULL, 'E' },
		{ NULL, 0, NULL, 0 },
	};
	int c, ret = 0;

	*o = (struct wu_opts) { .count = 1000, .timeout_s = 60 };
	while (!ret && (c = getopt_long(argc, argv, "rb:p:n:t:", longs, NULL)) != -1) {
		if (c == 'r')
			o->receiver = true;
		else if (c == 'b')
			o->bind_addr = optarg;
		else if (c == 'p')
			o->port = optarg;
		else if (c == 'E')
			o->no_eagain = true;
		else if (c == 'n')
			ret = ft_parse_num(optarg, 1, 1000000, &o->count);
		else if (c == 't')
			ret = ft_parse_timeout(optarg, &o->timeout_s);
		else
			ret = -1;
	}
	if (ret)
		return -1;
	if (ft_parse_host(argc, argv, &o->host) || !o->port || !o->receiver == !o->host)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct wu_opts o;
	struct ft_rdm rdm = { 0 };
	struct fi_info *info;
	int ret, status = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (wu_parse(argc, argv, &o)) {
		fprintf(stderr, "usage: " WU_NAME " -r [-b addr] -p port [-n count] [-t s]\n"
			"       " WU_NAME " -p port [-n count] [--no-eagain] [-t s] host\n");
		return 2;
	}
	info = wu_getinfo(&o);
	if (!info)
		return 1;
	ret = ft_rdm_open(&rdm, info, 4096);
	if (!ret)
		ret = ft_rdm_enable(&rdm, info);
	if (!ret)
		ret = o.receiver ? wu_receiver(&rdm, &o) : wu_sender(&rdm, info, &o);
	ft_rdm_close_ep(&rdm, &status);
	ft_rdm_close(&rdm, &status);
	fi_freeinfo(info);
	if (ret || status) {
		fprintf(stderr, WU_NAME ": FAIL\n");
		return 1;
	}
	return 0;
}
