# lib.sh - process, /proc and number helpers for bench/run.sh (sourced, POSIX sh).

die() {
	echo "run.sh: $*" >&2
	exit 1
}

# True while pid is a live process (not gone, not a zombie).
alive() {
	[ -n "$1" ] && [ -r "/proc/$1/stat" ] &&
	    ! grep -q ') Z ' "/proc/$1/stat" 2>/dev/null
}

# Pids whose parent is $1, from /proc/*/stat (comm may hold spaces).
children() {
	for st in /proc/[0-9]*/stat; do
		line=$(cat "$st" 2>/dev/null) || continue
		rest=${line##*) }
		# shellcheck disable=SC2086
		set -- "$1" $rest
		[ "$2" != Z ] && [ "$3" = "$1" ] && { pid=${st#/proc/}; echo "${pid%/stat}"; }
	done
	return 0
}

# Wait up to $2 tenths of a second for pid $1 to end.
wait_gone() {
	n=0
	while alive "$1" && [ "$n" -lt "$2" ]; do
		sleep 0.1
		n=$((n + 1))
	done
	! alive "$1"
}

# Stop one process we started: SIGTERM, then SIGKILL after 10 s.
stop_pid() {
	alive "$1" || return 0
	kill -TERM "$1" 2>/dev/null || true
	wait_gone "$1" 100 || kill -KILL "$1" 2>/dev/null || true
}

# Wait up to 10 s for a line matching $2 in file $1; print the match.
wait_line() {
	n=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		[ "$n" -lt 100 ] || return 1
		sleep 0.1
		n=$((n + 1))
	done
	grep -m1 "$2" "$1"
}

# Wait up to 10 s until 127.0.0.1:$1 accepts connections.
wait_port() {
	n=0
	while ! curl -s -o /dev/null -m 1 "http://127.0.0.1:$1/" 2>/dev/null; do
		[ "$n" -lt 100 ] || return 1
		sleep 0.1
		n=$((n + 1))
	done
}

# A free TCP port on 127.0.0.1 (bound and released by the kernel's pick).
free_port() {
	node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})' 2>/dev/null ||
	    awk 'BEGIN { srand(); print 20000 + int(rand() * 20000) }'
}

# Value of key $2 in the one-line JSON object $1 (numbers and booleans);
# "-" when missing.
jget() {
	v=$(printf '%s\n' "$1" | sed -n "s/.*\"$2\":\\([^,}]*\\).*/\\1/p")
	echo "${v:--}"
}

# Field $2 (VmRSS, RssAnon) of /proc/$1/status in kB (0 when gone).
rss_kb() {
	v=$(sed -n "s/^$2:[[:space:]]*\\([0-9]*\\) kB/\\1/p" "/proc/$1/status" 2>/dev/null || true)
	echo "${v:-0}"
}

# utime + stime of pid $1, in clock ticks.
cpu_ticks() {
	line=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
	# shellcheck disable=SC2086
	set -- ${line##*) }
	echo $((${12} + ${13}))
}

# Sum of cpu_ticks over the pids $@.
cpu_sum() {
	t=0
	for p in "$@"; do t=$((t + $(cpu_ticks "$p"))); done
	echo "$t"
}

# "VmRSS-of-first RssAnon-sum-of-the-rest" in kB, one awk for all.
mem_now() {
	first=$1
	shift
	files=
	for p in "$@"; do files="$files /proc/$p/status"; done
	# shellcheck disable=SC2086
	awk 'FNR == 1 { n++ }
	     n == 1 && /^VmRSS:/ { m = $2 }
	     n > 1 && /^RssAnon:/ { s += $2 }
	     END { printf "%d %d\n", m, s }' "/proc/$first/status" $files \
	    2>/dev/null || echo "0 0"
}

# Runs in the background until killed: every second, mem_now of the
# pids $2..., keeping the highest of each figure in file $1.
mem_sampler() {
	out=$1
	shift
	hi_m=0
	hi_s=0
	while :; do
		read -r m s <<EOF
$(mem_now "$@")
EOF
		[ "$m" -gt "$hi_m" ] && hi_m=$m
		[ "$s" -gt "$hi_s" ] && hi_s=$s
		echo "$hi_m $hi_s" >"$out.tmp" && mv "$out.tmp" "$out"
		sleep 1
	done
}

# "count min median max total" of field $1 (kB) over the pids $2...
rss_stats() {
	f=$1
	shift
	for w in "$@"; do rss_kb "$w" "$f"; done | sort -n |
	    awk '{ v[NR] = $1; t += $1 }
		END { if (NR == 0) { print "0 0 0 0 0"; exit }
		      printf "%d %d %d %d %d\n", NR, v[1], v[int((NR + 1) / 2)], v[NR], t }'
}

# a - b with three decimals (for the added-latency columns).
sub() {
	if [ "$1" = - ] || [ "$2" = - ]; then echo -; return; fi
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.3f", a - b }'
}

fmt_rps() {
	if [ "$1" = - ]; then echo -; return; fi
	awk -v a="$1" 'BEGIN { printf "%.0f", a }'
}

# Seconds of CPU from clock ticks.
ticks_s() {
	awk -v t="$1" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", t / hz }'
}

mib() {
	if [ "$1" = - ]; then echo -; return; fi
	awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'
}

# Microseconds of CPU per request: ticks $1 over $2 requests.
us_per() {
	awk -v t="$1" -v n="$2" -v hz="$(getconf CLK_TCK)" \
	    'BEGIN { if (n > 0) printf "%.0f", t / hz * 1e6 / n; else print "?" }'
}

# Sum of every request loadgen sent (all outcomes, warm-up included) in
# the result files $@.
sent() {
	cat "$@" 2>/dev/null | sed 's/[{}]//g' | tr ',' '\n' |
	    awk -F: '$1 ~ /^"(count|errors|warmup_count|warmup_errors)"$/ { t += $2 }
		END { printf "%d", t }'
}

# utime + stime summed over the pids $@ in clock ticks, one awk for
# all (cpu_sum forks per pid: too slow for a thousand workers). Pids
# that are gone count 0.
cpu_all() {
	files=
	for p in "$@"; do
		[ -r "/proc/$p/stat" ] && files="$files /proc/$p/stat"
	done
	[ -n "$files" ] || { echo 0; return; }
	# shellcheck disable=SC2086
	awk '{ sub(/.*\) /, ""); t += $12 + $13 } END { printf "%d\n", t }' \
	    $files 2>/dev/null || echo 0
}

# Microseconds of CPU: ticks $1 over $2 units, divided once more by $3
# (default 1), one decimal when below 10; "-" when there is nothing.
us_per3() {
	awk -v t="$1" -v n="$2" -v k="${3:-1}" -v hz="$(getconf CLK_TCK)" \
	    'BEGIN { if (n <= 0 || t == "-") { print "-"; exit }
		v = t / hz * 1e6 / n / k
		if (v < 10) printf "%.1f", v; else printf "%.0f", v }'
}
