#!/usr/bin/env python3
"""A linter for the example GitHub Actions workflows (examples/github-actions).

Checks the structure GitHub needs and the rules the examples keep:
  - the top level has `on` and a non-empty `jobs` mapping; `needs` names
    jobs that exist; every `${{` expression is closed;
  - every job has `runs-on` and non-empty `steps` (or is a reusable
    workflow call, `uses`); known keys only;
  - every step is a mapping with exactly one of `run` and `uses`, known
    keys only, `uses` as OWNER/REPO@REF, ./PATH or docker://IMAGE;
  - every job runs in the `debian:12` container, the distribution the
    project is tested on;
  - a self-hosted job that pull requests can start (the workflow has a
    pull request trigger and the job's `if` does not keep it to pushes)
    runs only for pull requests from the same repository (its `if` compares
    github.event.pull_request.head.repo.full_name with github.repository);
  - pull_request_target never checks out the pull request's code;
  - a job that refreshes stored state (its id names a baseline, or it
    runs only on pushes) is serialised by a `concurrency` group that does
    not cancel a refresh in progress;
  - the shell of every `run` block parses (`bash -n`, expressions replaced
    by a word).

usage: check_workflows.py FILE.yml...   exit 0 when every file passes, 1
when one does not (one line per problem), 2 on bad usage.
"""
import re
import subprocess
import sys

try:
    import yaml
except ImportError:
    print("check_workflows: python3-yaml is not installed "
          "(scripts/bootstrap.sh test installs it)")
    sys.exit(77)

JOB_KEYS = {"name", "needs", "permissions", "runs-on", "environment",
            "concurrency", "outputs", "env", "defaults", "if", "steps",
            "timeout-minutes", "strategy", "continue-on-error", "container",
            "services", "uses", "with", "secrets"}
STEP_KEYS = {"id", "if", "name", "uses", "run", "shell", "with", "env",
             "continue-on-error", "timeout-minutes", "working-directory"}
CONTAINER = "debian:12"
SAME_REPO = re.compile(
    r"github\.event\.pull_request\.head\.repo\.full_name\s*==\s*"
    r"github\.repository|github\.repository\s*==\s*"
    r"github\.event\.pull_request\.head\.repo\.full_name")
USES = re.compile(r"^([\w.-]+/[\w./-]+@[\w./-]+|\./[\w./-]+|docker://\S+)$")
EXPR = re.compile(r"\$\{\{.*?\}\}", re.S)


def triggers(doc):
    # YAML 1.1 reads a bare `on` key as the boolean true
    on = doc.get("on", doc.get(True))
    if isinstance(on, str):
        return {on}
    if isinstance(on, list):
        return {str(t) for t in on}
    if isinstance(on, dict):
        return {str(t) for t in on}
    return set()


def runs_on_labels(job):
    r = job.get("runs-on")
    if isinstance(r, str):
        return {r}
    if isinstance(r, list):
        return {str(x) for x in r}
    if isinstance(r, dict):
        labels = r.get("labels", [])
        return {labels} if isinstance(labels, str) else set(map(str, labels))
    return set()


def push_only(job):
    cond = str(job.get("if", ""))
    return ("||" not in cond and
            re.search(r"github\.event_name\s*==\s*'push'", cond) is not None)


def shell_errors(script):
    text = EXPR.sub("GHA_EXPRESSION", script)
    p = subprocess.run(["bash", "-n"], input=text, capture_output=True,
                       text=True)
    if p.returncode == 0:
        return None
    return (p.stderr.strip().splitlines() or ["bash -n failed"])[0]


