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
	uint64_t	cookie_addr;
	uint64_t	cookie;
};
_Static_assert(sizeof(struct rdmx_cma_key) == RDMX_DEV_RKEY_LEN, "cma key size");

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

/* Reads len bytes at addr of process pid into buf; whether all came. */
static bool rdmx_cma_pull(pid_t pid, const struct iovec *local, size_t local_cnt,
			  const struct iovec *remote, size_t remote_cnt)
{
	size_t want = rdmx_iov_len(local, local_cnt);
	ssize_t got = process_vm_readv(pid, local, local_cnt, remote, remote_cnt, 0);

	return got >= 0 && (size_t) got == want;
}

bool rdmx_cma_init(struct rdmx_cma *cma)
{
	struct stat st;
	uint64_t back = 0;
	struct iovec local = { &back, sizeof(back) };
	struct iovec remote = { &cma->cookie, sizeof(cma->cookie) };

	cma->ndone = 0;
	cma->pid = (uint32_t) getpid();
	if (getrandom(&cma->cookie, sizeof(cma->cookie), 0) != sizeof(cma->cookie) ||
	    !rdmx_cma_boot_id(cma->host) || stat("/proc/self/ns/pid", &st))
		return false;
	cma->pidns = (uint64_t) st.st_ino;
	/* Reading itself shows whether the kernel lets this process use CMA. */
	return rdmx_cma_pull((pid_t) cma->pid, &local, 1, &remote, 1) &&
	       back == cma->cookie;
}

void rdmx_cma_key(const struct rdmx_cma *cma, void *key)
{
	struct rdmx_cma_key k = {
		.pidns = htole64(cma->pidns),
		.pid = htole32(cma->pid),
		.cookie_addr = htole64((uint64_t) (uintptr_t) &cma->cookie),
		.cookie = htole64(cma->cookie),
	};

	memcpy(k.host, cma->host, sizeof(k.host));
	memcpy(key, &k, sizeof(k));
}

/* Whether key names a live process this one can read: same host and pid
 * namespace, and the cookie where the key says. */
static bool rdmx_cma_reachable(const struct rdmx_cma *cma, const struct rdmx_cma_key *k)
{
	uint64_t back = 0, want = le64toh(k->cookie);
	struct iovec local = { &back, sizeof(back) };
	struct iovec remote = { (void *) (uintptr_t) le64toh(k->cookie_addr), sizeof(back) };
	uint32_t pid = le32toh(k->pid);

	if (memcmp(k->host, cma->host, sizeof(k->host)) || le64toh(k->pidns) != cma->pidns ||
	    !pid || pid > INT32_MAX || k->reserved)
		return false;
	return rdmx_cma_pull((pid_t) pid, &local, 1, &remote, 1) && back == want;
}

int rdmx_cma_read(struct rdmx_cma *cma, const struct iovec *local, size_t local_cnt,
		  const struct iovec *remote, size_t remote_cnt, const void *key,
		  uint64_t wr_id)
{
	struct rdmx_cma_key k;
	struct rdmx_dev_cqe *cqe;

	if (cma->ndone == RDMX_CMA_DONE_MAX)
		return -FI_EAGAIN;
	memcpy(&k, key, sizeof(k));
	if (!rdmx_cma_reachable(cma, &k))
		return -FI_EOPNOTSUPP;
	cqe = &cma->done[cma->ndone++];
	*cqe = (struct rdmx_dev_cqe) {
		.wr_id = wr_id,
		.op = RDMX_DEV_OP_READ,
		.status = rdmx_iov_len(local, local_cnt) == rdmx_iov_len(remote, remote_cnt) &&
			  rdmx_cma_pull((pid_t) le32toh(k.pid), local, local_cnt,
					remote, remote_cnt) ? RDMX_DEV_OK : RDMX_DEV_IO,
	};
	return 0;
}

int rdmx_cma_poll(struct rdmx_cma *cma, struct rdmx_dev_cqe *cqe, int max)
{
	int n = (int) RDMX_MIN(cma->ndone, (size_t) max);

	memcpy(cqe, cma->done, (size_t) n * sizeof(*cqe));
	memmove(cma->done, cma->done + n, (cma->ndone - (size_t) n) * sizeof(*cqe));
	cma->ndone -= (size_t) n;
	return n;
}
