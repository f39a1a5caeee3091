#!/bin/bash
# `calibrate fleet` end to end on this one machine under mpirun: 2 ranks
# on one host (same-host detection, one measuring rank, the other
# sleeping, the link's transport shared memory), 3 ranks told apart into
# two hosts by CALIBRATE_HOST_ID with TCP forced (the links over the
# loopback, named so), the fleet profile against its schema, the
# all-reduce verification recorded, a rank made to fail verification or to
# die (exit non-zero, no fleet file), ranks started with other fleet
# options than rank 0 or a malformed CALIBRATE_HOST_ID (exit 2, one line),
# rank 0 killed (no rank left running), bad options, and `calibrate plan`
# on the fleet profile (a ranks count out of range refused).  mpirun's
# --allow-run-as-root is passed only when running as root (CI
# containers); --oversubscribe for 3 ranks on 2 cores.
# usage: e2e_fleet.sh CALIBRATE SOURCE_DIR WORKDIR MPIRUN PYTHON3
# covers: calibrator/commands/fleet.c calibrator/fleet/
# covers: calibrator/profile/view_fleet.c
CAL=$1 SRC=$2 WORK=$3 MPIRUN=$4 PY=$5
. "$(dirname "$0")/e2e_lib.sh"
e2e_setup "$WORK"
SCHEMAS=$SRC/results/schema
if [ "$MPIRUN" = none ]; then # built without MPI: the command says so
  expect_usage "fleet without MPI" "$CAL" fleet --quick
  grep -q "built without MPI" "$TMP/err" && ok || bad "fleet: no 'built without MPI'"
  finish
  exit
fi
# functional checks (--allow-busy below): a lock of our own, so the test
# does not queue behind measuring runs of other tests or users
export CALIBRATE_LOCK="$TMP/lock"
MPI=("$MPIRUN" --oversubscribe --bind-to none -x CALIBRATE_LOCK)
[ "$(id -u)" = 0 ] && MPI+=(--allow-run-as-root)
# the node runs: a short batch sweep of the smallest model shape (a
# throughput for plan, in seconds); --allow-busy because other jobs may
# load the machine (functional checks only)
NODE=(--quick --sections batch --batches 1,2 --no-extend --mode prefill
      --samples 3 --preset tiny --allow-busy --no-progress)
json() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); $2" "$1"; }

# 2 ranks, the full size ranges (8 B .. 64 MiB, 1 KiB .. 256 MiB)
if expect_match 0 "Fleet profile written" "${MPI[@]}" -np 2 "$CAL" fleet \
    "${NODE[@]}" -o "$TMP/f2.json"; then
  check "fleet 2: schema" "$PY" "$SRC/tests/validate_fleet.py" "$SCHEMAS" \
    "$TMP/f2.json" 2 1
  [ "$(grep -c '^Profile written to' "$TMP/out")" = 1 ] && ok ||
    bad "fleet 2: not exactly one node run on one host"
  check "fleet 2: same host, rank 0 measured, rank 1 waited" json "$TMP/f2.json" '
h = d["hosts"]; assert len(h) == 1 and h[0]["ranks"] == [0, 1], h
assert h[0]["measuring_rank"] == 0 and h[0]["profile"]["schema"] == "calibrate-profile/1"
w = h[0]["waiting_ranks"]; assert [x["rank"] for x in w] == [1], w
assert w[0]["cpu_s"] <= 0.25 * w[0]["wait_s"] + 0.05, w  # slept, did not spin
assert d["links"]["intra_host"] is True
assert h[0]["id_source"] == "hostname and boot id" and h[0]["host"] == h[0]["hostname"]'
  check "fleet 2: the link between ranks of one host, carried by shared memory" \
    json "$TMP/f2.json" '
for x in d["links"]["pairs"]:
    t = x["transport"]
    assert x["same_host"] is True and t["mpi_same_node"] is True, x
    assert t["kind"] == "shared memory" and t["interface"] is None, t
    assert t["payload_bytes"] > 64 << 20, t
assert d["mpi"]["library"].startswith("Open MPI"), d["mpi"]'
  grep -q "transport: shared memory; the same host" "$TMP/out" && ok ||
    bad "fleet 2: the table does not name the transport"
  check "fleet 2: links both ways 8 B..64 MiB, all-reduce 1 KiB..256 MiB verified" \
    json "$TMP/f2.json" '
