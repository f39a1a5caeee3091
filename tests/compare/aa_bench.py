#!/usr/bin/env python3
"""Benchmark of `calibrate compare` on real runs (not run by ctest).

usage: aa_bench.py CALIBRATE RUNS_TOOL DIR

DIR holds `calibrate --ci` profiles measured one after another: N01.json,
N02.json, ... with the plain environment and P01.json, ... with
OPENBLAS_CORETYPE=Prescott (old kernels: a real slowdown).  Prints the
run-to-run spread per point, the single-run A/A false alarms over
consecutive pairs, the 5 vs 5 and 3 vs 3 A/A false alarms over independent
blocks of consecutive runs (alternating A B A B ...) and over every window
of 10, the detection of a 10% GEMM slowdown planted in those new sides
(runs_tool.py scale), and the Prescott comparison.  Standard library
only."""
import glob, json, math, os, subprocess, sys, statistics, shutil, tempfile
CAL = sys.argv[1]
TOOL = sys.argv[2]   # runs_tool.py (scale)
D = sys.argv[3]
N = sorted(glob.glob(f'{D}/N*.json'))
P = sorted(glob.glob(f'{D}/P*.json'))
def cmp(base, new, *extra):
    r = subprocess.run([CAL, 'compare', '--format', 'json', *extra, '--base', *base, '--new', *new],
                       capture_output=True, text=True)
    rep = json.loads(r.stdout) if r.stdout.strip() else None
    reg = [p['id'] for p in rep['points'] if p['verdict'] == 'regressed'] if rep else []
    imp = [p['id'] for p in rep['points'] if p['verdict'] == 'improved'] if rep else []
    return r.returncode, reg, imp, rep, r.stderr.strip()
def points(doc):
    out = {}
    def walk(o):
        if isinstance(o, dict):
            if 'id' in o and 'status' in o:
                if o['status'] == 'ok':
                    m = o['metric']; s = o.get('samples_' + m)
                    out[o['id']] = statistics.median(s) if s else o[m]
                return
            for v in o.values(): walk(v)
        elif isinstance(o, list):
            for v in o: walk(v)
    walk(doc)
    return out
vals = [points(json.load(open(f))) for f in N]
ids = sorted(set.intersection(*[set(v) for v in vals]))
print(f'{len(N)} normal runs, {len(P)} Prescott runs, {len(ids)} points in all')
# run-to-run spread per point: sd of log and max |log ratio| of consecutive pairs
rows = []
for i in ids:
    xs = [math.log(v[i]) for v in vals if v[i] > 0]
    sd = statistics.stdev(xs)
    pair = [abs(xs[k + 1] - xs[k]) for k in range(len(xs) - 1)]
    rows.append((sd, max(pair), i))
rows.sort(reverse=True)
print('run-to-run sd of log per-run medians (top 8), max |log ratio| of consecutive runs:')
for sd, mx, i in rows[:8]:
    print(f'  {i:55s} sd {100*sd:5.1f}%  max consecutive {100*(math.exp(mx)-1):5.1f}%')
allp = sorted(abs(math.log(vals[k+1][i]) - math.log(vals[k][i])) for i in ids for k in range(len(vals)-1))
q = lambda p: 100 * (math.exp(allp[min(len(allp)-1, int(p * len(allp)))]) - 1)
print(f'consecutive single-run pairs, all points: median {q(.5):.1f}%, 95th {q(.95):.1f}%, 99th {q(.99):.1f}%, max {q(1.0):.1f}%')
print('median over points of the run-to-run sd: %.1f%%' % (100 * statistics.median(r[0] for r in rows)))
# single-run A/A: consecutive pairs
fa = 0; tot = 0
for k in range(len(N) - 1):
    rc, reg, imp, _, err = cmp([N[k]], [N[k + 1]])
    tot += 1; fa += rc != 0
    if rc: print('  single-run A/A false alarm', os.path.basename(N[k]), os.path.basename(N[k+1]), rc, reg, err[:200])
print(f'single-run A/A (consecutive pairs, default allowance): {fa} of {tot} exit non-zero')
# 5 v 5 A/A: blocks of 10 consecutive runs, alternate A B
def aa(nper):
    blk = 2 * nper; res = []
    for s in range(0, len(N) - blk + 1, blk):
        b = N[s:s + blk]
        res.append((b[0::2], b[1::2]))
    return res
tmp = tempfile.mkdtemp()
for nper in (5, 3):
    fa = 0; det = 0; comps = aa(nper)
    for a, b in comps:
        rc, reg, imp, rep, err = cmp(a, b)
        fa += rc != 0
        if rc: print(f'  {nper}v{nper} A/A false alarm:', [os.path.basename(x) for x in a], reg, err[:200])
        # 10% GEMM slowdown planted in the new side
        slow = []
        for f in b:
            o = os.path.join(tmp, 'slow_' + os.path.basename(f))
            subprocess.run([sys.executable, TOOL, 'scale', o, f, 'gemm/', '0.9'], check=True)
            slow.append(o)
        rc2, reg2, imp2, _, _ = cmp(a, slow)
        ok = rc2 == 1 and any(r.startswith('gemm/') for r in reg2) and not [r for r in reg2 if not r.startswith('gemm/')]
        det += ok
        ng = sum(1 for r in reg2 if r.startswith('gemm/'))
        print(f'  {nper}v{nper} block {[os.path.basename(x) for x in a][0]}..: A/A rc {rc} (spread base {rep["summary"]["base_run_spread"]:.3f}); GEMM x0.9: rc {rc2}, {ng} gemm points regressed of {sum(1 for p in rep["points"] if p["id"].startswith("gemm/"))}, others regressed: {[r for r in reg2 if not r.startswith("gemm/")]}')
    print(f'{nper} vs {nper} A/A: {fa} false alarms in {len(comps)} independent comparisons; 10% GEMM slowdown caught in {det} of {len(comps)}')
# sliding windows (overlapping, not independent)
fa = 0; tot = 0
for s in range(0, len(N) - 10 + 1):
    b = N[s:s + 10]
    rc, reg, *_ = cmp(b[0::2], b[1::2]); tot += 1; fa += rc != 0
print(f'5 vs 5 A/A over every window of 10 consecutive runs (overlapping): {fa} of {tot} exit non-zero')
# real slowdown: Prescott vs normal neighbours
if len(P) >= 2:
    k = min(len(P), 5)
    base = N[:k] if len(N) >= k else N
    rc, reg, imp, rep, err = cmp(base, P[:k])
    print('Prescott without --allow-different-machines: exit', rc, err.splitlines()[-1] if err else '')
    rc, reg, imp, rep, err = cmp(N[-k:], P[:k], '--allow-different-machines')
    g = [r for r in reg if r.startswith('gemm/')]
    o = [r for r in reg if r.startswith(('attention/', 'bandwidth/', 'peak/'))]
    rest = [r for r in reg if r not in g and r not in o]
    print(f'Prescott {k} vs {k}: exit {rc}; gemm regressed {len(g)}: {g}; attention/bandwidth/peak regressed: {o}; others: {rest}')
    for p in rep['points']:
        if p['id'] in ('gemm/fp32/best/t1', 'gemm/fp64/best/t1', 'gemm/fp32/best/t2'):
            print('   ', p['id'], 'ratio %.3f' % p['ratio'])
shutil.rmtree(tmp)
