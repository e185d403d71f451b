#!/bin/bash
# An exec whose environment no longer preloads the shim is said in one
# exec_unaudited line (the program, the call, whether the environment was
# replaced), written before the exec replaces the process: from a fork child,
# a vfork child (its own pid, only into a log file already open), a signal
# handler, posix_spawn (from the parent), a process that made no socket call
# before (set up for it); none when the environment keeps LD_PRELOAD. Real cases: nginx's binary upgrade (USR2; its default passes
# only NGINX to the new binary, and `env LD_PRELOAD; env SOCKAUDIT_LOG;`
# keeps the new binary audited) and systemd-socket-activate.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/life_lib.sh"

# 1. Our program, each way of exec'ing.
for m in env keep execle unset vfork spawn handler; do
	L="$T/$m.jsonl"
	LR_LOG=$L life_shim "$T/$m" 10 info "$PROGS/life_exec" $m
	read -r _ cpid _ cst < "$T/$m.out"
	if [ "$LR_RC" != 0 ] || [ "${cst:-}" != 0 ]; then fail "$m: the program and its exec work under the shim" "exit $LR_RC, child status ${cst:-?}"; continue; fi
	life_parses "$m: log parses" "$L"
	if [ $m = keep ]; then
		check_jq "$m: environment kept: no exec_unaudited" "$L" 'all(.[]; .event != "exec_unaudited")'
		continue
	fi
	case $m in
	spawn) want_pid=$(jq -s '[.[] | select(.event=="init")][0].pid' "$L"); call=posix_spawn ;;
	unset) want_pid=$cpid; call=execv ;;
	*) want_pid=$cpid; call=execve ;;
	esac
	[ $m = unset ] && repl=false || repl=true
	check_jq "$m: one exec_unaudited (pid $want_pid, call $call, program /bin/true, env_replaced $repl)" "$L" \
		"[.[] | select(.event==\"exec_unaudited\")] | length == 1 and .[0].pid == $want_pid and .[0].call == \"$call\" and
		 .[0].program == \"/bin/true\" and .[0].env_replaced == $repl and .[0].severity == \"warn\""
done

# 1a. The environment execv and execvp pass on is the program's current
# one: a new variable (glibc moves environ to a new array; the program's
# copy of environ, not libc's, is the one in use) arrives in the exec'd sh,
# and the check sees LD_PRELOAD gone from it.
for how in execv execvp; do
	L="$T/setenv-$how.jsonl"
	MARK_CALL=$how LR_LOG=$L life_shim "$T/setenv-$how" 10 info "$PROGS/life_exec" setenv
	read -r _ cpid _ cst < "$T/setenv-$how.out"
	check "$how after setenv: the exec'd sh got the new variable (exit $LR_RC, child status ${cst:-?})" \
		[ "$LR_RC.${cst:-}" = 0.0 ]
	check_jq "$how after setenv: one exec_unaudited (call $how, env_replaced false)" "$L" \
		"[.[] | select(.event==\"exec_unaudited\")] | length == 1 and .[0].call == \"$how\" and .[0].env_replaced == false"
done

# 1b. A process that never made a socket call (a wrapper script's env -i):
# the exec that drops the library sets the shim up and is said; execs that
# keep it set nothing up (no log at all).
L="$T/noinit.jsonl"
timeout 10 env SOCKAUDIT_LOG="$L" LD_PRELOAD="$(preload_value)" sh -c 'exec env -i /bin/true'; rc=$?
check "no socket call before: env -i /bin/true runs (exit $rc)" [ "$rc" = 0 ]
check_jq "no socket call before: one exec_unaudited from env (execvp, /bin/true) after its init line" "$L" \
	'[.[] | .event] == ["init", "exec_unaudited"] and (.[1] | .comm == "env" and .call == "execvp" and .program == "/bin/true")'
L2="$T/keep-noinit.jsonl"
timeout 10 env SOCKAUDIT_LOG="$L2" LD_PRELOAD="$(preload_value)" sh -c '/bin/true; exec /bin/true'
check "execs that keep the library set nothing up (no log)" [ ! -e "$L2" ]

