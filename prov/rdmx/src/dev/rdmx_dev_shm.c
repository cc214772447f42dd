/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the shm device (rdmx_dev_shm.h). The ring is Vyukov's bounded
 * queue: slot i's sequence number says whose turn it is. A sender takes
 * ticket t from the ring's tail when slot t % N holds sequence t, fills
 * the slot and publishes it with t + 1; the owner takes slot head when
 * it holds head + 1 and frees it for the next lap with head + N. Nothing
 * the owner reads from the ring is trusted: lengths are bounded, and a
 * sender never loops on a ring that another process corrupted.
 *
 * A thread may sleep until its ring has something (wait_fd, wait_arm):
 * the owner says so in the ring's header (sleeping), and a sender that
 * sees it after publishing a slot sends one byte to the owner's wake
 * socket, an abstract AF_UNIX datagram socket named after the ring
 * (pid and token). Both sides order their store before their load with
 * a full fence, so one of them sees the other's: the owner finds the
 * slot, or the sender finds the owner asleep. Senders pay that fence
 * only once the owner has ever slept (waits_seen); the owner's first
 * sleep is cut to RDMX_DEV_WAIT_TICK_NS, past which every sender sees it.
 * A wake that cannot be sent (another network namespace) is noted in
 * the header (wake_lost), and the owner then polls every tick.
 *
 * A send that finds its peer's ring full waits in the device, on its
 * handle's queue (in order, like a NIC's send queue: caps.sq_size sends
 * are outstanding at most, so an application told -FI_EAGAIN has a send
 * whose completion will come), and completes once a poll put it in the
 * ring. Its sender marks the ring (room_wanted); the owner, when a poll
 * took slots from a marked ring, clears the mark and wakes every peer
 * of its own that sleeps; the sender, arming, looks again for room in
 * each ring it waits on. The owner reads the mark without a fence (it
 * would cost every message), so a mark set just as the owner looked may
 * be missed: a waiting sender sleeps a tick at most.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "rdmx.h"
#include "rdmx_clock.h"
#include "rdmx_cma.h"
#include "rdmx_dev_shm.h"
#include "rdmx_list.h"

#define RDMX_SHM_MAGIC		0x334d4853584d4452ULL	/* "RDMXSHM3" */
#define RDMX_SHM_SLOTS		64u
#define RDMX_SHM_SLOT_SIZE	65536u
#define RDMX_SHM_MTU		(RDMX_SHM_SLOT_SIZE - 64u)
/* Tickets a sender tries before it calls the ring full. */
#define RDMX_SHM_TRIES		64
/*
 * Whether the owners of the rings mapped still live is asked at polls
 * this far apart, and then only once this long passed since the last
 * time: a peer that dies is known within about that long, whether or
 * not anything is being sent to it.
 */
#define RDMX_SHM_CHECK_POLLS	1024u
#define RDMX_SHM_CHECK_NS	100000000ULL

struct rdmx_shm_ring {
	uint64_t		magic;
	uint64_t		token;
	uint32_t		pid;
	uint32_t		slots;
	uint32_t		slot_size;
	_Atomic uint32_t	sleeping;	/* the owner waits for a wake */
	_Atomic uint32_t	waits_seen;	/* the owner has slept: senders
						   check sleeping (never reset) */
	_Atomic uint32_t	wake_lost;	/* a sender could not wake it */
	_Atomic uint32_t	room_wanted;	/* a sender found it full */
	uint8_t			pad[20];
	_Alignas(64) _Atomic uint64_t tail;	/* next ticket */
	uint8_t			pad2[56];
};
_Static_assert(sizeof(struct rdmx_shm_ring) == 128, "shm ring header size");

/*
 * A slot: its header and the packet's first 40 bytes share one cache
 * line, so a small packet (an 8-byte eager message: 32 bytes of header
 * and its data) moves between the processes in one line, the one whose
 * seq the owner polls, not two.
 */
struct rdmx_shm_slot {
	_Atomic uint64_t	seq;
	uint32_t		len;
	uint32_t		reserved;
	uint64_t		token;		/* the sender's queue's token */
	uint8_t			data[];
};
_Static_assert(sizeof(struct rdmx_shm_slot) == 24, "shm slot header size");
_Static_assert(sizeof(struct rdmx_shm_slot) + RDMX_SHM_MTU <= RDMX_SHM_SLOT_SIZE,
	       "shm slot size");

#define RDMX_SHM_MAP_LEN \
	(sizeof(struct rdmx_shm_ring) + (size_t) RDMX_SHM_SLOTS * RDMX_SHM_SLOT_SIZE)
/* The smallest page size: rdmx_shm_touch writes a word this far apart. */
#define RDMX_SHM_TOUCH_STEP	4096u