p = d["links"]["pairs"]; assert sorted((x["from_rank"], x["to_rank"]) for x in p) == [(0, 1), (1, 0)]
for x in p: assert x["points"][0]["bytes"] == 8 and x["points"][-1]["bytes"] == 64 << 20
a = d["allreduce"]; assert a["verified"] is True and a["ranks"] == 2
assert a["points"][0]["bytes"] == 1024 and a["points"][-1]["bytes"] == 256 << 20
assert a["checked_values"] >= sum(x["bytes"] for x in a["points"]) // 4
assert "2(n-1)/n" in a["busbw_convention"]'
fi

# 3 ranks on 2 cores, two of them named host "ha" and one "hb" by
# CALIBRATE_HOST_ID (one kernel, two machines), TCP forced so the links go
# over the loopback device; smaller link sizes to stay short, with the plain MPI
# loop beside our path (its figures are a benchmark, not checked)
TCP=(--mca btl tcp,self) # between local addresses Linux routes it over lo
if expect_match 0 "Fleet profile written" "${MPI[@]}" "${TCP[@]}" \
    -np 2 env CALIBRATE_HOST_ID=ha "$CAL" fleet "${NODE[@]}" --p2p-max 64K \
    --allreduce-max 1M --compare-plain -o "$TMP/f3.json" : \
    -np 1 env CALIBRATE_HOST_ID=hb "$CAL" fleet "${NODE[@]}" --p2p-max 64K \
    --allreduce-max 1M --compare-plain; then
  check "fleet 3: schema" "$PY" "$SRC/tests/validate_fleet.py" "$SCHEMAS" \
    "$TMP/f3.json" 3 2
  check "fleet 3: two hosts by CALIBRATE_HOST_ID, one waiting rank, two pairs" \
    json "$TMP/f3.json" '
h = d["hosts"]; assert [x["host"] for x in h] == ["ha", "hb"], h
assert h[0]["ranks"] == [0, 1] and h[1]["ranks"] == [2], h
assert all(x["id_source"] == "CALIBRATE_HOST_ID" for x in h)
assert h[0]["hostname"] == h[1]["hostname"] and h[0]["boot_id"] == h[1]["boot_id"]
assert [x["rank"] for x in h[0]["waiting_ranks"]] == [1]
assert len(d["links"]["pairs"]) == 2 and d["allreduce"]["ranks"] == 3
assert d["links"]["intra_host"] is False
assert [x["what"] for x in d["compare_plain"]] == ["p2p_latency", "p2p_bandwidth", "allreduce_busbw"]'
  check "fleet 3: TCP over the loopback named; other hosts, one MPI node" \
    json "$TMP/f3.json" '
assert d["mpi"]["btl"] == "tcp,self", d["mpi"]
for x in d["links"]["pairs"]:
    t = x["transport"]
    assert x["same_host"] is False and t["mpi_same_node"] is True, x
    assert t["kind"] == "tcp" and t["interface"] == "lo", t
    assert min(t["interface_sent_bytes"], t["interface_received_bytes"]) >= 0.9 * t["payload_bytes"], t'
  grep -q "transport: tcp over lo; different hosts" "$TMP/out" && ok ||
    bad "fleet 3: the table does not name TCP over lo"
fi

# ranks started with other link options than rank 0: exit 2 on the job,
# one line on rank 0 naming the option, nothing measured, no file
expect_match 2 "rank 1 was started with --p2p-max 1048576 and rank 0 with 65536" \
  "${MPI[@]}" -np 1 "$CAL" fleet --quick --p2p-max 64K --allreduce-max 64K \
  -o "$TMP/mix.json" : -np 1 "$CAL" fleet --quick --p2p-max 1M \
  --allreduce-max 4M
[ "$(grep -c '^calibrate fleet' "$TMP/err")" = 1 ] && ok ||
  bad "fleet: options that differ: not exactly one line"
ls "$TMP"/mix.json* >/dev/null 2>&1 && bad "fleet: a file after options that differ" || ok
# a malformed CALIBRATE_HOST_ID: exit 2, one line, no file
CALIBRATE_HOST_ID='a b' expect_match 2 "CALIBRATE_HOST_ID of rank 0 is not" \
  "${MPI[@]}" -x CALIBRATE_HOST_ID -np 2 "$CAL" fleet --quick -o "$TMP/id.json"
[ "$(grep -c '^calibrate fleet' "$TMP/err")" = 1 ] && ok ||
  bad "fleet: a bad CALIBRATE_HOST_ID: not exactly one line"
ls "$TMP"/id.json* >/dev/null 2>&1 && bad "fleet: a file after a bad CALIBRATE_HOST_ID" || ok

