#!/usr/bin/python3
"""Validate calibrate profiles against the JSON Schema in results/schema,
and check that every point's figures agree with its own samples.

usage: validate_profile.py SCHEMA PROFILE [REQUIRED_SECTION...]
Exit 0 when valid, 1 with one line per problem otherwise."""
import json
import statistics
import sys

import jsonschema


def points(node):
    if isinstance(node, dict):
        if "id" in node and "status" in node:
            yield node
            return
        for v in node.values():
            yield from points(v)
    elif isinstance(node, list):
        for v in node:
            yield from points(v)


def main():
    schema_path, profile_path, *required = sys.argv[1:]
    with open(schema_path) as f:
        schema = json.load(f)
    with open(profile_path) as f:
        profile = json.load(f)
    problems = [f"{'/'.join(map(str, e.path))}: {e.message}"
                for e in jsonschema.Draft202012Validator(schema).iter_errors(profile)]
    for sec in required:
        if sec not in profile:
            problems.append(f"section {sec} is missing")
    n = 0
    for sec in ("gemm", "scaling", "attention", "peak", "bandwidth", "batch_sweep"):
        for p in points(profile.get(sec, {})):
            if p["status"] != "ok":
                continue
            n += 1
            m = p["metric"]
            samples = p[f"samples_{m}"]
            med = statistics.median(samples)
            if abs(p[m] - med) > 1e-6 * max(1.0, abs(med)):
                problems.append(f"{p['id']}: {m} {p[m]} is not the median {med} of its samples")
            st = p["stats"]
            if st["n"] != len(samples) or abs(st["min"] - min(samples)) > 1e-9 * max(1, abs(min(samples))):
                problems.append(f"{p['id']}: stats do not match the samples")
            if not st["ci_low"] <= st["median"] <= st["ci_high"]:
                problems.append(f"{p['id']}: median outside its confidence interval")
    if profile.get("gemm"):
        best = max((p["gflops"] for p in profile["gemm"]["points"]
                    if p["status"] == "ok" and p["dtype"] == "fp32"), default=None)
        if best is not None and profile["gflops"] is not None and profile["gflops"] > best * (1 + 1e-9):
            problems.append("top-level gflops exceeds every fp32 GEMM point")
    for p in problems:
        print(f"{profile_path}: {p}")
    if not problems:
        print(f"{profile_path}: valid ({n} measured points)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
