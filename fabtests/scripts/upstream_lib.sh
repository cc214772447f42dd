#!/bin/sh
# upstream_lib.sh: sourced by the scripts that run libfabric's own
# fabtests 1.17.0 programs (upstream.sh, multihome.sh): finds their
# source and builds them against the system libfabric into the build
# tree, once per source checksum ($RDMX_BUILDDIR/upstream/fabtests-<sha256
# prefix>/prefix, reused by later runs; a lock keeps two runs from
# building at once). The source is FABTESTS_SRC when set (an unpacked
# fabtests tree), else the unmodified release tarball
# fabtests-1.17.0.tar.gz in ../shared/upstream next to the source tree (or
# next to the main checkout, for a git worktree). Needs testlib.sh.

UP_TOP=$(cd "$(dirname "$0")/../.." && pwd)

# up_find_tarball: prints the path of fabtests-1.17.0.tar.gz in the
# shared/upstream folder next to the source tree or next to the main
# checkout of its git repository; prints nothing when there is none.
up_find_tarball() {
	local common
	up_tarball_in "$UP_TOP/../shared/upstream" && return 0
	common=$(git -C "$UP_TOP" rev-parse --path-format=absolute --git-common-dir 2>/dev/null) ||
		return 0
	up_tarball_in "$(dirname "$common")/../shared/upstream" || :
}

# up_tarball_in dir: prints dir's fabtests-1.17.0.tar.gz; 1 if it has none.
up_tarball_in() {
	[ -f "$1/fabtests-1.17.0.tar.gz" ] || return 1
	echo "$1/fabtests-1.17.0.tar.gz"
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

# up_build dir: unpacks (or copies) the source into dir/src, builds it and
# installs it into dir/prefix. dir/done, written last, marks a complete
# build; a folder without it is the remains of an interrupted one.
up_build() {
	local dir=$1
	rm -rf "$dir"
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
	touch "$dir/done"
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
		TARBALL=$(up_find_tarball)
		if [ -z "$TARBALL" ]; then
			UP_WHY="no fabtests source: neither $UP_TOP/../shared/upstream/fabtests-1.17.0.tar.gz nor FABTESTS_SRC"
			return 1
		fi
	fi
	UP_SOURCE=${FABTESTS_SRC:-$TARBALL}
	dir="$RDMX_BUILDDIR/upstream/fabtests-$(up_checksum | cut -c1-12)"
	mkdir -p "$RDMX_BUILDDIR/upstream"
	exec 9>"$RDMX_BUILDDIR/upstream/.lock"
	flock 9
	if [ -f "$dir/done" ]; then
		echo "fabtests: reusing the build in $dir"
	else
		up_build "$dir"
	fi
	flock -u 9
	UP_PREFIX="$dir/prefix"
}
