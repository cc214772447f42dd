/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx_forge: usage, the options and their checks (see forge.h). */
#include <arpa/inet.h>
#include <getopt.h>

#include "forge.h"

const char *const fg_tag_names[FG_TAG_MODES] = {
	[FG_TAG_ZERO] = "zero", [FG_TAG_RANDOM] = "random",
	[FG_TAG_SEQ] = "seq", [FG_TAG_STALE] = "stale",
};

const char *const fg_content_names[] = {
	[FG_VALID] = "valid", [FG_NEAR] = "near", [FG_RANDOM] = "random",
	[FG_MIX] = "mix",
};

void fg_usage(void)
{
	fprintf(stderr,
		"usage: " FG_NAME " [options] host port\n"
		"  --from addr:port   spoof this source (raw socket)\n"
		"  --bind addr[:port] a plain socket's address (default 0.0.0.0:0)\n"
		"  --kind list        hs-reset,hs-ack,hs-probe,hs-probe-ack,hs-ping,\n"
		"                     hs-pong,hs-close,eager,void,medium,rts,cts,data,\n"
		"                     dack,skip,ack,rnr,rnr-big,challenge; hs, rdm, all\n"
		"  --tags list        zero,random,seq,stale (default all but stale)\n"
		"  --tag-file file    the stale tags, hex, one a line\n"
		"  --content c        valid, near, random or mix (default valid)\n"
		"  -n count --rate pps --seed s\n"
		"  --auth             from our own address, inside a session we open\n"
		"  --anon-ports N [--port-base P]  N anonymous peers\n"
		"  --observe file --secs S  record the tags arriving at port\n"
		"  --icmp-too-big MTU one ICMP fragmentation needed to --from's address,\n"
		"                     quoting a datagram from --from to host:port\n");
}

/* Parses "addr:port" into sa; 0 or -1. */
static int fg_parse_addr(const char *s, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	uint64_t port;

	if (!colon || (size_t) (colon - s) >= sizeof(host))
		return ft_fail("bad address '%s' (addr:port)", s);
	memcpy(host, s, (size_t) (colon - s));
	host[colon - s] = '\0';
	sa->sin_family = AF_INET;
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		return ft_fail("bad IPv4 address '%s'", host);
	if (ft_parse_num(colon + 1, 0, 65535, &port))
		return -1;
	sa->sin_port = htons((uint16_t) port);
	return 0;
}

/* Adds the kinds named by one word of --kind. */
static int fg_add_kind(struct fg *fg, const char *word)
{
	size_t lo = FG_KINDS, hi = 0;

	if (!strcmp(word, "hs"))
		lo = FG_HS_RESET, hi = FG_HS_CLOSE;
	else if (!strcmp(word, "rdm"))
		lo = FG_HS_RESET, hi = FG_DACK;
	else if (!strcmp(word, "all"))
		lo = 0, hi = FG_KINDS - 1;
	for (size_t k = 0; lo == FG_KINDS && k < FG_KINDS; k++)
		if (!strcmp(word, fg_kinds[k].name))
			lo = hi = k;
	if (lo == FG_KINDS)
		return ft_fail("unknown kind '%s'", word);
	for (size_t k = lo; k <= hi && fg->nkinds < FG_KINDS; k++)
		fg->kinds[fg->nkinds++] = (enum fg_kind) k;
	return 0;
}

static int fg_add_tags(struct fg *fg, const char *word)
{
	for (size_t m = 0; m < FG_TAG_MODES; m++) {
		if (!strcmp(word, fg_tag_names[m]) && fg->ntags < FG_TAG_MODES) {
			fg->tags[fg->ntags++] = (enum fg_tags) m;
			return 0;
		}
	}
	return ft_fail("unknown tag mode '%s'", word);
}

/* Calls add for each comma-separated word of list; 0 or -1. */
static int fg_each_word(struct fg *fg, const char *list,
			int (*add)(struct fg *fg, const char *word))
{
	char copy[256], *save = NULL;

	if (strlen(list) >= sizeof(copy))
		return ft_fail("list too long: %s", list);
	strcpy(copy, list);
	for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save))
		if (add(fg, w))
			return -1;
	return 0;
}

