#!/usr/bin/env python3
"""The behaviour-diff harness's cases, inputs and comparison.

scripts/compat-diff.sh runs the same cases with two builds of `calibrate`
and this file does the rest:

  compat_cases.py gen DATADIR CASEFILE SRCDIR
      write the inputs (synthetic profiles, runs, curves, mutated and
      broken profiles) into DATADIR and the case list into CASEFILE, one
      case a line: ID <tab> KIND <tab> shell command.  Every input is
      generated here from a fixed seed or copied from the source tree, so
      two runs give the same bytes.
  compat_cases.py diff OUTDIR
      normalise what each case left in OUTDIR/old/ID and OUTDIR/new/ID
      (exit code, stdout, stderr, files written) and print one line per
      case that differs; the full diffs go to OUTDIR/diffs/ID.diff.
      Exit 1 when any case differs.

KIND says how a case is compared:
  det      byte for byte, after masking the source directory, the work
           directory, the version's git id and dates
  plot     like det, but images (.png, .svg) only by name
  measure  a measuring run, whose figures differ run to run: the exit
           code; a JSON document's key paths, types (a null matching any)
           and order, array elements merged, the keys a disturbed
           point adds left out; other text as the set of its lines
           (a sweep's stop reason and peak/knee marks masked) with
           every number, engine name, curve shape and plural
           masked, quality notes (check:, warning:, note:, busy
           machine) left out
Standard library only."""
import difflib
import json
import math
import os
import random
import re
import shutil
import sys

# ---------------------------------------------------------------- inputs

# the synthetic profile of the compare tests, from their generator
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "compare"))
from gen_profile import synth_profile  # noqa: E402


def dump(path, obj):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as fh:
        json.dump(obj, fh, indent=1)


def write(path, text, mode="w"):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, mode) as fh:
        fh.write(text)


def gen_compare_inputs(d):
    """The compare/export inputs of tests/compare/e2e.sh and more."""
    g = os.path.join(d, "gen")
    dump(f"{g}/base.json", synth_profile(1))
    dump(f"{g}/aa.json", synth_profile(2))
    dump(f"{g}/aa2.json", synth_profile(7))
    G512 = "gemm/fp32/512x512x512/t1"
    ATT = "attention/fp32/b1h8n512d64/t1"
    dump(f"{g}/slow.json", synth_profile(2, scale={G512: 0.8}))
    dump(f"{g}/halved.json", synth_profile(2, scale={G512: 0.45}))
    dump(f"{g}/lat.json", synth_profile(2, scale={ATT: 1.25}))
    dump(f"{g}/fast.json", synth_profile(2, scale={
        "gemm/fp32/256x256x256/t1": 1.25}))
    dump(f"{g}/zero.json", synth_profile(2, scale={G512: 0.0}))
    dump(f"{g}/few_a.json", synth_profile(1, samples=3))
    dump(f"{g}/few_b.json", synth_profile(2, samples=3, scale={G512: 0.8}))
    dump(f"{g}/one_a.json", synth_profile(1, samples=1))
    dump(f"{g}/one_b.json", synth_profile(2, samples=1))
    dump(f"{g}/noisy.json", synth_profile(3, noise=0.2))
    dump(f"{g}/other.json", synth_profile(2, cpu="Another CPU"))
    dump(f"{g}/othermodel.json", synth_profile(2, model=207,
                                               coretype="Haswell"))
    dump(f"{g}/fewer.json", synth_profile(2, drop=("bandwidth/l1/read",)))
    dump(f"{g}/nolat.json", synth_profile(3, drop=(ATT,), latency=None))
    dump(f"{g}/mixed.json", synth_profile(
        4, scale={G512: 0.7, "gemm/fp32/256x256x256/t1": 1.3,
                  "bandwidth/l1/read": 0.5, ATT: 0.6}))
    dump(f"{g}/fastmachine.json", synth_profile(
        50, run_factor=1.2, scale={G512: 0.45}))
    for i, f in enumerate([1.00, 0.97, 1.03, 0.99, 1.02], 1):
        dump(f"{g}/A/a{i}.json", synth_profile(10 + i, run_factor=f))
        dump(f"{g}/S/s{i}.json", synth_profile(30 + i, run_factor=f,
                                               scale={G512: 0.8}))
        dump(f"{g}/M/m{i}.json", synth_profile(10 + i, run_factor=f))
    for i, f in enumerate([0.955, 1.005, 0.945, 0.985, 0.975], 1):
        dump(f"{g}/B/b{i}.json", synth_profile(20 + i, run_factor=f))
    dump(f"{g}/M/other.json", synth_profile(9, model=207,
                                            coretype="Haswell"))
    os.makedirs(f"{g}/empty", exist_ok=True)
    write(f"{g}/notjson/x.json", "not json\n")


CURVES = {
    # name: CSV text
    "rising": "batch_size,throughput\n1,10\n2,19\n4,37\n8,70\n16,130\n",
    "plateau": "batch_size,throughput\n1,10\n2,19\n4,30\n8,31\n16,30.8\n"
               "32,31.2\n",
    "peaked": "batch_size,throughput\n1,10\n2,19\n4,30\n8,24\n16,15\n",
    "single": "batch_size,throughput\n8,100\n",
    "samples": "machine,batch_size,throughput,status\n"
               "m1,1,10,ok\nm1,1,11,ok\nm1,1,10.5,ok\nm1,2,20,ok\n"
               "m1,2,19,ok\nm1,4,33,ok\nm1,4,34,ok\nm1,8,35,ok\n"
               "m1,8,34,ok\nm1,16,0,failed\nm2,1,5,ok\nm2,2,9,ok\n"
               "m2,4,9.1,ok\nm2,8,0,skipped\n",
    "aliases": "# a comment\nmachine,batch_size,examples_per_s\n"
               "a,1,3\na,4,11\na,16,12\nb,2,7\nb,8,20\n",
    "alias2": "batch_size,throughput_ex_per_s\n1,100\n4,300\n16,310\n",
    "crlf": "\ufeffmachine,batch_size,throughput\r\nx,1,5\r\nx,2,9\r\n"
            "x,4,9.2\r\n",
    "gpu-box": "batch_size,throughput\n8,900\n16,1500\n32,2100\n64,2050\n",
    "extra_cols": "run,machine,batch_size,throughput,note\n"
                  "1,q,1,4,x\n1,q,2,8,y\n1,q,4,15,z\n",
    "quoted": 'machine,batch_size,throughput\n"a,b",1,4\n"a,b",2,7\n'
              '"c ""d""",1,3\n"c ""d""",2,3.1\n',
    # bad curves
    "empty": "",
    "header_only": "batch_size,throughput\n",
    "no_throughput": "batch_size,speed\n1,2\n",
    "no_batch": "size,throughput\n1,2\n",
    "junk": "machine,batch_size,throughput\nx,abc,3\n",
    "neg": "batch_size,throughput\n1,-5\n2,4\n",
    "zero_batch": "batch_size,throughput\n0,5\n2,4\n",
    "frac_batch": "batch_size,throughput\n1.5,5\n2,4\n",
    "short_row": "batch_size,throughput\n1\n2,4\n",
    "long_row": "batch_size,throughput\n1,2,3\n2,4\n",
    "bad_status": "batch_size,throughput,status\n1,5,maybe\n2,4,ok\n",
    "all_failed": "batch_size,throughput,status\n1,0,failed\n2,0,failed\n",
    "nan": "batch_size,throughput\n1,nan\n2,inf\n",
    "huge": "batch_size,throughput\n99999999999999999999,5\n2,4\n",
    "unterminated": 'machine,batch_size,throughput\n"x,1,5\n',
    "binary": "\x00\x01\x02batch_size\x00,throughput\n",
    "dup_header": "batch_size,batch_size,throughput\n1,1,3\n",
}


