#!/bin/bash
# A process that dies of a fatal signal's default action (SIGTERM from kill,
# timeout or systemd; SIGINT; SIGHUP; SIGQUIT; SIGUSR1) has its summary
# written first, and dies exactly as plainly: the same wait status (signal,
# core flag), the same dispositions read back through sigaction() and
# signal(), an inherited SIG_IGN left alone. A signal that lands in a thread
# inside malloc still ends the process, with its summary, within 2 s.
# `sockaudit metrics` then counts the SIGTERM'd one exited, a SIGKILLed one
# (no summary, its pid gone) ended, and a live one running.
. "$(dirname "$0")/../lib.sh"
skip_under_tsan "a TSan build has no sigaction wrappers, so no default-action catchers"
P=$PROGS/life_sigdfl

for m in query set; do
	"$P" $m >"$T/$m.plain" 2>&1
	SOCKAUDIT_LOG="$T/$m.jsonl" LD_PRELOAD="$(preload_value)" "$P" $m >"$T/$m.shim" 2>&1
	if cmp -s "$T/$m.plain" "$T/$m.shim" && [ -s "$T/$m.plain" ]; then ok "dispositions read back as plain ($m)"
	else fail "dispositions read back as plain ($m)" "$(diff "$T/$m.plain" "$T/$m.shim" | head -3 | tr '\n' ' ')"; fi
done

# run.py MODE SIG SHIM(0|1) LOG [ign]: the raw wait status, seconds from the
# signal to the end, SigCgt's bit for SIG, and whether it was still alive
# 0.3 s after the signal (then SIGKILLed).
cat >"$T/run.py" <<'PY'
import os, signal, subprocess, sys, time, resource
mode, sig, shim, log = sys.argv[1], getattr(signal, sys.argv[2]), sys.argv[3] == "1", sys.argv[4]
ign = len(sys.argv) > 5
env = dict(os.environ)
env.pop("LD_PRELOAD", None)
if shim:
    env["LD_PRELOAD"] = os.environ["SA_PRELOAD"]; env["SOCKAUDIT_LOG"] = log
def pre():
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    if ign:
        signal.signal(sig, signal.SIG_IGN)
p = subprocess.Popen([os.environ["PROG"], mode], stdout=subprocess.PIPE, env=env, preexec_fn=pre, cwd=os.environ["T"])
p.stdout.readline()
time.sleep(0.05)
cgt = int([l for l in open(f"/proc/{p.pid}/status") if l.startswith("SigCgt")][0].split()[1], 16)
t = time.time(); os.kill(p.pid, sig)
alive = 0
if ign:
    time.sleep(0.3)
    if os.waitpid(p.pid, os.WNOHANG) == (0, 0):
        alive = 1; os.kill(p.pid, signal.SIGKILL)
_, st = os.waitpid(p.pid, 0)
print(st, "%.2f" % (time.time() - t), (cgt >> (sig - 1)) & 1, alive)
PY
export SA_PRELOAD="$(preload_value)" PROG=$P T
last_is_summary() { [ "$(tail -1 "$1" 2>/dev/null | jq -r .event 2>/dev/null)" = summary ]; }

for sig in SIGTERM SIGINT SIGHUP SIGQUIT SIGUSR1; do
	read -r pst _ _ _ < <(python3 "$T/run.py" serve $sig 0 /dev/null)
	rm -f "$T/s.jsonl" "$T"/core*
	read -r sst _ cgt _ < <(python3 "$T/run.py" serve $sig 1 "$T/s.jsonl")
	[ -n "$pst" ] && [ "$pst" = "$sst" ] && ok "$sig, default action: wait status $sst as plain (core flag included)" \
		|| fail "$sig, default action: wait status as plain" "plain $pst, shim $sst"
	last_is_summary "$T/s.jsonl" && ok "$sig, default action: the summary is the last line" \
		|| fail "$sig, default action: the summary is the last line" "last: $(tail -1 "$T/s.jsonl" | head -c 200)"
done
rm -f "$T"/core*

