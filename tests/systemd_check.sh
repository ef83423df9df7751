#!/bin/sh
# systemd_check.sh - check systemd/sluice.{service,socket}: systemd-analyze verify and security.
#
#   tests/systemd_check.sh [GATEWAY]
#
# GATEWAY is the built sluice-gateway (default build/sluice-gateway).
# verify wants every command of a unit to exist, so it runs on copies of
# the units whose ExecStart= names GATEWAY instead of the installed path,
# and with the man pages of docs/man on MANPATH, so that Documentation=
# must name pages that exist. security runs on systemd/sluice.service
# itself and fails when the overall exposure is above
# SLUICE_SECURITY_THRESHOLD (default 15, i.e. 1.5 on the 0.0-10.0 scale
# that systemd-analyze prints).
#
# Exit status: 0 when both checks pass, or when systemd-analyze is not
# installed (the check is skipped, with a message); 1 on any failure,
# with the reason; 2 on a usage error.

set -u

if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "systemd_check: SKIP: systemd-analyze is not installed" \
	    "(apt-get install systemd)"
	exit 0
fi

top=$(cd "$(dirname "$0")/.." && pwd)
gateway=${1:-$top/build/sluice-gateway}
threshold=${SLUICE_SECURITY_THRESHOLD:-15}
units="sluice.service sluice.socket"
failed=0

fail()
{
	echo "systemd_check: FAIL: $*" >&2
	failed=1
}
case $gateway in
/*) ;;
*) gateway=$(pwd)/$gateway ;;
esac
if [ ! -x "$gateway" ]; then
	echo "systemd_check: $gateway: no such executable (build it first," \
	    "or pass the built sluice-gateway as the argument)" >&2
	exit 2
fi
case $gateway in
*[!A-Za-z0-9/._+-]*)
	echo "systemd_check: $gateway: unusual characters in the path" >&2
	exit 2 ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-systemd.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# ---- verify ---------------------------------------------------------------

for u in $units; do
	cp "$top/systemd/$u" "$tmp/$u" || exit 1
done
sed -i "s#^ExecStart=/usr/local/bin/sluice-gateway #ExecStart=$gateway #" \
    "$tmp/sluice.service"
if ! grep -q "^ExecStart=$gateway " "$tmp/sluice.service"; then
	fail "sluice.service: no 'ExecStart=/usr/local/bin/sluice-gateway ...'" \
	    "line to point at the built binary"
fi

manopt=--man=yes
if command -v man >/dev/null 2>&1; then
	mkdir -p "$tmp/man/man5" "$tmp/man/man8"
	cp "$top/docs/man/"*.5 "$tmp/man/man5/" 2>/dev/null
	cp "$top/docs/man/"*.8 "$tmp/man/man8/" 2>/dev/null
	MANPATH=$tmp/man
	export MANPATH
else
	echo "systemd_check: man is not installed: Documentation= not checked"
	manopt=--man=no
fi

# --recursive-errors=no: warnings about our own units (an unknown or
# misspelt key, a bad value) fail the check; problems in the units they
# merely reference (network.target, ...) belong to the host.
# shellcheck disable=SC2086 # $units is a list
out=$(cd "$tmp" && systemd-analyze verify $manopt --recursive-errors=no \
    $units 2>&1)
rc=$?
if [ $rc -ne 0 ] || [ -n "$out" ]; then
	[ -n "$out" ] && printf '%s\n' "$out" | sed "s#$tmp/##g" >&2
	fail "systemd-analyze verify $units (exit status $rc)"
else
	echo "systemd_check: verify $units: OK"
fi

# ---- security -------------------------------------------------------------

if ! systemd-analyze --help 2>&1 | grep -q -- '--offline'; then
	echo "systemd_check: SKIP security: this systemd-analyze has no" \
	    "--offline (systemd 250 or later is needed)"
else
	out=$(systemd-analyze security --offline=true --threshold="$threshold" \
	    "$top/systemd/sluice.service" 2>&1)
	rc=$?
	level=$(printf '%s\n' "$out" | sed -n \
	    's/.*Overall exposure level for [^:]*: *\([0-9.]*\).*/\1/p')
	if [ $rc -ne 0 ]; then
		printf '%s\n' "$out" | grep -E '✗|Overall|rror' >&2
		fail "systemd-analyze security: exposure ${level:-unknown}" \
		    "is above the threshold $threshold (exit status $rc)"
	else
		echo "systemd_check: security sluice.service: $level" \
		    "(threshold $threshold): OK"
	fi
fi

exit $failed
