#!/bin/sh
# deps.sh - install the Debian packages Sluice needs, or print how to.
#
# Usage: scripts/deps.sh [build|check|bench]
# As root the missing packages are installed with apt-get; otherwise the
# exact command is printed and the script fails, so make stops.
set -u

PKGS="gcc make pkg-config libevent-dev libcurl4-openssl-dev libmsgpack-dev
libjansson-dev libsqlite3-dev check libsystemd-dev node-llhttp libssl-dev
cppcheck curl"
[ "${1:-build}" = bench ] && PKGS="$PKGS nginx-light"
[ "${1:-build}" = check ] && PKGS="$PKGS clang"	# libFuzzer

missing=""
if command -v dpkg-query >/dev/null 2>&1; then
	for p in $PKGS; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
		    grep -q '^install ok installed$' || missing="$missing $p"
	done
else
	echo "deps.sh: not a Debian system; make sure these are installed:" >&2
	echo "  $PKGS" | tr '\n' ' ' >&2
	echo >&2
	exit 0
fi
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "Sluice needs these Debian packages:$missing" >&2
	echo "Install them with:" >&2
	echo "  sudo apt-get install -y$missing" >&2
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
