#!/bin/bash
# The fix in the program's own words (docs/report.md, "The fix in the
# program's words"). Each program whose configuration the report reads runs
# under the shim in a network namespace of its own whose net.core.somaxconn
# is 64, twice: with its backlog set on a known line of a file it includes
# (200), and with nothing set (its default). The listen is clamped to 64, and
# the report's first item must lead with the sysctl in that namespace
# (ip netns exec NAME), give the /etc/sysctl.d file that keeps it, and name
# the FILE:LINE and directive that asked for the backlog, or say it is the
# program's default and where it comes from. python3: the call, no file.
# Every program is stopped as soon as its listen line is written; the
# programs run side by side, so the whole file takes a few seconds.
. "$(dirname "$0")/../lib.sh"; . "$TOP/tests/daemon_lib.sh"
skip_under_tsan "uninstrumented daemons under the TSan runtime report their own synchronisation as races"
need nginx haproxy redis-server /usr/sbin/apache2 lighttpd memcached
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
SMAX=64
CASES="nginx_set nginx_def haproxy_set haproxy_def redis_set redis_def apache_set apache_def lighttpd_set
	lighttpd_def memcached_set memcached_def python_call"
# nginx started with no -c reads its default path, /etc/nginx/nginx.conf
# (Debian's, with its default site): when the package's files are there.
NGDEF=/etc/nginx/sites-enabled/default
[ -f /etc/nginx/nginx.conf ] && [ -f $NGDEF ] && CASES="$CASES nginx_path"
[ -x "$PGBIN/postgres" ] && CASES="$CASES postgres_set postgres_def"
for c in $CASES; do
	ip netns add sa-fw-$c-$$ || { fail "ip netns add sa-fw-$c-$$"; finish; }
	on_exit "ip netns del sa-fw-$c-$$"
	ip -n sa-fw-$c-$$ link set lo up
	ip netns exec sa-fw-$c-$$ sysctl -qw net.core.somaxconn=$SMAX
	mkdir -p "$T/$c"
done
chmod 0755 "$T"

# run CASE SIGNAL CMD...: CMD under the shim in CASE's namespace until its log
# ($T/CASE/sa.jsonl: a program that drops its privileges creates it in its own folder)
# has a listen line and, with READY=FILE, FILE is there (at most 10 s in all), then
# SIGNAL and a bounded wait. A listen line alone is not enough for a program that sets
# options after listen() (apache's AcceptFilter sets TCP_DEFER_ACCEPT once every
# listener is open): READY names what the program writes when its set-up is over.
# setsid: apache signals its whole process group when it stops.
run() {
	local c=$1 sig=$2 i; shift 2
	setsid ip netns exec sa-fw-$c-$$ env SOCKAUDIT_LOG="$T/$c/sa.jsonl" LD_PRELOAD="$(preload_value)" "$@" \
		>"$T/$c.out" 2>&1 </dev/null &
	local pid=$!
	for i in $(seq 200); do
		grep -q '"event":"listen"' "$T/$c/sa.jsonl" 2>/dev/null && [ -z "$READY" -o -s "$READY" ] && break
		sleep 0.05
	done
	kill -$sig $pid 2>/dev/null
	timeout 5 tail --pid=$pid -f /dev/null || kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
}

