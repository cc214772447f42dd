/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx_stream: the options and their checks (see stream.h). */
#include <getopt.h>

#include "stream.h"

const char *const st_completion_names[ST_COMPLETION_CNT] = {
	[ST_COMPLETION_DELIVERY] = "delivery",
	[ST_COMPLETION_INJECT] = "inject",
};

static const char *const st_ctrl_level_names[ST_CTRL_LEVELS] = {
	[ST_CTRL_LEVEL_DELIVERY] = "delivery",
	[ST_CTRL_LEVEL_DEFAULT] = "default",
	[ST_CTRL_LEVEL_TRANSMIT] = "transmit",
};

const char *const st_sizes_names[ST_SIZES_CNT] = {
	[ST_SIZES_MIXED] = "mixed",
	[ST_SIZES_SMALL] = "small",
	[ST_SIZES_MAX] = "max",
	[ST_SIZES_ZERO] = "zero",
};

static void st_usage(void)
{
	fprintf(stderr,
		"usage: " ST_NAME " -r [options]                    (receiver)\n"
		"       " ST_NAME " -p port[,port...] [options] host (sender)\n"
		"  -p port         receiver: port to bind (default " ST_DEFAULT_PORT
		", 0 picks one\n"
		"                  and prints it); sender: the receivers' ports\n"
		"  -t seconds      fail after this long without a completion (default %d)\n"
		"  --window W      receiver: data receives kept posted (default %d);\n"
		"                  sender: sends in flight per receiver (default %d)\n"
		"  --max-size N    largest message of a size mix (default %d)\n"
		"  --untagged      data as untagged messages (fi_senddata, fi_recv)\n"
		"  --ctrl-completion default|transmit|delivery  completion level of\n"
		"                  control sends (default delivery)\n"
		"receiver:\n"
		"  -b addr         address to bind (default 127.0.0.1)\n"
		"  -s senders      senders to expect (default 1)\n"
		"  --hold-ms N     post no data receive for N ms after the first HELLO\n"
		"  --ordered       the n-th receive posted must take the n-th message\n"
		"sender:\n"
		"  -n count        messages to each receiver (default %d)\n"
		"  --sizes mixed|small|max|zero  message lengths (default mixed)\n"
		"  --completion delivery|inject  data sends complete when the\n"
		"                  receiver took them, or once posted\n"
		"                  (FI_INJECT_COMPLETE; default delivery)\n"
		"  --seed S        seed of lengths and payloads (default 1)\n"
		"  --dead K        receiver K (0-based in -p) dies mid-run\n"
		"  --expect-rnr    fail unless the RNR counters moved\n"
		"  --expect-eagain fail unless a post returned -FI_EAGAIN\n"
		"  --linger-ms N   keep progressing N ms after the end (default %d)\n"
		"  --rate R        post at most R messages a second to each receiver\n"
		"                  (default: as fast as the window takes them)\n",
		ST_DEFAULT_TIMEOUT, ST_DEFAULT_RX_WINDOW, ST_DEFAULT_TX_WINDOW,
		ST_SIZE_CAP, ST_DEFAULT_COUNT, ST_DEFAULT_LINGER_MS);
}

/* Splits "p0,p1,..." in place into o->ports. */
static int st_parse_ports(char *list, struct st_opts *o)
{
	uint64_t v;

	o->nports = 0;
	for (char *save = NULL, *s = strtok_r(list, ",", &save); s;
	     s = strtok_r(NULL, ",", &save)) {
		if (o->nports == ST_PEERS_MAX || ft_parse_num(s, 0, 65535, &v)) {
			fprintf(stderr, ST_NAME ": -p takes 1 to %d ports\n", ST_PEERS_MAX);
			return -1;
		}
		o->ports[o->nports++] = s;
	}
	return o->nports ? 0 : -1;
}

/* Finds s among n names; its index, or -1 after a message. */
static int st_parse_name(const char *opt, const char *s,
			 const char *const *names, int n)
{
	for (int i = 0; i < n; i++) {
		if (!strcmp(s, names[i]))
			return i;
	}
	fprintf(stderr, ST_NAME ": --%s %s: unknown\n", opt, s);
	return -1;
}

enum {
	ST_OPT_HOLD = 256, ST_OPT_SIZES, ST_OPT_WINDOW, ST_OPT_SEED, ST_OPT_RNR,
	ST_OPT_EAGAIN, ST_OPT_DEAD, ST_OPT_LINGER, ST_OPT_COMPLETION, ST_OPT_ORDERED,
	ST_OPT_MAX_SIZE, ST_OPT_UNTAGGED, ST_OPT_CTRL_COMPLETION, ST_OPT_RATE,
};