def check_step(where, step, pr_target, errs):
    if not isinstance(step, dict):
        errs.append("%s: not a mapping" % where)
        return
    for k in sorted(set(step) - STEP_KEYS, key=str):
        errs.append("%s: unknown key '%s'" % (where, k))
    has_run, has_uses = "run" in step, "uses" in step
    if has_run == has_uses:
        errs.append("%s: needs exactly one of run and uses" % where)
    if has_uses:
        uses = str(step["uses"])
        if not USES.match(uses):
            errs.append("%s: uses '%s' is not OWNER/REPO@REF, ./PATH or "
                        "docker://IMAGE" % (where, uses))
        ref = str((step.get("with") or {}).get("ref", ""))
        if (pr_target and uses.startswith("actions/checkout@")
                and "pull_request.head" in ref):
            errs.append("%s: pull_request_target checks out the pull "
                        "request's code" % where)
    if has_run:
        if not isinstance(step["run"], str) or not step["run"].strip():
            errs.append("%s: empty run" % where)
        else:
            why = shell_errors(step["run"])
            if why:
                errs.append("%s: the shell does not parse: %s" % (where, why))


def check_job(name, job, on, job_ids, errs):
    where = "job '%s'" % name
    if not isinstance(job, dict):
        errs.append("%s: not a mapping" % where)
        return
    for k in sorted(set(job) - JOB_KEYS, key=str):
        errs.append("%s: unknown key '%s'" % (where, k))
    needs = job.get("needs", [])
    for n in [needs] if isinstance(needs, str) else needs:
        if n not in job_ids:
            errs.append("%s: needs '%s', which is not a job" % (where, n))
    if "uses" in job:  # a reusable workflow call: no runner of its own
        return
    if "runs-on" not in job:
        errs.append("%s: no runs-on" % where)
    container = job.get("container")
    image = container.get("image") if isinstance(container, dict) else container
    if image != CONTAINER:
        errs.append("%s: runs in %s, not the %s container the project is "
                    "tested on" % (where, image or "no container", CONTAINER))
    labels = runs_on_labels(job)
    pr_started = (on & {"pull_request", "pull_request_target"}
                  and not push_only(job))
    if "self-hosted" in labels and pr_started:
        if not SAME_REPO.search(str(job.get("if", ""))):
            errs.append("%s: a self-hosted job that pull requests start "
                        "must run only for the same repository's (if: "
                        "github.event.pull_request.head.repo.full_name == "
                        "github.repository)" % where)
    if "baseline" in str(name) or push_only(job):
        conc = job.get("concurrency")
        group = conc.get("group") if isinstance(conc, dict) else conc
        if not group:
            errs.append("%s: refreshes stored state without a concurrency "
                        "group" % where)
        elif isinstance(conc, dict) and conc.get("cancel-in-progress") is True:
            errs.append("%s: its concurrency group cancels a refresh in "
                        "progress" % where)
    steps = job.get("steps")
    if not isinstance(steps, list) or not steps:
        errs.append("%s: no steps" % where)
        return
    pr_target = "pull_request_target" in on
    for i, step in enumerate(steps):
        label = step.get("name") if isinstance(step, dict) else None
        check_step("%s step %d%s" % (where, i + 1,
                                     " (%s)" % label if label else ""),
                   step, pr_target, errs)


def check(path):
    errs = []
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        doc = yaml.safe_load(text)
    except (OSError, yaml.YAMLError) as e:
        return ["%s" % str(e).splitlines()[0]]
    if text.count("${{") != len(EXPR.findall(text)):
        errs.append("an expression ${{ is not closed")
    if not isinstance(doc, dict):
        return errs + ["not a mapping"]
    on = triggers(doc)
    if not on:
        errs.append("no triggers (on)")
    jobs = doc.get("jobs")
    if not isinstance(jobs, dict) or not jobs:
        return errs + ["no jobs"]
    for name, job in jobs.items():
        check_job(name, job, on, set(jobs), errs)
    return errs


def main(argv):
    if len(argv) < 2:
        print("usage: check_workflows.py FILE.yml...", file=sys.stderr)
        return 2
    failed = 0
    for path in argv[1:]:
        errs = check(path)
        for e in errs:
            print("%s: %s" % (path, e))
        failed |= bool(errs)
        if not errs:
            print("%s: ok" % path)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
