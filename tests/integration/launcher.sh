#!/bin/bash
# The launcher's blind spots and exit message: a static binary
# and a setuid copy are named on stderr and still run; `sockaudit report`
# on a log that was never created says why and fails; lines dropped at a
# full pipe or a full tmpfs are counted in the log (warning, summary) and in
# the launched process's exit message; the full tmpfs keeps whole lines only;
# and where the default sink's lines go for each kind of fd 2.
. "$(dirname "$0")/../lib.sh"; . "$TOP/tests/daemon_lib.sh"

# A program with socket calls: N connections to its own listener.
cat >"$T/conn.py" <<'EOF'
import socket, sys, os
n = int(sys.argv[1])
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(128)
a = s.getsockname()
def burst(k):
    for i in range(k):
        c = socket.create_connection(a); x, _ = s.accept(); x.close(); c.close()
burst(n)
if len(sys.argv) > 2:            # then wait for the flag file, and a few more
    import time
    open(sys.argv[2] + ".full", "w").close()
    for _ in range(200):
        if os.path.exists(sys.argv[2]): break
        time.sleep(0.05)
    time.sleep(0.3)
    burst(3)
print("done", n)
EOF
printf '#include <sys/socket.h>\n#include <stdio.h>\nint main(void){int s=socket(AF_INET,SOCK_STREAM,0);listen(s,5);printf("sock %%d\\n",s);return 0;}\n' >"$T/dyn.c"
cc -o "$T/dyn" "$T/dyn.c" || fail "cc builds a small dynamic program"

# ---- a statically linked program --------------------------------------------
if [ -f "$(cc -print-file-name=libc.a)" ] && [ "$(cc -print-file-name=libc.a)" != libc.a ] &&
   printf '#include <stdio.h>\nint main(void){puts("static ran");return 3;}\n' >"$T/st.c" &&
   cc -static -o "$T/st" "$T/st.c" 2>/dev/null; then
	(cd "$T" && "$SA" -o st.jsonl -- ./st >"$T/st.out" 2>"$T/st.err"); rc=$?
	check "static: still runs, status 3 passed through (got $rc)" [ "$rc $(cat "$T/st.out")" = "3 static ran" ]
	check "static: one line says LD_PRELOAD cannot work ($(head -1 "$T/st.err"))" \
		[ "$(cat "$T/st.err")" = "sockaudit: ./st is statically linked: LD_PRELOAD cannot load the audit library, nothing will be logged" ]
	check "static: no log file (nothing could write one)" [ ! -e "$T/st.jsonl" ]
	printf '#!%s\n' "$T/st" >"$T/st.sh"; chmod +x "$T/st.sh"
	"$SA" -o "$T/st.jsonl" -- "$T/st.sh" >/dev/null 2>"$T/sts.err"
	check "static through #!: the interpreter is named ($(cat "$T/sts.err"))" \
		grep -qx "sockaudit: $T/st.sh runs $T/st, which is statically linked: .*nothing will be logged" "$T/sts.err"
	"$SA" report "$T/st.jsonl" >"$T/rep.out" 2>"$T/rep.err"; rc=$?
	check "report on the never-created log: status 1 (got $rc), no empty report on stdout" [ "$rc" = 1 ] && [ ! -s "$T/rep.out" ]
	check "report on the never-created log: says it does not exist and why" \
		grep -q "st.jsonl does not exist: no line was ever written to it" "$T/rep.err"
	check "report on the never-created log: names the likely reasons" grep -q "statically linked or setuid" "$T/rep.err"
else
	ok "static: skipped, no libc.a for cc -static (install libc6-dev)"
fi
# A dynamic program: nothing said, a log written (so the checks above can fail).
"$SA" -o "$T/dyn.jsonl" -- "$T/dyn" >"$T/dyn.out" 2>"$T/dyn.err"
check "dynamic: nothing on stderr ($(head -c 200 "$T/dyn.err"))" [ ! -s "$T/dyn.err" ]
json_lines "dynamic: its log is written and parses" "$T/dyn.jsonl"
"$SA" report "$T/dyn.jsonl" "$T/none.jsonl" >"$T/rep2.out" 2>"$T/rep2.err"; rc=$?
check "report with one missing file among others: the report of the rest, status 1 (got $rc)" \
	[ "$rc" = 1 ] && [ -s "$T/rep2.out" ] && grep -q "none.jsonl does not exist" "$T/rep2.err"

# ---- a setuid copy ---------------------------------------------------------
if [ "$(id -u)" != 0 ]; then
	ok "setuid: skipped, not root (cannot chown a copy to another user)"
