/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_api_test: libfabric API semantics in one process (see api.h).
 *
 * Usage: rdmx_api_test [NAME...]: run the tests whose names contain a NAME,
 * or all but those containing it when NAME starts with '!'. A test about
 * an FI_RDMX_* setting runs in a child process that has it.
 */
#include <spawn.h>
#include <sys/wait.h>

#include "api.h"

static const struct {
	const char		*name;
	void			(*run)(struct fixture *fx);
	struct fixture_opts	opts;
} tests[] = {
	{ "objects open", test_objects, { .verbose = true } },
	{ "fi_getname", test_getname, { 0 } },
	{ "fi_setname", test_setname, { 0 } },
	{ "fi_enable errors", test_enable_errors, { 0 } },
	{ "address vector", test_av, { 0 } },
	{ "fi_av_remove after a completed send", test_av_remove_after_inject, { 0 } },
	{ "self-send", test_self, { 0 } },
	{ "send calls", test_send_calls, { 0 } },
	{ "scatter receive", test_scatter, { 0 } },
	{ "tag ignore mask", test_tag_ignore, { 0 } },
	{ "FI_DIRECTED_RECV", test_directed, { 0 } },
	{ "unexpected messages", test_unexpected, { 0 } },
	{ "posted receive order", test_posted_order, { 0 } },
	{ "truncation", test_truncation, { 0 } },
	{ "fi_cancel", test_cancel, { 0 } },
	{ "FI_MULTI_RECV", test_multi_recv, { 0 } },
	{ "FI_PEEK, FI_CLAIM, FI_DISCARD", test_peek_claim, { 0 } },
	{ "FI_SELECTIVE_COMPLETION", test_selective,
	  { .a_tx_flags = FI_SELECTIVE_COMPLETION } },
	{ "zero-byte messages", test_zero_bytes, { 0 } },
	{ "zero-byte message without iov", test_zero_iov, { 0 } },
	{ "size limits", test_size_limits, { 0 } },
	{ "message sizes", test_sizes, { 0 } },
	{ "iov limit", test_iov_limit, { 0 } },
	{ "unknown destination", test_bad_dest, { 0 } },
	{ "rdmx_peer_ops", test_peer_ops, { 0 } },
	{ "pending queue", test_pending_queue, { 0 } },
	{ "completion levels", test_completion_levels, { 0 } },
	{ "close ordering", test_close_order, { 0 } },
	{ "unsupported calls", test_unsupported, { 0 } },
	{ "event queue", test_eq, { 0 } },
	{ "counters", test_counters, { 0 } },
	{ "fi_cq_sread", test_sread, { 0 } },
	{ "FI_WAIT_FD and fi_trywait", test_wait_fd, { 0 } },
	{ "wait set", test_wait_set, { 0 } },
	{ "poll set", test_poll_set, { 0 } },
	{ "FI_PROGRESS_AUTO", test_auto_progress, { .auto_progress = true } },
	{ "memory registration", test_mr, { 0 } },
	{ "RMA, requested keys and offsets", test_rma, { .rma = true } },
	{ "RMA, provider keys and virtual addresses (FI_MR_BASIC)", test_rma,
	  { .rma = true, .mr_mode = FI_MR_BASIC } },
	{ "atomics, requested keys and offsets", test_atomics, { .atomic = true } },
	{ "atomics, provider keys and virtual addresses (FI_MR_BASIC)", test_atomics,
	  { .atomic = true, .mr_mode = FI_MR_BASIC } },
	{ "second domain", test_second_domain, { 0 } },
	{ "FI_SOURCE_ERR", test_source_err, { 0 } },
	{ "FI_EP_DGRAM: fi_getinfo", test_dgram_info, { .dgram = true } },
	{ "FI_EP_DGRAM: messages", test_dgram_msg, { .dgram = true } },
	{ "FI_EP_DGRAM: held and directed", test_dgram_held, { .dgram = true } },
	{ "FI_EP_DGRAM: truncation", test_dgram_truncation, { .dgram = true } },
	{ "FI_EP_DGRAM: limits", test_dgram_limits, { .dgram = true } },
	{ "FI_EP_DGRAM: datagrams rdmx never sent", test_dgram_wire, { .dgram = true } },
	{ "FI_EP_DGRAM: loss", test_dgram_loss, { .dgram = true } },
	{ "FI_EP_DGRAM: a stranger's flood", test_dgram_flood, { .dgram = true } },
	{ "FI_EP_DGRAM: FI_SELECTIVE_COMPLETION", test_dgram_selective,
	  { .dgram = true, .a_tx_flags = FI_SELECTIVE_COMPLETION } },
	{ "FI_EP_DGRAM: its datagrams to an RDM endpoint", test_dgram_to_rdm, { 0 } },
	{ "FI_EP_MSG: accept, data, fi_shutdown", test_cm_accept, { .msg = true } },
	{ "FI_EP_MSG: reject", test_cm_reject, { .msg = true } },
	{ "FI_EP_MSG: a request abandoned", test_cm_abandon, { .msg = true } },
	{ "FI_EP_MSG: connect to nobody", test_cm_nobody, { .msg = true } },
	{ "FI_EP_MSG: a listener that never answers", test_cm_deadline,
	  { .msg = true, .env = "FI_RDMX_CONNECT_MS=" API_STR(CM_DEADLINE_MS) } },
	{ "FI_EP_MSG: backlog", test_cm_backlog, { .msg = true } },
	{ "FI_EP_MSG: 100 connections", test_cm_cycles, { .msg = true } },
	{ "FI_EP_MSG: an acceptor shows its listener's address", test_cm_acceptor_names,
	  { .msg = true } },
	{ "FI_EP_MSG: a passive endpoint of IPv6", test_cm_pep_ipv6, { .msg = true } },
	{ "FI_EP_MSG: a connector at a passive endpoint's address", test_cm_handle,
	  { .msg = true } },
	{ "FI_EP_MSG: a forged request", test_cm_forged_request, { .msg = true } },
	{ "ping, FI_THREAD_SAFE, two threads", test_ping_threads,
	  { .threading = FI_THREAD_SAFE } },
	{ "ping, FI_THREAD_DOMAIN, one thread", test_ping_domain,
	  { .threading = FI_THREAD_DOMAIN } },
};

