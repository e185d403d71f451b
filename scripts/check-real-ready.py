#!/usr/bin/env python3
"""Every use of a real libc function on a path that can run before the
shim's init goes through SA_REAL (or follows a READY of that slot): init
now runs at the first call that needs it, so a slot of sa_real may still be
NULL there.

- base/ (but real.c), line/, kernel/identity.c, audit/exec.c: code the
  wrappers, the sink, the fork handler and the init line run before or
  while the table is filled: no sa_real.NAME at all.
- core/: in every exported wrapper, sa_real.NAME only after READY(NAME),
  SA_REAL_READY(NAME) or EXEC_READY(NAME) in the same function.
Usage: check-real-ready.py SHIM_DIR. Exits 1 naming each offence."""
import os
import re
import sys

USE = re.compile(r'\bsa_real\.([a-z_0-9]+)')
READY = re.compile(r'\b(?:READY|SA_REAL_READY|EXEC_READY)\(([a-z_0-9]+)\)')


def code_lines(path):
    """Lines with comments blanked (line numbers kept)."""
    text = open(path).read()
    text = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), text, flags=re.S)
    return [re.sub(r'//.*', '', l) for l in text.split('\n')]


def main(shim):
    bad = []
    strict = [os.path.join('base', f) for f in sorted(os.listdir(os.path.join(shim, 'base')))
              if f.endswith('.c') and f != 'real.c']
    strict += [os.path.join('line', f) for f in sorted(os.listdir(os.path.join(shim, 'line'))) if f.endswith('.c')]
    strict += ['kernel/identity.c', 'audit/exec.c']
    for rel in strict:
        p = os.path.join(shim, rel)
        if not os.path.exists(p):
            continue
        for i, l in enumerate(code_lines(p), 1):
            for m in USE.finditer(l):
                bad.append('%s:%d: sa_real.%s where it may run before init (use SA_REAL)' % (rel, i, m.group(1)))
    core = os.path.join(shim, 'core')
    for f in sorted(os.listdir(core)):
        if not f.endswith('.c'):
            continue
        rel = os.path.join('core', f)
        fn, ready = None, set()
        for i, l in enumerate(code_lines(os.path.join(core, f)), 1):
            if l.startswith('SA_EXPORT'):
                fn, ready = l, set()
            elif l.startswith('}'):
                fn = None
            if fn is None:
                continue
            for m in READY.finditer(l):
                ready.add(m.group(1))
            for m in USE.finditer(l):
                if m.group(1) not in ready:
                    bad.append('%s:%d: sa_real.%s in an exported wrapper before READY(%s)' %
                               (rel, i, m.group(1), m.group(1)))
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else 'shim'))
