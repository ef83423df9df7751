#!/bin/sh
# deps.sh - check for the Debian packages Sluice needs; install them or print how to.
#
# Usage: scripts/deps.sh [--install] [build|run|check|bench]
#
#   build   compile the gateway, the worker (libpq-dev: the store's
#           PostgreSQL driver) and the mock (plain 'make'),
#           and python3 with jinja2, which the worker runs for
#           "jinja2": true nodes and PythonModule nodes
#   run     the same ('make run')
#   check   everything 'make check' runs: cppcheck, the libFuzzer
#           harnesses (clang and its runtime), the official client
#           libraries (node, npm), strace,
#           curl (the CurlCommand node runs it),
#           systemd-analyze with what it checks the unit against (the
#           /bin/kill of ExecReload=, man for Documentation=) and mandoc,
#           haproxy (check_haproxy runs deploy/haproxy.cfg),
#           postgresql (the store's suites start a throwaway cluster:
#           tests/unit/pgtmp.c),
#           iproute2 (check_cluster puts each node in a network
#           namespace with ip netns)
#   bench   build plus nginx, the benchmark's backend, and haproxy and
#           postgresql (its store part: bench/store.sh)
#
# Exit status 0 when nothing is missing. Otherwise, with --install and
# as root, the missing packages are installed with apt-get; without
# --install, or when not root, the exact command is printed and the
# status is 1, so make stops before it compiles anything.
#
# A word "pkg:cmd" counts as present when the package is installed or
# cmd is on PATH (node and npm from nodesource, say, are not Debian's
# nodejs and npm packages, and Debian's npm conflicts with them). A
# word "pkg:+mod" counts as present when the package is installed or
# the python3 on PATH can import mod (jinja2 from pip, say).
set -u

install=0
if [ "${1:-}" = --install ]; then
	install=1
	shift
fi
set_=${1:-build}

BUILD="gcc make pkg-config libevent-dev libcurl4-openssl-dev libmsgpack-dev
libjansson-dev libsqlite3-dev check libsystemd-dev node-llhttp libssl-dev
libpq-dev
python3:python3 python3-jinja2:+jinja2"
CHECK="cppcheck clang libclang-rt-dev nodejs:node npm:npm strace
curl:curl systemd:systemd-analyze procps man-db:man mandoc haproxy
postgresql iproute2:ip"
BENCH="nginx-light:nginx curl haproxy postgresql"

case $set_ in
build|run)	want=$BUILD ;;
check)		want="$BUILD $CHECK" ;;
bench)		want="$BUILD $BENCH" ;;
*)		echo "usage: deps.sh [--install] [build|run|check|bench]" >&2
		exit 2 ;;
esac

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "deps.sh: not a Debian system; make sure these are installed:" >&2
	echo "  $want" | sed 's/:[^ ]*//g' | tr '\n' ' ' >&2
	echo >&2
	exit 0
fi

# present PKG[:CMD]: true when the package is installed or CMD is on PATH.
present()
{
	pkg=${1%%:*}
	cmd=${1#*:}
	case $cmd in
	+*)	python3 -c "import ${cmd#+}" >/dev/null 2>&1 && return 0 ;;
	*)	[ "$cmd" != "$1" ] && command -v "$cmd" >/dev/null 2>&1 &&
		    return 0 ;;
	esac
	dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null |
	    grep -q '^install ok installed$'
}

missing=""
for w in $want; do
	present "$w" || missing="$missing ${w%%:*}"
done
[ -z "$missing" ] && exit 0

if [ "$install" -eq 0 ] || [ "$(id -u)" -ne 0 ]; then
	echo "Sluice needs these Debian packages:$missing" >&2
	echo "Install them with:" >&2
	sudo=sudo
	[ "$(id -u)" -eq 0 ] && sudo=
	echo "  ${sudo:+$sudo }apt-get install -y$missing" >&2
	exit 1
fi

echo "deps.sh: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086
apt-get install -y --no-install-recommends $missing </dev/null ||
    { apt-get update </dev/null &&
      apt-get install -y --no-install-recommends $missing </dev/null; } || {
	echo "deps.sh: apt-get failed; install by hand:$missing" >&2
	exit 1
}
