#!/usr/bin/env python3
"""cli-options.py SRC...: the verbs and options the sockaudit CLI parses,
read from its C source, one per line: "verb NAME" or "option -X/--NAME".

Verbs are the first words cli/main.c dispatches on: strcmp(argv[1], "V")
or a table entry { "V", cli_... }. Options are every way the sources parse
one: getopt/getopt_long option strings (-X), getopt_long tables
({ "name", no_argument|required_argument|optional_argument ...} -> --name),
and string literals that are an option and nothing else ("--name",
"--name=" or "--name=value", as strcmp/strncmp compare them; "-X").
A value after "=" is dropped: --color=always is the option --color.
"""
import re
import sys

verbs, opts = set(), set()
for path in sys.argv[1:]:
    with open(path) as f:
        src = f.read()
    src = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
    if path.endswith("main.c"):
        verbs.update(re.findall(r'strn?cmp\(\s*argv\[1\]\s*,\s*"([a-z][a-z0-9-]*)"', src))
        verbs.update(re.findall(r'\{\s*"([a-z][a-z0-9-]*)"\s*,\s*cli_\w+', src))
    for optstring in re.findall(r'getopt(?:_long)?\s*\([^,]+,[^,]+,\s*"([^"]*)"', src):
        opts.update("-" + c for c in optstring if c.isalnum())
    for name in re.findall(r'\{\s*"([a-z][a-z0-9-]*)"\s*,\s*(?:no|required|optional)_argument', src):
        opts.add("--" + name)
    for lit in re.findall(r'"(--?[A-Za-z][A-Za-z0-9-]*)(?:=[^"]*)?"', src):
        opts.add(lit)
for v in sorted(verbs):
    print("verb", v)
for o in sorted(opts):
    print("option", o)
