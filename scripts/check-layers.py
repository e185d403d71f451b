#!/usr/bin/env python3
"""check-layers: floors call only down.

Usage: scripts/check-layers.py OBJDIR [LAYER ...]   (default layers: judge base line kernel state audit core)

OBJDIR holds one folder of objects per layer (build/obj/base/*.o ...), lowest first. For every
object, each symbol it needs (nm -u) must be defined in its own layer or a lower one, never in a
higher one; and inside a layer the files must not call each other in a circle. A LAYER written
a+b+c is one floor of rooms side by side (the CLI's verbs): each may call the floors below, none
calls another. A LAYER "." is the objects directly in OBJDIR (the CLI's main.o). Prints every
offence with the symbol and exits 1 when there is one.
"""
import os
import subprocess
import sys


def syms(obj, undefined):
    args = ["nm", "-u", obj] if undefined else ["nm", "--defined-only", "-g", obj]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if not parts:
            continue
        names.add(parts[-1])
    return names


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    objdir = sys.argv[1]
    layers = sys.argv[2:] or ["judge", "base", "line", "kernel", "state", "audit", "core"]
    defined = {}   # symbol -> (layer index, room, object)
    needs = []     # (layer index, room, object, undefined symbols)
    for i, layer in enumerate(layers):
        for room in layer.split("+"):
            d = os.path.join(objdir, room)
            if not os.path.isdir(d):
                print(f"check-layers: no folder {d}", file=sys.stderr)
                return 2
            for f in sorted(os.listdir(d)):
                if not f.endswith(".o"):
                    continue
                obj = os.path.join(d, f)
                for s in syms(obj, False):
                    defined[s] = (i, room, obj)
                needs.append((i, room, obj, syms(obj, True)))
    bad = 0
    edges = {}     # object -> objects of the same room it calls
    for i, room, obj, und in needs:
        for s in sorted(und):
            if s not in defined:
                continue
            j, where_room, where = defined[s]
            if j > i:
                print(f"upward: {obj} ({room}) uses {s} from {where} ({where_room})")
                bad += 1
            elif j == i and where_room != room:
                print(f"across: {obj} ({room}) uses {s} from {where} ({where_room})")
                bad += 1
            elif j == i and where != obj:
                edges.setdefault(obj, set()).add(where)
    # Circles inside a layer: depth-first search for a back edge.
    state = {}

    def visit(n, path):
        state[n] = 1
        for m in sorted(edges.get(n, ())):
            if state.get(m) == 1 and m in path:
                cyc = path[path.index(m):] + [m]
                print("circle: " + " -> ".join(cyc))
                return 1
            if not state.get(m) and visit(m, path + [m]):
                return 1
        state[n] = 2
        return 0

    for n in sorted(edges):
        if not state.get(n):
            bad += visit(n, [n])
    if bad:
        print(f"check-layers: {bad} offence(s)")
        return 1
    print(f"check-layers: {len(needs)} objects in {len(layers)} layers, every call goes down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
