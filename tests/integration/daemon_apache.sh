#!/bin/bash
# apache2 prefork with a graceful stop (suite of real daemons;
# exit() from a signal handler lost the summary). apache2
# -DFOREGROUND, StartServers 3, N HTTP/1.0 GETs from 4 threads, then
# `apache2 -k graceful-stop`; and a second round stopped with SIGTERM (the
# children then exit from prefork's just_die handler). Plain and under the
# shim (default level): the replies and apache's access log must count N; the
# children's summaries and listener_stats must be there and add up to N;
# every process that wrote init wrote a summary; every line parses.
. "$(dirname "$0")/../lib.sh"; . "$TOP/tests/daemon_lib.sh"
skip_under_tsan "an uninstrumented multi-threaded daemon under the TSan runtime reports its own synchronisation as races"
need /usr/sbin/apache2
N=60
M=/usr/lib/apache2/modules
mkdir -p "$T/www" "$T/logs"; echo hello >"$T/www/index.html"
chmod 0755 "$T"; chmod 0777 "$T/logs"   # children run as www-data
run() {   # run NAME STOP(graceful-stop|TERM) SHIM(0|1)
	local name=$1 stop=$2 shim=$3 P=$(free_port) pre=()
	[ "$shim" = 1 ] && pre=(env SOCKAUDIT_LOG="$T/logs/$name.jsonl" LD_PRELOAD="$(preload_value)")
	mkdir -p "$T/$name"
	cat >"$T/$name.conf" <<CONF
ServerRoot $T/$name
ServerName localhost
Listen 127.0.0.1:$P
PidFile $T/$name/httpd.pid
DefaultRuntimeDir $T/$name
Mutex file:$T/$name default
ErrorLog $T/logs/$name.error
LogFormat "%h %>s" short
CustomLog $T/logs/$name.access short
LoadModule mpm_prefork_module $M/mod_mpm_prefork.so
LoadModule authz_core_module $M/mod_authz_core.so
LoadModule dir_module $M/mod_dir.so
User www-data
Group www-data
StartServers 3
MinSpareServers 3
MaxSpareServers 5
MaxRequestWorkers 10
KeepAlive Off
DocumentRoot $T/www
<Directory $T/www>
  Require all granted
</Directory>
CONF
	# setsid: prefork signals its whole process group (killpg) when it stops.
	setsid "${pre[@]}" /usr/sbin/apache2 -f "$T/$name.conf" -DFOREGROUND 2>"$T/$name.err" &
	local apid=$!
	on_exit "kill -9 $apid; pkill -9 -P $apid"
	wait_port $P || { fail "$name: apache2 listens" "$(tail -3 "$T/$name.err" "$T/logs/$name.error")"; return; }
	timeout 30 bash -c "$(declare -f http_get); PY=$PY http_get $P $N 4 /index.html" >"$T/$name.cl" 2>&1; echo $? >"$T/$name.cl.rc"
	if [ "$stop" = graceful-stop ]; then timeout 10 /usr/sbin/apache2 -f "$T/$name.conf" -k graceful-stop
	else kill -TERM $apid; fi
	timed stop 15 tail --pid=$apid -f /dev/null
	timed_out $stop_rc && fail "$name: apache2 stops within 15 s of $stop"
	wait $apid; echo $? >"$T/$name.rc"
	echo "$apid $P" >"$T/$name.info"
}
run plain_graceful graceful-stop 0
run shim_graceful graceful-stop 1
run plain_term TERM 0
run shim_term TERM 1
for r in graceful term; do
	for m in plain shim; do
		n=${m}_$r
		check "$n: client exit $(cat "$T/$n.cl.rc"), replies 200/other: $(cat "$T/$n.cl")" [ "$(cat "$T/$n.cl.rc") $(cat "$T/$n.cl")" = "0 $N 0" ]
		check "$n: apache's access log has $N requests ($(wc -l <"$T/logs/$n.access"))" [ "$(wc -l <"$T/logs/$n.access")" = $N ]
	done
	check "$r: same exit status (plain $(cat "$T/plain_$r.rc"), shim $(cat "$T/shim_$r.rc"))" [ "$(cat "$T/plain_$r.rc")" = "$(cat "$T/shim_$r.rc")" ]
	L=$T/logs/shim_$r.jsonl
	[ -s "$L" ] || { fail "$r: the shim wrote a log" "$L missing or empty"; continue; }
	json_lines "$r: every log line parses" "$L"
	read -r apid P <"$T/shim_$r.info"
	check "$r: the parent wrote its summary" grep -q "\"event\":\"summary\".*\"pid\":$apid," "$L"
	n=$(accepts_on "$L" $P) s=$(stats_accepts_on "$L" $P)
	own=$(wc -l <"$T/logs/shim_$r.access")
	check "$r: the children's summaries: accepts on :$P add up to $n, apache's access log $own" [ "$n" = "$own" ]
	check "$r: the children's listener_stats: accepts on :$P add up to $s, apache's access log $own" [ "$s" = "$own" ]
	np=$(jqs "$L" '[.[] | select(.event=="init") | .pid] | unique | length')
	nos=$(jqs "$L" '([.[] | select(.event=="init") | .pid] | unique) - ([.[] | select(.event=="summary") | .pid] | unique) | length')
	check "$r: every apache process that wrote init wrote a summary ($nos of $np without)" [ "$nos" = 0 ]
done
finish