static int fg_parse_content(struct fg *fg, const char *s)
{
	for (size_t c = 0; c < sizeof(fg_content_names) / sizeof(fg_content_names[0]); c++) {
		if (!strcmp(s, fg_content_names[c])) {
			fg->content = (enum fg_content) c;
			return 0;
		}
	}
	return ft_fail("unknown content '%s'", s);
}

static const struct option fg_long_opts[] = {
	{ "from", required_argument, NULL, 'f' },
	{ "bind", required_argument, NULL, 'b' },
	{ "kind", required_argument, NULL, 'k' },
	{ "tags", required_argument, NULL, 'T' },
	{ "tag-file", required_argument, NULL, 'F' },
	{ "content", required_argument, NULL, 'c' },
	{ "rate", required_argument, NULL, 'R' },
	{ "seed", required_argument, NULL, 'S' },
	{ "auth", no_argument, NULL, 'A' },
	{ "anon-ports", required_argument, NULL, 'P' },
	{ "port-base", required_argument, NULL, 'B' },
	{ "observe", required_argument, NULL, 'O' },
	{ "secs", required_argument, NULL, 's' },
	{ "icmp-too-big", required_argument, NULL, 'I' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int fg_parse_opt(struct fg *fg, int c, const char *arg)
{
	switch (c) {
	case 'f': fg->spoof = true; return fg_parse_addr(arg, &fg->from);
	case 'b': return strchr(arg, ':') ? fg_parse_addr(arg, &fg->bind) :
			 inet_pton(AF_INET, arg, &fg->bind.sin_addr) == 1 ? 0 :
			 ft_fail("bad --bind '%s'", arg);
	case 'k': return fg_each_word(fg, arg, fg_add_kind);
	case 'T': return fg_each_word(fg, arg, fg_add_tags);
	case 'F': fg->tag_file = arg; return 0;
	case 'c': return fg_parse_content(fg, arg);
	case 'n': return ft_parse_num(arg, 1, UINT64_MAX, &fg->count);
	case 'R': return ft_parse_num(arg, 0, 100000000, &fg->rate);
	case 'S': return ft_parse_num(arg, 0, UINT64_MAX, &fg->seed);
	case 'A': fg->auth = true; return 0;
	case 'P': return ft_parse_num(arg, 1, 60000, &fg->anon_ports);
	case 'B': return ft_parse_num(arg, 1, 65535, &fg->port_base);
	case 'O': fg->observe = arg; return 0;
	case 's': return ft_parse_num(arg, 1, 3600, &fg->secs);
	case 'I': return ft_parse_num(arg, 68, 65535, &fg->icmp_mtu);
	default: return -1;
	}
}

int fg_parse(struct fg *fg, int argc, char **argv)
{
	uint64_t port;
	int c;

	while ((c = getopt_long(argc, argv, "n:h", fg_long_opts, NULL)) != -1)
		if (fg_parse_opt(fg, c, optarg))
			return -1;
	if (argc - optind != 2 || ft_parse_num(argv[optind + 1], 1, 65535, &port))
		return -1;
	fg->host = argv[optind];
	fg->to.sin_family = AF_INET;
	fg->to.sin_port = htons((uint16_t) port);
	if (inet_pton(AF_INET, fg->host, &fg->to.sin_addr) != 1)
		return ft_fail("bad IPv4 host '%s'", fg->host);
	if (!fg->nkinds)
		fg_add_kind(fg, "all");
	if (!fg->ntags)
		for (size_t m = 0; m < FG_TAG_STALE; m++)
			fg->tags[fg->ntags++] = (enum fg_tags) m;
	if (fg->spoof && fg->auth)
		return ft_fail("--auth sends from our own address: no --from");
	if (fg->icmp_mtu && !fg->spoof)
		return ft_fail("--icmp-too-big needs --from (the datagram it quotes)");
	if (fg->observe && !fg->secs)
		return ft_fail("--observe needs --secs");
	return 0;
}
