/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: reads from a local process's memory (see rdmx_cma.h). */
#include <endian.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rdmx.h"
#include "rdmx_cma.h"

/* A key, as it travels (RDMX_DEV_RKEY_LEN bytes, little-endian). */
struct rdmx_cma_key {
	uint64_t	host;		/* the exposer's rdmx_cma_host_digest */
	uint32_t	pid;		/* the exposer's */
	uint32_t	reserved;
	uint64_t	record;		/* address of the rdmx_cma_record */
	uint64_t	token[2];
	uint64_t	reserved2;
};
_Static_assert(sizeof(struct rdmx_cma_key) == RDMX_DEV_RKEY_LEN, "cma key size");

/* An exposure, in the exposing process (struct rdmx_dev_rkey.priv). */
struct rdmx_cma_record {
	uint64_t	token[2];	/* random; 0: revoked */
	uint64_t	session;	/* the reader's session (rdmx_hs_bind) */
	uint32_t	reader;		/* the reader's pid */
	uint32_t	cnt;
	uint64_t	addr[RDMX_CMA_SEGS];
	uint64_t	len[RDMX_CMA_SEGS];
};
_Static_assert(sizeof(struct rdmx_cma_record) <= sizeof(((struct rdmx_dev_rkey *) 0)->priv),
	       "cma record exceeds rdmx_dev_rkey.priv");

/* Domain of the host digest: its output means nothing elsewhere. */
#define RDMX_CMA_HOST_DOMAIN	0x72646d78686f7374ULL	/* "rdmxhost" */

static struct rdmx_cma_record *rdmx_cma_record(struct rdmx_dev_rkey *rkey)
{
	return (struct rdmx_cma_record *) rkey->priv;
}

/* The boot id's 32 hex digits as 16 bytes; false if unreadable. */
static bool rdmx_cma_boot_id(uint8_t host[16])
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	size_t n = 0;
	int c;

	if (!f)
		return false;
	while (n < 32 && (c = fgetc(f)) != EOF) {
		int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

		if (v < 0)
			continue;	/* the dashes */
		host[n / 2] = (uint8_t) (n % 2 ? host[n / 2] | v : v << 4);
		n++;
	}
	fclose(f);
	return n == 32;
}

uint64_t rdmx_cma_host_digest(const uint8_t boot_id[16], uint64_t pidns)
{
	uint64_t lo, hi, h;

	memcpy(&lo, boot_id, sizeof(lo));
	memcpy(&hi, boot_id + sizeof(lo), sizeof(hi));
	h = rdmx_mix64(RDMX_CMA_HOST_DOMAIN ^ lo);
	h = rdmx_mix64(h ^ hi);
	h = rdmx_mix64(h ^ pidns);
	/* The boot id keys the last step too, so pidns alone tells nothing. */
	h = rdmx_mix64(h ^ lo ^ rdmx_mix64(hi));
	return h ? h : 1;
}

/* Copies remote bytes of process pid into local; whether all came. */
static bool rdmx_cma_pull(pid_t pid, const struct iovec *local, size_t local_cnt,
			  const struct iovec *remote, size_t remote_cnt)
{
	size_t want = rdmx_iov_len(local, local_cnt);
	ssize_t got = process_vm_readv(pid, local, local_cnt, remote, remote_cnt, 0);

	return got >= 0 && (size_t) got == want;
}

/* Reads the record the key names; false if it cannot be read. */
static bool rdmx_cma_pull_record(const struct rdmx_cma_key *k, struct rdmx_cma_record *rec)
{
	struct iovec local = { rec, sizeof(*rec) };
	struct iovec remote = { (void *) (uintptr_t) le64toh(k->record), sizeof(*rec) };

	return rdmx_cma_pull((pid_t) le32toh(k->pid), &local, 1, &remote, 1);
}

bool rdmx_cma_init(struct rdmx_cma *cma)
{
	struct stat st;
	uint8_t boot_id[16];
	uint64_t probe = 1, back = 0;
	struct iovec local = { &back, sizeof(back) }, remote = { &probe, sizeof(probe) };

	cma->ndone = 0;
	cma->host = 0;
	cma->pid = (uint32_t) getpid();
	if (!rdmx_cma_boot_id(boot_id) || stat("/proc/self/ns/pid", &st))
		return false;
	cma->host = rdmx_cma_host_digest(boot_id, (uint64_t) st.st_ino);
	/* Reading itself shows whether the kernel lets this process use CMA. */
	return rdmx_cma_pull((pid_t) cma->pid, &local, 1, &remote, 1) && back == probe;
}

/* A token of 128 bits from the kernel's CSPRNG, never 0; false if none came. */
static bool rdmx_cma_token(uint64_t token[2])
{
	if (getrandom(token, 2 * sizeof(token[0]), 0) != (ssize_t) (2 * sizeof(token[0])))
		return false;
	token[0] |= 1;	/* 0 is the revoked token */
	return true;
}

int rdmx_cma_expose(struct rdmx_cma *cma, const struct iovec *iov, size_t cnt,
		    struct rdmx_dev_rkey *rkey)
{
	struct rdmx_cma_record *rec = rdmx_cma_record(rkey);
	const struct rdmx_dev_read_peer *peer = &rkey->peer;
	struct rdmx_cma_key k = {
		.host = htole64(cma->host),
		.pid = htole32(cma->pid),
		.record = htole64((uint64_t) (uintptr_t) rec),
	};