# a wrong all-reduce input on rank 1: exit 3 on the job, no file
CALIBRATE_FLEET_FAIL_RANK=1 expect_match 3 "failed verification" \
  "${MPI[@]}" -x CALIBRATE_FLEET_FAIL_RANK -np 2 "$CAL" fleet "${NODE[@]}" \
  --p2p-max 64K --allreduce-max 64K -o "$TMP/bad.json"
ls "$TMP"/bad.json* >/dev/null 2>&1 && bad "fleet: a file after a failed verification" || ok
# a rank that dies: the job ends non-zero, no file
CALIBRATE_FLEET_DIE_RANK=1 "${MPI[@]}" -x CALIBRATE_FLEET_DIE_RANK -np 2 \
  timeout 120 "$CAL" fleet "${NODE[@]}" --timeout 30 -o "$TMP/dead.json" \
  >"$TMP/out" 2>"$TMP/err"
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && ok || bad "fleet: a dead rank: exit $rc"
ls "$TMP"/dead.json* >/dev/null 2>&1 && bad "fleet: a file after a rank died" || ok

# a rank that stops answering: the others give up at their deadline
# (--node-timeout) with one line on stderr, exit 4, no file
CALIBRATE_FLEET_HANG_RANK=1 expect_match 4 "waited 3 s for the other ranks" \
  timeout 120 "${MPI[@]}" -x CALIBRATE_FLEET_HANG_RANK -np 2 "$CAL" fleet \
  "${NODE[@]}" --node-timeout 3 -o "$TMP/hang.json"
ls "$TMP"/hang.json* >/dev/null 2>&1 && bad "fleet: a file after a hang" || ok

# ... and one that stops before the all-reduce: the others' watchdog
# (--timeout) ends the job inside the blocking collective
CALIBRATE_FLEET_HANG_RANK=1 CALIBRATE_FLEET_HANG_AT=links expect_match 4 \
  "spent over 3 s on one step of the all-reduce" timeout 120 "${MPI[@]}" \
  -x CALIBRATE_FLEET_HANG_RANK -x CALIBRATE_FLEET_HANG_AT -np 2 "$CAL" fleet \
  "${NODE[@]}" --timeout 3 --p2p-max 64K --allreduce-max 64K \
  -o "$TMP/hang2.json"
ls "$TMP"/hang2.json* >/dev/null 2>&1 && bad "fleet: a file after a hang" || ok

# a rank killed with SIGKILL while rank 0 measures, then the launcher
# itself: no rank may be left running (mpirun ends the job; a rank whose
# launcher is gone ends itself within seconds)
rank_pid() { # MPIRUN_PID RANK: the pid of that rank among mpirun's children
  for p in $(pgrep -P "$1"); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null |
      grep -qx "OMPI_COMM_WORLD_RANK=$2" && { echo "$p"; return; }
  done
}
gone_within() { # SECONDS PID...: every pid ended within SECONDS
  _end=$(($(date +%s) + $1))
  shift
  while [ "$(date +%s)" -le "$_end" ]; do
    _alive=0
    for _p in "$@"; do kill -0 "$_p" 2>/dev/null && _alive=1; done
    [ $_alive = 0 ] && return 0
    sleep 0.2
  done
  kill -9 "$@" 2>/dev/null # ours: never leave them behind
  return 1
}
for victim in rank0 mpirun; do
  "${MPI[@]}" -np 2 "$CAL" fleet "${NODE[@]}" -o "$TMP/killed.json" \
    >"$TMP/out" 2>"$TMP/err" &
  job=$!
  r0= r1=
  for _ in $(seq 1 100); do
    r0=$(rank_pid $job 0) r1=$(rank_pid $job 1)
    [ -n "$r0" ] && [ -n "$r1" ] && break
    sleep 0.1
  done
  if [ -z "$r0" ] || [ -z "$r1" ]; then
    bad "fleet: kill $victim: the ranks never started"
    kill -9 $job 2>/dev/null
    wait $job
    continue
  fi
  sleep 1 # rank 0 is measuring, rank 1 waiting
  if [ $victim = rank0 ]; then kill -9 "$r0"; else kill -9 $job; fi
  gone_within 15 "$r0" "$r1" && ok ||
    bad "fleet: kill $victim: a rank still ran 15 s later"
  wait $job
  rc=$?
  [ "$rc" -ne 0 ] && ok || bad "fleet: kill $victim: the job exited 0"
  ls "$TMP"/killed.json* >/dev/null 2>&1 && bad "fleet: kill $victim: a fleet file" || ok