struct rdmx_shm_ah {
	struct rdmx_ah		ah;
	struct rdmx_dlist	link;
	struct rdmx_shm_addr	addr;
	struct rdmx_shm_ring	*ring;
	int			pidfd;		/* -1: liveness by kill(2) */
	struct sockaddr_un	wake;		/* the owner's wake socket */
	socklen_t		wake_len;
	unsigned		refs;
	bool			gone;		/* the owner exited */
	bool			gone_told;	/* its RDMX_DEV_OP_GONE polled */
	struct rdmx_dlist	pend;		/* sends waiting for room, a FIFO
						   of rdmx_shm_pend.link */
	struct rdmx_dlist	blocked_link;	/* on the device's blocked list
						   while pend is not empty */
};

/* A send waiting for room in its peer's ring. */
struct rdmx_shm_pend {
	struct rdmx_dlist	link;		/* on its ah's pend, or free */
	struct iovec		iov[RDMX_DEV_SGE_MAX];
	size_t			iov_cnt;
	uint64_t		wr_id;
};

struct rdmx_shm_rx {
	void		*buf;
	size_t		len;
	uint64_t	wr_id;
};

struct rdmx_shm_dev {
	struct rdmx_dev		dev;
	struct rdmx_shm_addr	addr;
	int			fd;
	int			wake_fd;	/* bound: our wake socket; -1: none */
	int			tx_fd;		/* unbound: wakes others */
	bool			armed;		/* wait_arm set ring->sleeping */
	bool			slept;		/* armed once before */
	struct rdmx_shm_ring	*ring;
	uint64_t		head;		/* next ticket to take */
	uint64_t		freed;		/* tickets before it are free; the
						   rest up to head were taken and
						   are read in place until the
						   next poll (rdmx_dev_cqe.data) */
	/*
	 * Posted buffers, a stack: a packet lands in the buffer posted last,
	 * which is in cache and whose pages are there. Taken in turn (a
	 * FIFO), each buffer of a large pool would fault its pages in once
	 * and evict the others from the cache: the first few hundred
	 * packets of a ping-pong cost 30-250 us each here.
	 */
	struct rdmx_shm_rx	*rq;
	size_t			rq_cnt;
	struct rdmx_dev_cqe	*done;		/* send completions, a FIFO */
	size_t			done_head, done_cnt;
	struct rdmx_shm_pend	*pends;		/* sq_size of them */
	struct rdmx_dlist	pend_free;	/* rdmx_shm_pend.link */
	size_t			pend_cnt;	/* waiting: done_cnt + pend_cnt
						   are at most sq_size */
	struct rdmx_dlist	blocked;	/* rdmx_shm_ah.blocked_link */
	struct rdmx_dlist	ahs;
	struct rdmx_shm_ah	*last;		/* the last sender found */
	uint32_t		polls;
	bool			touched;	/* rdmx_shm_touch(ring) done */
	uint64_t		next_check;	/* ns: the owners' next check */
	size_t			gone_untold;	/* handles gone, not yet polled */
	struct rdmx_cma		cma;
};

static struct rdmx_shm_dev *rdmx_shm_dev(struct rdmx_dev *dev)
{
	return rdmx_container_of(dev, struct rdmx_shm_dev, dev);
}

static struct rdmx_shm_slot *rdmx_shm_slot(struct rdmx_shm_ring *ring, uint64_t ticket)
{
	return (struct rdmx_shm_slot *) ((uint8_t *) (ring + 1) +
		(size_t) (ticket % RDMX_SHM_SLOTS) * RDMX_SHM_SLOT_SIZE);
}

static uint32_t rdmx_shm_addr_format(const void *canon)
{
	(void) canon;
	return FI_FORMAT_UNSPEC;
}

static int rdmx_shm_addr_canon(const void *addr, size_t len, void *canon)
{
	if (!addr || len != sizeof(struct rdmx_shm_addr))
		return -FI_EINVAL;
	memcpy(canon, addr, len);
	return 0;
}

static size_t rdmx_shm_addr_len(const void *canon)
{
	(void) canon;
	return sizeof(struct rdmx_shm_addr);
}

static void rdmx_shm_addr_str(const void *canon, char *buf, size_t len)
{
	const struct rdmx_shm_addr *a = canon;

	snprintf(buf, len, "shm://%u/%u", a->pid, a->fd);
}

static int rdmx_shm_resolve(const char *node, const char *service, void *canon)
{
	(void) node;
	(void) service;
	(void) canon;
	return -FI_ENODATA;
}

static int rdmx_shm_domains(const void *src, const void *dest,
			    struct rdmx_dev_domain *out, size_t max)
{
	(void) src;
	(void) dest;
	if (!max)
		return 0;
	memset(out, 0, sizeof(*out));
	strcpy(out->name, "shm");
	out->mtu = RDMX_SHM_MTU;
	return 1;
}

/* The abstract name of the wake socket of the ring at addr. */
static socklen_t rdmx_shm_wake_name(const struct rdmx_shm_addr *addr, struct sockaddr_un *sun)
{
	int len;

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	len = snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1, "rdmx-shm-%u-%016llx",
		       addr->pid, (unsigned long long) addr->token);
	return (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + (size_t) len);
}