	if (cnt > RDMX_CMA_SEGS)
		return -FI_EINVAL;
	/* Process addresses go to a peer of this host only. */
	if (!cma->host || peer->host != cma->host || !peer->pid || peer->pid > INT32_MAX)
		return -FI_EOPNOTSUPP;
	memset(rec, 0, sizeof(*rec));
	if (!rdmx_cma_token(rec->token))
		return -FI_EAGAIN;
	rec->session = peer->session;
	rec->reader = peer->pid;
	rec->cnt = (uint32_t) cnt;
	for (size_t i = 0; i < cnt; i++) {
		rec->addr[i] = (uint64_t) (uintptr_t) iov[i].iov_base;
		rec->len[i] = iov[i].iov_len;
	}
	k.token[0] = htole64(rec->token[0]);
	k.token[1] = htole64(rec->token[1]);
	memcpy(rkey->wire, &k, sizeof(k));
	return 0;
}

void rdmx_cma_revoke(struct rdmx_dev_rkey *rkey)
{
	struct rdmx_cma_record *rec = rdmx_cma_record(rkey);

	rec->token[0] = 0;
	rec->token[1] = 0;
}

/* Whether every range of remote lies inside a range rec exposes. */
static bool rdmx_cma_covered(const struct rdmx_cma_record *rec,
			     const struct iovec *remote, size_t remote_cnt)
{
	for (size_t i = 0; i < remote_cnt; i++) {
		uint64_t a = (uint64_t) (uintptr_t) remote[i].iov_base, n = remote[i].iov_len;
		bool inside = false;

		for (uint64_t j = 0; j < rec->cnt && !inside; j++)
			inside = a >= rec->addr[j] && n <= rec->len[j] &&
				 a - rec->addr[j] <= rec->len[j] - n;
		if (!inside)
			return false;
	}
	return true;
}

/* Whether rec is the live exposure key names, offered to us in peer's session. */
static bool rdmx_cma_record_ok(const struct rdmx_cma *cma, const struct rdmx_cma_key *k,
			       const struct rdmx_dev_read_peer *peer,
			       const struct rdmx_cma_record *rec)
{
	return rec->token[0] == le64toh(k->token[0]) && rec->token[1] == le64toh(k->token[1]) &&
	       rec->reader == cma->pid && rec->session == peer->session &&
	       rec->cnt <= RDMX_CMA_SEGS;
}

/*
 * Whether the key may be read at all: the handshake showed its sender on
 * this host, and the key names this host and the pid that sender
 * announced, so a key naming a process the sender is not is refused
 * before anything of it is read.
 */
static bool rdmx_cma_key_ok(const struct rdmx_cma *cma, const struct rdmx_cma_key *k,
			    const struct rdmx_dev_read_peer *peer)
{
	uint32_t pid = le32toh(k->pid);

	return cma->host && peer->host == cma->host && le64toh(k->host) == cma->host &&
	       pid && pid <= INT32_MAX && pid == peer->pid && !k->reserved &&
	       !k->reserved2 && k->token[0];
}

int rdmx_cma_read(struct rdmx_cma *cma, const struct iovec *local, size_t local_cnt,
		  const struct iovec *remote, size_t remote_cnt,
		  const struct rdmx_dev_rkey *key, uint64_t wr_id)
{
	struct rdmx_cma_key k;
	struct rdmx_cma_record rec, after;
	bool ok;

	if (cma->ndone == RDMX_CMA_DONE_MAX)
		return -FI_EAGAIN;
	memcpy(&k, key->wire, sizeof(k));
	if (!rdmx_cma_key_ok(cma, &k, &key->peer) || !rdmx_cma_pull_record(&k, &rec) ||
	    !rdmx_cma_record_ok(cma, &k, &key->peer, &rec) ||
	    !rdmx_cma_covered(&rec, remote, remote_cnt))
		return -FI_EOPNOTSUPP;
	ok = rdmx_iov_len(local, local_cnt) == rdmx_iov_len(remote, remote_cnt) &&
	     rdmx_cma_pull((pid_t) le32toh(k.pid), local, local_cnt, remote, remote_cnt) &&
	     /* Still exposed to us after the copy: the bytes are the sender's. */
	     rdmx_cma_pull_record(&k, &after) && !memcmp(&after, &rec, sizeof(rec));
	cma->done[cma->ndone++] = (struct rdmx_dev_cqe) {
		.wr_id = wr_id,
		.op = RDMX_DEV_OP_READ,
		.status = ok ? RDMX_DEV_OK : RDMX_DEV_IO,
	};
	return 0;
}

int rdmx_cma_poll(struct rdmx_cma *cma, struct rdmx_dev_cqe *cqe, int max)
{
	int n = (int) RDMX_MIN(cma->ndone, (size_t) RDMX_MAX(max, 0));

	if (!n)
		return 0;
	memcpy(cqe, cma->done, (size_t) n * sizeof(*cqe));
	memmove(cma->done, cma->done + n, (cma->ndone - (size_t) n) * sizeof(*cqe));
	cma->ndone -= (size_t) n;
	return n;
}