done

# bad options: one line, exit 2, before MPI starts
expect_usage "fleet --timeout x" "$CAL" fleet --timeout x
expect_usage "fleet --allreduce-max 1" "$CAL" fleet --allreduce-max 1
expect_match 0 "Exit status" "$CAL" fleet --help
grep -q '^Usage: calibrate fleet' "$TMP/out" && ok || bad "fleet --help: no usage line"
grep -q "('-': standard output" "$TMP/out" && ok || bad "fleet --help: -o - not described"
grep -q "rank 0's current" "$TMP/out" && grep -q 'CALIBRATE_RESULTS_DIR' "$TMP/out" &&
  ok || bad "fleet --help: the default place of the fleet profile not given"
expect_match 0 "BSD-3-Clause" "$CAL" fleet --version
expect_usage "fleet --no-such-flag" "$CAL" fleet --no-such-flag
grep -q "^calibrate fleet: .* (see 'calibrate fleet --help')\$" "$TMP/err" && ok ||
  bad "fleet: the error line is not in the house style"
# -o -: the fleet profile alone on standard output (one rank, no mpirun)
if expect_exit 0 "fleet -o -" "$CAL" fleet --quick --sections peak \
    --allow-busy --no-progress --p2p-max 64K --allreduce-max 64K -o -; then
  check "fleet -o -: JSON on stdout" json "$TMP/out" 'assert d["schema"] == "calibrate-fleet/1"'
  [ ! -e ./- ] && ok || bad "fleet -o -: a file named '-'"
fi
# a bad run option on a job of one rank (no mpirun): the run's one line
expect_usage "fleet --threads 0" "$CAL" fleet --threads 0 -o "$TMP/one.json"
ls "$TMP"/one.json* >/dev/null 2>&1 && bad "fleet: a file after a bad option" || ok
# a bad run option under mpirun: exit 2, no file
expect_match 2 "calibrate fleet: " "${MPI[@]}" -np 2 "$CAL" fleet --threads 0 \
  -o "$TMP/opt.json"
ls "$TMP"/opt.json* >/dev/null 2>&1 && bad "fleet: a file after a bad option" || ok

# plan on the fleet profile beside a separate profile: the network step
if [ -f "$TMP/f2.json" ]; then
  if expect_match 0 "^Verdict: data parallelism" "$CAL" plan "$TMP/f2.json" \
      "$SRC/tests/data/profile_a.json" --model-params 1e8 --dtype bf16; then
    grep -q "with overlap (an upper bound" "$TMP/out" && ok ||
      bad "plan: no step with overlap"
    grep -q "Note: the curve was measured between ranks of one host" "$TMP/out" &&
      ok || bad "plan: one host not said"
    grep -q "Note on the throughput: the compute time uses inference" "$TMP/out" &&
      ok || bad "plan: prefill's throughput not said to be inference"
  fi
  if expect_exit 0 "plan json" "$CAL" plan "$TMP/f2.json" \
      "$SRC/tests/data/profile_a.json" --model-params 1e8 --format json \
      -o "$TMP/plan.json"; then
    check "plan json: network arithmetic" json "$TMP/plan.json" '
n = d["network"]; assert n["gradient_bytes"] == 4e8 and n["allreduce_s"] > 0
assert n["gradient_dtype"] == "fp32" and n["bytes_per_gradient"] == 4
assert abs(n["step_s"] - (n["compute_s"] + n["allreduce_s"])) < 1e-9 * n["step_s"]
assert abs(n["step_overlap_s"] - max(n["compute_s"], n["allreduce_s"])) < 1e-12
assert n["grad_accum"]["recommended"] >= 1 and len(n["arithmetic"]) >= 6'
  fi
  expect_match 2 "second fleet profile" "$CAL" plan "$TMP/f2.json" \
    "$TMP/f2.json" --model-params 1e8
  # a ranks count out of range (it once printed "-2147483648 ranks")
  for v in 1e10 0 2.5 -3; do
    json "$TMP/f2.json" "d['ranks'] = $v; json.dump(d, open('$TMP/r.json', 'w'))"
    expect_usage "plan: fleet ranks $v" "$CAL" plan "$TMP/r.json" \
      --model-params 1e8
    grep -q "ranks must be a whole number" "$TMP/err" && ok ||
      bad "plan: fleet ranks $v: $(cat "$TMP/err")"
  done
fi
finish
