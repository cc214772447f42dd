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
	uint8_t		host[16];
	uint64_t	pidns;
	uint32_t	pid;
	uint32_t	reserved;
	uint64_t	record;		/* address of the rdmx_cma_record */
	uint64_t	token;
};
_Static_assert(sizeof(struct rdmx_cma_key) == RDMX_DEV_RKEY_LEN, "cma key size");

/* An exposure, in the exposing process (struct rdmx_dev_rkey.priv). */
struct rdmx_cma_record {
	uint64_t	token;		/* 0: revoked */
	uint64_t	cnt;
	uint64_t	addr[RDMX_CMA_SEGS];
	uint64_t	len[RDMX_CMA_SEGS];
};
_Static_assert(sizeof(struct rdmx_cma_record) <= sizeof(((struct rdmx_dev_rkey *) 0)->priv),
	       "cma record exceeds rdmx_dev_rkey.priv");

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
	uint64_t probe = 1, back = 0;
	struct iovec local = { &back, sizeof(back) }, remote = { &probe, sizeof(probe) };

	cma->ndone = 0;
	cma->count = 0;
	cma->pid = (uint32_t) getpid();
	if (getrandom(&cma->secret, sizeof(cma->secret), 0) != sizeof(cma->secret) ||
	    !rdmx_cma_boot_id(cma->host) || stat("/proc/self/ns/pid", &st))
		return false;
	cma->pidns = (uint64_t) st.st_ino;
	/* Reading itself shows whether the kernel lets this process use CMA. */
	return rdmx_cma_pull((pid_t) cma->pid, &local, 1, &remote, 1) && back == probe;
}

int rdmx_cma_expose(struct rdmx_cma *cma, const struct iovec *iov, size_t cnt,
		    struct rdmx_dev_rkey *rkey)
{
	struct rdmx_cma_record *rec = rdmx_cma_record(rkey);
	struct rdmx_cma_key k = {
		.pidns = htole64(cma->pidns),
		.pid = htole32(cma->pid),
		.record = htole64((uint64_t) (uintptr_t) rec),
	};
	uint64_t token;

	if (cnt > RDMX_CMA_SEGS)
		return -FI_EINVAL;
	/* Unguessable without the secret; never 0, the revoked token. */
	token = rdmx_mix64(cma->secret ^ rdmx_mix64(++cma->count)) | 1;
	memset(rec, 0, sizeof(*rec));
	rec->cnt = cnt;
	for (size_t i = 0; i < cnt; i++) {
		rec->addr[i] = (uint64_t) (uintptr_t) iov[i].iov_base;
		rec->len[i] = iov[i].iov_len;
	}
	rec->token = token;
	k.token = htole64(token);
	memcpy(k.host, cma->host, sizeof(k.host));
	memcpy(rkey->wire, &k, sizeof(k));
	return 0;
}

void rdmx_cma_revoke(struct rdmx_dev_rkey *rkey)
{
	rdmx_cma_record(rkey)->token = 0;
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

int rdmx_cma_read(struct rdmx_cma *cma, const struct iovec *local, size_t local_cnt,
		  const struct iovec *remote, size_t remote_cnt, const void *key,
		  uint64_t wr_id)
{
	struct rdmx_cma_key k;
	struct rdmx_cma_record rec, after;
	uint32_t pid;
	bool ok;

	if (cma->ndone == RDMX_CMA_DONE_MAX)
		return -FI_EAGAIN;
	memcpy(&k, key, sizeof(k));
	pid = le32toh(k.pid);
	if (memcmp(k.host, cma->host, sizeof(k.host)) || le64toh(k.pidns) != cma->pidns ||
	    !pid || pid > INT32_MAX || k.reserved || !k.token ||
	    !rdmx_cma_pull_record(&k, &rec) || rec.token != le64toh(k.token) ||
	    rec.cnt > RDMX_CMA_SEGS || !rdmx_cma_covered(&rec, remote, remote_cnt))
		return -FI_EOPNOTSUPP;
	ok = rdmx_iov_len(local, local_cnt) == rdmx_iov_len(remote, remote_cnt) &&
	     rdmx_cma_pull((pid_t) pid, local, local_cnt, remote, remote_cnt) &&
	     /* Still exposed after the copy: the bytes are the sender's. */
	     rdmx_cma_pull_record(&k, &after) && after.token == rec.token;
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
