#!/bin/bash
# The library's layout (docs/performance.md "Fork per connection"): what a
# forked child reads of it sits in one mapping and in few pages.
# Every mapping is a vma that each fork copies and each exit tears down, and
# each 64 kB window of a file mapping a child reads is a page fault: the
# headers (.gnu.hash, which the host's lazy binding reads in the child),
# .rodata (constants, tables) and the fork text (shim/sa_fork_text.ld) are
# one read-only segment and lie together at its start.
. "$(dirname "$0")/../lib.sh"

[ -f "$LIB" ] || { fail "libsockaudit.so built" "$LIB missing"; finish; }

# The fork text is gathered by function name, which the linker matches
# silently: every name shim/sa_fork_text.ld lists must still exist
# (scripts/check-fork-text.py), and a name that does not is caught.
chk=$TOP/scripts/check-fork-text.py
if out=$("$chk" "$TOP/shim/sa_fork_text.ld" "$BUILD/obj" "$TOP/shim" 2>&1); then
	ok "every function shim/sa_fork_text.ld places exists ($(echo "$out" | tail -1))"
else
	fail "every function shim/sa_fork_text.ld places exists" "$(echo "$out" | tr '\n' ' ')"
fi
sed 's/\.text\.sa_fd_track /.text.sa_fd_track_renamed /' "$TOP/shim/sa_fork_text.ld" >"$T/renamed.ld"
out=$("$chk" "$T/renamed.ld" "$BUILD/obj" "$TOP/shim" 2>&1)
[ $? = 1 ] && echo "$out" | grep -q 'sa_fd_track_renamed' && ok "a renamed fork-text function is reported" ||
	fail "a renamed fork-text function is reported" "$out"
# A function the compiler cloned (slot.constprop.0) is placed by its
# clone's section too (.text.NAME.*): without that, the clone sits
# outside the fork text (a fault in every socat child), and the check
# says so. Shown by dropping each .text.NAME.* line of the script.
nclone=0; bad=""
for pat in $(grep -oE '\.text\.[A-Za-z0-9_]+\.\*' "$TOP/shim/sa_fork_text.ld"); do
	python3 -c 'import sys; s = open(sys.argv[1]).read(); open(sys.argv[2], "w").write(s.replace(" " + sys.argv[3], "", 1))' \
		"$TOP/shim/sa_fork_text.ld" "$T/noclone.ld" "$pat"
	out=$("$chk" "$T/noclone.ld" "$BUILD/obj" "$TOP/shim" 2>&1)
	if echo "$out" | grep -q "its clone ${pat%.\*}\.[a-z]*\.[0-9]* is not placed"; then
		nclone=$((nclone + 1))
	else
		bad="$bad $pat"
	fi
done
if [ -n "$bad" ]; then
	fail "a compiler clone outside the fork text is reported" "not reported without:$bad"
elif [ "$nclone" = 0 ]; then
	echo "ok - a compiler clone outside the fork text is reported # SKIP no .text.NAME.* line in the fork text"
else
	ok "a compiler clone outside the fork text is reported ($nclone placed clone lines checked)"
fi
loads=$(readelf -lW "$LIB" | awk '$1 == "LOAD" { f = ""; for (i = 7; i < NF; i++) f = f $i; print f }' | tr '\n' ' ')
nro=$(readelf -lW "$LIB" | awk '$1 == "LOAD" && $0 !~ / RW / { n++ } END { print n + 0 }')
[ "$nro" = 1 ] && ok "one read-only LOAD segment for headers, .rodata and .text (LOAD flags: $loads)" ||
	fail "one read-only LOAD segment for headers, .rodata and .text" "LOAD flags: $loads"

