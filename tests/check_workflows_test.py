#!/usr/bin/env python3
"""The workflow linter (check_workflows.py) can fail: the example workflows
pass it, and each broken copy of them (one rule broken at a time) fails
with the problem named.

usage: check_workflows_test.py EXAMPLES_DIR SCRATCH_DIR
"""
import copy
import os
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_workflows as cw  # noqa: E402

yaml = cw.yaml


def load(path):
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def first_job(doc):
    return next(iter(doc["jobs"].values()))


def self_hosted_pr_job(doc):
    for job in doc["jobs"].values():
        if "self-hosted" in cw.runs_on_labels(job):
            if "pull_request" in str(job.get("if", "")):
                return job
    raise LookupError("no self-hosted pull request job")


def baseline_job(doc):
    for name, job in doc["jobs"].items():
        if "baseline" in name:
            return job
    raise LookupError("no baseline job")


def find_step(doc, wanted):
    for job in doc["jobs"].values():
        for step in job.get("steps", []):
            if wanted(step):
                return step
    raise LookupError("no such step")


def first_run_step(doc):
    return find_step(doc, lambda step: "run" in step)


def checkout_step(doc):
    return find_step(doc, lambda step: str(step.get("uses", ""))
                     .startswith("actions/checkout@"))


def pr_target(doc):
    doc.pop(True, None)
    doc.pop("on", None)
    doc["on"] = {"pull_request_target": None}
    checkout_step(doc).setdefault("with", {})["ref"] = \
        "${{ github.event.pull_request.head.sha }}"


# (file, what is broken, mutation, a part of the expected message)
CASES = [
    ("calibrate.yml", "no runs-on",
     lambda d: first_job(d).pop("runs-on"), "no runs-on"),
    ("calibrate.yml", "a step with neither run nor uses",
     lambda d: first_job(d)["steps"].append({"name": "nothing"}),
     "exactly one of run and uses"),
    ("calibrate.yml", "a step with both run and uses",
     lambda d: first_job(d)["steps"].append(
         {"run": "true", "uses": "actions/checkout@v4"}),
     "exactly one of run and uses"),
    ("calibrate.yml", "an unknown step key",
     lambda d: first_run_step(d).update({"runs": "true"}),
     "unknown key 'runs'"),
    ("calibrate.yml", "uses without a ref",
     lambda d: checkout_step(d).update({"uses": "actions/checkout"}),
     "is not OWNER/REPO@REF"),
    ("calibrate.yml", "needs a job that is not there",
     lambda d: first_job(d).update({"needs": ["nosuchjob"]}),
     "needs 'nosuchjob'"),
    ("calibrate.yml", "Debian 11",
     lambda d: first_job(d).update({"container": "debian:11"}),
     "runs in debian:11"),
    ("calibrate.yml", "no container",
     lambda d: first_job(d).pop("container"), "runs in no container"),
    ("calibrate.yml", "a run block that does not parse",
     lambda d: first_run_step(d).update(
         {"run": "if [ -n \"${{ github.sha }}\" ]; then\n  echo x\n"}),
     "the shell does not parse"),
    ("calibrate.yml", "pull_request_target checking out the head",
     pr_target, "checks out the pull request's code"),
    ("calibrate.yml", "the history job without concurrency",
     lambda d: d["jobs"]["track"].pop("concurrency"),
     "without a concurrency group"),
    ("calibrate-self-hosted.yml", "fork code on the self-hosted runner",
     lambda d: self_hosted_pr_job(d).update(
         {"if": "github.event_name == 'pull_request'"}),
     "must run only for the same repository"),
    ("calibrate-self-hosted.yml", "the baseline job opened to pull requests",
     lambda d: baseline_job(d).pop("if"),
     "must run only for the same repository"),
    ("calibrate-self-hosted.yml", "the baseline without concurrency",
     lambda d: baseline_job(d).pop("concurrency"),
     "without a concurrency group"),
    ("calibrate-self-hosted.yml", "a baseline refresh cancelled midway",
     lambda d: baseline_job(d).update(
         {"concurrency": {"group": "b", "cancel-in-progress": True}}),
     "cancels a refresh in progress"),
]


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    examples, scratch = argv[1], argv[2]
    os.makedirs(scratch, exist_ok=True)
    failed = 0
    for name in ("calibrate.yml", "calibrate-self-hosted.yml"):
        errs = cw.check(os.path.join(examples, name))
        if errs:
            print("FAIL: %s does not pass: %s" % (name, "; ".join(errs)))
            failed += 1
    docs = {n: load(os.path.join(examples, n))
            for n in ("calibrate.yml", "calibrate-self-hosted.yml")}
    for i, (name, what, mutate, want) in enumerate(CASES):
        doc = copy.deepcopy(docs[name])
        mutate(doc)
        path = os.path.join(scratch, "broken%d.yml" % i)
        with open(path, "w", encoding="utf-8") as f:
            yaml.safe_dump(doc, f, sort_keys=False)
        errs = cw.check(path)
        if not any(want in e for e in errs):
            print("FAIL: %s (%s): expected '%s', got %s"
                  % (what, name, want, errs or "no error"))
            failed += 1
        else:
            print("ok: %s: %s" % (what, [e for e in errs if want in e][0]))
    print("%d cases, %d failed" % (len(CASES) + 2, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