elif ! id nobody >/dev/null 2>&1; then
	ok "setuid: skipped, no user nobody"
elif findmnt -n -o OPTIONS -T "$T" | grep -qw nosuid; then
	ok "setuid: skipped, $T is on a nosuid mount"
else
	cp "$T/dyn" "$T/suid"; chown nobody "$T/suid"; chmod u+s "$T/suid"
	"$SA" -o "$T/suid.jsonl" -- "$T/suid" >"$T/suid.out" 2>"$T/suid.err"; rc=$?
	check "setuid: still runs (status $rc, $(cat "$T/suid.out"))" [ "$rc $(cat "$T/suid.out")" = "0 sock 3" ]
	check "setuid: one line says the loader ignores the preload ($(cat "$T/suid.err"))" \
		[ "$(cat "$T/suid.err")" = "sockaudit: $T/suid is setuid (runs as uid $(id -u nobody)): the loader ignores an LD_PRELOAD path with a '/' in secure mode, nothing will be logged" ]
	check "setuid: and indeed no log was written" [ ! -e "$T/suid.jsonl" ]
	cp "$T/dyn" "$T/suid0"; chmod u+s "$T/suid0"   # setuid to ourselves: not secure, audited
	"$SA" -o "$T/suid0.jsonl" -- "$T/suid0" >/dev/null 2>"$T/suid0.err"
	check "setuid to our own uid: nothing said, and audited" [ ! -s "$T/suid0.err" ] && [ -s "$T/suid0.jsonl" ]
fi

# ---- a full pipe: drops counted, the warning line, the exit message ---------
mkfifo "$T/fifo"
# The reader waits for the program's flag, then drains; fd 9 writes to it.
(while [ ! -e "$T/flag" ]; do sleep 0.05; done; timeout 20 cat "$T/fifo" >"$T/pipe.jsonl") &
reader=$!
exec 9<>"$T/fifo"
$PY -c '
import os, sys
fd = os.open("/proc/self/fd/9", os.O_WRONLY | os.O_NONBLOCK)
try:
    while True: os.write(fd, b"\n" * 4096)
except BlockingIOError: pass' || fail "filling the pipe"
# conn.py: 60 connects into the full pipe (dropped), then it creates
# flag.full; we let the reader drain; conn.py makes 3 more (written).
( while [ ! -e "$T/flag.full" ]; do sleep 0.05; done; touch "$T/flag" ) &
timeout 30 "$SA" -l trace -o fd:9 -- $PY "$T/conn.py" 60 "$T/flag" >"$T/pipe.out" 2>"$T/pipe.err"; rc=$?
exec 9>&-
wait $reader
sed -i '/^$/d' "$T/pipe.jsonl"    # the filler's empty lines
check "full pipe: the program's own result (status $rc, $(cat "$T/pipe.out"))" [ "$rc $(cat "$T/pipe.out")" = "0 done 60" ]
msg=$(cat "$T/pipe.err")
n=$(sed -n 's/^sockaudit: \([0-9]*\) lines were dropped (the pipe is full or closed)$/\1/p' <<<"$msg")
check "full pipe: exit message on stderr ($msg)" [ -n "$n" ] && [ "$(wc -l <<<"$msg")" = 1 ]
json_lines "full pipe: every line that got through parses" "$T/pipe.jsonl"
w=$(jqs "$T/pipe.jsonl" '[.[] | select(.event=="warning") | .dropped] | add')
s=$(jqs "$T/pipe.jsonl" '[.[] | select(.event=="summary") | .dropped] | add')
check "full pipe: the warning lines count the drops ($w) and so do the summary ($s) and the exit message ($n)" \
	[ -n "$n" ] && [ "$w" = "$n" ] && [ "$s" = "$n" ] && [ "$n" -gt 50 ]

# ---- a full tmpfs: whole lines only, and the exit message -------------------
if [ "$(id -u)" = 0 ] && mkdir "$T/small" && mount -t tmpfs -o size=64k tmpfs "$T/small" 2>/dev/null; then
	on_exit "umount $T/small"
	timeout 30 "$SA" -l trace -o "$T/small/log.jsonl" -- $PY "$T/conn.py" 300 >"$T/fs.out" 2>"$T/fs.err"; rc=$?
	check "full tmpfs: the program's own result (status $rc, $(cat "$T/fs.out"))" [ "$rc $(cat "$T/fs.out")" = "0 done 300" ]
	check "full tmpfs: exit message ($(cat "$T/fs.err"))" grep -qxE "sockaudit: [0-9]+ lines were dropped \(the file system is full\)" "$T/fs.err"
	json_lines "full tmpfs: every line parses (no torn tail)" "$T/small/log.jsonl"
	check "full tmpfs: the file system really is full ($(stat -c %s "$T/small/log.jsonl") bytes)" [ "$(stat -c %s "$T/small/log.jsonl")" -gt 60000 ]
	umount "$T/small"
