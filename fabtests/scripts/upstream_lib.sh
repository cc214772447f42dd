#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# upstream_lib.sh: sourced by the scripts that build and run libfabric's
# own sources (upstream.sh, multihome.sh, libfabric2.sh): finds the
# unmodified release tarballs in ../shared/upstream next to the source
# tree (or next to the main checkout, for a git worktree), and keeps
# what is built from them in the build tree ($RDMX_BUILDDIR/upstream/),
# once per source checksum, one build at a time (a lock), or in
# RDMX_UPSTREAM_CACHE when set: what is built there does not depend on
# the rdmx build (its programs link the system's libfabric or their own),
# so several build trees can share one cache (contrib/rdmx test does, for
# its sanitizer build). For fabtests
# 1.17.0, built against the system libfabric, FABTESTS_SRC (an unpacked
# fabtests tree) may stand for the tarball. Needs testlib.sh.

UP_TOP=$(cd "$(dirname "$0")/../.." && pwd)

# The quick-set tests runfabtests.sh leaves out over rdmx (its -e):
# fi_msg_sockets's client binds fabtests' fixed port 9229, which anyone
# else on the host may hold. upstream.sh runs it on its own, with a port
# nobody uses (fi_rdmx(7), CONFORMANCE).
UP_EXCLUDE="fi_msg_sockets"

# up_find_tarball name: prints the path of the tarball name in the
# shared/upstream folder next to the source tree or next to the main
# checkout of its git repository; prints nothing when there is none.
up_find_tarball() {
	local common
	up_tarball_in "$UP_TOP/../shared/upstream" "$1" && return 0
	common=$(git -C "$UP_TOP" rev-parse --path-format=absolute --git-common-dir 2>/dev/null) ||
		return 0
	up_tarball_in "$(dirname "$common")/../shared/upstream" "$1" || :
}

# up_tarball_in dir name: prints dir's tarball name; 1 if it has none.
up_tarball_in() {
	[ -f "$1/$2" ] || return 1
	echo "$1/$2"
}

# up_cache: the folder the builds are kept in.
up_cache() {
	echo "${RDMX_UPSTREAM_CACHE:-$RDMX_BUILDDIR/upstream}"
}

# up_cached dir build: makes sure dir holds a complete build, running
# "build dir" (which starts from an empty dir) unless dir/done, written
# last, says one is there; a folder without it is the remains of an
# interrupted build. One build at a time per cache (up_cache).
up_cached() {
	local dir=$1
	mkdir -p "$(up_cache)"
	exec 9>"$(up_cache)/.lock"
	flock 9
	if [ -f "$dir/done" ]; then
		echo "reusing the build in $dir"
	else
		rm -rf "$dir"
		mkdir -p "$dir"
		"$2" "$dir"
		touch "$dir/done"
	fi
	flock -u 9
}

# up_checksum: the sha256 of the fabtests source (of the tarball, or of
# every file of FABTESTS_SRC with its name).
up_checksum() {
	if [ -n "${FABTESTS_SRC:-}" ]; then
		(cd "$FABTESTS_SRC" && find . -type f ! -path './.git/*' | LC_ALL=C sort |
			xargs -d '\n' sha256sum | sha256sum)
	else
		sha256sum < "$TARBALL"
	fi | cut -c1-64
}

# up_wait cmd...: runs cmd in the background and waits for it, so that a
# signal (the runtime cap's SIGTERM) interrupts the wait and the cleanup
# runs at once; a shell defers its traps until a foreground child ends.
up_wait() {
	"$@" &
	wait $!
}

# up_build dir: unpacks (or copies) the fabtests source into dir/src,
# builds it and installs it into dir/prefix.
up_build() {
	local dir=$1
	mkdir -p "$dir/src"
	if [ -n "${FABTESTS_SRC:-}" ]; then
		cp -a "$FABTESTS_SRC/." "$dir/src/"
	else
		tar -xzf "$TARBALL" -C "$dir/src" --strip-components=1
	fi
	echo "fabtests: building in $dir (log: $dir/build.log)"
	if ! up_wait sh -c 'cd "$1/src" &&
			{ [ -x configure ] || ./autogen.sh; } &&
			./configure --prefix="$1/prefix" --with-libfabric=/usr &&
			make -j2 && make install' sh "$dir" > "$dir/build.log" 2>&1; then
		tail -n 40 "$dir/build.log"
		t_fail "fabtests did not build"
	fi
}

# up_listening prefix port: whether a TCP socket listens on port where
# prefix (a command prefix such as "ip netns exec NS", or empty) runs: an
# upstream server's out-of-band port (-E), which its client may connect to.
up_listening() {
	[ -n "$($1 ss -Hltn "sport = :$2" 2>/dev/null)" ]
}

# up_prepare: sets UP_PREFIX to a complete build of the fabtests programs,
# building it if needed, and UP_SOURCE to what it was built from; returns
# 1, with the reason in UP_WHY, when there is no source to build from.
up_prepare() {
	local dir
	if [ -n "${FABTESTS_SRC:-}" ]; then
		[ -f "$FABTESTS_SRC/scripts/runfabtests.sh" ] ||
			t_fail "FABTESTS_SRC=$FABTESTS_SRC is not a fabtests source tree"
		TARBALL=""
	else
		TARBALL=$(up_find_tarball fabtests-1.17.0.tar.gz)
		if [ -z "$TARBALL" ]; then
			UP_WHY="no fabtests source: neither $UP_TOP/../shared/upstream/fabtests-1.17.0.tar.gz nor FABTESTS_SRC"
			return 1
		fi
	fi
	UP_SOURCE=${FABTESTS_SRC:-$TARBALL}
	dir="$(up_cache)/fabtests-$(up_checksum | cut -c1-12)"
	up_cached "$dir" up_build
	UP_PREFIX="$dir/prefix"
}