/*
 * The wake sockets: ours, bound to the ring's name, and one to wake
 * others from. A host where they cannot be made has none (-1): a thread
 * that sleeps then polls the ring every tick.
 */
static void rdmx_shm_wake_open(struct rdmx_shm_dev *shm)
{
	struct sockaddr_un sun;
	socklen_t len = rdmx_shm_wake_name(&shm->addr, &sun);

	shm->wake_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	shm->tx_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (shm->wake_fd >= 0 && !bind(shm->wake_fd, (struct sockaddr *) &sun, len) &&
	    shm->tx_fd >= 0)
		return;
	RDMX_INFO(FI_LOG_EP_CTRL, "shm: no wake socket (%s): sleepers poll\n", strerror(errno));
	if (shm->wake_fd >= 0)
		close(shm->wake_fd);
	if (shm->tx_fd >= 0)
		close(shm->tx_fd);
	shm->wake_fd = shm->tx_fd = -1;
}

static void rdmx_shm_wake_close(struct rdmx_shm_dev *shm)
{
	if (shm->wake_fd >= 0) {
		close(shm->wake_fd);
		close(shm->tx_fd);
	}
}

static void rdmx_shm_ring_init(struct rdmx_shm_ring *ring, const struct rdmx_shm_addr *addr)
{
	ring->magic = RDMX_SHM_MAGIC;
	ring->token = addr->token;
	ring->pid = addr->pid;
	ring->slots = RDMX_SHM_SLOTS;
	ring->slot_size = RDMX_SHM_SLOT_SIZE;
	atomic_init(&ring->tail, 0);
	for (uint64_t i = 0; i < RDMX_SHM_SLOTS; i++)
		atomic_init(&rdmx_shm_slot(ring, i)->seq, i);
}

static int rdmx_shm_open(const struct rdmx_dev_attr *attr, struct rdmx_dev **dev_p)
{
	struct rdmx_shm_dev *shm = calloc(1, sizeof(*shm));
	int ret = -FI_ENOMEM;

	if (!shm)
		return -FI_ENOMEM;
	shm->rq = calloc(attr->rq_size, sizeof(*shm->rq));
	shm->done = calloc(attr->sq_size, sizeof(*shm->done));
	shm->pends = calloc(attr->sq_size, sizeof(*shm->pends));
	if (!shm->rq || !shm->done || !shm->pends)
		goto err_free;
	rdmx_dlist_init(&shm->pend_free);
	for (size_t i = 0; i < attr->sq_size; i++)
		rdmx_dlist_insert_tail(&shm->pend_free, &shm->pends[i].link);
	rdmx_dlist_init(&shm->blocked);
	ret = -FI_ENODEV;
	shm->fd = memfd_create("rdmx-shm", MFD_CLOEXEC);
	if (shm->fd < 0)
		goto err_free;
	if (ftruncate(shm->fd, (off_t) RDMX_SHM_MAP_LEN))
		goto err_close;
	/*
	 * Populated: its 4 MiB are there from the start, not faulted in by
	 * the first pass of packets through the ring, several microseconds a
	 * page on the VMs measured (a 1 MiB stream's first 200 messages took
	 * 20 ms more); rdmx_shm_touch pays the rest at the first peer.
	 */
	shm->ring = mmap(NULL, RDMX_SHM_MAP_LEN, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_POPULATE, shm->fd, 0);
	if (shm->ring == MAP_FAILED)
		goto err_close;
	shm->addr = (struct rdmx_shm_addr) {
		.pid = (uint32_t) getpid(),
		.fd = (uint32_t) shm->fd,
		.token = rdmx_random64(),
	};
	rdmx_shm_ring_init(shm->ring, &shm->addr);
	rdmx_shm_wake_open(shm);
	rdmx_dlist_init(&shm->ahs);
	shm->dev.ops = &rdmx_dev_shm_ops;
	shm->dev.caps = (struct rdmx_dev_caps) {
		.mtu = g_rdmx_params.mtu ? RDMX_MIN(g_rdmx_params.mtu, RDMX_SHM_MTU) : RDMX_SHM_MTU,
		.sq_size = attr->sq_size,
		.rq_size = attr->rq_size,
		.flags = RDMX_DEV_CAP_RELIABLE,
	};
	/*
	 * Reads need CMA, and FI_RDMX_SHM_READ_MIN; the host's name (the
	 * lane's condition) needs neither.
	 */
	if (rdmx_cma_init(&shm->cma) && g_rdmx_params.shm_read_min)
		shm->dev.caps.flags |= RDMX_DEV_CAP_RDMA_READ;
	shm->dev.caps.read_host = shm->cma.host;
	shm->dev.caps.read_min = g_rdmx_params.shm_read_min;
	if (!shm->dev.caps.read_host)
		goto err_unmap;
	*dev_p = &shm->dev;
	return 0;

err_unmap:
	rdmx_shm_wake_close(shm);
	munmap(shm->ring, RDMX_SHM_MAP_LEN);
err_close:
	close(shm->fd);
err_free:
	free(shm->rq);
	free(shm->done);
	free(shm->pends);
	free(shm);
	return ret;
}