# An inherited SIG_IGN (nohup, a supervisor's): not caught, still ignored.
read -r _ _ cgt alive < <(python3 "$T/run.py" serve SIGTERM 1 "$T/ign.jsonl" ign)
[ "$cgt" = 0 ] && [ "$alive" = 1 ] && ok "inherited SIG_IGN: SIGTERM still ignored, not caught" \
	|| fail "inherited SIG_IGN: SIGTERM still ignored, not caught" "caught bit $cgt, alive $alive"

# A signal that lands inside malloc (3 threads churning, the main thread
# blocking it): 10 of 10 end as SIGTERM, with the summary, within 2 s.
good=0; worst=0
for i in $(seq 10); do
	rm -f "$T/m.jsonl"
	read -r st secs _ _ < <(timeout 10 python3 "$T/run.py" mallocs SIGTERM 1 "$T/m.jsonl")
	[ "$st" = 15 ] && last_is_summary "$T/m.jsonl" && awk -v s="$secs" 'BEGIN { exit !(s < 2) }' && good=$((good + 1))
	worst=$(awk -v a="$worst" -v b="${secs:-99}" 'BEGIN { print (b > a ? b : a) }')
done
[ $good = 10 ] && ok "SIGTERM inside malloc: 10/10 end as SIGTERM with the summary (slowest ${worst}s)" \
	|| fail "SIGTERM inside malloc: 10/10 end as SIGTERM with the summary" "$good/10, slowest ${worst}s"

# What metrics says of each: one SIGTERM'd, one SIGKILLed, one alive.
mkdir -p "$T/mx"
for n in term kill live; do
	SOCKAUDIT_LOG="$T/mx/$n.jsonl" LD_PRELOAD="$(preload_value)" "$P" serve >"$T/mx/$n.out" 2>&1 &
	eval "pid_$n=\$!"
done
on_exit "kill -KILL $pid_live 2>/dev/null"
for n in term kill live; do
	for _ in $(seq 100); do grep -q '"event":"listen"\|"event": "listen"' "$T/mx/$n.jsonl" 2>/dev/null && break; sleep 0.05; done
done
kill -TERM $pid_term; kill -KILL $pid_kill
wait $pid_term $pid_kill 2>/dev/null
for n in term kill live; do
	"$TOP/sockaudit" metrics "$T/mx/$n.jsonl" >"$T/mx/$n.prom" 2>&1
done
st() { sed -n 's/^sockaudit_processes{comm="life_sigdfl",state="\([a-z]*\)"} 1$/\1/p' "$T/mx/$1.prom"; }
[ "$(st term)" = exited ] && ok "metrics: the SIGTERM'd process is exited (its summary read)" \
	|| fail "metrics: the SIGTERM'd process is exited" "$(grep '^sockaudit_processes' "$T/mx/term.prom" | tr '\n' ' ')"
[ "$(st kill)" = ended ] && ok "metrics: the SIGKILLed process (no summary, pid gone) is ended, not running" \
	|| fail "metrics: the SIGKILLed process is ended" "$(grep '^sockaudit_processes' "$T/mx/kill.prom" | tr '\n' ' ')"
[ "$(st live)" = running ] && ok "metrics: the live process is running" \
	|| fail "metrics: the live process is running" "$(grep '^sockaudit_processes' "$T/mx/live.prom" | tr '\n' ' ')"
"$TOP/sockaudit" report "$T/mx/kill.jsonl" >"$T/mx/kill.rep" 2>&1
grep -q "no summary line: the process ended without one" "$T/mx/kill.rep" && ok "report: the SIGKILLed process ended without a summary" \
	|| fail "report: the SIGKILLed process ended without a summary" "$(grep 'summary line' "$T/mx/kill.rep")"
"$TOP/sockaudit" report "$T/mx/live.jsonl" >"$T/mx/live.rep" 2>&1
grep -q "no summary line: the process is still running" "$T/mx/live.rep" && ok "report: the live process is still running" \
	|| fail "report: the live process is still running" "$(grep 'summary line' "$T/mx/live.rep")"
kill -KILL $pid_live 2>/dev/null
finish
