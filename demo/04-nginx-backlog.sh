#!/bin/bash
# Scenario 4: real nginx, `listen ... deferred`, default backlog, in a network
# namespace whose somaxconn is 128.  Runs alone (as root): demo/04-nginx-backlog.sh
. "$(dirname "$0")/lib.sh"
NAME="4 nginx backlog clamped"
PORT=8004
heading "4. Real nginx: backlog 511 asked, 128 kept; deferred means 1 second"
say "An unmodified nginx (nginx-light) with 'listen 127.0.0.1:$PORT deferred;' and its default" \
    "backlog, 511, runs in a network namespace where net.core.somaxconn is 128: somaxconn is" \
    "per namespace, so a container can have a lower one than its host. listen() succeeds and" \
    "says nothing; the shim reads the backlog back from the kernel. 'deferred' sets" \
    "TCP_DEFER_ACCEPT, and nginx's source hard-codes the value 1: the shim reads 1 back."
need_built || verdict "$NAME"
netns_new nginx || { fail "could not create a network namespace (root needed)"; verdict "$NAME"; }
ip netns exec "$NS" sysctl -qw net.core.somaxconn=128
LOG=$LOGS/04-nginx-backlog.jsonl
rm -f "$LOG"
nginx_start "$NS" "$LOG" "	server { listen 127.0.0.1:$PORT deferred; location / { return 200 \"hello from nginx\\n\"; } }" ||
	verdict "$NAME"
wait_listen $PORT "$NS" || fail "nginx did not listen (see below)"
sub "nginx answers (curl inside the namespace):"
ip netns exec "$NS" curl -s -m 3 "http://127.0.0.1:$PORT/" 2>&1 | show
sub "The kernel's own view (ss -ltn: Send-Q is the backlog it kept):"
ip netns exec "$NS" ss -ltn "sport = :$PORT" | show
nginx_stop
[ -s "$NGX/error.log" ] && { sub "nginx error.log:"; tail -5 "$NGX/error.log" | show; }
have_log "$LOG"

sub "The shim's listen and TCP_DEFER_ACCEPT events from nginx:"
show_ev 'select(.event == "listen" or (.event == "setsockopt" and .opt == "TCP_DEFER_ACCEPT"))' "$LOG"
n_listen=$(js '[.[] | select(.event == "listen")] | length' "$LOG" 2>/dev/null)
[ "${n_listen:-0}" -gt 1 ] && say "(nginx called listen() $n_listen times on the socket; the shim logs each call.)"
sub "Checks"
expect "listen: backlog_requested 511, backlog_effective 128, finding backlog_clamped" \
	jtrue 'any(.[]; .event == "listen" and .backlog_requested == 511 and .backlog_effective == 128
	       and found("backlog_clamped"))' "$LOG"
expect "TCP_DEFER_ACCEPT: requested 1, read back 1" \
	jtrue 'any(.[]; .event == "setsockopt" and .opt == "TCP_DEFER_ACCEPT" and .requested_s == 1 and .effective_s == 1)' "$LOG"
verdict "$NAME"
