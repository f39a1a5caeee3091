#!/usr/bin/python3
"""Validate a calibrate fleet profile against its JSON Schema, each embedded
node profile against the profile schema, and the figures against their own
samples and conventions.

usage: validate_fleet.py SCHEMA_DIR FLEET [RANKS [HOSTS]]
Exit 0 when valid, 1 with one line per problem otherwise."""
import json
import statistics
import sys

import jsonschema
from referencing import Registry, Resource


def main():
    schema_dir, path, *rest = sys.argv[1:]
    with open(f"{schema_dir}/calibrate-fleet-1.schema.json") as f:
        fleet_schema = json.load(f)
    with open(f"{schema_dir}/calibrate-profile-1.schema.json") as f:
        prof_schema = json.load(f)
    registry = Registry().with_resources([
        (s["$id"], Resource.from_contents(s)) for s in (fleet_schema, prof_schema)])
    with open(path) as f:
        fleet = json.load(f)
    v = jsonschema.Draft202012Validator(fleet_schema, registry=registry)
    problems = [f"{'/'.join(map(str, e.path))}: {e.message}"
                for e in v.iter_errors(fleet)]
    if rest and fleet.get("ranks") != int(rest[0]):
        problems.append(f"ranks {fleet.get('ranks')}, expected {rest[0]}")
    if len(rest) > 1 and fleet.get("host_count") != int(rest[1]):
        problems.append(f"host_count {fleet.get('host_count')}, expected {rest[1]}")
    n = fleet.get("ranks", 1)
    pts = [("link", p) for L in fleet["links"]["pairs"] for p in L["points"]]
    pts += [("allreduce", p) for p in fleet["allreduce"]["points"]]
    for kind, p in pts:
        med = statistics.median(p["samples_us"])
        if abs(med - p["time_us"]) > 1e-6 * med:
            problems.append(f"{kind} {p['bytes']} B: time_us {p['time_us']} "
                            f"is not the median of its samples ({med})")
        if kind == "allreduce":
            alg = statistics.median(p["bytes"] / (t * 1e3) for t in p["samples_us"])
            bus = alg * 2 * (n - 1) / n
            if abs(bus - p["busbw_gbps"]) > 1e-6 * max(bus, 1e-12):
                problems.append(f"allreduce {p['bytes']} B: busbw {p['busbw_gbps']}"
                                f" != algbw x 2(n-1)/n = {bus}")
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