static void rdmx_shm_ah_free(struct rdmx_shm_ah *ah)
{
	rdmx_dlist_remove(&ah->link);
	munmap(ah->ring, RDMX_SHM_MAP_LEN);
	if (ah->pidfd >= 0)
		close(ah->pidfd);
	free(ah);
}

static void rdmx_shm_close(struct rdmx_dev *dev)
{
	struct rdmx_shm_dev *shm = rdmx_shm_dev(dev);
	struct rdmx_dlist *it;

	while ((it = rdmx_dlist_pop_front(&shm->ahs))) {
		rdmx_dlist_init(it);
		rdmx_shm_ah_free(rdmx_container_of(it, struct rdmx_shm_ah, link));
	}
	rdmx_shm_wake_close(shm);
	munmap(shm->ring, RDMX_SHM_MAP_LEN);
	close(shm->fd);
	free(shm->rq);
	free(shm->done);
	free(shm->pends);
	free(shm);
}

static void rdmx_shm_getname(struct rdmx_dev *dev, void *canon)
{
	memcpy(canon, &rdmx_shm_dev(dev)->addr, sizeof(struct rdmx_shm_addr));
}

/* Maps the ring at addr if it is the one addr names; NULL if not. */
static struct rdmx_shm_ring *rdmx_shm_map(const struct rdmx_shm_addr *addr)
{
	struct rdmx_shm_ring *ring;
	char path[64];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/fd/%u", addr->pid, addr->fd);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (size_t) st.st_size != RDMX_SHM_MAP_LEN) {
		close(fd);
		return NULL;
	}
	ring = mmap(NULL, RDMX_SHM_MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (ring == MAP_FAILED)
		return NULL;
	if (ring->magic != RDMX_SHM_MAGIC || ring->token != addr->token ||
	    ring->pid != addr->pid || ring->slots != RDMX_SHM_SLOTS ||
	    ring->slot_size != RDMX_SHM_SLOT_SIZE) {
		munmap(ring, RDMX_SHM_MAP_LEN);
		return NULL;
	}
	return ring;
}

/*
 * Writes every page of a mapped ring once, changing nothing: an atomic
 * add of 0 to its first word, safe while other processes use the ring.
 * Populated pages still cost their first access in each process that
 * maps them where the hypervisor shadows page tables: 5-6 us a page on
 * the PVM guest measured (a read does not spare the first write), so
 * the first 4 MiB through a ring took 5-10 ms more, and each of the
 * first 64 small messages 5 us more (RESULTS.md). That cost is paid
 * here, at the first contact with a peer on this host, instead.
 */
static void rdmx_shm_touch(struct rdmx_shm_ring *ring)
{
	for (size_t off = 0; off < RDMX_SHM_MAP_LEN; off += RDMX_SHM_TOUCH_STEP)
		(void) atomic_fetch_add_explicit((_Atomic uint64_t *) ((char *) ring + off), 0,
						 memory_order_relaxed);
}

/*
 * The handle of the queue with token (random per queue, and checked
 * against the queue's header when it was mapped: it names the queue).
 */
static struct rdmx_shm_ah *rdmx_shm_ah_find(struct rdmx_shm_dev *shm, uint64_t token)
{
	struct rdmx_dlist *it;

	if (shm->last && shm->last->addr.token == token)
		return shm->last;
	rdmx_dlist_foreach(&shm->ahs, it) {
		struct rdmx_shm_ah *ah = rdmx_container_of(it, struct rdmx_shm_ah, link);

		if (ah->addr.token == token)
			return shm->last = ah;
	}
	return NULL;
}

static int rdmx_shm_ah_create(struct rdmx_dev *dev, const void *canon,
			      struct rdmx_ah **ah_p)
{
	struct rdmx_shm_dev *shm = rdmx_shm_dev(dev);
	struct rdmx_shm_addr addr;
	struct rdmx_shm_ah *ah;

	memcpy(&addr, canon, sizeof(addr));
	ah = rdmx_shm_ah_find(shm, addr.token);
	if (ah) {
		ah->refs++;
		*ah_p = &ah->ah;
		return 0;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return -FI_ENOMEM;
	ah->ring = rdmx_shm_map(&addr);
	if (!ah->ring) {
		free(ah);
		return -FI_EHOSTUNREACH;
	}
	rdmx_shm_touch(ah->ring);
	if (!shm->touched) {
		rdmx_shm_touch(shm->ring);
		shm->touched = true;
	}
	ah->addr = addr;
	ah->refs = 1;
	rdmx_dlist_init(&ah->pend);
	rdmx_dlist_init(&ah->blocked_link);
	ah->pidfd = (int) syscall(SYS_pidfd_open, (pid_t) addr.pid, 0);
	ah->wake_len = rdmx_shm_wake_name(&addr, &ah->wake);
	rdmx_dlist_insert_tail(&shm->ahs, &ah->link);
	*ah_p = &ah->ah;
	return 0;
}

/* A send's completion, in the FIFO the next polls hand out. */
static void rdmx_shm_done(struct rdmx_shm_dev *shm, uint64_t wr_id,
			  enum rdmx_dev_status status)
{
	size_t cap = shm->dev.caps.sq_size;