# sec NAME FIELD: a section's address (3) or size (5), in decimal.
sec() { local h; h=$(readelf -SW "$LIB" | awk -v s="$1" -v f="$2" '{ sub(/^ *\[ *[0-9]+\] */, "") } $1 == s { print $f }'); [ -n "$h" ] && echo $((16#$h)); }
addr() { sec "$1" 3; }
hash=$(addr .gnu.hash) ro=$(addr .rodata) text=$(addr .text)
# The end of the fork text: the empty sa_fork_text_end closes it.
end=$(nm -n "$LIB" | awk '$3 == "sa_fork_text_end" { print $1; exit }')
[ -n "$end" ] && end=$((16#$end))
if [ -n "${SANITIZE:-}" ]; then
	# Instrumented code is several times the size (this library's .text
	# passes 600 kB under address,undefined): no fork text fits 48 kB, and
	# no fork-per-connection server runs a sanitized build in production.
	echo "ok - headers, .rodata, then .text with the fork text within 48 kB # SKIP SANITIZE=$SANITIZE: instrumented code does not fit the unsanitized layout"
elif [ -n "$hash" ] && [ -n "$ro" ] && [ -n "$text" ] && [ -n "$end" ] &&
	[ "$hash" -lt "$ro" ] && [ "$ro" -lt "$text" ] && [ "$text" -lt "$end" ] && [ "$end" -le $((48 * 1024)) ]; then
	ok "headers, .rodata, then .text with the fork text: all a child reads in the first $((end / 1024)) kB (<= 48)"
else
	fail "headers, .rodata, then .text with the fork text within 48 kB" ".gnu.hash ${hash:-?} .rodata ${ro:-?} .text ${text:-?} fork text end ${end:-?}"
fi
# The long strings (finding texts, JSON keys) are after .text: a child that
# writes no line reads none of them.
str=$(addr .rodata.str)
[ -n "$str" ] && [ "$str" -gt "$end" ] && ok "strings after .text ($(( $(sec .rodata.str 5) / 1024 )) kB)" ||
	fail "strings after .text" ".rodata.str at ${str:-none}"

# Under the shim, a process maps the library in two vmas (text, data),
# not five: no RELRO, whose mprotect splits the data, and no .bss past the
# file's end, an anonymous mapping of its own.
maps=$(env LD_PRELOAD="$(preload_value)" cat /proc/self/maps | grep -F "$(readlink -f "$LIB")")
n=$(echo "$maps" | grep -c .)
[ "$n" = 2 ] && ok "the library is 2 file mappings in a process" || fail "the library is 2 file mappings in a process" "$n: $(echo "$maps" | awk '{ print $2 }' | tr '\n' ' ')"

# The data segment is the zero tables (shim/sa_proc.ld), in the file, then
# what the loader writes at every exec on one last page: the relocated
# pointers, the GOT, .data and the small .bss after it. Its memory ends on
# the page its file part ends (no anonymous mapping for a .bss), and the
# loader's zeroing of that page's tail is its one write fault.
rw=$(readelf -lW "$LIB" | awk '$1 == "LOAD" && / RW / { print $3, $5, $6; exit }')
first=$(readelf -SW "$LIB" | awk '{ sub(/^ *\[ *[0-9]+\] */, "") } $1 ~ /^\.(tdata|init_array|data\.rel\.ro|dynamic|got|data|bss)$/ { print $3; exit }')
set -- $rw
datapage=$(( (${1:-0} + ${3:-0} - 1) / 4096 ))
if [ -n "${SANITIZE:-}" ]; then
	echo "ok - what the loader writes of the data segment is its last page # SKIP SANITIZE=$SANITIZE: instrumented code carries more data"
elif [ $# = 3 ] && [ -n "$first" ] && [ $(((16#$first) / 4096)) = $((($1 + $3 - 1) / 4096)) ] &&
	[ $((($1 + $2 + 4095) / 4096)) = $((($1 + $3 + 4095) / 4096)) ]; then
	ok "what the loader writes of the data segment is its last page ($(($1 + $3 - 16#$first)) bytes from 0x$first), and no .bss past the file"
else
	fail "what the loader writes of the data segment is its last page, and no .bss past the file" "segment ${1:-?} file ${2:-?} memory ${3:-?}, first written section at 0x${first:-?}"
fi
readelf -lW "$LIB" | grep -q GNU_RELRO && fail "no GNU_RELRO segment (no mprotect at every exec)" "$(readelf -lW "$LIB" | grep GNU_RELRO)" ||
	ok "no GNU_RELRO segment (no mprotect at every exec)"
# Tables of pointers are relocated by the loader in every exec: the
# option names are inline arrays, not pointers (as pointers: 202).
rel=$(readelf -dW "$LIB" | awk '/RELACOUNT/ { print $NF }')
[ -n "$rel" ] && [ "$rel" -le 128 ] && ok "relative relocations at start: $rel (<= 128)" ||
	fail "relative relocations at start <= 128" "${rel:-none}"
# Every constructor's code is in the first pages with the headers (read
# by one fault): a constructor elsewhere is one more page every exec reads.
ia=$(readelf -SW "$LIB" | awk '{ sub(/^ *\[ *[0-9]+\] */, "") } $1 == ".init_array" { print $3, $5 }')
set -- $ia
ctors=$(readelf -rW "$LIB" | awk -v a=$((16#${1:-0})) -v n=$((16#${2:-0})) '$3 ~ /^R_[A-Z0-9]+_RELATIVE$/ { o = strtonum("0x" $1); if (o >= a && o < a + n) print $4 }' 2>/dev/null)
[ -z "$ctors" ] && ctors=$(readelf -rW "$LIB" | python3 -c "
import sys
a, n = int('${1:-0}', 16), int('${2:-0}', 16)
for l in sys.stdin:
    p = l.split()
    if len(p) >= 4 and p[2].endswith('_RELATIVE') and a <= int(p[0], 16) < a + n:
        print(p[3])")
far=""
for c in $ctors; do [ $((16#$c)) -le "${end:-0}" ] || far="$far $c"; done
if [ -n "${SANITIZE:-}" ]; then
	echo "ok - every constructor in the first pages # SKIP SANITIZE=$SANITIZE"
elif [ -n "$ctors" ] && [ -z "$far" ]; then
	ok "every constructor ($(echo $ctors | wc -w)) is in the first pages, before 0x$(printf %x "$end")"
else
	fail "every constructor is in the first pages" "constructors: ${ctors:-none}; past 0x$(printf %x "${end:-0}"):$far"
fi
# The fd table's "ever used" flag is on that same page: a process that
# never tracked a socket (a shell's close and dup2) reads no page of the
# zero tables.
used=$(nm "$LIB" | awk '$3 == "sa_fd_used" { print $1 }')
if [ -n "${SANITIZE:-}" ]; then
	echo "ok - the fd table's used flag is on the data page # SKIP SANITIZE=$SANITIZE"
elif [ -n "$used" ] && [ $((16#$used / 4096)) = "$datapage" ]; then
	ok "the fd table's used flag is on the data page (0x$used)"
else
	fail "the fd table's used flag is on the data page" "sa_fd_used at 0x${used:-?}"
fi
# What all of the above is for, counted exactly: the page faults of one
# exec (the median of 101, the two libraries in turn, from wait4) of /bin/true and of a shell that
# opens, dups and closes an fd, under the library and under an empty
# library (cc -shared -nostdlib: what mapping any preload costs). Within 2:
# where ASLR puts a 64 kB fault-around boundary inside our first pages,
# an exec takes one fault more (the library before this layout took 5 to
# 9 more).
echo 'int sa_layout_nothing;' >"$T/empty.c"
if [ -n "${SANITIZE:-}" ]; then
	echo "ok - an exec faults within 2 of an empty library # SKIP SANITIZE=$SANITIZE: a sanitizer's runtime maps and touches more"
elif ${CC:-cc} -shared -fPIC -nostdlib -o "$T/empty.so" "$T/empty.c" 2>"$T/cc.err"; then
	faults=$(python3 - "$(preload_value)" "$T/empty.so" <<'PY'
import os, statistics, sys
def one(pre, argv):
    pid = os.posix_spawn(argv[0], argv, {"SOCKAUDIT_LOG": "/dev/null", "LD_PRELOAD": pre})
    return os.wait4(pid, 0)[2].ru_minflt
def faults(pre, argv):
    return int(statistics.median([one(pre, argv) for _ in range(31)]))
# The library and the empty one in turn, 101 each: where ASLR puts the
# fault-around boundaries, one exec of the same shell takes 67 to 74
# faults, and two medians of 31 taken one after the other came out 3
# apart (a slower machine) for libraries whose means differ by 1.1.
def pair(argv):
    a, b = [], []
    for _ in range(101):
        a.append(one(sys.argv[1], argv))
        b.append(one(sys.argv[2], argv))
    return int(statistics.median(a)), int(statistics.median(b))
for argv in (["/bin/true"], ["/bin/sh", "-c", "exec 3>/dev/null; exec 4>&3; exec 3>&- 4>&-"],
             ["/bin/bash", "-c", "/bin/true; /bin/true"]):
    print(*pair(argv))
# A shell that installs a handler, with SOCKAUDIT_DISABLE=1 and without.
trap = ["/bin/sh", "-c", "trap 'echo' INT; exec 3>/dev/null; exec 3>&-"]
base = faults(sys.argv[1], trap)
def faults_env(pre, argv):
    r = []
    for _ in range(31):
        pid = os.posix_spawn(argv[0], argv, {"SOCKAUDIT_LOG": "/dev/null", "LD_PRELOAD": pre, "SOCKAUDIT_DISABLE": "1"})
        r.append(os.wait4(pid, 0)[2].ru_minflt)
    return int(statistics.median(r))
print(faults_env(sys.argv[1], trap), base)
PY
)
	set -- $faults
	[ $# = 8 ] && [ "$7" -le $(($8 + 2)) ] &&
		ok "a shell's handler with SOCKAUDIT_DISABLE=1 sets nothing up: faults within 2 of the same shell audited ($7 vs $8)" ||
		fail "a shell's handler with SOCKAUDIT_DISABLE=1 sets nothing up" "disabled ${7:-?} vs audited ${8:-?} faults"
	[ $# = 8 ] && [ "$1" -le $(($2 + 2)) ] && [ "$3" -le $(($4 + 2)) ] &&
		ok "an exec faults within 2 of an empty library (/bin/true $1 vs $2, sh $3 vs $4)" ||
		fail "an exec faults within 2 of an empty library" "library vs empty: /bin/true ${1:-?} vs ${2:-?}, sh ${3:-?} vs ${4:-?}"
	# bash forks (not vfork) before each exec: its child runs our execve
	# wrapper's check, one text window more per child than an empty
	# library's (a lazy binding there once cost each child 9).
	[ $# = 8 ] && [ "$5" -le $(($6 + 4)) ] &&
		ok "bash's fork-and-exec children fault within 2 each of an empty library's ($5 vs $6 for 2)" ||
		fail "bash's fork-and-exec children fault within 2 each of an empty library's" "library ${5:-?} vs empty ${6:-?} for 2 children"
else
	fail "an empty library builds" "$(head -c 200 "$T/cc.err")"
fi
# A fork-per-connection server with a shell per connection (socat
# fork,SYSTEM:, tests/progs/forkpages.c): which of our data pages each
# process wrote after its fork, read exactly from /proc/PID/pagemap (a page
# whose frame differs between parent and child, or that one of them holds
# as its own anonymous copy). The parent's close of the connection, the
# child's close of the listener, its socket pairs (fds up to 10) and its
# fork, the SYSTEM child's dup2 and closes. The connection child resets
# what its parent counted (the process page) and writes the fd table's
# first page, no third (the table's counters, the side words and the
# entries of fds 0-13 share that page); the SYSTEM child, which only
# closes and dups before its exec, that first page alone (its pid, epoch
# and clock traps are on it: SA_FORK_WORDS). The live thread is off here:
# a tick of the parent's (every 5 s, so under load within the run) gives the
# parent its own copy of each page it writes, and a frame that differs
# cannot say which of the two wrote it.
if [ -n "${SANITIZE:-}" ]; then
	echo "ok - a fork + SYSTEM server's children write two pages of ours and one # SKIP SANITIZE=$SANITIZE: a sanitizer's runtime lays the library out otherwise"
else
	pages=$(python3 - "$LIB" "$PROGS/forkpages" "$T/fp.jsonl" <<'PY'
import os, signal, subprocess, sys, time
lib, prog = os.path.realpath(sys.argv[1]), sys.argv[2]
p = subprocess.Popen([prog], env=dict(os.environ, LD_PRELOAD=lib, SOCKAUDIT_LOG=sys.argv[3], SOCKAUDIT_STATS_INTERVAL="0"),
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
pids = {}
def stop(*_):
    for pid in pids.values():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    p.kill()
signal.signal(signal.SIGALRM, lambda *_: (stop(), print("timeout", pids), os._exit(0)))
signal.alarm(20)
while len(pids) < 3:
    f = p.stderr.readline().split()
    if len(f) != 2:
        break
    pids[f[0]] = int(f[1])
if len(pids) < 3:
    print("no-run", pids); stop(); sys.exit(0)
time.sleep(0.2)
try:
    for l in open("/proc/%d/maps" % pids["P"]):
        f = l.split()
        if len(f) >= 6 and f[1].startswith("rw") and os.path.realpath(f[5]) == lib:
            a, b = (int(x, 16) for x in f[0].split("-"))
            off = int(f[2], 16)
    def pm(pid):
        with open("/proc/%d/pagemap" % pid, "rb") as fh:
            fh.seek(a // 4096 * 8)
            d = fh.read((b - a) // 4096 * 8)
        v = [int.from_bytes(d[i:i + 8], "little") for i in range(0, len(d), 8)]
        return [(x >> 63 & 1, x & ((1 << 55) - 1), x >> 61 & 1) for x in v]
    m = {r: pm(pid) for r, pid in pids.items()}
    syms = sorted((int(f[0], 16), f[2]) for f in (l.split() for l in
                  subprocess.run(["nm", lib], capture_output=True, text=True).stdout.splitlines()) if len(f) == 3)
    def page_of(name):
        return ([v for v, s in syms if s == name] or [-1])[0] // 4096 * 4096
    def name(o):
        return ([s for v, s in syms if v <= o] or ["?"])[-1]
    ok = {page_of("sa_proc_start"), page_of("sa_fd_first")}
    out = []
    for x, y in (("P", "C1"), ("C1", "C2")):
        w = [off + i * 4096 for i, (u, v) in enumerate(zip(m[x], m[y]))
             if (u[0] and v[0] and u[1] != v[1]) or (u[0] != v[0] and ((u[0] and not u[2]) or (v[0] and not v[2])))]
        out.append("%s/%s:%d:%s:%s" % (x, y, len(w), int(set(w) <= ok), ",".join("%#x=%s" % (o, name(o)) for o in w)))
    print(" ".join(out))
finally:
    stop()
PY
)
	case "$pages" in
	"P/C1:2:1:"*" C1/C2:1:1:"*) ok "a fork + SYSTEM server's children write two pages of ours (the process page, the fd table's first) and one (that first) ($pages)" ;;
	*) fail "a fork + SYSTEM server's children write two pages of ours (the process page, the fd table's first) and one (that first)" "${pages:-no output}" ;;
	esac
fi
# A forked child's first clock reads are system calls, not the vDSO (whose
# page the child would fault in): the child's connect is timed by
# clock_gettime calls strace sees, at most SA_CLOCK_TRAPS (4); the parent's
# own connect reads the vDSO (none seen).
if command -v strace >/dev/null; then
	prog='import os, socket
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(8)
def conn():
    c = socket.socket(); c.connect(l.getsockname()); c.close()
conn()
pid = os.fork()
if pid == 0:
    conn(); os._exit(0)
os.waitpid(pid, 0)'
	strace -f -qq -e trace=clock_gettime -o "$T/clk" -E LD_PRELOAD="$(preload_value)" \
		env SOCKAUDIT_LOG="$T/clk.jsonl" /usr/bin/python3 -c "$prog"
	ppid=$(awk 'NR == 1 { print $1 }' "$T/clk" 2>/dev/null)
	parent=$(grep -c "^$ppid " "$T/clk" 2>/dev/null); child=$(grep -vc "^$ppid " "$T/clk" 2>/dev/null)
	[ -s "$T/clk" ] && [ "${child:-0}" -ge 1 ] && [ "${child:-0}" -le 4 ] &&
		ok "forked child: its first clock reads are system calls ($child), not vDSO faults" ||
		fail "forked child: its first clock reads are system calls" "child ${child:-?}, parent ${parent:-?}: $(head -c 300 "$T/clk")"
else
	fail "strace is installed" "scripts/ensure-deps.sh test"
fi
finish
