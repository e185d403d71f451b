#!/bin/bash
# bench/exec_loop.sh: what the shim costs a program that execs all the time
# (inetd-style services, CGI, shell scripts, `sockaudit -- make`), timed.
#
# One sample is a shell loop of EXEC_K (20) execs of /bin/true; under an arm
# the shell and every /bin/true load that arm's preload. The arms take turns
# sample by sample (round robin, the first arm moving each turn), EXEC_N
# (150) samples each, so a neighbour's load on this shared machine falls on
# every arm alike; timed one after another in blocks of 300 execs, two
# plain runs differed by up to 30 % here, and the median pair moved by 5 %.
# The arms:
#   plain        no preload
#   plain again  the noise floor: how far two identical arms differ
#   empty        an empty library (no code, no data; cc -shared -nostdlib):
#                what the loader's open, map and close of any preload cost
#   one-function bench/onefunc.c (socket() wrapped, dlsym on first use)
#   shim         libsockaudit.so, default level (SA_LIB to choose one)
#   other build  EXEC_VS=path: a second build of the library (another
#                commit's), to compare two builds turn by turn
# For each: microseconds per exec, wall and CPU (the shell's and its
# children's, from wait4), the ratio plain/arm of the sums (1.0 is no
# cost, 0.95 is 5 % slower) and the median over turns of the same ratio.
# Then the page faults of one exec of /bin/true under each arm (exact: the
# median of 21, from wait4). SOCKAUDIT_LOG is set, as for any audited
# program (the settings' copy is part of what an exec pays).
# Usage: bench/exec_loop.sh   (env: SA_LIB, EXEC_N, EXEC_K, EXEC_PROG, EXEC_ARMS, EXEC_VS)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
LIB=${SA_LIB:-$TOP/libsockaudit.so}
case $LIB in /*) ;; *) LIB=$PWD/$LIB ;; esac
[ -f "$LIB" ] || { echo "exec_loop.sh: $LIB not found (make first)" >&2; exit 2; }
T=$(mktemp -d /tmp/sa-exec.XXXXXX)
trap 'rm -rf "$T"' EXIT
CC=${CC:-cc}
echo 'int sa_bench_nothing;' >"$T/empty.c"
$CC -shared -fPIC -nostdlib -o "$T/empty.so" "$T/empty.c" || exit 2
$CC -shared -fPIC -O2 -o "$T/onefunc.so" "$TOP/bench/onefunc.c" -ldl || exit 2
export EXEC_LIB=$LIB EXEC_EMPTY=$T/empty.so EXEC_ONE=$T/onefunc.so
exec python3 - <<'PY'
import os, statistics, time

lib, empty, one = os.environ["EXEC_LIB"], os.environ["EXEC_EMPTY"], os.environ["EXEC_ONE"]
n = int(os.environ.get("EXEC_N", "150"))
k = int(os.environ.get("EXEC_K", "20"))
prog = os.environ.get("EXEC_PROG", "/bin/true")
arms = [("plain", None), ("plain again", None), ("empty library", empty),
        ("one-function preload", one), ("libsockaudit.so", lib)]
if os.environ.get("EXEC_VS"):
    arms.append(("other build (EXEC_VS)", os.path.abspath(os.environ["EXEC_VS"])))
want = os.environ.get("EXEC_ARMS")
if want:
    arms = [a for a in arms if a[0] in ("plain", "plain again") or a[0].split()[0] in want.split() or a[0].startswith("other")]
loop = "i=0; while [ $i -lt %d ]; do %s; i=$((i + 1)); done" % (k, prog)
base = {k_: v for k_, v in os.environ.items() if k_ != "LD_PRELOAD" and not k_.startswith("SOCKAUDIT_")}
base["SOCKAUDIT_LOG"] = "/dev/null"

def env_of(pre):
    e = dict(base)
    if pre:
        e["LD_PRELOAD"] = pre
    return e

envs = [env_of(p) for _, p in arms]

def sample(e, argv):
    t0 = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, e)
    _, st, ru = os.wait4(pid, 0)
    return time.perf_counter() - t0, ru.ru_utime + ru.ru_stime, ru.ru_minflt

sh = ["/bin/sh", "-c", loop]
for e in envs:          # warm the page cache
    sample(e, sh)
wall = [0.0] * len(arms)
cpu = [0.0] * len(arms)
turns = []             # each turn's wall time per arm
for i in range(n):
    t = [0.0] * len(arms)
    for j in range(len(arms)):
        a = (i + j) % len(arms)
        w, c, _ = sample(envs[a], sh)
        wall[a] += w
        cpu[a] += c
        t[a] = w
    turns.append(t)
# The median over turns of plain's time to the arm's in the same turn: a
# turn the machine's neighbours slowed weighs no more than any other.
med = [statistics.median(t[0] / t[j] for t in turns) for j in range(len(arms))]
flt = [statistics.median(sample(e, [prog])[2] for _ in range(21)) for e in envs]
print("exec loop: %d samples per arm of %d x %s in sh, arms in turn (round robin); nproc %d"
      % (n, k, prog, os.cpu_count()))
print("%-22s %9s %7s %13s %11s %9s %12s" % ("arm", "us/exec", "ratio", "median ratio", "cpu us/exec", "cpu ratio", "faults/exec"))
for j, (name, _) in enumerate(arms):
    print("%-22s %9.1f %7.3f %13.3f %11.1f %9.3f %12d" % (
        name, wall[j] / n / k * 1e6, wall[0] / wall[j], med[j], cpu[j] / n / k * 1e6, cpu[0] / cpu[j], flt[j]))
print("ratio: plain's time / the arm's, over all samples; median ratio: the same turn by turn, the median")
PY