/*
 * Whether the test name is selected by the arguments: substrings to run,
 * or to skip when they start with '!'. No argument selects every test.
 */
static bool selected(const char *name, int argc, char **argv)
{
	bool any_include = false, included = false;

	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '!') {
			if (strstr(name, argv[i] + 1))
				return false;
		} else {
			any_include = true;
			included |= strstr(name, argv[i]) != NULL;
		}
	}
	return !any_include || included;
}

/*
 * Whether the test's setting (NAME=VALUE) is in the environment: the
 * provider reads it once per process, so a test that needs it runs in a
 * child process of its own (run_child) that has it.
 */
static bool env_has(const char *setting)
{
	const char *eq = strchr(setting, '=');
	char name[64];
	const char *val;

	snprintf(name, sizeof(name), "%.*s", (int) (eq - setting), setting);
	val = getenv(name);
	return val && !strcmp(val, eq + 1);
}

/* Runs test name in a child process with setting added to the environment. */
static void run_child(const char *name, const char *setting)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *argv[] = { exe, (char *) name, NULL };
	size_t envc = 0;
	char **envp;
	pid_t pid;
	int status = -1;

	while (environ[envc])
		envc++;
	envp = calloc(envc + 2, sizeof(*envp));
	if (n <= 0 || !envp) {
		free(envp);
		ft_check(false, "the test's child process", "no /proc/self/exe or memory");
		return;
	}
	exe[n] = '\0';
	memcpy(envp, environ, envc * sizeof(*envp));
	envp[envc] = (char *) setting;
	fflush(stdout);
	if (posix_spawn(&pid, exe, NULL, NULL, argv, envp) ||
	    waitpid(pid, &status, 0) != pid)
		status = -1;
	free(envp);
	ft_check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the test's child process passes",
		 "status %#x (its checks are above)", status);
}

int main(int argc, char **argv)
{
	struct fixture fx;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; i < ARRAY_SIZE(tests); i++) {
		if (!selected(tests[i].name, argc, argv))
			continue;
		printf("# %s\n", tests[i].name);
		if (tests[i].opts.env && !env_has(tests[i].opts.env)) {
			printf("# (in a child process with %s)\n", tests[i].opts.env);
			run_child(tests[i].name, tests[i].opts.env);
			continue;
		}
		if (fixture_open(&fx, &tests[i].opts))
			tests[i].run(&fx);
		/* Closes what set-up opened; nothing if the test closed it all. */
		fixture_close(&fx, false);
	}
	return ft_check_summary();
}