# 2. nginx binary upgrade: USR2 execs the binary with nginx's own environment.
if command -v nginx >/dev/null; then
	for keep in no yes; do
		d="$T/ng-$keep"; mkdir -p "$d"; P=$(free_port)
		{
			echo "daemon on;"
			[ $keep = yes ] && printf 'env LD_PRELOAD;\nenv SOCKAUDIT_LOG;\n'
			cat <<CONF
user root;
worker_processes 1;
error_log $d/error.log;
pid $d/nginx.pid;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $d; proxy_temp_path $d; fastcgi_temp_path $d; uwsgi_temp_path $d; scgi_temp_path $d;
  server { listen 127.0.0.1:$P; location / { return 200 "ok\n"; } }
}
CONF
		} >"$d/nginx.conf"
		SOCKAUDIT_LOG="$d/a-%p.jsonl" LD_PRELOAD="$(preload_value)" /usr/sbin/nginx -c "$d/nginx.conf"
		wait_port $P || { fail "nginx ($keep): starts" "$(tail -2 "$d/error.log")"; continue; }
		old=$(cat "$d/nginx.pid")
		on_exit "kill -9 $old"
		kill -USR2 "$old"
		for i in $(seq 50); do [ -s "$d/nginx.pid" ] && [ "$(cat "$d/nginx.pid")" != "$old" ] && break; sleep 0.1; done
		new=$(cat "$d/nginx.pid")
		on_exit "kill -9 $new"
		kill -QUIT "$old"                      # the new binary's workers take the traffic
		timeout 5 tail --pid="$old" -f /dev/null 2>/dev/null
		got=0
		for i in $(seq 6); do [ "$(timeout 5 curl -s "http://127.0.0.1:$P/")" = ok ] && got=$((got + 1)); done
		kill -QUIT "$new"; timeout 5 tail --pid="$new" -f /dev/null 2>/dev/null
		[ "$new" != "$old" ] && [ $got = 6 ] && ok "nginx ($keep): binary upgrade works under the shim (old $old, new $new)" \
			|| fail "nginx ($keep): binary upgrade works under the shim" "old $old new $new, $got of 6 answered; $(tail -2 "$d/error.log")"
		cat "$d"/a-*.jsonl >"$d/all.jsonl"
		if [ $keep = no ]; then
			# The 6 requests after the upgrade are served unaudited: none counted.
			check_jq "nginx (default env): one exec_unaudited naming /usr/sbin/nginx, from the new binary's pid $new (and the 6 requests after it unseen)" "$d/all.jsonl" \
				"([.[] | select(.event==\"exec_unaudited\")] | length == 1 and .[0].program == \"/usr/sbin/nginx\" and .[0].pid == $new) and
				 ([.[] | select(.event==\"listener_stats\") | .accepts] | add // 0) == 0"
		else
			check_jq "nginx (env LD_PRELOAD; env SOCKAUDIT_LOG;): no exec_unaudited, and the new binary's worker counts the 6 accepts" "$d/all.jsonl" \
				"all(.[]; .event != \"exec_unaudited\") and ([.[] | select(.event==\"listener_stats\") | .accepts] | add) == 6"
		fi
	done
else
	fail "nginx binary upgrade" "nginx is not installed"
fi

# 3. systemd-socket-activate: listens, then execs the program with its own
# environment (LISTEN_FDS and a few more) at the first connection.
if command -v systemd-socket-activate >/dev/null; then
	P=$(free_port); L="$T/ssa.jsonl"
	SOCKAUDIT_LOG=$L LD_PRELOAD="$(preload_value)" timeout 30 systemd-socket-activate -l 127.0.0.1:$P \
		/usr/bin/python3 -c 'import socket; s = socket.socket(fileno=3); c, _ = s.accept(); c.sendall(b"hi\n"); c.close()' \
		>"$T/ssa.out" 2>"$T/ssa.err" &
	sp=$!
	wait_port $P || fail "systemd-socket-activate listens"
	# python3 is started at the connection: on a loaded machine that is seconds.
	r=$(timeout 25 python3 -c "import socket; s = socket.create_connection(('127.0.0.1', $P)); print(s.recv(10).decode().strip())")
	wait $sp
	[ "$r" = hi ] && ok "systemd-socket-activate: the activated program answers under the shim" \
		|| fail "systemd-socket-activate: the activated program answers under the shim" "got '$r'; $(tail -2 "$T/ssa.err")"
	check_jq "systemd-socket-activate: one exec_unaudited naming /usr/bin/python3" "$L" \
		'[.[] | select(.event=="exec_unaudited")] | length == 1 and .[0].program == "/usr/bin/python3" and .[0].env_replaced'
else
	fail "systemd-socket-activate" "not installed (package systemd)"
fi
finish
