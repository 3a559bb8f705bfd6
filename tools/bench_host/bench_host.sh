#!/bin/sh
# make bench-host: ns per 16-byte trace event on this Linux host, our ring
# buffer (trace/ring_buffer.c, the kernel's CPU-local operations) with 1
# and 2 writer threads, through the kernel's emit path (rb_emit_fast(),
# the main figure) and through the general reserve/write/commit path,
# beside LTTng-UST writing an event of the same size into a
# flight-recorder (snapshot) session, and the ratios. The host's load
# average is printed first: wall-clock figures on a busy machine are
# inflated by whatever else runs.
#
# LTTng-UST needs Debian's liblttng-ust-dev and lttng-tools. This script
# starts its own session daemon (user-space domain only, --no-kernel) and
# stops it again; if another session daemon already answers, it leaves
# that one alone and skips the comparison. Host timings: not a kernel
# figure and not a TCG figure.
set -u
B=${BUILD:-build}/bench-host
EVENTS=${EVENTS:-2000000}
mkdir -p "$B"
CC="gcc -O2 -std=gnu11 -Wall -Wextra -Werror -I. -Iarch/x86_64/include -pthread"
SRCS="tools/bench_host/trace_bench.c trace/ring_buffer.c tests/host/host_cycles.c"
$CC -o "$B/trace_bench" $SRCS || exit 1

ust=no
for inc in /usr/include/x86_64-linux-gnu /usr/include; do
	if [ -e "$inc/lttng/tracepoint.h" ] && command -v lttng-sessiond >/dev/null; then
		$CC -I"$inc" -DWITH_LTTNG_UST -o "$B/trace_bench_ust" $SRCS \
			-llttng-ust -ldl && ust=yes
		break
	fi
done

# Best of REPS runs: the machine may be shared, and interference only
# ever adds time.
REPS=${REPS:-3}
best() {
	bin=$1 t=$2 path=${3:-} out= min=
	for r in $(seq "$REPS"); do
		line=$("$bin" "$t" "$EVENTS" $path) || return 1
		v=$(echo "$line" | sed -n 's/.*ns_per_event=\([0-9.]*\).*/\1/p')
		if [ -z "$min" ] || awk -v a="$v" -v b="$min" 'BEGIN { exit !(a < b) }'; then
			min=$v out=$line
		fi
	done
	echo "$out (best of $REPS)"
}
echo "bench-host: host load average (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
ours1=$(best "$B/trace_bench" 1 fast) || exit 1
ours2=$(best "$B/trace_bench" 2 fast) || exit 1
gen1=$(best "$B/trace_bench" 1 general) || exit 1
gen2=$(best "$B/trace_bench" 2 general) || exit 1
echo "$ours1"
echo "$ours2"
echo "$gen1"
echo "$gen2"
[ $ust = yes ] || { echo "bench-host: LTTng-UST not installed: no comparison"; exit 0; }

if lttng list >/dev/null 2>&1; then
	echo "bench-host: a session daemon is already running (not ours): no comparison"
	exit 0
fi
work=$(mktemp -d)
lttng-sessiond --no-kernel --daemonize >"$work/sessiond.log" 2>&1 || {
	echo "bench-host: lttng-sessiond did not start"; cat "$work/sessiond.log"; exit 1; }
# No daemon answered before, so the lttng-sessiond processes now running
# (the daemon and its helper) are the ones just started; stopping them
# also stops the consumer daemons they spawned.
daemon=$(pgrep -x lttng-sessiond | tr '\n' ' ')
cleanup() {
	lttng destroy bench-host >/dev/null 2>&1
	[ -n "$daemon" ] && kill $daemon 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
lttng create bench-host --snapshot --output="$work/trace" >/dev/null &&
	lttng enable-event -u 'bench:ev' >/dev/null &&
	lttng start >/dev/null || { echo "bench-host: could not set up the LTTng session"; exit 1; }
ust1=$(best "$B/trace_bench_ust" 1) || exit 1
ust2=$(best "$B/trace_bench_ust" 2) || exit 1
lttng stop >/dev/null 2>&1
echo "$ust1"
echo "$ust2"
ns() { echo "$1" | sed -n 's/.*ns_per_event=\([0-9.]*\).*/\1/p'; }
for t in 1 2; do
	eval o=\$ours$t g=\$gen$t u=\$ust$t
	awk -v o="$(ns "$o")" -v g="$(ns "$g")" -v u="$(ns "$u")" -v t=$t 'BEGIN {
		printf "bench-host: %d thread(s): ours (fast path) %.2f ns/event, LTTng-UST %.2f ns/event, ours / LTTng-UST = %.3f (goal <= 0.333)\n", t, o, u, o / u
		printf "bench-host: %d thread(s): ours (general path) %.2f ns/event, ours / LTTng-UST = %.3f\n", t, g, g / u }'
done
