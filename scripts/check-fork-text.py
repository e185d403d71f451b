#!/usr/bin/env python3
"""check-fork-text.py LDFILE OBJDIR SRCDIR: every function LDFILE places by
name still exists.

shim/sa_fork_text.ld gathers a forked child's code by section name
(-ffunction-sections: .text.NAME), and the linker matches names silently:
a renamed or removed function would leave the fork text without a word.
A name passes when an object the line names defines it (nm), or, for a
static function inlined into its callers, when that object's source file
still defines it. A name whose function the compiler cloned
(.text.NAME.constprop.0, .isra.0, .part.0) must have the clone's section
placed too (.text.NAME.*): a clone outside the fork text is a page a
child faults in. Prints one line per missing name and, last,
"checked N"; exits 1 when a name is missing.
"""
import fnmatch
import glob
import os
import re
import subprocess
import sys


def symbols(obj, cache={}):
    if obj not in cache:
        out = subprocess.run(["nm", "--defined-only", obj], capture_output=True, text=True).stdout
        cache[obj] = {f[2].split(".")[0] for f in (l.split() for l in out.splitlines())
                      if len(f) == 3 and f[1] in "tTwW"}
    return cache[obj]


def sections(obj, cache={}):
    if obj not in cache:
        out = subprocess.run(["readelf", "-SW", obj], capture_output=True, text=True).stdout
        cache[obj] = re.findall(r"\]\s+(\.text\.\S+)", out)
    return cache[obj]


def defined_in_source(name, src):
    if not os.path.exists(src):
        return False
    with open(src) as f:
        return re.search(r"^[A-Za-z_][^;=]*[\s*]" + re.escape(name) + r"\(", f.read(), re.M) is not None


def main(ld, objdir, srcdir):
    with open(ld) as f:
        text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    objs = glob.glob(os.path.join(objdir, "**", "*.o"), recursive=True)
    missing, checked = [], 0
    placed = []   # (object pattern, section pattern) of every line
    for m in re.finditer(r"(\S*)\(([^)]*)\)", text):
        for sec in m.group(2).split():
            placed.append((m.group(1).lstrip("*") or "*", sec))
    for m in re.finditer(r"(\S*)\(([^)]*)\)", text):
        pattern = m.group(1).lstrip("*") or "*"
        mine = [o for o in objs if fnmatch.fnmatch(os.path.basename(o), pattern)]
        for sec in m.group(2).split():
            name = re.sub(r"^\.text\.(unlikely\.|hot\.|startup\.)?", "", sec)
            name = re.sub(r"\.\*$", "", name)
            checked += 1
            for o in mine:
                for c in sections(o):
                    if c.startswith(sec + ".") and not any(
                            fnmatch.fnmatch(os.path.basename(o), op) and fnmatch.fnmatch(c, sp) for op, sp in placed):
                        missing.append(m.group(1) + "(" + sec + "): its clone " + c + " is not placed")
            if any(name in symbols(o) for o in mine):
                continue
            srcs = [os.path.join(srcdir, os.path.relpath(o, objdir))[:-2] + ".c" for o in mine]
            if not any(defined_in_source(name, s) for s in srcs):
                missing.append(m.group(1) + "(" + sec + ")" + ("" if mine else ": no such object"))
    for x in missing:
        print(x)
    print("checked", checked)
    return 1 if missing or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
