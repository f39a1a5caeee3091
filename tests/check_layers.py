#!/usr/bin/env python3
"""The one-way rule between folders, checked over the include graph.

Every quoted #include is resolved by its file name to the folder holding
that header (the build puts each folder on the include path), and followed
transitively.  A file in a folder named below may not reach, even through
other headers, a header in the folders it forbids.  Prints each breach as
"FILE: reaches HEADER through A -> B -> ..." and exits 1; 0 when none."""
import os
import re
import sys

# folder -> folders it may not include, even transitively
RULES = {
    "calibrator/profile": ["calibrator/run"],
    "calibrator/report": ["calibrator/run"],
    "calibrator/results": ["calibrator/run"],
}
SEARCHED = ["calibrator", "common", "bench", "kernels", "lib", "include"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main(root):
    headers = {}  # basename -> path relative to root
    for top in SEARCHED:
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith(".h"):
                    rel = os.path.relpath(os.path.join(d, f), root)
                    headers.setdefault(f, rel)
    cache = {}

    def includes(rel):
        if rel not in cache:
            with open(os.path.join(root, rel), encoding="utf-8") as fh:
                names = INCLUDE.findall(fh.read())
            cache[rel] = [headers[os.path.basename(n)] for n in names
                          if os.path.basename(n) in headers]
        return cache[rel]

    bad = 0
    for folder, forbidden in RULES.items():
        base = os.path.join(root, folder)
        for f in sorted(os.listdir(base)):
            if not f.endswith((".c", ".h")):
                continue
            start = os.path.join(folder, f)
            seen, stack = {start}, [(start, [start])]
            while stack:
                cur, path = stack.pop()
                for inc in includes(cur):
                    if inc in seen:
                        continue
                    seen.add(inc)
                    if any(inc.startswith(x + "/") for x in forbidden):
                        print("%s: reaches %s through %s" %
                              (start, inc, " -> ".join(path + [inc])))
                        bad = 1
                    stack.append((inc, path + [inc]))
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