def gen_curves(d, src):
    c = os.path.join(d, "curves")
    for name, text in CURVES.items():
        write(f"{c}/{name}.csv", text)
    shutil.copy(os.path.join(src, "tests/data/seed_curves.csv"),
                f"{c}/seed_curves.csv")
    corpus = os.path.join(src, "tests/fuzz/corpus/csv")
    if os.path.isdir(corpus):
        for f in sorted(os.listdir(corpus)):
            shutil.copy(os.path.join(corpus, f), f"{c}/fuzz_{f}")
    # the published curves beside the tree when present, else the tree's
    # copy of them (the same curves)
    shared = os.path.join(src, "..", "shared", "testdata", "seed_curves.csv")
    shutil.copy(shared if os.path.exists(shared) else
                os.path.join(src, "tests/data/seed_curves.csv"),
                f"{c}/shared_seed_curves.csv")
    # a wide, long curve set
    rng = random.Random(5)
    rows = ["machine,batch_size,throughput"]
    for m in ("w1", "w2", "w3"):
        top = rng.uniform(100, 1000)
        for b in (1, 2, 4, 8, 16, 32, 64, 128, 256):
            v = top * (1 - math.exp(-b / rng.uniform(4, 40)))
            for _ in range(3):
                rows.append(f"{m},{b},{v * rng.uniform(0.97, 1.03):.4f}")
    write(f"{c}/wide.csv", "\n".join(rows) + "\n")


def gen_refs(d, src, fixtures):
    r = os.path.join(d, "ref")
    os.makedirs(r, exist_ok=True)
    shutil.copy(os.path.join(
        src, "tests/data/kvm-xeon-2core-avx512.json"), f"{r}/ref.json")
    shutil.copy(os.path.join(src, "tests/data/profile_a.json"),
                f"{r}/profile_a.json")
    shutil.copy(os.path.join(src, "tests/data/profile_b.json"),
                f"{r}/profile_b.json")
    fz = os.path.join(src, "tests/fuzz/corpus/profile/minimal.json")
    if os.path.exists(fz):
        shutil.copy(fz, f"{r}/minimal.json")
    for f in sorted(os.listdir(fixtures)) if os.path.isdir(fixtures) else []:
        if f.endswith(".json"):
            shutil.copy(os.path.join(fixtures, f), f"{r}/{f}")


def _paths(x, prefix=(), depth=0, maxdepth=2):
    """Key paths of x (lists by their first element), breadth first."""
    out = []
    if depth > maxdepth:
        return out
    if isinstance(x, dict):
        for k, v in x.items():
            out.append(prefix + (k,))
            out += _paths(v, prefix + (k,), depth + 1, maxdepth)
    elif isinstance(x, list) and x:
        out.append(prefix + (0,))
        out += _paths(x[0], prefix + (0,), depth + 1, maxdepth)
    return out


def _get(x, path):
    for k in path:
        x = x[k]
    return x


def _other_type(v):
    """A value of another JSON type."""
    if isinstance(v, bool):
        return "yes"
    if isinstance(v, (int, float)):
        return "12"
    if isinstance(v, str):
        return 12
    if isinstance(v, list):
        return {"x": 1}
    if isinstance(v, dict):
        return [1, 2]
    return "null"


def _name(path):
    return "_".join(str(k) for k in path).replace("/", "-")


# the deeper paths whose removal and retyping is tried besides depth <= 2
DEEP = [
    ("gemm", "points", 0), ("batch_sweep", "modes", "prefill"),
    ("batch_sweep", "modes", "decode"), ("peak", "points", 0),
    ("bandwidth", "points", 0), ("attention", "points", 0),
    ("scaling", "points", 0), ("roofline", "kernels", 0),
    ("gemm", "points", 0, "stats"),
]


