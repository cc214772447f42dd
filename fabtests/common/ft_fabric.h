/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ft_fabric: what the libfabric test programs share: error messages,
 * one RDM endpoint with its fabric, domain, CQ and AV (opened, enabled
 * and closed in one order), its peer addresses and its "listening" line.
 * Public libfabric headers only.
 */
#ifndef FT_FABRIC_H
#define FT_FABRIC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

/* An RDM endpoint and what it stands on: one CQ for both directions, one AV. */
struct ft_rdm {
	struct fid_fabric	*fabric;
	struct fid_domain	*domain;
	struct fid_cq		*cq;
	struct fid_av		*av;
	struct fid_ep		*ep;
	enum fi_wait_obj	cq_wait;	/* set before ft_rdm_open; 0:
						   FI_WAIT_NONE */
};

/*
 * Prints a failed call: "<prog>: <what>: <fi_strerror> (<ret>)"; returns
 * ret, or -FI_EOTHER when ret is not negative.
 */
int ft_err(const char *what, ssize_t ret);

/*
 * Reads the error entry waiting on cq into *err (without its err_data)
 * and describes it in text: "<fi_strerror> (err <n>, prov_errno <n>):
 * <the provider's explanation>"; 0, or the fi_cq_readerr failure printed.
 */
int ft_cq_readerr(struct fid_cq *cq, struct fi_cq_err_entry *err, char *text,
		  size_t len);
/*
 * Checks that a completion's flags, of those in mask, are exactly want; 0,
 * or -FI_EIO after a message naming both, with what.
 */
int ft_check_cq_flags(uint64_t got, uint64_t want, uint64_t mask, const char *what);

/* Closes fid unless NULL; a failure is printed and, if the first, kept in *status. */
void ft_close_fid(struct fid *fid, const char *what, int *status);

/*
 * fi_getinfo for a tagged FI_EP_RDM endpoint whose sends ask op_flags
 * (FI_CONTEXT mode, local and provider-keyed MRs): a server's (host NULL)
 * on bind_addr (NULL: every address) and port, else a client's to host
 * and port. The list, or NULL with the error printed.
 */
struct fi_info *ft_rdm_getinfo(uint32_t version, const char *bind_addr,
			       const char *host, const char *port, uint64_t op_flags);
/*
 * The two halves of ft_rdm_getinfo, for a program that asks more of the
 * provider: ft_rdm_hints returns its hints (NULL when out of memory; the
 * caller frees them with fi_freeinfo), ft_rdm_getinfo_hints asks with
 * hints the same way (the list, or NULL with the error printed).
 */
struct fi_info *ft_rdm_hints(uint64_t op_flags);
struct fi_info *ft_rdm_getinfo_hints(uint32_t version, const char *bind_addr,
				     const char *host, const char *port,
				     const struct fi_info *hints);
/*
 * Opens the fabric, domain, a tagged-format CQ of cq_size entries (0: the
 * provider's default) without wait object, and an FI_AV_TABLE AV of info;
 * 0, or an error already printed (what was opened stays for ft_rdm_close).
 */
int ft_rdm_open(struct ft_rdm *rdm, struct fi_info *info, size_t cq_size);
/*
 * Opens the endpoint of info, binds the CQ (both directions) and the AV to
 * it and enables it; 0, or an error already printed.
 */
int ft_rdm_enable(struct ft_rdm *rdm, struct fi_info *info);
/*
 * Closes the endpoint, then (after the caller closed what else used the
 * domain, such as its memory registrations) ft_rdm_close closes the AV, the
 * CQ, the domain and the fabric. Each keeps the first failure in *status.
 */
void ft_rdm_close_ep(struct ft_rdm *rdm, int *status);
void ft_rdm_close(struct ft_rdm *rdm, int *status);

/*
 * A two-sided test program's endpoint from start to end: ft_rdm_getinfo
 * with FI_DELIVERY_COMPLETE (a server when host is NULL), a CQ of 4096
 * entries, then run(rdm, info, arg, status) between enable and close
 * (status gathers close failures too). The exit status: 0, or 1 after
 * "name: FAIL" on stderr.
 */
typedef int (*ft_rdm_run_fn)(struct ft_rdm *rdm, const struct fi_info *info,
			     const void *arg, int *status);
int ft_rdm_run(const char *name, uint32_t version, const char *bind_addr,
	       const char *host, const char *port, ft_rdm_run_fn run, const void *arg);

/*
 * Inserts one address into the AV as *fi_addr; 0, or an error printed
 * with what (*fi_addr is then FI_ADDR_UNSPEC).
 */
int ft_rdm_insert(struct ft_rdm *rdm, const void *addr, fi_addr_t *fi_addr,
		  const char *what);

/*
 * Prints the endpoint's address and port with ft_print_listening, once
 * it is enabled, the details formatted from fmt; 0 or an error printed.
 */
int ft_rdm_print_listening(struct ft_rdm *rdm, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* FT_FABRIC_H */