static const struct option st_long_opts[] = {
	{ "hold-ms", required_argument, NULL, ST_OPT_HOLD },
	{ "sizes", required_argument, NULL, ST_OPT_SIZES },
	{ "window", required_argument, NULL, ST_OPT_WINDOW },
	{ "seed", required_argument, NULL, ST_OPT_SEED },
	{ "expect-rnr", no_argument, NULL, ST_OPT_RNR },
	{ "expect-eagain", no_argument, NULL, ST_OPT_EAGAIN },
	{ "dead", required_argument, NULL, ST_OPT_DEAD },
	{ "linger-ms", required_argument, NULL, ST_OPT_LINGER },
	{ "rate", required_argument, NULL, ST_OPT_RATE },
	{ "completion", required_argument, NULL, ST_OPT_COMPLETION },
	{ "ordered", no_argument, NULL, ST_OPT_ORDERED },
	{ "max-size", required_argument, NULL, ST_OPT_MAX_SIZE },
	{ "untagged", no_argument, NULL, ST_OPT_UNTAGGED },
	{ "ctrl-completion", required_argument, NULL, ST_OPT_CTRL_COMPLETION },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Checks that the options fit the role; 0 or -1. */
static int st_check_role(struct st_opts *o, bool receiver_only, bool sender_only,
			 char *ports)
{
	if (o->receiver ? o->host != NULL || sender_only :
			  !o->host || receiver_only || !ports) {
		fprintf(stderr, ST_NAME ": %s\n", o->receiver ?
			"a receiver (-r) takes no host and no sender option" :
			"a sender needs -p and a host, and takes no receiver option");
		return -1;
	}
	if (o->receiver && o->ordered && o->senders != 1) {
		fprintf(stderr, ST_NAME ": --ordered takes one sender\n");
		return -1;
	}
	if (o->receiver) {
		o->ports[0] = ports ? ports : ST_DEFAULT_PORT;
		o->nports = 1;
		return 0;
	}
	if (st_parse_ports(ports, o))
		return -1;
	if (o->dead >= (int) o->nports) {
		fprintf(stderr, ST_NAME ": --dead %d: there are %u receivers\n", o->dead,
			o->nports);
		return -1;
	}
	if (o->dead >= 0 && o->completion != ST_COMPLETION_DELIVERY) {
		fprintf(stderr, ST_NAME ": --dead needs --completion delivery: only "
			"then do failed sends complete with an error\n");
		return -1;
	}
	return 0;
}

int st_parse_opts(int argc, char **argv, struct st_opts *o)
{
	bool receiver_only = false, sender_only = false;
	char *ports = NULL;
	uint64_t v;
	int c, ret = 0;

	*o = (struct st_opts) {
		.bind_addr = "127.0.0.1",
		.senders = 1,
		.count = ST_DEFAULT_COUNT,
		.seed = 1,
		.linger_ms = ST_DEFAULT_LINGER_MS,
		.dead = -1,
		.timeout_s = ST_DEFAULT_TIMEOUT,
		.max_size = ST_SIZE_CAP,
	};
	while (!ret && (c = getopt_long(argc, argv, "rb:p:n:s:t:h", st_long_opts,
					NULL)) != -1) {
		v = 0;
		switch (c) {
		case 'r':
			o->receiver = true;
			break;
		case 'b':
			o->bind_addr = optarg;
			receiver_only = true;
			break;
		case 'p':
			ports = optarg;
			break;
		case 's':
			ret = ft_parse_num(optarg, 1, ST_PEERS_MAX, &v);
			o->senders = (uint32_t) v;
			receiver_only = true;
			break;
		case ST_OPT_HOLD:
			ret = ft_parse_num(optarg, 0, 3600000, &o->hold_ms);
			receiver_only = true;
			break;
		case 'n':
			ret = ft_parse_num(optarg, 1, ST_COUNT_MAX, &o->count);
			sender_only = true;
			break;
		case ST_OPT_SIZES:
			c = st_parse_name("sizes", optarg, st_sizes_names, ST_SIZES_CNT);
			o->sizes = (enum st_sizes) c;
			ret = c < 0 ? -1 : 0;
			sender_only = true;
			break;
		case ST_OPT_COMPLETION:
			c = st_parse_name("completion", optarg, st_completion_names,
					  ST_COMPLETION_CNT);
			o->completion = (enum st_completion) c;
			ret = c < 0 ? -1 : 0;
			sender_only = true;
			break;
		case ST_OPT_SEED:
			ret = ft_parse_num(optarg, 0, UINT64_MAX, &o->seed);
			sender_only = true;
			break;
		case ST_OPT_DEAD:
			ret = ft_parse_num(optarg, 0, ST_PEERS_MAX - 1, &v);
			o->dead = (int) v;
			sender_only = true;
			break;
		case ST_OPT_LINGER:
			ret = ft_parse_num(optarg, 0, 60000, &o->linger_ms);
			sender_only = true;
			break;
		case ST_OPT_RATE:
			ret = ft_parse_num(optarg, 1, 100000000, &o->rate);
			sender_only = true;
			break;
		case ST_OPT_RNR:
			o->expect_rnr = sender_only = true;
			break;
		case ST_OPT_EAGAIN:
			o->expect_eagain = sender_only = true;
			break;
		case ST_OPT_ORDERED:
			o->ordered = receiver_only = true;
			break;
		case ST_OPT_MAX_SIZE:
			ret = ft_parse_num(optarg, 1, 1ULL << 31, &o->max_size);
			break;
		case ST_OPT_UNTAGGED:
			o->untagged = true;
			break;
		case ST_OPT_CTRL_COMPLETION:
			c = st_parse_name("ctrl-completion", optarg, st_ctrl_level_names,
					  ST_CTRL_LEVELS);
			o->ctrl_level = (enum st_ctrl_level) c;
			ret = c < 0 ? -1 : 0;
			break;
		case ST_OPT_WINDOW:
			ret = ft_parse_num(optarg, 1, 65536, &v);
			o->window = (uint32_t) v;
			break;
		case 't':
			ret = ft_parse_timeout(optarg, &o->timeout_s);
			break;
		default:
			ret = -1;
		}
	}
	if (!ret)
		ret = ft_parse_host(argc, argv, &o->host);
	if (!ret)
		ret = st_check_role(o, receiver_only, sender_only, ports);
	if (ret)
		st_usage();
	return ret;
}
