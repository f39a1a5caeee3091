#!/usr/bin/python3
"""Check that the reference profiles in results/reference have not fallen
behind the profile the tool writes now.

usage: check_reference.py SCHEMA VALIDATOR PROFILE...

For each profile: it validates against the schema (and its figures
against its samples: VALIDATOR is tests/validate_profile.py); it holds
every top-level key of the schema's properties except those the writer
leaves out by design (CONDITIONAL), and every key of the schema's `tool`;
it holds every section of a full run; it was made from a clean tree
(tool.git names a commit, not "-dirty" or "unknown"); where oneDNN was
built in (gemm.onednn.version) it has oneDNN GEMM points, and where the
CPU has AMX it has measured AMX peak points and a measured bf16 GEMM.
Regenerate with scripts/make-reference.sh on a quiet machine.
Exit 0 when every profile passes, 1 with one line per problem."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validate_profile import points as all_points  # noqa: E402

# top-level keys a full, uninterrupted run leaves out by design
CONDITIONAL = {
    "incomplete": "only when --partial stopped the run",
    "headline_null_reasons": "only when a headline figure is null",
}
# the sections of `calibrate --sweep-batch` (a full run)
SECTIONS = ("gemm", "scaling", "attention", "peak", "bandwidth", "roofline",
            "batch_sweep")


def problems_of(schema, d):
    out = []
    for key in schema["properties"]:
        if key == "batch_source" and d.get("optimal_batch_size") is None:
            continue  # written with the figures it explains
        if key not in d and key not in CONDITIONAL and key not in SECTIONS:
            out.append(f"lacks top-level key {key} (the writer emits it)")
    for key in schema["properties"]["tool"].get("properties", {}):
        if key not in d.get("tool", {}):
            out.append(f"lacks tool.{key}")
    for sec in SECTIONS:
        if sec not in d:
            out.append(f"lacks section {sec} (made by a partial run?)")
    git = d.get("tool", {}).get("git", "unknown")
    if git == "unknown" or git.endswith("-dirty"):
        out.append(f"made from a tree that was not clean or not a checkout "
                   f"(tool.git {git})")
    if d.get("headline_status") not in (None, "measured"):
        out.append(f"headline_status {d.get('headline_status')}: measure "
                   f"it again on a quiet machine")
    pts = list(all_points(d))
    if "gemm" in d and "onednn" not in d["gemm"]:
        out.append("lacks gemm.onednn (made before there was a second engine)")
    onednn = (d.get("gemm") or {}).get("onednn") or {}
    if isinstance(onednn.get("version"), str) and not any(
            p.get("engine") == "onednn" and p["id"].startswith("gemm/")
            for p in pts):
        out.append("oneDNN was built in but no oneDNN GEMM point is there")
    isa = set(d.get("machine", {}).get("cpu", {}).get("isa", []))
    if "amx_bf16" in isa:
        if not any(p["id"].startswith("peak/amx") and p["status"] == "ok"
                   for p in pts):
            out.append("the CPU has AMX but no AMX peak point was measured")
        bf16 = (d.get("gemm_best") or {}).get("bf16") or {}
        if bf16.get("status") != "measured":
            out.append("the CPU has AMX but bf16 GEMM is not measured "
                       f"({bf16.get('status')})")
    return out


def main():
    if len(sys.argv) < 4:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    schema_path, validator, *profiles = sys.argv[1:]
    with open(schema_path) as f:
        schema = json.load(f)
    bad = 0
    for path in profiles:
        with open(path) as f:
            d = json.load(f)
        found = problems_of(schema, d)
        v = subprocess.run([sys.executable, validator, schema_path, path],
                           capture_output=True, text=True)
        if v.returncode != 0:
            found += ["schema: " + line for line in v.stdout.splitlines()
                      if line.strip()][:20]
        for p in found:
            print(f"{path}: {p}")
        bad += bool(found)
        if not found:
            print(f"{path}: current")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