nginx_case() {   # nginx_case CASE BACKLOG-WORDS
	local D=$T/$1
	mkdir -p "$D/sites"
	cat >"$D/nginx.conf" <<CONF
daemon off;
master_process off;
error_log $D/error.log;
pid $D/nginx.pid;
events { worker_connections 16; }
http {
    access_log off;
    client_body_temp_path $D; proxy_temp_path $D; fastcgi_temp_path $D; uwsgi_temp_path $D; scgi_temp_path $D;
    include sites/*.conf;
}
CONF
	printf 'server {\n    server_name app;\n    listen 127.0.0.1:8080%s;\n}\n' "$2" >"$D/sites/app.conf"
	run $1 TERM nginx -c "$D/nginx.conf"
}
haproxy_case() {   # haproxy_case CASE BACKLOG-WORDS: -f a file and -f a folder
	local D=$T/$1
	mkdir -p "$D/conf.d"
	printf 'global\n    maxconn 500\ndefaults\n    mode tcp\n    timeout connect 1s\n    timeout client 1s\n    timeout server 1s\n' >"$D/haproxy.cfg"
	printf 'frontend fe\n    maxconn 300\n    bind 127.0.0.1:8080%s\n    default_backend be\nbackend be\n    server s1 127.0.0.1:9\n' "$2" >"$D/conf.d/10-fe.cfg"
	run $1 USR1 haproxy -db -f "$D/haproxy.cfg" -f "$D/conf.d"
}
redis_case() {   # redis_case CASE LOCAL-LINE
	local D=$T/$1
	printf 'port 6379\nbind 127.0.0.1\nsave ""\ndir %s\ninclude %s/local.conf\n' "$D" "$D" >"$D/redis.conf"
	printf '# this host\n%s\n' "$2" >"$D/local.conf"
	run $1 TERM redis-server "$D/redis.conf"
}
apache_case() {   # apache_case CASE BACKLOG-LINE
	local D=$T/$1 M=/usr/lib/apache2/modules
	mkdir -p "$D/conf.d" "$D/www"
	cat >"$D/apache2.conf" <<CONF
ServerName localhost
Listen 127.0.0.1:8080
PidFile $D/httpd.pid
DefaultRuntimeDir $D
Mutex file:$D default
ErrorLog $D/error.log
LoadModule mpm_prefork_module $M/mod_mpm_prefork.so
LoadModule authz_core_module $M/mod_authz_core.so
User www-data
Group www-data
StartServers 1
AcceptFilter http none
DocumentRoot $D/www
IncludeOptional conf.d/*.conf
CONF
	printf '# queue\n%s\n' "$2" >"$D/conf.d/backlog.conf"
	# apache_def keeps apache's default deferral (AcceptFilter http data).
	[ $1 = apache_def ] && sed -i '/^AcceptFilter/d' "$D/apache2.conf"
	# Its pid file is written after ap_setup_listeners() has set every accept filter.
	READY=$D/httpd.pid run $1 TERM /usr/sbin/apache2 -d "$D" -f apache2.conf -DFOREGROUND
}
lighttpd_case() {   # lighttpd_case CASE BACKLOG-LINE
	local D=$T/$1
	mkdir -p "$D/conf.d" "$D/www"
	printf 'server.document-root = "%s/www"\nserver.bind = "127.0.0.1"\nserver.port = 8080\nserver.errorlog = "%s/error.log"\ninclude "conf.d/*.conf"\n' "$D" "$D" >"$D/lighttpd.conf"
	printf '# queue\n%s\n' "$2" >"$D/conf.d/backlog.conf"
	run $1 TERM lighttpd -D -f "$D/lighttpd.conf"
}
postgres_cases() {   # initdb once, a copy for each case, started as the postgres user
	local D=$T/pg U=postgres
	id -u $U >/dev/null 2>&1 || U=nobody
	mkdir -p "$D" && chown $U "$D" "$T/postgres_set" "$T/postgres_def"
	# setpriv execs (runuser would fork and keep the signal to itself).
	local AS="setpriv --reuid=$U --regid=$(id -g $U) --init-groups"
	timeout 30 $AS "$PGBIN/initdb" -D "$D/set" -A trust --no-sync >"$T/initdb.out" 2>&1 ||
		{ echo "initdb failed: $(tail -2 "$T/initdb.out")" >"$T/postgres_set.out"; cp "$T/postgres_set.out" "$T/postgres_def.out"; return; }
	cp -a "$D/set" "$D/def"
	$AS sh -c "mkdir $D/set/conf.d && printf '# connections\nmax_connections = 50\n' >$D/set/conf.d/10-conn.conf && echo \"include_dir 'conf.d'\" >>$D/set/postgresql.conf"
	$AS sed -i '/^max_connections/d' "$D/def/postgresql.conf"
	run postgres_set QUIT $AS "$PGBIN/postgres" -D "$D/set" -k "$D/set" -c listen_addresses=127.0.0.1 &
	run postgres_def QUIT $AS "$PGBIN/postgres" -D "$D/def" -k "$D/def" -c listen_addresses=127.0.0.1 &
	wait
}

nginx_case nginx_set " backlog=200" & nginx_case nginx_def "" &
haproxy_case haproxy_set " backlog 200" & haproxy_case haproxy_def "" &
redis_case redis_set "tcp-backlog 200" & redis_case redis_def "" &
apache_case apache_set "ListenBacklog 200" & apache_case apache_def "" &
lighttpd_case lighttpd_set "server.listen-backlog = 200" & lighttpd_case lighttpd_def "" &
chown nobody "$T/memcached_set" "$T/memcached_def"
run memcached_set TERM memcached -u nobody -l 127.0.0.1 -p 11211 -U 0 -b 200 &
run memcached_def TERM memcached -u nobody -l 127.0.0.1 -p 11211 -U 0 &
case " $CASES " in *" nginx_path "*)
	run nginx_path TERM nginx -g 'daemon off; master_process off;' & ;;
esac
run python_call TERM python3 -c 'import socket, time; s = socket.socket(); s.bind(("127.0.0.1", 8080)); s.listen(511); time.sleep(10)' &
[ -x "$PGBIN/postgres" ] && postgres_cases &
wait

# first CASE: the report's first item as printed, and its --json fix.
first() {
	"$SA" report "$T/$1/sa.jsonl" | awk '/^== Fix first/ {f = 1; next} /^==/ {f = 0} f' |
		awk '/^  1\./ {p = 1} /^  2\./ {p = 0} p' >"$T/$1.first"
	"$SA" report --json "$T/$1/sa.jsonl" | jq -c '.fix_first[0].fix' >"$T/$1.fix"
	echo "# $1:"; sed 's/^/#   /' "$T/$1.first"
}
# expect CASE WANT-SYSCTL FILE:LINE DIRECTIVE-OR-WORDS...: the first item says each, in order of lines.
expect() {
	local c=$1 n=$2 at=$3 w; shift 3
	first $c
	local txt=$(cat "$T/$c.first")
	if ! grep -q '"event":"listen"' "$T/$c/sa.jsonl" 2>/dev/null; then fail "$c: the program listened under the shim" "$(tail -3 "$T/$c.out")"; return; fi
	check "$c: the first item is ${CODE:-backlog_clamped}" grep -q "^  1\. ${CODE:-backlog_clamped}:" "$T/$c.first"
	check "$c: it leads with the sysctl in the listener's namespace" \
		[ "$(sed -n 2p "$T/$c.first" | sed 's/^ *//')" = "Fix: ip netns exec sa-fw-$c-$$ sysctl -w net.core.somaxconn=$n" ]
	check "$c: it says how to keep it (/etc/sysctl.d)" grep -q "keep it: echo net.core.somaxconn=$n > /etc/sysctl.d/60-sockaudit.conf" "$T/$c.first"
	if [ -n "$at" ]; then
		check "$c: it names $at" grep -qF " at $at (" "$T/$c.first"
	else
		check "$c: it names no file" bash -c "! grep -q ' at /' '$T/$c.first'"
	fi
	for w in "$@"; do check "$c: it says: $w" grep -qF -- "$w" "$T/$c.first"; done
}
expect nginx_set 200 "$T/nginx_set/sites/app.conf:3" "nginx asked for 200" "(listen 127.0.0.1:8080 backlog=200;)"
expect nginx_def 511 "$T/nginx_def/sites/app.conf:3" "(listen 127.0.0.1:8080;)" "no backlo""g=, so nginx asks for 511" \
	"its own setting: listen 127.0.0.1:8080 backlog=N;  (instead of line 3 of $T/nginx_def/sites/app.conf"
expect haproxy_set 200 "$T/haproxy_set/conf.d/10-fe.cfg:3" "(bind 127.0.0.1:8080 backlog 200)"
expect haproxy_def 300 "$T/haproxy_def/conf.d/10-fe.cfg:2" "(maxconn 300)" "derives it from maxconn" \
	"its own setting: bind 127.0.0.1:8080 backlog N  (instead of line 3 of $T/haproxy_def/conf.d/10-fe.cfg"
expect redis_set 200 "$T/redis_set/local.conf:2" "(tcp-backlog 200)"
expect redis_def 511 "" "$T/redis_def/redis.conf sets no tcp-backlog: redis's default is 511" \
	"its own setting: tcp-backlog N  (as a line of $T/redis_def/redis.conf"
expect apache_set 200 "$T/apache_set/conf.d/backlog.conf:2" "(ListenBacklog 200)"
# With apache's deferral the first item is defer_bypass_risk, whose remedy is the same backlog.
CODE=defer_bypass_risk expect apache_def 511 "$T/apache_def/apache2.conf:2" "(Listen 127.0.0.1:8080)" "no ListenBacklog is written: apache asks for 511" \
	"its own setting: ListenBacklog N  (beside \`Listen 127.0.0.1:8080\` (line 2 of $T/apache_def/apache2.conf)"
expect lighttpd_set 200 "$T/lighttpd_set/conf.d/backlog.conf:2" "(server.listen-backlog = 200)"
expect lighttpd_def 1024 "" "no server.listen-backlog is written: lighttpd asks for 1024" \
	"its own setting: server.listen-backlog = N  (as a line of $T/lighttpd_def/lighttpd.conf"
expect memcached_set 200 "" "set on its command line (-b 200)"
expect memcached_def 1024 "" "memcached was started without -b: it asks for 1024" "its own setting: -b N  (on memcached's command line"
expect python_call 511 "" "python3 (pid" "called listen(fd, 511); the report knows no configuration of python3"
check "python_call: no setting of its own is invented" bash -c "! grep -q 'its own setting' '$T/python_call.first'"
if [ -x "$PGBIN/postgres" ]; then
	pgn=$(jq -r 'select(.event=="listen") | .backlog_requested' "$T/postgres_set/sa.jsonl" | head -1)
	expect postgres_set "$pgn" "$T/pg/set/conf.d/10-conn.conf:2" "(max_connections = 50)" "postgres has no backlog setting"
	pgn=$(jq -r 'select(.event=="listen") | .backlog_requested' "$T/postgres_def/sa.jsonl" | head -1)
	expect postgres_def "$pgn" "" "max_connections is not written: its default is 100" \
		"its own setting: max_connections = N  (as a line of $T/pg/def/postgresql.conf"
else
	echo "# skip: postgres is not installed (scripts/ensure-deps.sh daemons installs postgresql)"
fi
check_jq "nginx_set --json: the fix names the file, line, directive and sysctl" "$T/nginx_set.fix" \
	".[0] | .program==\"nginx\" and .origin==\"set\" and .file==\"$T/nginx_set/sites/app.conf\" and .line==3 and .directive==\"listen 127.0.0.1:8080 backlog=200;\" and (.sysctl|startswith(\"ip netns exec sa-fw-nginx_set-$$ \")) and (.sysctl_keep|test(\"/etc/sysctl.d/\"))"
if [ -n "${NGDEF:-}" ] && case " $CASES " in *" nginx_path "*) true ;; *) false ;; esac; then
	# Its first listen in that file, read here: the report must name it.
	l=$(grep -nE '^[[:space:]]*listen[[:space:]]' $NGDEF | head -1 | cut -d: -f1)
	d=$(sed -n "${l}p" $NGDEF | sed 's/^[[:space:]]*//')
	first nginx_path
	check "nginx_path (no -c): the first item names $NGDEF:$l ($d), reached from /etc/nginx/nginx.conf" \
		grep -qF " at $NGDEF:$l ($d)" "$T/nginx_path.first"
	check "nginx_path: and leads with the sysctl in its namespace" \
		grep -q "Fix: ip netns exec sa-fw-nginx_path-$$ sysctl -w net.core.somaxconn=511" "$T/nginx_path.first"
else
	echo "ok - nginx_path # SKIP no /etc/nginx/nginx.conf with a default site here"
fi
check_jq "python_call --json: no file, the call" "$T/python_call.fix" '.[0] | .origin=="unknown" and .file==null and .line==null and (.why|test("listen\\(fd, 511\\)"))'
"$SA" report --html "$T/nginx_set.html" "$T/nginx_set/sa.jsonl"
check "nginx_set --html: Fix first shows the sysctl and the file:line" grep -q "<div class=fix><b>Fix: ip netns exec sa-fw-nginx_set-$$ sysctl -w net.core.somaxconn=200</b>.*app.conf:3" "$T/nginx_set.html"
[ -n "${KEEP:-}" ] && cp -r "$T" "$KEEP"
finish