else
	ok "full tmpfs: skipped, cannot mount a tmpfs (not root or no permission)"
fi

# ---- the exit message is the launched process's only ------------------------
# Its forked child drops lines too (same full destination) but says nothing;
# a process started by plain LD_PRELOAD (no launcher) says nothing either.
cat >"$T/forker.py" <<'EOF'
import os, socket, sys
pid = os.fork()
s = socket.socket(); s.listen(1); s.close()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
EOF
"$SA" -o fd:9 -- $PY "$T/forker.py" 9>/dev/full 2>"$T/fork.err"
check "fork: one exit message, from the launched process only ($(tr '\n' '|' <"$T/fork.err"))" \
	[ "$(grep -c '^sockaudit: ' "$T/fork.err")" = 1 ]
SOCKAUDIT_LOG=fd:9 LD_PRELOAD="$(preload_value)" $PY "$T/forker.py" 9>/dev/full 2>"$T/nolaunch.err"
check "without the launcher: no exit message ($(tr '\n' '|' <"$T/nolaunch.err"))" [ ! -s "$T/nolaunch.err" ]

# ---- where the default sink's lines go, per kind of fd 2 --------------------
# (docs/configuration.md, "Log destinations", has the rules.) Each runs dyn under the
# launcher's default (SOCKAUDIT_LOG=stderr).
"$SA" -- "$T/dyn" >/dev/null 2>"$T/d.file"
json_lines "fd 2 a file: the lines are written there" "$T/d.file"
"$SA" -- "$T/dyn" 2>&1 >/dev/null | cat >"$T/d.pipe"
json_lines "fd 2 a pipe: the lines go through it" "$T/d.pipe"
mkfifo "$T/errfifo"
timeout 20 cat "$T/errfifo" >"$T/d.fifo" &
"$SA" -- "$T/dyn" >/dev/null 2>"$T/errfifo"
wait $!
json_lines "fd 2 a FIFO with a reader: the lines go through it" "$T/d.fifo"
# A pipe nobody reads, already full: the program does not block.
mkfifo "$T/fullfifo"; exec 8<>"$T/fullfifo"
$PY -c '
import os
fd = os.open("/proc/self/fd/8", os.O_WRONLY | os.O_NONBLOCK)
try:
    while True: os.write(fd, b"x" * 4096)
except BlockingIOError: pass'
t0=$SECONDS
timeout 20 "$SA" -l trace -- $PY "$T/conn.py" 100 >"$T/d.full.out" 2>&8; rc=$?
exec 8>&-
check "fd 2 a full pipe nobody reads: the program ends on its own (status $rc, $((SECONDS - t0)) s)" [ "$rc $(cat "$T/d.full.out")" = "0 done 100" ]
"$SA" -- "$T/dyn" >/dev/null 2>/dev/null; rc=$?
check "fd 2 /dev/null: runs, status 0 (got $rc)" [ "$rc" = 0 ]
# Closed: the program's socket gets fd 2, and no line goes into it.
"$SA" -- "$T/dyn" >"$T/d.closed.out" 2>&-; rc=$?
check "fd 2 closed: runs, status 0 (got $rc), its socket is fd 2, nothing on stdout but its own" [ "$rc $(cat "$T/d.closed.out")" = "0 sock 2" ]
# A socket as fd 2 (inetd): the peer reads nothing of ours.
$PY - "$SA" "$T/dyn" >"$T/d.sock" <<'EOF'
import socket, subprocess, sys
a, b = socket.socketpair()
p = subprocess.run([sys.argv[1], "--", sys.argv[2]], stdout=subprocess.DEVNULL, stderr=a, timeout=20)
a.close(); b.settimeout(2)
data = b""
try:
    while True:
        d = b.recv(65536)
        if not d: break
        data += d
except socket.timeout:
    pass
print(p.returncode, len(data))
EOF
check "fd 2 a socket: status 0, the peer receives 0 bytes (got: $(cat "$T/d.sock"))" [ "$(cat "$T/d.sock")" = "0 0" ]
if command -v script >/dev/null 2>&1; then
	timeout 20 script -qec "$SA -- $T/dyn" /dev/null >"$T/d.tty" 2>&1 </dev/null
	check "fd 2 a tty: the lines reach the terminal" grep -q '"event":"summary"' "$T/d.tty"
else
	ok "fd 2 a tty: skipped, no script(1)"
fi
finish
