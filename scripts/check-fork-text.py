#!/usr/bin/env python3
"""check-fork-text.py LDFILE OBJDIR LIB: the fork text holds what it should.

A function gets its place in the fork text by an attribute on its
definition (SA_FORK_TEXT, SA_START_TEXT in shim/base/placement.h: a
section .text.sa_placed.*) or, for the few that cannot include the shim's
headers (the judges), by its name in LDFILE (shim/sa_fork_text.ld). The
linker matches both silently, so this checks:
  - every .text.sa_placed.* section an object of OBJDIR uses has its line
    in LDFILE (a new macro without its line would leave its functions in
    the generic .text);
  - every name LDFILE places is defined by an object (a renamed function
    would drop out), and a clone the compiler made of it (.text.NAME.*) is
    placed too;
  - in LIB, every function of those sections and names lies before
    sa_fork_text_end, the empty function that closes the fork text.
Prints one line per problem and, last, "checked N"; exits 1 on a problem.
"""
import glob
import os
import re
import subprocess
import sys


def run(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True).stdout


def functions(obj):
    """(section, name) of every function an object defines."""
    out = []
    for l in run("objdump", "-t", obj).splitlines():
        f = l.split()
        if len(f) >= 6 and " F " in l:
            sec = next((x for x in f if x.startswith(".text")), None)
            if sec:
                out.append((sec, f[-1]))
    return out


def main(ld, objdir, lib):
    with open(ld) as f:
        text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    lines = set(re.findall(r"\*\(([^)]*)\)", text))
    by_attr = {s for s in lines if s.startswith(".text.sa_placed.")}
    by_name = {s[len(".text."):] for s in lines if s not in by_attr}
    by_name.discard("sa_fork_text_end")
    problems, want = [], set()
    used = set()
    for o in glob.glob(os.path.join(objdir, "**", "*.o"), recursive=True):
        for sec, name in functions(o):
            if sec.startswith(".text.sa_placed."):
                used.add(sec)
                want.add(name)
            elif sec[len(".text."):] in by_name:
                want.add(name)
            else:
                base = next((n for n in by_name if sec.startswith(".text." + n + ".")), None)
                if base:
                    problems.append("%s: its clone %s is not placed" % (base, sec))
    for sec in sorted(used - by_attr):
        problems.append("%s is used by a placement attribute but %s has no line for it" % (sec, ld))
    for n in sorted(by_name - want):
        problems.append(".text.%s: no object defines %s" % (n, n))
    addr = {}
    for l in run("nm", "--defined-only", lib).splitlines():
        f = l.split()
        if len(f) == 3 and f[1] in "tTwW":
            addr.setdefault(f[2], []).append(int(f[0], 16))
    end = min(addr.get("sa_fork_text_end", [0]))
    if not end:
        problems.append("%s has no sa_fork_text_end" % lib)
    for n in sorted(want):
        if n in addr and not any(a < end for a in addr[n]):
            problems.append("%s is placed but lies after sa_fork_text_end in %s" % (n, lib))
    for p in problems:
        print(p)
    print("checked", len(want))
    return 1 if problems or not want else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
