#!/bin/bash
# sockaudit metrics against the real things: promtool's lint, Debian's
# node_exporter reading --textfile output, Debian's Prometheus scraping
# node_exporter and `sockaudit metrics --listen`; --follow picking up a
# growing log and a new %p file. Every value is checked against the
# processes' own summaries and the counts the test made.
. "$(dirname "$0")/../lib.sh"
PY=/usr/bin/python3
SA="$TOP/sockaudit"
for b in promtool prometheus prometheus-node-exporter curl; do
	command -v $b >/dev/null || { fail "metrics: $b is needed" "scripts/ensure-deps.sh fleet"; finish; }
done
K=25
# A server that accepts K connections it makes itself, and one connect
# to a port nobody listens on: per run K accepts, K ok and 1 failed connect.
prog='
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(int(sys.argv[1]))
for i in range('$K'):
    c = socket.create_connection(s.getsockname()); a, _ = s.accept(); a.close(); c.close()
d = socket.socket(); d.bind(("127.0.0.1", 0)); port = d.getsockname()[1]; d.close()
try: socket.create_connection(("127.0.0.1", port))
except OSError: pass'
mkdir -p "$T/logs" "$T/tf" "$T/flog" "$T/tf2" "$T/prom"
run() { SOCKAUDIT_LEVEL=${LVL:-info} SOCKAUDIT_LOG="$1/sa.%p.jsonl" preload $PY -c "$prog" "$2"; }
# Two runs (a restart): the counters are the sums. One at trace, one at
# info, with a clamped backlog in the second.
LVL=trace run "$T/logs" 16
run "$T/logs" 60000
cat "$T"/logs/*.jsonl >"$T/all.jsonl"
acc=$(jq -s '[.[] | select(.event=="summary") | .listeners[]?.accepts] | add' "$T/all.jsonl")
cok=$(jq -s '[.[] | select(.event=="summary") | .connects.ok] | add' "$T/all.jsonl")
cfail=$(jq -s '[.[] | select(.event=="summary") | .connects.failed] | add' "$T/all.jsonl")
check "the runs' summaries say $((2 * K)) accepts, $((2 * K)) connects ok, 2 failed" \
	test "$acc/$cok/$cfail" = "$((2 * K))/$((2 * K))/2"

"$SA" metrics "$T"/logs/*.jsonl >"$T/out.prom"
check "promtool check metrics passes" promtool check metrics <"$T/out.prom"
val() { awk -v m="$1" 'index($0, m) == 1 { s += $NF } END { print s + 0 }' "$2"; }
check "sockaudit_accepts_total = the summaries' accepts ($acc)" \
	test "$(val 'sockaudit_accepts_total{comm="python3"' "$T/out.prom")" = "$acc"
check "sockaudit_connects_total ok/failed = the summaries' ($cok/$cfail)" \
	test "$(val 'sockaudit_connects_total{comm="python3",outcome="ok"}' "$T/out.prom")/$(val 'sockaudit_connects_total{comm="python3",outcome="failed"}' "$T/out.prom")" = "$cok/$cfail"
check "connect histogram: _count = connects ok, +Inf bucket = _count" \
	test "$(val 'sockaudit_connect_duration_seconds_count{comm="python3"}' "$T/out.prom")/$(val 'sockaudit_connect_duration_seconds_bucket{comm="python3",le="+Inf"}' "$T/out.prom")" = "$cok/$cok"
sum_ms=$(jq -s '[.[] | select(.event=="summary") | .connect_ms_sum] | add / 1000' "$T/all.jsonl")
check "connect histogram: _sum = the summaries' connect_ms_sum" \
	awk -v a="$(val 'sockaudit_connect_duration_seconds_sum{comm="python3"}' "$T/out.prom")" -v b="$sum_ms" 'BEGIN { d = a - b; exit !(d < 1e-6 && d > -1e-6 && a > 0) }'
check "listen backlog: requested 60000 (above somaxconn, below 65535, the largest taken at its word), effective below it; findings counted" \
	bash -c "grep -q 'sockaudit_listen_backlog{comm=\"python3\",listener=\"127.0.0.1:[0-9]*\",kind=\"requested\"} 60000' '$T/out.prom' &&
	         grep -q 'sockaudit_findings_total{comm=\"python3\",code=\"backlog_clamped\"} 1' '$T/out.prom'"
# Peers: at trace the K+1 connect lines; --top-peers 0 puts them all in "other".
"$SA" metrics --top-peers 0 "$T"/logs/*.jsonl >"$T/top0.prom"
check "--top-peers 0: every peer is \"other\"" \
	test "$(grep -c '^sockaudit_connect_lines_total' "$T/top0.prom")/$(grep -c '^sockaudit_connect_lines_total.*peer="other"' "$T/top0.prom")" = "2/2"

# node_exporter's textfile collector over --textfile.
"$SA" metrics --textfile "$T/tf/sockaudit.prom" "$T/logs"
check "--textfile leaves only the .prom file (no temporary)" test "$(ls -A "$T/tf")" = sockaudit.prom
NE=$(free_port)
prometheus-node-exporter --web.listen-address=127.0.0.1:$NE --collector.disable-defaults --collector.textfile \
	--collector.textfile.directory="$T/tf" >"$T/ne.log" 2>&1 &
NEPID=$!
on_exit "kill $NEPID 2>/dev/null"
wait_port $NE
curl -s "http://127.0.0.1:$NE/metrics" >"$T/ne.out"
check "node_exporter: our series, node_textfile_scrape_error 0" \
	bash -c "grep -q '^sockaudit_accepts_total{comm=\"python3\"' '$T/ne.out' && grep -qx 'node_textfile_scrape_error 0' '$T/ne.out'"

# --listen, scraped by curl and by Prometheus.
LP=$(free_port)
"$SA" metrics --listen 127.0.0.1:$LP --interval 0.2 "$T/logs" 2>"$T/listen.err" &
LPID=$!
on_exit "kill $LPID 2>/dev/null"
wait_port $LP
curl -s "http://127.0.0.1:$LP/metrics" >"$T/listen.prom"
check "--listen answers GET /metrics with what the logs hold" cmp -s "$T/listen.prom" "$T/out.prom"
check "--listen: anything else is 404" test "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$LP/")" = 404

PP=$(free_port)
cat >"$T/prom/prometheus.yml" <<YML
global: { scrape_interval: 1s, evaluation_interval: 1s }
scrape_configs:
  - job_name: node
    static_configs: [ { targets: ['127.0.0.1:$NE'] } ]
  - job_name: direct
    static_configs: [ { targets: ['127.0.0.1:$LP'] } ]
YML
prometheus --config.file="$T/prom/prometheus.yml" --storage.tsdb.path="$T/prom/data" \
	--web.listen-address=127.0.0.1:$PP >"$T/prom.log" 2>&1 &
PPID_=$!
on_exit "kill $PPID_ 2>/dev/null; wait $PPID_ 2>/dev/null"
q() { curl -s --get "http://127.0.0.1:$PP/api/v1/query" --data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // empty' 2>/dev/null; }
got_node="" got_direct=""
for _ in $(seq 150); do
	got_node=$(q 'sum(sockaudit_accepts_total{job="node"})')
	got_direct=$(q 'sum(sockaudit_accepts_total{job="direct"})')
	[ -n "$got_node" ] && [ -n "$got_direct" ] && break
	sleep 0.2
done
check "Prometheus via node_exporter: sum(sockaudit_accepts_total) = $acc (got ${got_node:-nothing})" test "$got_node" = "$acc"
check "Prometheus scraping --listen: sum(sockaudit_accepts_total) = $acc (got ${got_direct:-nothing})" test "$got_direct" = "$acc"
check "Prometheus: the histogram's count = connects ok" \
	test "$(q 'sum(sockaudit_connect_duration_seconds_count{job="direct"})')" = "$cok"

# --follow: a log that grows and a new %p file matching the glob.
"$SA" metrics --follow --interval 0.1 --textfile "$T/tf2/s.prom" "$T/flog/sa.*.jsonl" 2>"$T/follow.err" &
FPID=$!
on_exit "kill $FPID 2>/dev/null"
wait_acc() {   # wait_acc N: the textfile says N accepts
	for _ in $(seq 100); do
		[ "$(val 'sockaudit_accepts_total{comm="python3"' "$T/tf2/s.prom" 2>/dev/null)" = "$1" ] && return 0
		sleep 0.05
	done
	return 1
}
run "$T/flog" 16
check "--follow: a new file matching the glob is read ($K accepts)" wait_acc $K
run "$T/flog" 16
check "--follow: the next run's file adds up ($((2 * K)) accepts)" wait_acc $((2 * K))
# A live process's log growing: listener_stats every interval.
SOCKAUDIT_STATS_INTERVAL=1 SOCKAUDIT_LOG="$T/flog/sa.%p.jsonl" preload $PY -c '
import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
for i in range(7):
    c = socket.create_connection(s.getsockname()); a, _ = s.accept(); a.close(); c.close()
time.sleep(1.2)
c = socket.create_connection(s.getsockname()); a, _ = s.accept()
time.sleep(3)' &
GPID=$!
check "--follow: a running process's listener_stats are read as its log grows" \
	bash -c "$(declare -f wait_acc val); T='$T' wait_acc $((2 * K + 8)) && kill -0 $GPID"
wait $GPID
# Four passes with nothing new: every log closed again (stat() alone
# watches them), so a follower of thousands of %p files holds no fd each.
sleep 1
nfd=$(for l in /proc/$FPID/fd/*; do readlink "$l"; done | grep -c "^$T/flog/")
check "--follow: idle logs are closed ($nfd of them open)" test "$nfd" = 0
run "$T/flog" 16 >/dev/null
check "--follow: a closed log's directory still yields the next file ($((3 * K + 8)) accepts)" wait_acc $((3 * K + 8))
kill $FPID; wait $FPID 2>/dev/null
check "--follow ends cleanly on SIGTERM, with nothing on stderr" test ! -s "$T/follow.err"
finish
