# fabtests_fails.awk: reads the log of `runfabtests.sh -v` and prints one
# line per failed test: "NOMATCH <test>" when the server's fi_getinfo
# found no match (-FI_ENODATA) and the only other trouble was the client
# losing its socket to that server, "FAIL <test>" for every other one.
#
# fabtests 2.x count the first kind as failures although the provider
# was never asked to transfer anything: their client waits on the
# out-of-band socket before it calls fi_getinfo, so it dies of the
# closed socket instead of also returning -FI_ENODATA (tcp;ofi_rxm shows
# the same on fi_av_xfer -e dgram). fabtests 1.x count them as not run.
# A client whose own fi_getinfo found no match may then crash inside
# fabtests (2.6's ft_init_fabric_cm uses the fi_info it did not get, for
# -e msg): no provider object existed, so whatever it prints after that
# line (the shell's "Segmentation fault", a sanitizer's report of the
# crash) is no provider failure.
function flush() {
	if (name != "" && result == "Fail")
		print ((nodata && !other) ? "NOMATCH " : "FAIL ") name
	name = ""; result = ""; nodata = 0; cnodata = 0; other = 0; sect = ""
}
/^- name: / { flush(); sub(/^- name: */, ""); name = $0; next }
/^  result: / { result = $2; next }
/^  server_stdout: / { sect = "s"; next }
/^  client_stdout: / { sect = "c"; next }
/^  [a-z_]+: / { sect = ""; next }
sect != "" && /^    / {
	line = $0
	sub(/^ +/, "", line)
	if (line == "")
		next
	if (sect == "s" && line ~ /^fi_getinfo\(\): .* ret=-61 /) {
		nodata = 1
		next
	}
	if (sect == "c" && line ~ /^fi_getinfo\(\): .* ret=-61 /) {
		cnodata = 1
		next
	}
	if (sect == "c" && cnodata)
		next
	# ENOTCONN or ECONNRESET: the server is gone.
	if (sect == "c" && line ~ /^ft_sock_recv\(\): .* ret=-10[47] /)
		next
	# fi_av_xfer reports each of its sub-tests that did not run.
	if (line ~ /^AV [a-z -]+: FAIL$/)
		next
	other = 1
}
END { flush() }
