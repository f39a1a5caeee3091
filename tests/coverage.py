#!/usr/bin/env python3
"""Every module under calibrator/ is named by a test.

A module (calibrator/**/X.c) is covered when a unit test under tests/unit/
includes its header (calibrator/**/X.h, beside it), or when a test names
it on a "covers:" line of its header comment: a unit test, an end-to-end
script or a helper under tests/ (a comment line that starts with
"covers:"), e.g.

    # covers: calibrator/commands/fleet.c calibrator/fleet/

where a name ending in "/" covers every module in that folder.  A name
on a covers: line that is not in the tree fails too, so the map stays
true.  Usage: coverage.py SOURCE_DIR; exit 1 with the uncovered modules
listed, one a line.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
COVERS = re.compile(r'^\s*(?:#|\*|/\*|//)\s*covers:(.*)$', re.M)


def files(root, top, ext):
    for d, _, names in os.walk(os.path.join(root, top)):
        for n in sorted(names):
            if n.endswith(ext):
                yield os.path.relpath(os.path.join(d, n), root)


def main(root):
    modules = sorted(files(root, 'calibrator', '.c'))
    headers = {}
    for h in files(root, 'calibrator', '.h'):
        headers.setdefault(os.path.basename(h), []).append(h)
    covered, bad = set(), []
    tests = [f for f in files(root, 'tests', '')
             if f.endswith(('.c', '.sh', '.py')) and '/fuzz/' not in f
             and f != 'tests/coverage.py']
    for t in tests:
        with open(os.path.join(root, t), encoding='utf-8') as fh:
            text = fh.read()
        if t.startswith('tests/unit/') and t.endswith('.c'):
            for inc in INCLUDE.findall(text):
                for h in headers.get(inc, []):
                    covered.add(h[:-2] + '.c')
        for line in COVERS.findall(text):
            for name in line.replace('*/', ' ').split():
                if name.endswith('/'):
                    hit = [m for m in modules if m.startswith(name)]
                else:
                    hit = [name] if name in modules else []
                if not hit:
                    bad.append('%s: covers %s, which is not a module' % (t, name))
                covered.update(hit)
    missing = [m for m in modules if m not in covered]
    for line in bad:
        print(line)
    for m in missing:
        print('%s: no unit test includes its header and no test covers it' % m)
    return 1 if bad or missing else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else '.'))