def gen_mutations(d):
    """Every key of the reference profile to depth 2 (and a few deeper
    objects' keys) removed and retyped; truncations; broken files."""
    m = os.path.join(d, "mut")
    os.makedirs(m, exist_ok=True)
    ref_path = os.path.join(d, "ref", "ref.json")
    with open(ref_path) as fh:
        text = fh.read()
    ref = json.loads(text)
    paths = _paths(ref, maxdepth=1)
    for base in DEEP:
        try:
            sub = _get(ref, base)
        except (KeyError, IndexError, TypeError):
            continue
        if isinstance(sub, dict):
            paths += [base + (k,) for k in sub]
    seen, names = set(), []
    for p in paths:
        if p in seen:
            continue
        seen.add(p)
        for op in ("del", "type"):
            doc = json.loads(text)
            parent = _get(doc, p[:-1])
            if op == "del":
                if isinstance(parent, list):
                    parent.pop(p[-1])
                else:
                    del parent[p[-1]]
            else:
                parent[p[-1]] = _other_type(parent[p[-1]])
            n = f"{op}-{_name(p)}"
            dump(f"{m}/{n}.json", doc)
            names.append(n)
    # whole-document breakage
    for frac in (0, 1, 10, 50, 90, 99):
        n = f"trunc{frac}"
        write(f"{m}/{n}.json", text[:len(text) * frac // 100])
        names.append(n)
    special = {
        "empty": "",
        "spaces": "   \n",
        "null": "null",
        "array": "[1, 2, 3]",
        "string": '"calibrate-profile/1"',
        "number": "42",
        "emptyobj": "{}",
        "schema_only": '{"schema": "calibrate-profile/1"}',
        "schema9": text.replace("calibrate-profile/1", "calibrate-profile/9"),
        "schema_fleet": text.replace("calibrate-profile/1",
                                     "calibrate-fleet/1"),
        "schema_num": text.replace('"calibrate-profile/1"', "1"),
        "trailing": text + "\n{}",
        "garbage": "\x00\x01\x02\xff" * 10,
        "nan": text.replace('"gflops": 219.3951407', '"gflops": NaN', 1),
        "dupkey": text.replace('"device": "cpu"',
                               '"device": "cpu", "device": "gpu"', 1),
        "deep": "[" * 5000 + "]" * 5000,
        "corrupt": '{"schema": "calibrate-profile/1", "device_name": ',
    }
    for n, t in special.items():
        write(f"{m}/{n}.json", t, "w" if isinstance(t, str) else "wb")
        names.append(n)
    os.makedirs(f"{m}/adir.json", exist_ok=True)
    names.append("adir")
    # small synthetic profile mutated: every key removed or retyped
    base = synth_profile(1)
    for p in _paths(base, maxdepth=3):
        doc = json.loads(json.dumps(base))
        parent = _get(doc, p[:-1])
        if isinstance(parent, list):
            continue
        del parent[p[-1]]
        n = f"gdel-{_name(p)}"
        dump(f"{m}/{n}.json", doc)
        names.append(n)
    return names


def gen_profiles_for_plan(d):
    """Curve documents and profiles for plan."""
    p = os.path.join(d, "plan")
    write(f"{p}/nocurves.json", '{"schema": "calibrate-peak/1", "curves": []}')
    write(f"{p}/notprofile.json", '{"schema": "calibrate-profile/1"}')


# ----------------------------------------------------------------- cases

class Cases:
    def __init__(self):
        self.rows, self.ids = [], set()

    def add(self, cid, cmd, kind="det"):
        cid = re.sub(r"[^A-Za-z0-9_.=+-]", "_", cid)
        base, i = cid, 2
        while cid in self.ids:
            cid = f"{base}~{i}"
            i += 1
        self.ids.add(cid)
        self.rows.append((cid, kind, cmd))


COMMANDS = ["run", "info", "attention", "peak-flops", "bandwidth", "peak",
            "compare", "export", "plan", "plot", "report", "fleet"]

# run options: flag -> (good values, bad values); None: a flag alone
RUN_FLAGS = {
    "--threads": (["1", "2"], ["0", "99999", "x", "-1", "1.5", ""]),
    "-t": (["1"], ["0", "x"]),
    "--samples": (["1", "3"], ["0", "x", "-2", "1e3"]),
    "--min-time": (["0.01", "1"], ["-1", "x", "0", "inf", "nan"]),
    "--cv-threshold": (["5%", "0.05"], ["5", "x", "0", "-1%"]),
    "--budget-scale": (["0.5", "2"], ["0", "-1", "x", "inf"]),
    "--rounds": (["2"], ["0", "x", "-1"]),
    "--seed": (["7", "0"], ["x", "-1", "1.5"]),
    "--plots": (["pl"], []),
    "--gemm-engine": (["auto", "openblas", "onednn"], ["foo", ""]),
    "--sections": (["gemm,peak", "batch", "bandwidth", "roofline"],
                   ["foo", "", "gemm,,peak", "gemm,foo"]),
    "--preset": (["qwen2-0.5b", "tiny"], ["nosuch", ""]),
    "--hidden": (["64"], ["0", "x", "-5"]),
    "--heads": (["4"], ["0", "x"]),
    "--kv-heads": (["2"], ["0", "x"]),
    "--ffn": (["128"], ["0", "x"]),
    "--seq": (["16"], ["0", "x"]),
    "--mode": (["prefill", "decode", "train", "both", "all",
                "prefill,decode"], ["foo", "prefill,foo", ""]),
    "--layers": (["2"], ["0", "x", "-1"]),
    "--batches": (["1,2,4", "1-256*2", "8"],
                  ["", "0", "a", "4-1", "1-8*1", "1,,2", "-3"]),
    "--max-batch": (["64"], ["0", "x"]),
    "--optimize": (["throughput", "knee"], ["fast", ""]),
    "--tolerance": (["3%", "5"], ["x", "-1", "200"]),
    "--target-effective-batch": (["32"], ["0", "x", "-4"]),
    "--dtype": (["fp32", "bf16", "auto"], ["fp8", ""]),
    "--memory-budget": (["512M", "8G", "1GiB"], ["x", "-1", "12Q", ""]),
    "--output": (["o.json"], []),
    "-o": (["o.json"], []),
    "--quick": (None, None), "-q": (None, None), "--ci": (None, None),
    "--no-progress": (None, None), "--verbose": (None, None),
    "-v": (None, None), "--allow-busy": (None, None),
    "--partial": (None, None), "--no-wait": (None, None),
    "--sweep-batch": (None, None), "--no-extend": (None, None),
}

ATT_FLAGS = {
    "--batch": (["2"], ["0", "x"]), "--heads": (["8"], ["0", "x"]),
    "--kv-heads": (["2"], ["0", "x"]), "--seq": (["64"], ["0", "x"]),
    "--nq": (["16"], ["0", "x"]), "--nk": (["32"], ["0", "x"]),
    "--head-dim": (["64", "1", "256"], ["0", "257", "x"]),
    "--variant": (["scalar", "avx2", "avx512"], ["sse", ""]),
    "--decode": (None, None), "--causal": (None, None),
    "--no-causal": (None, None), "--with-reference": (None, None),
}

FLEET_FLAGS = {
    "--timeout": (["30"], ["-1", "x", "0"]),
    "--node-timeout": (["30"], ["-1", "x"]),
    "--p2p-max": (["64K"], ["x", "0", "-1"]),
    "--allreduce-max": (["1M"], ["x", "0"]),
    "--output": (["f.json"], []),
    "--compare-plain": (None, None),
}


def q(s):
    """Shell-quote one word."""
    if s and re.fullmatch(r"[A-Za-z0-9_./%,=+:*@-]+", s):
        return s
    return "'" + s.replace("'", "'\\''") + "'"


def cli_cases(c):
    c.add("top-help", "$CAL --help")
    c.add("top-h", "$CAL -h")
    c.add("top-version", "$CAL --version")
    c.add("top-V", "$CAL -V")
    c.add("top-unknown-cmd", "$CAL nosuch")
    c.add("top-unknown-flag", "$CAL --bogus")
    c.add("top-unknown-short", "$CAL -Z")
    c.add("top-help-extra", "$CAL --help extra")
    for cmd in COMMANDS:
        for f in ("--help", "-h", "--version", "-V"):
            c.add(f"{cmd}{f}", f"$CAL {cmd} {f}")
        c.add(f"{cmd}-bogus", f"$CAL {cmd} --bogus")
        c.add(f"{cmd}-Z", f"$CAL {cmd} -Z")
        c.add(f"{cmd}-help-eq", f"$CAL {cmd} --help=1")
    for cmd, flags in (("run", RUN_FLAGS), ("attention", ATT_FLAGS),
                       ("fleet", FLEET_FLAGS)):
        for flag, (good, bad) in flags.items():
            if good is None:
                c.add(f"{cmd}{flag}-then-help", f"$CAL {cmd} {flag} --help")
                c.add(f"{cmd}{flag}=x", f"$CAL {cmd} {flag}=x")
                continue
            for v in good:
                c.add(f"{cmd}{flag}={v}-then-help",
                      f"$CAL {cmd} {flag} {q(v)} --help")
            for v in bad:
                c.add(f"{cmd}{flag}={v}", f"$CAL {cmd} {flag} {q(v)}")
            c.add(f"{cmd}{flag}-missing", f"$CAL {cmd} {flag}")
    # run options shared by the other measuring commands
    for cmd in ("attention", "peak-flops", "bandwidth", "fleet"):
        for flag in ("--threads", "--samples", "--min-time", "--rounds",
                     "--seed", "--memory-budget", "--sections"):
            good, bad = RUN_FLAGS[flag]
            c.add(f"{cmd}{flag}={good[0]}-then-help",
                  f"$CAL {cmd} {flag} {q(good[0])} --help")
            c.add(f"{cmd}{flag}={bad[0]}", f"$CAL {cmd} {flag} {q(bad[0])}")
        if cmd != "fleet":  # fleet passes it to its nodes' runs
            c.add(f"{cmd}-sweep-batch", f"$CAL {cmd} --sweep-batch")
        c.add(f"{cmd}-preset-list", f"$CAL {cmd} --preset list")
        c.add(f"{cmd}-positional", f"$CAL {cmd} stray")
    # validation after parsing (no measuring: each is refused)
    for args in ("--heads 8 --kv-heads 3 --sweep-batch",
                 "-o no/such/dir/x.json --quick",
                 "--threads 99999 --quick", "stray", "-qv --bogus",
                 "--preset list", "--preset list --bogus",
                 "--mode train --layers 0 --sweep-batch",
                 "--gemm-engine onednn --sections peak --bogus"):
        c.add(f"run-{args}", f"$CAL run {args}")
    c.add("run-env-engine", "CALIBRATE_GEMM_ENGINE=nosuch $CAL run --quick")
    c.add("info-bogus-arg", "$CAL info stray")
    c.add("info-json-help", "$CAL info --json --help")
    c.add("attention-variant-help", "$CAL attention --variant avx2 --help")
    c.add("attention-dashdash", "$CAL attention -- --quick")


def compare_cases(c):
    G = "in/gen"
    pairs = [("aa", "base.json aa.json"), ("aa2", "aa.json aa2.json"),
             ("slow", "base.json slow.json"), ("halved", "base.json "
                                                         "halved.json"),
             ("lat", "base.json lat.json"), ("fast", "base.json fast.json"),
             ("zero", "base.json zero.json"), ("few", "few_a.json few_b.json"),
             ("one", "one_a.json one_b.json"), ("noisy", "base.json "
                                                         "noisy.json"),
             ("fewer", "base.json fewer.json"),
             ("fewer-rev", "fewer.json base.json"),
             ("nolat", "base.json nolat.json"), ("mixed", "base.json "
                                                          "mixed.json"),
             ("machine-speed", "A/a1.json fastmachine.json"),
             ("self", "base.json base.json")]
    fmts = ["table", "md", "json"]
    for name, args in pairs:
        a = " ".join(f"{G}/{x}" for x in args.split())
        for f in fmts:
            c.add(f"compare-{name}-{f}", f"$CAL compare --format {f} {a}")
        c.add(f"compare-{name}-ra15", f"$CAL compare --run-allowance 15% {a}")
        c.add(f"compare-{name}-ra15-md",
              f"$CAL compare --run-allowance 15% --format md {a}")
        c.add(f"compare-{name}-ra15-json",
              f"$CAL compare --run-allowance 15% --format json {a}")
    for name in ("slow", "mixed", "aa"):
        a = f"{G}/base.json {G}/{name}.json"
        c.add(f"compare-{name}-html", f"$CAL compare --format html -o r.html "
              f"--run-allowance 15% {a}", "plot")
        c.add(f"compare-{name}-warn", f"$CAL compare --run-allowance 15% "
              f"--warn-only {a}")
        for t in ("25%", "0.01", "1%", "99%"):
            c.add(f"compare-{name}-thr{t}", f"$CAL compare --run-allowance 15%"
                  f" --threshold {t} {a}")
        for al in ("0.05", "0.5", "0.001"):
            c.add(f"compare-{name}-alpha{al}",
                  f"$CAL compare --run-allowance 15% --alpha {al} {a}")
        allow = "--run-allowance 15%"
        for suffix, flags in (
                ("only", f"--only-changed {allow}"),
                ("filter", f"--filter 'gemm/*,bandwidth/*' {allow}"),
                ("o-md", f"{allow} -o report.md --format md"),
                ("o-json", f"{allow} --output=r.json --format=json")):
            c.add(f"compare-{name}-{suffix}", f"$CAL compare {flags} {a}")
    # directories of runs, lists, stdin
    D = {"A": f"{G}/A", "B": f"{G}/B", "S": f"{G}/S", "M": f"{G}/M"}
    for name, args in (("AB", "A B"), ("AS", "A S"), ("MB", "M B"),
                       ("BA", "B A"), ("SA", "S A")):
        a = " ".join(D[x] for x in args.split())
        for f in fmts:
            c.add(f"compare-dirs-{name}-{f}", f"$CAL compare --format {f} {a}")
        c.add(f"compare-dirs-{name}-only", f"$CAL compare --only-changed {a}")
        c.add(f"compare-dirs-{name}-adm",
              f"$CAL compare --allow-different-machines {a}")
    c.add("compare-dirs-html", f"$CAL compare --format html -o r.html "
          f"{G}/A {G}/S", "plot")
    c.add("compare-lists", f"$CAL compare --base {G}/A/a1.json {G}/A/a2.json "
          f"{G}/A/a3.json --new {G}/B/b1.json {G}/B/b2.json {G}/B/b3.json")
    c.add("compare-lists-eq", f"$CAL compare --base={G}/A --new={G}/S/s1.json")
    c.add("compare-lists-dir", f"$CAL compare --base {G}/A --new {G}/S/s2.json")
    c.add("compare-filter-none", f"$CAL compare --filter 'nothing/*' {G}/A "
          f"{G}/S")
    c.add("compare-filter-some", f"$CAL compare --format json --filter "
          f"'bandwidth/*' {G}/A {G}/S")
    c.add("compare-stdin", f"$CAL compare --base - --new {G}/B <{G}/A/a1.json")
    c.add("compare-stdin-pos", f"$CAL compare - {G}/aa.json <{G}/base.json")
    c.add("compare-stdin-twice", f"$CAL compare - - <{G}/A/a1.json")
    c.add("compare-empty-dir", f"$CAL compare {G}/empty {G}/B")
    c.add("compare-notjson-dir", f"$CAL compare {G}/notjson {G}/B")
    c.add("compare-base-only", f"$CAL compare --base {G}/A")
    c.add("compare-base-nothing", f"$CAL compare --base --new {G}/B")
    c.add("compare-lists-and-pos", f"$CAL compare {G}/A --base {G}/A --new "
          f"{G}/B")
    c.add("compare-other-cpu", f"$CAL compare {G}/base.json {G}/other.json")
    c.add("compare-other-cpu-adm", f"$CAL compare --allow-different-machines "
          f"{G}/base.json {G}/other.json")
    c.add("compare-other-model", f"$CAL compare {G}/base.json "
          f"{G}/othermodel.json")
    c.add("compare-other-model-json", f"$CAL compare --format json "
          f"--allow-different-machines {G}/base.json {G}/othermodel.json")
    # reference profiles: A/A, different machines
    R = "in/ref"
    for a, b in (("ref", "ref"), ("profile_a", "profile_a"),
                 ("profile_a", "profile_b"), ("ref", "profile_a"),
                 ("profile_b", "ref")):
        for f in fmts:
            c.add(f"compare-{a}-{b}-{f}", f"$CAL compare --format {f} "
                  f"--allow-different-machines {R}/{a}.json {R}/{b}.json")
        c.add(f"compare-{a}-{b}-strict", f"$CAL compare {R}/{a}.json "
              f"{R}/{b}.json")
    c.add("compare-ref-html", f"$CAL compare --format html -o r.html "
          f"{R}/ref.json {R}/ref.json", "plot")
    # bad values
    b2 = f"{G}/base.json {G}/aa.json"
    for flag, vals in (("--threshold", ["5", "x", "0", "100%", "-5%", "",
                                        "1.5"]),
                       ("--alpha", ["2", "0", "x", "-0.1", "1", ""]),
                       ("--run-allowance", ["5", "x", "0", "150%", ""]),
                       ("--format", ["xml", "", "TABLE"]),
                       ("--filter", [""])):
        for v in vals:
            c.add(f"compare{flag}={v}", f"$CAL compare {flag} {q(v)} {b2}")
        c.add(f"compare{flag}-missing", f"$CAL compare {b2} {flag}")
    c.add("compare-one", f"$CAL compare {G}/base.json")
    c.add("compare-three", f"$CAL compare {b2} {G}/slow.json")
    c.add("compare-none", "$CAL compare")
    c.add("compare-missing", f"$CAL compare {G}/base.json missing.json")
    c.add("compare-o-nodir", f"$CAL compare -o no/such/dir/r.txt {b2}")
    c.add("compare-o-missing", f"$CAL compare {b2} -o")
    c.add("compare-good-then-help", f"$CAL compare --threshold 10% --alpha "
          f"0.05 --help")


def export_cases(c):
    profs = ["in/gen/base.json", "in/gen/nolat.json", "in/gen/mixed.json",
             "in/gen/one_a.json", "in/ref/ref.json", "in/ref/profile_a.json",
             "in/ref/profile_b.json", "in/ref/minimal.json"]
    for p in profs:
        n = os.path.basename(p)[:-5]
        for f in ("bmf", "gab", "gab-smaller"):
            c.add(f"export-{n}-{f}", f"$CAL export --format {f} {p}")
        c.add(f"export-{n}-bmf-o", f"$CAL export --format=bmf -o out.json {p}")
        c.add(f"export-{n}-gab-o", f"$CAL export -f gab --output out.json {p}")
    p = profs[0]
    for args in ("--format csv", "", "--format", "--format bmf",
                 "--format bmf -o no/such/dir/x.json",
                 "--format bmf extra.json", "--format bmf -o"):
        tail = f" {p}" if args not in ("--format", "--format bmf -o") else ""
        if args == "--format bmf":
            tail = ""
        c.add(f"export-bad-{args}", f"$CAL export {args}{tail}")
    c.add("export-two", f"$CAL export --format bmf {p} {p}")
    c.add("export-stdin", f"$CAL export --format gab - <{p}")
    c.add("export-missing", "$CAL export --format bmf missing.json")


def peak_cases(c):
    names = sorted(list(CURVES) + ["seed_curves", "shared_seed_curves",
                                   "wide", "fuzz_bom_crlf", "fuzz_machines",
                                   "fuzz_simple"])
    for n in names:
        p = f"in/curves/{n}.csv"
        c.add(f"peak-{n}", f"$CAL peak {p}")
        c.add(f"peak-{n}-json", f"$CAL peak {p} --format json")
    for n in ("seed_curves", "shared_seed_curves", "samples", "wide",
              "plateau", "peaked"):
        p = f"in/curves/{n}.csv"
        for args in ("--tolerance 0", "--tolerance 10%", "--tolerance 1",
                     "--optimize knee", "--optimize knee --format json",
                     "--target-effective-batch 64",
                     "--target-effective-batch 7 --format json",
                     "-o out.txt", "--format json -o out.json",
                     "--output=-"):
            c.add(f"peak-{n}-{args}", f"$CAL peak {p} {args}")
    p = "in/curves/seed_curves.csv"
    for args in ("--format xml", "--format", "--tolerance x",
                 "--tolerance -1", "--tolerance 100", "--tolerance 101%",
                 "--optimize fast", "--target-effective-batch 0",
                 "--target-effective-batch x", "-o no/such/dir/x",
                 "--bogus", "-o"):
        c.add(f"peak-bad-{args}", f"$CAL peak {p} {args}")
    c.add("peak-none", "$CAL peak")
    c.add("peak-two", f"$CAL peak {p} {p}")
    c.add("peak-missing", "$CAL peak missing.csv")
    c.add("peak-dir", "$CAL peak in/curves")
    c.add("peak-stdin", f"$CAL peak - <{p}")
    c.add("peak-stdin-json", f"$CAL peak - --format json <{p}")


def plan_cases(c):
    R, C = "in/ref", "in/curves"
    seed = f"{C}/seed_curves.csv"
    peakj = f"{R}/peak.json"
    fleet = f"{R}/fleet.json"
    inputs = {
        "ref": f"{R}/ref.json", "ab": f"{R}/profile_a.json {R}/profile_b.json",
        "csv": seed, "csv-ref": f"{seed} {R}/ref.json",
        "peak-ref": f"{peakj} {R}/ref.json",
        "peak-csv-ref": f"{peakj} {seed} {R}/ref.json",
        "gpu-ref": f"{C}/gpu-box.csv {R}/ref.json",
        "wide": f"{C}/wide.csv", "fleet": fleet,
        "fleet-ref": f"{fleet} {R}/ref.json",
    }
    works = ["--examples 1000", "--steps 1000 --global-batch 64",
             "--epochs 3 --dataset-examples 200000", ""]
    for n, inp in inputs.items():
        for w in works:
            c.add(f"plan-{n}-{w}", f"$CAL plan {inp} {w}")
        for suffix, flags in (("md", "--format md"), ("json", "--format json"),
                              ("params", "--model-params 7e9"),
                              ("params-json",
                               "--model-params 5e8 --format json")):
            c.add(f"plan-{n}-{suffix}",
                  f"$CAL plan {inp} --examples 1000 {flags}")
    c.add("plan-price", f"$CAL plan {peakj} {R}/ref.json --steps 1000 "
          "--global-batch 64 --price-per-hour machine_a=4.10 "
          "--price-per-hour 0.05")
    c.add("plan-price-md", f"$CAL plan {peakj} {R}/ref.json --steps 1000 "
          "--global-batch 64 --price-per-hour machine_a=4.10 "
          "--price-per-hour 0.05 --format md")
    c.add("plan-price-json", f"$CAL plan {C}/gpu-box.csv {R}/ref.json "
          "--epochs 3 --dataset-examples 200000 --price-per-hour "
          "gpu-box=2.40 --price-per-hour 0.10 --format json")
    c.add("plan-inference-fit", f"$CAL plan {R}/profile_a.json "
          f"{R}/profile_b.json --examples 1000 --model-params 7e10 --dtype "
          "fp16 --training inference --memory-gb machine_a=200")
    model = f"$CAL plan {R}/ref.json --examples 1000"
    for args in ("--model-params 5e8 --layers 24",
                 "--model-params 5e8 --layers 24 --seq 512",
                 "--model-params 5e8 --layers 24 --checkpointing",
                 "--model-params 5e8 --layers 24 --training lora "
                 "--lora-rank 8",
                 "--model-params 5e8 --training lora --lora-fraction 0.05",
                 "--model-params 5e8 --dtype fp32",
                 "--model-params 5e8 --dtype int8 --training inference",
                 "--model-params 5e8 --activation-fraction 0.1",
                 "--model-params 5e8 --headroom 0.3",
                 "--model-params 7e9 --memory-gb ref=200",
                 "--model-params 7e12",
                 "--target-effective-batch 256",
                 "--target-effective-batch 256 --model-params 5e8 --format "
                 "json", "--layers 24 --model-params 5e8 --format md",
                 "--steps 10 --global-batch 4"):
        c.add(f"plan-model-{args}", f"{model} {args}")
    for args in ("--model-params 7e9", "--model-params 5e8",
                 "--model-params 5e8 --global-batch 64 --steps 10",
                 "--model-params 1e8 --target-effective-batch 128",
                 "--model-params 5e8 --format json",
                 "--model-params 5e8 --format md",
                 "--model-params 1e8 --layers 4 --format json"):
        c.add(f"plan-fleet-{args}", f"$CAL plan {fleet} --examples 1000 "
              f"{args}")
    c.add("plan-o", f"$CAL plan {seed} --examples 100 -o plan.txt")
    c.add("plan-o-json", f"$CAL plan {seed} --examples 100 --format json "
          "--output plan.json")
    c.add("plan-stdin", f"$CAL plan - --examples 100 <{seed}")
    c.add("plan-stdin-json", f"$CAL plan - --examples 100 <{R}/ref.json")
    # bad
    for args in ("--examples 10 --price-per-hour gpu=3", "--price-per-hour 3",
                 "--examples 10 --price-per-hour machine_a=1",
                 "--examples 10 --steps 5 --global-batch 2", "--epochs 2",
                 "--steps 2", "--model-params 5e8 --layers 24",
                 "--memory-gb 80", "--examples 10 --memory-gb nobody=80",
                 "--examples 0", "--examples x", "--examples -5",
                 "--examples 1.5", "--steps 0 --global-batch 2",
                 "--steps 5 --global-batch 0", "--epochs x "
                 "--dataset-examples 5", "--epochs 1 --dataset-examples 0",
                 "--model-params x", "--model-params 0", "--model-params -1",
                 "--dtype fp8", "--training half", "--lora-fraction 2",
                 "--lora-fraction 0", "--layers 0", "--layers x",
                 "--seq 0", "--lora-rank 0", "--activation-fraction -1",
                 "--headroom 1", "--headroom -0.1", "--headroom x",
                 "--memory-gb machine_a=x", "--memory-gb =5",
                 "--price-per-hour machine_a=-1", "--price-per-hour x",
                 "--target-effective-batch 0", "--format xml",
                 "--format", "--examples", "--bogus", "-o no/such/dir/x",
                 "--examples 10 --model-params 5e8 --lora-rank 8",
                 "--examples 10 --checkpointing"):
        c.add(f"plan-bad-{args}", f"$CAL plan {seed} {args}")
    for f in ("empty.csv", "junk.csv", "header_only.csv", "neg.csv"):
        c.add(f"plan-bad-{f}", f"$CAL plan {C}/{f} {R}/ref.json --examples 10")
    for f in ("nocurves.json", "notprofile.json"):
        c.add(f"plan-bad-{f}", f"$CAL plan in/plan/{f} {R}/ref.json "
              "--examples 10")
    c.add("plan-none", "$CAL plan --examples 10")
    c.add("plan-missing", "$CAL plan missing.json --examples 10")
    c.add("plan-dir", "$CAL plan in/ref --examples 10")
    c.add("plan-same-twice", f"$CAL plan {seed} {seed} --examples 10")


def plot_report_cases(c):
    R = "in/ref"
    sets = {"ref": f"{R}/ref.json", "a": f"{R}/profile_a.json",
            "b": f"{R}/profile_b.json", "ab": f"{R}/profile_a.json "
            f"{R}/profile_b.json", "ref-a": f"{R}/ref.json {R}/profile_a.json",
            "gen": "in/gen/base.json", "minimal": f"{R}/minimal.json"}
    for n, s in sets.items():
        c.add(f"plot-{n}-script", f"$CAL plot {s} --script-only -o pl", "plot")
    for n in ("ref", "ab"):
        c.add(f"plot-{n}-png", f"$CAL plot {sets[n]} -o pl", "plot")
        c.add(f"plot-{n}-svg", f"$CAL plot {sets[n]} --format svg -o pl",
              "plot")
        c.add(f"plot-{n}-templates", f"$CAL plot {sets[n]} --script-only "
              "--templates \"$SRC/plots\" -o pl", "plot")
    for n in ("ref", "a", "ab", "ref-a", "gen", "minimal"):
        c.add(f"report-{n}", f"$CAL report {sets[n]} -o r.html", "plot")
    c.add("report-ab-thr", f"$CAL report {sets['ab']} --threshold 10% "
          "-o r.html", "plot")
    c.add("report-stdout", f"$CAL report {sets['a']} -o -", "plot")
    c.add("report-templates", f"$CAL report {sets['a']} --templates "
          "\"$SRC/plots\" -o r.html", "plot")
    for args in ("", "-o", "--threshold 5 -o r.html", "--threshold x -o r.html",
                 "--templates no/such -o r.html", "-o no/such/dir/r.html",
                 "--bogus -o r.html"):
        c.add(f"report-bad-{args}", f"$CAL report {sets['a']} {args}")
    c.add("report-none", "$CAL report -o r.html")
    for args in ("--format gif", "--format", "-o -", "--templates no/such",
                 "--bogus", "-o"):
        c.add(f"plot-bad-{args}", f"$CAL plot {sets['a']} {args}")
    c.add("plot-none", "$CAL plot -o pl")
    c.add("plot-missing", "$CAL plot missing.json --script-only -o pl")
    c.add("plot-fleet", f"$CAL plot {R}/fleet.json --script-only -o pl",
          "plot")


def mutation_cases(c, names):
    """Every broken profile through compare, and in turn through export,
    plan or plot (each reads other keys); a few through report."""
    R = "in/ref/ref.json"
    for i, n in enumerate(names):
        m = f"in/mut/{n}.json"
        c.add(f"mut-compare-{n}", f"$CAL compare {R} {m}")
        broken = not n.startswith(("del-", "type-", "gdel-"))
        if broken or i % 3 == 0:
            c.add(f"mut-export-{n}", f"$CAL export --format bmf {m}")
        if broken or i % 3 == 1:
            c.add(f"mut-plan-{n}", f"$CAL plan {m} --examples 100 "
                  "--model-params 5e8")
        if broken or i % 3 == 2:
            c.add(f"mut-plot-{n}", f"$CAL plot {m} --script-only -o pl",
                  "plot")
        if i % 15 == 0 or n in ("empty", "trunc50", "schema9", "adir"):
            c.add(f"mut-report-{n}", f"$CAL report {m} -o r.html", "plot")
        if n.startswith("gdel-") or broken:
            c.add(f"mut-gab-{n}", f"$CAL export --format gab-smaller {m}")
    c.add("mut-compare-missing", f"$CAL compare {R} in/mut/missing.json")


def measure_cases(c):
    base = "--quick --allow-busy --no-progress"
    c.add("measure-run-gemm", f"$CAL run {base} --sections gemm -o p.json",
          "measure")
    c.add("measure-run-peak-bw", f"$CAL run {base} --sections peak,bandwidth"
          " -o p.json", "measure")
    c.add("measure-run-att-roof", f"$CAL run {base} --sections "
          "attention,roofline,scaling -o p.json", "measure")
    c.add("measure-run-batch", f"$CAL run {base} --sections batch "
          "--batches 1,2 --no-extend --mode prefill -o p.json", "measure")
    c.add("measure-run-stdout", f"$CAL run {base} --sections peak -o -",
          "measure")
    c.add("measure-attention", f"$CAL attention {base} --heads 4 --seq 64 "
          "--head-dim 64 -o p.json", "measure")
    c.add("measure-peak-flops", f"$CAL peak-flops {base} -o p.json",
          "measure")
    c.add("measure-info", "$CAL info", "measure")
    c.add("measure-info-json", "$CAL info --json", "measure")


def gen(datadir, casefile, src):
    if os.path.exists(datadir):
        shutil.rmtree(datadir)
    os.makedirs(datadir)
    fixtures = os.path.join(src, "tests", "compat-data")
    here = os.path.dirname(os.path.abspath(__file__))
    if not os.path.isdir(fixtures):  # the harness's own tree
        fixtures = os.path.join(here, "..", "tests", "compat-data")
    gen_refs(datadir, src, fixtures)
    gen_compare_inputs(datadir)
    gen_curves(datadir, src)
    gen_profiles_for_plan(datadir)
    names = gen_mutations(datadir)
    c = Cases()
    cli_cases(c)
    compare_cases(c)
    export_cases(c)
    peak_cases(c)
    plan_cases(c)
    plot_report_cases(c)
    mutation_cases(c, names)
    measure_cases(c)
    with open(casefile, "w") as fh:
        for cid, kind, cmd in c.rows:
            fh.write(f"{cid}\t{kind}\t{cmd}\n")
    print(f"{len(c.rows)} cases, inputs in {datadir}", file=sys.stderr)


# ------------------------------------------------------------ normalising

NUM = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
DATE = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?Z?"
                  r"(?: UTC)?")
IMAGES = (".png", ".svg", ".pdf")


class Masks:
    """What differs between two builds or two directories by design."""

    def __init__(self, side_dir, outdir):
        self.subs = []
        meta = os.path.join(side_dir, "meta.json")
        with open(meta) as fh:
            m = json.load(fh)
        for key, tag in (("src", "@SRC@"), ("git", "@GIT@")):
            if m.get(key):
                self.subs.append((m[key], tag))
        work = os.path.join(outdir, "work")
        self.subs += [(work, "@WORK@"), (os.path.realpath(work), "@WORK@"),
                      (outdir, "@OUT@"), (os.path.realpath(outdir), "@OUT@")]
        self.subs.sort(key=lambda s: -len(s[0]))

    def text(self, s):
        for a, b in self.subs:
            s = s.replace(a, b)
        s = DATE.sub("@DATE@", s)
        s = re.sub(r"/tmp/[A-Za-z0-9_.-]+", "@TMP@", s)
        return s


def _read(path):
    try:
        with open(path, "rb") as fh:
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return None


# lines of a measuring run that come and go with the machine's load and
# the figures measured (quality notes): left out of the comparison
NOISE_LINE = re.compile(r"^(calibrate: )?((check|warning|note|busy machine)"
                        r"\b|the clock under vector load)")
# keys a measured point carries only when it was disturbed, and the
# implementation a GEMM engine names only for some engines (which engine
# wins is the machine's call)
NOISE_KEYS = {"contaminated", "remeasured", "throttled", "load", "impl"}


def mask_numbers(s):
    lines = []
    for line in s.splitlines():
        if NOISE_LINE.match(line.strip()):
            continue
        line = NUM.sub("#", line).replace("~", "")
        line = re.sub(r"#(?:[ ,.:/x×#-]*#)+", "#", line)
        lines.append(re.sub(r"\s+", " ", line).strip())
    return "\n".join(lines)


def _scalar(x):
    return not isinstance(x, (dict, list))


def json_shape(x, path="$"):
    """Key paths, types and order of a measured JSON document: the
    elements of an array merged (every path any of them has, in the order
    first seen), the keys a disturbed point adds left out."""
    out = []
    if isinstance(x, dict):
        out.append(f"{path} {{}}")
        for k, v in x.items():
            if k in NOISE_KEYS or (k == "reason" and
                                   x.get("status") == "contaminated"):
                continue
            out += json_shape(v, f"{path}.{k}")
    elif isinstance(x, list):
        if all(_scalar(v) for v in x):
            out.append(f"{path} [scalars]")
            return out
        out.append(f"{path} []")
        seen = set()
        for v in x:
            for line in json_shape(v, f"{path}[]"):
                if line not in seen:
                    seen.add(line)
                    out.append(line)
    else:
        t = ("bool" if isinstance(x, bool) else "null" if x is None else
             "num" if isinstance(x, (int, float)) else "str")
        out.append(f"{path} {t}")
    return out


def _measured_text(s):
    """A measuring run's text: numbers, engines and quality notes masked."""
    s = re.sub(r"\b(openblas|onednn)\b", "ENGINE", mask_numbers(s))
    s = re.sub(r"(?m)^(theoretical:.*?); bf# measured.*$", r"\1", s)
    # plurals (they follow the counts), and a measured curve's shape
    s = re.sub(r"\b([a-z]{3,}?)s\b", r"\1", s)
    s = re.sub(r"\bshape (rising|plateau|peaked|single)\b", "shape SHAPE", s)
    # where a measured sweep stopped, and which row is its peak or knee
    s = re.sub(r"(?m) \[[a-z ,]+\]$", " [STOP]", s)
    s = re.sub(r"(?m) ?<- [a-z, ]+$", "", s)
    return [line for line in s.splitlines() if line]


def _section(name, text, kind, masks):
    """(name, mode, lines) of one output: mode exact, set (the lines as a
    set) or shape (a measured JSON document's key paths)."""
    if kind == "measure":
        try:
            doc = json.loads(text)
            if isinstance(doc, (dict, list)):
                return (name, "shape", json_shape(doc))
        except ValueError:
            pass
        return (name, "set", _measured_text(masks.text(text)))
    return (name, "exact", masks.text(text).splitlines())


def norm_case(case_dir, kind, masks):
    """The sections of everything a case left behind."""
    rc = (_read(os.path.join(case_dir, "rc")) or "?").strip()
    out = [("exit", "exact", [rc])]
    for stream in ("stdout", "stderr"):
        text = _read(os.path.join(case_dir, stream)) or ""
        out.append(_section(stream, text, kind, masks))
    files = os.path.join(case_dir, "files")
    for root, dirs, fnames in os.walk(files):
        dirs.sort()
        for f in sorted(fnames):
            p = os.path.join(root, f)
            rel = os.path.relpath(p, files)
            if f.endswith(IMAGES) and kind != "det":
                size = os.path.getsize(p)
                out.append((f"file {rel}", "exact",
                            ["(image, %s)" % ("not empty" if size else
                                              "empty")]))
                continue
            out.append(_section(f"file {rel}", _read(p) or "", kind, masks))
    if not os.path.isdir(files):
        out.append(("files", "exact", ["(none)"]))
    return out


def _shape_diff(a, b):
    """Paths or types in one measured document only, and common paths in
    another order.  A null matches any type (a figure or note a run did
    not have is null)."""
    nulls = {x[:-5] for x in a + b if x.endswith(" null")}

    def unify(lines):  # where either side has a null, any type
        return [x.rsplit(" ", 1)[0] + " any" if x.rsplit(" ", 1)[0] in nulls
                else x for x in lines]
    a, b = unify(a), unify(b)
    sa, sb = set(a), set(b)
    out = [f"-{x}" for x in a if x not in sb]
    out += [f"+{x}" for x in b if x not in sa]
    ca = [x for x in a if x in sb]
    cb = [x for x in b if x in sa]
    if ca != cb:
        out += [" order of the common keys:"]
        out += list(difflib.unified_diff(ca, cb, "old", "new", lineterm="",
                                         n=1))[2:]
    return out


def compare_case(a, b):
    """The differences between two normalised cases, as diff lines."""
    da, db = {n: (m, l) for n, m, l in a}, {n: (m, l) for n, m, l in b}
    out = []
    for name in list(da) + [n for n in db if n not in da]:
        if name not in db or name not in da:
            side = "old" if name in da else "new"
            out += [f"## {name}: only in {side}"]
            out += [("-" if side == "old" else "+") + x
                    for x in (da.get(name) or db.get(name))[1][:20]]
            continue
        (mode, la), (_, lb) = da[name], db[name]
        if mode == "exact":
            d = list(difflib.unified_diff(la, lb, "old", "new",
                                          lineterm="", n=2))[2:]
        elif mode == "set":
            sa, sb = set(la), set(lb)
            d = [f"-{x}" for x in la if x not in sb]
            d += [f"+{x}" for x in lb if x not in sa]
        else:
            d = _shape_diff(la, lb)
        if d:
            out += [f"## {name} ({mode})"] + d
    return out


def _first(lines, sign):
    return next((x[1:] for x in lines if x.startswith(sign) and
                 not x.startswith(sign * 3)), "")


def diff(outdir):
    with open(os.path.join(outdir, "cases.tsv")) as fh:
        cases = [line.rstrip("\n").split("\t", 2) for line in fh
                 if line.strip()]
    mo, mn = (Masks(os.path.join(outdir, s), outdir) for s in ("old", "new"))
    ddir = os.path.join(outdir, "diffs")
    if os.path.exists(ddir):
        shutil.rmtree(ddir)
    os.makedirs(ddir)
    lines, total = [], 0
    for cid, kind, cmd in cases:
        od, nd = (os.path.join(outdir, s, "cases", cid)
                  for s in ("old", "new"))
        if not os.path.isdir(od) or not os.path.isdir(nd):
            continue
        total += 1
        d = compare_case(norm_case(od, kind, mo), norm_case(nd, kind, mn))
        if not d:
            continue
        with open(os.path.join(ddir, cid + ".diff"), "w") as fh:
            fh.write(f"# {cmd}\n" + "\n".join(d) + "\n")
        where = ",".join(x[3:].split(" (")[0].split(":")[0]
                         for x in d if x.startswith("## "))
        lines.append(f"DIFF {cid} [{kind}] {where}: {cmd} :: old: "
                     f"{_first(d, '-')[:160]!r} new: "
                     f"{_first(d, '+')[:160]!r}")
    for line in lines:
        print(line)
    print(f"{len(lines)} of {total} cases differ (details: {ddir})")
    return 1 if lines else 0


def main(argv):
    if len(argv) == 5 and argv[1] == "gen":
        gen(argv[2], argv[3], argv[4])
        return 0
    if len(argv) == 3 and argv[1] == "diff":
        return diff(argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