	shm->done[(shm->done_head + shm->done_cnt++) % cap] = (struct rdmx_dev_cqe) {
		.wr_id = wr_id,
		.op = RDMX_DEV_OP_SEND,
		.status = status,
	};
}

/* The oldest send waiting on ah leaves its queue, completed with status. */
static void rdmx_shm_pend_end(struct rdmx_shm_dev *shm, struct rdmx_shm_ah *ah,
			      enum rdmx_dev_status status)
{
	struct rdmx_shm_pend *p = rdmx_container_of(rdmx_dlist_pop_front(&ah->pend),
						    struct rdmx_shm_pend, link);

	rdmx_dlist_insert_tail(&shm->pend_free, &p->link);
	shm->pend_cnt--;
	rdmx_shm_done(shm, p->wr_id, status);
	if (rdmx_dlist_empty(&ah->pend)) {
		rdmx_dlist_remove(&ah->blocked_link);
		rdmx_dlist_init(&ah->blocked_link);
	}
}

static void rdmx_shm_ah_destroy(struct rdmx_dev *dev, struct rdmx_ah *handle)
{
	struct rdmx_shm_dev *shm = rdmx_shm_dev(dev);
	struct rdmx_shm_ah *ah = rdmx_container_of(handle, struct rdmx_shm_ah, ah);

	if (--ah->refs)
		return;
	if (shm->last == ah)
		shm->last = NULL;
	if (ah->gone && !ah->gone_told)
		shm->gone_untold--;
	while (!rdmx_dlist_empty(&ah->pend))
		rdmx_shm_pend_end(shm, ah, RDMX_DEV_FLUSHED);
	rdmx_shm_ah_free(ah);
}

/* Whether the owner of the ring at ah exited. */
static bool rdmx_shm_owner_gone(struct rdmx_shm_ah *ah)
{
	struct pollfd pfd = { .fd = ah->pidfd, .events = POLLIN };

	if (ah->pidfd >= 0)
		return poll(&pfd, 1, 0) == 1;
	return kill((pid_t) ah->addr.pid, 0) && errno == ESRCH;
}

/* Whether the next ticket of ring finds its slot free. */
static bool rdmx_shm_has_room(struct rdmx_shm_ring *ring)
{
	uint64_t pos = atomic_load_explicit(&ring->tail, memory_order_relaxed);

	return atomic_load_explicit(&rdmx_shm_slot(ring, pos)->seq, memory_order_acquire) == pos;
}

/* A ticket for a free slot of ring, or false when it is full. */
static bool rdmx_shm_claim(struct rdmx_shm_ring *ring, uint64_t *ticket)
{
	uint64_t pos = atomic_load_explicit(&ring->tail, memory_order_relaxed);

	for (int i = 0; i < RDMX_SHM_TRIES; i++) {
		struct rdmx_shm_slot *slot = rdmx_shm_slot(ring, pos);
		int64_t diff = (int64_t) (atomic_load_explicit(&slot->seq, memory_order_acquire) - pos);

		if (diff < 0)
			return false;
		if (!diff && atomic_compare_exchange_weak_explicit(&ring->tail, &pos, pos + 1,
				memory_order_relaxed, memory_order_relaxed)) {
			*ticket = pos;
			return true;
		}
		if (diff)
			pos = atomic_load_explicit(&ring->tail, memory_order_relaxed);
	}
	return false;
}

/* A slot was published in ah's ring: wakes its owner if it sleeps. */
static void rdmx_shm_wake(struct rdmx_shm_dev *shm, struct rdmx_shm_ah *ah)
{
	struct rdmx_shm_ring *ring = ah->ring;

	if (!atomic_load_explicit(&ring->waits_seen, memory_order_relaxed))
		return;
	atomic_thread_fence(memory_order_seq_cst);
	if (!atomic_load_explicit(&ring->sleeping, memory_order_relaxed))
		return;
	if (shm->tx_fd >= 0 && sendto(shm->tx_fd, "", 1, MSG_DONTWAIT,
				      (struct sockaddr *) &ah->wake, ah->wake_len) == 1)
		return;
	/* A full wake queue already holds a wake. */
	if (shm->tx_fd < 0 || errno != EAGAIN)
		atomic_store_explicit(&ring->wake_lost, 1, memory_order_relaxed);
}

/*
 * Copies the datagram of len bytes gathered from iov into a slot of ah's
 * ring and publishes it; false when the ring is full.
 */
static bool rdmx_shm_put(struct rdmx_shm_dev *shm, struct rdmx_shm_ah *ah,
			 const struct iovec *iov, size_t iov_cnt, size_t len)
{
	struct rdmx_shm_slot *slot;
	uint64_t ticket;

	if (!rdmx_shm_claim(ah->ring, &ticket))
		return false;
	slot = rdmx_shm_slot(ah->ring, ticket);
	slot->len = (uint32_t) len;
	slot->token = shm->addr.token;
	len = 0;
	for (size_t i = 0; i < iov_cnt; i++) {
		memcpy(slot->data + len, iov[i].iov_base, iov[i].iov_len);
		len += iov[i].iov_len;
	}
	atomic_store_explicit(&slot->seq, ticket + 1, memory_order_release);
	rdmx_shm_wake(shm, ah);
	return true;
}

/* A send joins ah's queue; the first one marks the ring (see the top). */
static void rdmx_shm_pend_add(struct rdmx_shm_dev *shm, struct rdmx_shm_ah *ah,
			      const struct iovec *iov, size_t iov_cnt, uint64_t wr_id)
{
	struct rdmx_shm_pend *p = rdmx_container_of(rdmx_dlist_pop_front(&shm->pend_free),
						    struct rdmx_shm_pend, link);

	memcpy(p->iov, iov, iov_cnt * sizeof(*iov));
	p->iov_cnt = iov_cnt;
	p->wr_id = wr_id;
	if (rdmx_dlist_empty(&ah->pend)) {
		rdmx_dlist_insert_tail(&shm->blocked, &ah->blocked_link);
		atomic_store_explicit(&ah->ring->room_wanted, 1, memory_order_relaxed);
	}
	rdmx_dlist_insert_tail(&ah->pend, &p->link);
	shm->pend_cnt++;
}

/*
 * Puts the sends waiting on each ring with room into it, in order; a
 * ring still full is marked again. Sends to an owner gone fail.
 */
static void rdmx_shm_pend_flush(struct rdmx_shm_dev *shm)
{
	struct rdmx_dlist *it, *next;

	for (it = shm->blocked.next; it != &shm->blocked; it = next) {
		struct rdmx_shm_ah *ah = rdmx_container_of(it, struct rdmx_shm_ah, blocked_link);

		next = it->next;
		while (!rdmx_dlist_empty(&ah->pend)) {
			struct rdmx_shm_pend *p = rdmx_container_of(ah->pend.next,
								    struct rdmx_shm_pend, link);

			if (!ah->gone && !rdmx_shm_put(shm, ah, p->iov, p->iov_cnt,
						       rdmx_iov_len(p->iov, p->iov_cnt))) {
				atomic_store_explicit(&ah->ring->room_wanted, 1,
						      memory_order_relaxed);
				break;
			}
			rdmx_shm_pend_end(shm, ah, ah->gone ? RDMX_DEV_UNREACH : RDMX_DEV_OK);
		}
	}
}

static int rdmx_shm_post_send(struct rdmx_dev *dev, struct rdmx_ah *handle,
			      const struct iovec *iov, size_t iov_cnt,
			      uint64_t wr_id, unsigned flags)
{
	struct rdmx_shm_dev *shm = rdmx_shm_dev(dev);
	struct rdmx_shm_ah *ah = rdmx_container_of(handle, struct rdmx_shm_ah, ah);
	size_t len = rdmx_iov_len(iov, iov_cnt);

	(void) flags;
	if (shm->done_cnt + shm->pend_cnt == dev->caps.sq_size)
		return -FI_EAGAIN;
	if (len > dev->caps.mtu || ah->gone)
		rdmx_shm_done(shm, wr_id, ah->gone ? RDMX_DEV_UNREACH : RDMX_DEV_MSGSIZE);
	else if (rdmx_dlist_empty(&ah->pend) && rdmx_shm_put(shm, ah, iov, iov_cnt, len))
		rdmx_shm_done(shm, wr_id, RDMX_DEV_OK);
	else
		rdmx_shm_pend_add(shm, ah, iov, iov_cnt, wr_id);
	return 0;
}

static int rdmx_shm_post_recv(struct rdmx_dev *dev, void *buf, size_t len, uint64_t wr_id)
{
	struct rdmx_shm_dev *shm = rdmx_shm_dev(dev);
	size_t cap = dev->caps.rq_size;

	if (shm->rq_cnt == cap)
		return -FI_EAGAIN;
	shm->rq[shm->rq_cnt++] = (struct rdmx_shm_rx) {
		.buf = buf, .len = len, .wr_id = wr_id,
	};
	return 0;
}

/*
 * The next packet of the ring, as cqe: its first bytes copied into the
 * buffer posted last, the packet read in place (cqe.data) until
 * rdmx_shm_free_taken; false when there is none (or no buffer). A packet
 * too long, or from a sender without a handle, is dropped and counted.
 */
static bool rdmx_shm_take(struct rdmx_shm_dev *shm, struct rdmx_dev_cqe *cqe)
{
	while (shm->rq_cnt) {
		struct rdmx_shm_slot *slot = rdmx_shm_slot(shm->ring, shm->head);
		struct rdmx_shm_rx *rx = &shm->rq[shm->rq_cnt - 1];
		struct rdmx_shm_ah *src;
		uint32_t len;
		bool ok;

		if (atomic_load_explicit(&slot->seq, memory_order_acquire) != shm->head + 1)
			return false;
		/* Read once: the sender may still scribble on its slot. */
		len = slot->len;
		src = rdmx_shm_ah_find(shm, slot->token);
		ok = src && len <= rx->len;
		if (ok)
			memcpy(rx->buf, slot->data, RDMX_MIN(len, RDMX_DEV_RX_PREFIX));
		else if (src)
			shm->dev.stats.rx_malformed++;
		else
			shm->dev.stats.rx_dropped++;
		shm->head++;
		if (!ok)
			continue;
		*cqe = (struct rdmx_dev_cqe) {
			.wr_id = rx->wr_id,
			.op = RDMX_DEV_OP_RECV,
			.status = RDMX_DEV_OK,
			.len = len,
			.src_ah = &src->ah,
			.data = slot->data,
		};
		shm->rq_cnt--;
		return true;
	}
	return false;
}

/*
 * Marks the handles whose ring's owner exited: their sends fail UNREACH,
 * and a poll tells of each (rdmx_shm_tell_gone).
 */
static void rdmx_shm_check_owners(struct rdmx_shm_dev *shm)
{
	uint64_t now = rdmx_clock_ns();
	struct rdmx_dlist *it;

	if (now < shm->next_check)
		return;
	shm->next_check = now + RDMX_SHM_CHECK_NS;
	rdmx_dlist_foreach(&shm->ahs, it) {
		struct rdmx_shm_ah *ah = rdmx_container_of(it, struct rdmx_shm_ah, link);

		if (!ah->gone && rdmx_shm_owner_gone(ah)) {
			ah->gone = true;
			shm->gone_untold++;
			shm->dev.stats.unreachable++;
		}
	}
}

/* Up to max RDMX_DEV_OP_GONE completions, one per handle marked gone. */
static int rdmx_shm_tell_gone(struct rdmx_shm_dev *shm, struct rdmx_dev_cqe *cqe, int max)
{
	struct rdmx_dlist *it;
	int n = 0;

	rdmx_dlist_foreach(&shm->ahs, it) {
		struct rdmx_shm_ah *ah = rdmx_container_of(it, struct rdmx_shm_ah, link);

		if (n == max)
			break;
		if (!ah->gone || ah->gone_told)
			continue;
		ah->gone_told = true;
		shm->gone_untold--;
		cqe[n++] = (struct rdmx_dev_cqe) {
			.op = RDMX_DEV_OP_GONE,
			.status = RDMX_DEV_UNREACH,
			.src_ah = &ah->ah,
		};
	}
	return n;
}

/*
 * The slots taken since the last call are done with: free for senders
 * again. If a sender found the ring full (see the top), our peers that
 * sleep are woken.
 */
static void rdmx_shm_free_taken(struct rdmx_shm_dev *shm)
{
	struct rdmx_dlist *it;

	if (shm->freed == shm->head)
		return;
	for (; shm->freed != shm->head; shm->freed++)
		atomic_store_explicit(&rdmx_shm_slot(shm->ring, shm->freed)->seq,
				      shm->freed + RDMX_SHM_SLOTS, memory_order_release);
	if (!atomic_load_explicit(&shm->ring->room_wanted, memory_order_relaxed))
		return;
	atomic_store_explicit(&shm->ring->room_wanted, 0, memory_order_relaxed);
	rdmx_dlist_foreach(&shm->ahs, it)
		rdmx_shm_wake(shm, rdmx_container_of(it, struct rdmx_shm_ah, link));
}

/*
 * Arming: whether a ring that sends wait on has room now (then the
 * caller must not sleep); else a tick at most, for a mark the owner
 * missed.
 */
static bool rdmx_shm_blocked_room(struct rdmx_shm_dev *shm, uint64_t *due_p)
{
	struct rdmx_dlist *it;

	rdmx_dlist_foreach(&shm->blocked, it) {
		struct rdmx_shm_ah *ah = rdmx_container_of(it, struct rdmx_shm_ah, blocked_link);

		if (ah->gone || rdmx_shm_has_room(ah->ring))
			return true;
	}
	if (!rdmx_dlist_empty(&shm->blocked))
		*due_p = RDMX_MIN(*due_p, rdmx_clock_ns() + RDMX_DEV_WAIT_TICK_NS);
	return false;
}

/* The end of a wait (wait_arm): the owner is awake, its wakes drained. */
static void rdmx_shm_wait_end(struct rdmx_shm_dev *shm)
{
	char buf[64];

	atomic_store_explicit(&shm->ring->sleeping, 0, memory_order_relaxed);
	shm->armed = false;
	while (shm->wake_fd >= 0 && recv(shm->wake_fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

static int rdmx_shm_poll_cq(struct rdmx_dev *dev, struct rdmx_dev_cqe *cqe, int max)
{
	struct rdmx_shm_dev *shm = rdmx_shm_dev(dev);
	int done = rdmx_cma_poll(&shm->cma, cqe, max);

	/* Back from a sleep: the owners' check too, which polls count. */
	if (shm->armed) {
		rdmx_shm_wait_end(shm);
		rdmx_shm_check_owners(shm);
	}

	rdmx_shm_free_taken(shm);
	if (++shm->polls % RDMX_SHM_CHECK_POLLS == 0)
		rdmx_shm_check_owners(shm);
	if (!rdmx_dlist_empty(&shm->blocked))
		rdmx_shm_pend_flush(shm);

	while (done < max && shm->done_cnt) {
		cqe[done++] = shm->done[shm->done_head];
		shm->done_head = (shm->done_head + 1) % dev->caps.sq_size;
		shm->done_cnt--;
	}
	if (shm->gone_untold)
		done += rdmx_shm_tell_gone(shm, cqe + done, max - done);
	while (done < max && rdmx_shm_take(shm, &cqe[done]))
		done++;
	return done;
}

static int rdmx_shm_wait_fd(struct rdmx_dev *dev)
{
	return rdmx_shm_dev(dev)->wake_fd;
}

static int rdmx_shm_wait_arm(struct rdmx_dev *dev, uint64_t *due_p)
{
	struct rdmx_shm_dev *shm = rdmx_shm_dev(dev);
	struct rdmx_shm_ring *ring = shm->ring;
	uint64_t now = rdmx_clock_ns();

	rdmx_shm_free_taken(shm);
	if (shm->done_cnt || shm->cma.ndone || shm->gone_untold)
		return -FI_EAGAIN;
	atomic_store_explicit(&ring->waits_seen, 1, memory_order_relaxed);
	atomic_store_explicit(&ring->sleeping, 1, memory_order_relaxed);
	shm->armed = true;
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&rdmx_shm_slot(ring, shm->head)->seq, memory_order_acquire) ==
	    shm->head + 1 || rdmx_shm_blocked_room(shm, due_p)) {
		rdmx_shm_wait_end(shm);
		return -FI_EAGAIN;
	}
	/* See the top of the file: the first sleep, and wakes that cannot come. */
	if (!shm->slept || shm->wake_fd < 0 ||
	    atomic_load_explicit(&ring->wake_lost, memory_order_relaxed))
		*due_p = RDMX_MIN(*due_p, now + RDMX_DEV_WAIT_TICK_NS);
	shm->slept = true;
	/* The owners' liveness check runs at polls; a sleeper polls for it. */
	if (!rdmx_dlist_empty(&shm->ahs))
		*due_p = RDMX_MIN(*due_p, RDMX_MAX(shm->next_check, now));
	return 0;
}

static int rdmx_shm_read_expose(struct rdmx_dev *dev, const struct iovec *iov,
				size_t cnt, struct rdmx_dev_rkey *rkey)
{
	return rdmx_cma_expose(&rdmx_shm_dev(dev)->cma, iov, cnt, rkey);
}

static void rdmx_shm_read_revoke(struct rdmx_dev *dev, struct rdmx_dev_rkey *rkey)
{
	(void) dev;
	rdmx_cma_revoke(rkey);
}

static int rdmx_shm_post_read(struct rdmx_dev *dev, struct rdmx_ah *ah,
			      const struct iovec *local, size_t local_cnt,
			      const struct iovec *remote, size_t remote_cnt,
			      const void *key, uint64_t wr_id)
{
	(void) ah;	/* the key names the exposer and the session */
	return rdmx_cma_read(&rdmx_shm_dev(dev)->cma, local, local_cnt, remote,
			     remote_cnt, (const struct rdmx_dev_rkey *) key, wr_id);
}

const struct rdmx_dev_ops rdmx_dev_shm_ops = {
	.name = "shm",
	.addr_size = sizeof(struct rdmx_shm_addr),
	.addr_format = rdmx_shm_addr_format,
	.addr_canon = rdmx_shm_addr_canon,
	.addr_len = rdmx_shm_addr_len,
	.addr_str = rdmx_shm_addr_str,
	.resolve = rdmx_shm_resolve,
	.domains = rdmx_shm_domains,
	.open = rdmx_shm_open,
	.close = rdmx_shm_close,
	.getname = rdmx_shm_getname,
	.ah_create = rdmx_shm_ah_create,
	.ah_destroy = rdmx_shm_ah_destroy,
	.post_send = rdmx_shm_post_send,
	.post_recv = rdmx_shm_post_recv,
	.poll_cq = rdmx_shm_poll_cq,
	.wait_fd = rdmx_shm_wait_fd,
	.wait_arm = rdmx_shm_wait_arm,
	.read_expose = rdmx_shm_read_expose,
	.read_revoke = rdmx_shm_read_revoke,
	.post_read = rdmx_shm_post_read,
};
