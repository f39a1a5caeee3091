#!/bin/bash
# The fleet across a real network path.  Two network namespaces stand for
# two hosts, joined by a veth pair shaped to 1 Gbit/s with tc's token
# bucket on both ends (the measured link) and a second, unshaped veth pair
# for Open MPI's own control traffic (so that the measured link can go
# down while mpirun still reaches both sides).  Open MPI runs in the first
# namespace and starts the second host's daemon through an rsh agent that
# enters the second namespace; the two are told apart by CALIBRATE_HOST_ID
# (they share one kernel), and the second's rank is confined to one core
# while the first has them all, so the two hosts differ.  Checks:
#   - the fleet profile valid, two hosts, each link's transport recorded
#     as TCP over the shaped interface, not the same host;
#   - the 16 MiB point-to-point bandwidth within 0.75-1.05 of the shaped
#     rate and at least 0.9 of a bare MPI ping-pong (tests/helpers) over
#     the same link in the same minutes; the all-reduce bus bandwidth
#     bounded by the link; the first host faster than the second: timing
#     checks, skipped with the evidence when other work loads the machine;
#   - plan on the fleet profile: the split in proportion to throughput,
#     the slower host flagged exactly where its interval says so, the
#     all-reduce charged at the measured curve;
#   - the measured link set down during the link measurements: the job
#     ends within --timeout, non-zero, one line on rank 0 naming the pair,
#     no fleet file.
# The namespaces and links are removed on every exit path; traffic stays
# on the namespaces' own addresses.  Needs root, ip, tc and taskset (exit
# 77 with the reason otherwise); about 40 s.
# usage: e2e_fleet_netns.sh CALIBRATE SOURCE_DIR WORKDIR MPIRUN PYTHON3 PINGPONG
# covers: calibrator/fleet/fleet_transport.c calibrator/fleet/fleet_start.c
CAL=$1 SRC=$2 WORK=$3 MPIRUN=$4 PY=$5 PINGPONG=$6
. "$(dirname "$0")/e2e_lib.sh"
e2e_setup "$WORK"
skip() { echo "SKIP: $*"; exit 77; }
[ "$MPIRUN" != none ] || skip "calibrate was built without MPI"
[ "$(id -u)" = 0 ] || skip "not root: network namespaces and tc need root"
for t in ip tc taskset; do
  command -v $t >/dev/null || skip "no '$t' (iproute2, util-linux)"
done
NCPU=$(nproc)
[ "$NCPU" -ge 2 ] || skip "one CPU: the second host needs a core of its own"

RATE_GBPS=0.125 # tbf rate 1gbit: 1e9 bit/s = 0.125 GB/s (1e9 bytes/s)
NA=calfleet-$$-a NB=calfleet-$$-b
LINK=10.231.1 CTRL=10.231.2 # measured link, control link (/24 each)
cleanup() {
  for ns in "$NA" "$NB"; do
    pids=$(ip netns pids "$ns" 2>/dev/null)
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null
    ip netns del "$ns" 2>/dev/null
  done
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
in_a() { ip netns exec "$NA" "$@"; }
in_b() { ip netns exec "$NB" "$@"; }
ip netns add "$NA" 2>"$TMP/err" ||
  skip "cannot create a network namespace: $(head -1 "$TMP/err")"
ip netns add "$NB" || exit 1
setup_links() {
  in_a ip link add vm0 type veth peer name vm1 netns "$NB" &&
    in_a ip link add vc0 type veth peer name vc1 netns "$NB" &&
    in_a ip addr add $LINK.1/24 dev vm0 && in_b ip addr add $LINK.2/24 dev vm1 &&
    in_a ip addr add $CTRL.1/24 dev vc0 && in_b ip addr add $CTRL.2/24 dev vc1 &&
    for d in lo vm0 vc0; do in_a ip link set $d up || return 1; done &&
    for d in lo vm1 vc1; do in_b ip link set $d up || return 1; done &&
    in_a tc qdisc add dev vm0 root tbf rate 1gbit burst 128kb latency 50ms &&
    in_b tc qdisc add dev vm1 root tbf rate 1gbit burst 128kb latency 50ms
}
setup_links 2>"$TMP/err" || skip "cannot build the shaped veth link: $(head -1 "$TMP/err")"

# Open MPI's remote shell: "host" $CTRL.2 is the second namespace, its
# daemon (and so its rank) on the last core, named hb; $CTRL.1 the first
# (used only if mpirun does not take it for itself), every core, named ha
B_CORE=$((NCPU - 1))
cat >"$TMP/agent" <<EOF
#!/bin/sh
while [ \$# -gt 0 ]; do case \$1 in -*) shift ;; *) break ;; esac; done
host=\$1
shift
case \$host in
$CTRL.2) exec ip netns exec $NB taskset -c $B_CORE env CALIBRATE_HOST_ID=hb sh -c "\$*" ;;
$CTRL.1) exec ip netns exec $NA env CALIBRATE_HOST_ID=ha sh -c "\$*" ;;
esac
echo "agent: unknown host \$host" >&2
exit 1
EOF
chmod +x "$TMP/agent"
printf '%s slots=1\n%s slots=1\n' $CTRL.1 $CTRL.2 >"$TMP/hosts"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# one lock for both "hosts": their node runs take turns on the shared CPUs
export CALIBRATE_LOCK="$TMP/lock" CALIBRATE_HOST_ID=ha
MPI=(ip netns exec "$NA" "$MPIRUN" --allow-run-as-root --hostfile "$TMP/hosts"
     --mca plm_rsh_agent "$TMP/agent" --mca btl tcp,self
     --mca btl_tcp_if_include $LINK.0/24 --mca oob_tcp_if_include $CTRL.0/24
     --map-by node --bind-to none -x CALIBRATE_LOCK -np 2)
# the node runs: a short prefill curve of a small model shape, large
# enough that two cores beat one (a throughput for plan); --allow-busy
# since other work may load the machine (functional checks)
NODE=(--quick --sections batch --batches 1,2 --no-extend --mode prefill
      --samples 3 --preset tiny --hidden 512 --heads 8 --kv-heads 2 --ffn 2048
      --seq 128 --layers 2 --allow-busy --no-progress)
LINKS=(--p2p-max 16M --allreduce-max 16M)
json() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); $2" "$1"; }

# the bare loop, the fleet, the bare loop again: the same link, the same
# minutes; others' load measured before and after (the timing checks'
# evidence)
load_before=$(others_load 1)
pingpong() {
  timeout 60 "${MPI[@]}" "$PINGPONG" 16777216 5 1 >>"$TMP/pingpong" 2>>"$TMP/pingpong.err" ||
    bad "bare ping-pong failed: $(tail -3 "$TMP/pingpong.err")"
}
pingpong
fleet_ok=0
expect_match 0 "Fleet profile written" timeout 120 "${MPI[@]}" "$CAL" fleet \
  "${NODE[@]}" "${LINKS[@]}" -o "$TMP/fleet.json" && fleet_ok=1
pingpong
load_after=$(others_load 1)
cp "$TMP/out" "$TMP/fleet.out"

if [ $fleet_ok = 1 ]; then
  check "netns fleet: schema, 2 ranks on 2 hosts" "$PY" \
    "$SRC/tests/validate_fleet.py" "$SRC/results/schema" "$TMP/fleet.json" 2 2
  check "netns fleet: hosts ha, hb by CALIBRATE_HOST_ID; links TCP over the shaped veth" \
    json "$TMP/fleet.json" '
h = d["hosts"]
assert [x["host"] for x in h] == ["ha", "hb"], h
assert all(x["id_source"] == "CALIBRATE_HOST_ID" for x in h), h
assert h[0]["boot_id"] == h[1]["boot_id"]  # one kernel, two hosts
assert d["links"]["intra_host"] is False
assert d["mpi"]["btl"] == "tcp,self", d["mpi"]
want = {(0, 1): "vm0", (1, 0): "vm1"}
for x in d["links"]["pairs"]:
    t = x["transport"]
    assert x["same_host"] is False and t["mpi_same_node"] is False, x
    assert t["kind"] == "tcp", t
    assert t["interface"] == want[(x["from_rank"], x["to_rank"])], t'
  grep -q "transport: tcp over vm0; different hosts" "$TMP/fleet.out" && ok ||
    bad "netns fleet: the table does not name TCP over vm0"
  # the all-reduce over 2 ranks: each rank sends busbw x time bytes one
  # way; past the bucket's 128 KB burst it cannot beat the link
  check "netns fleet: all-reduce bus bandwidth bounded by the link" \
    json "$TMP/fleet.json" '
pts = [p for p in d["allreduce"]["points"] if p["bytes"] >= 4 << 20]
assert pts, "no all-reduce point of 4 MiB or more"
for p in pts:
    assert p["busbw_gbps"] <= 1.05 * '$RATE_GBPS', (p["bytes"], p["busbw_gbps"])'
fi

# plan on the fleet profile: the split, the flags, the network step
if [ $fleet_ok = 1 ] && expect_exit 0 "plan on the netns fleet" "$CAL" plan \
    "$TMP/fleet.json" --model-params 1e8 --format json -o "$TMP/plan.json"; then
  check "plan: split in proportion, slower host flagged where its interval says so" \
    json "$TMP/plan.json" '
ms = [m for m in d["machines"] if m["in_split"]]
assert sorted(m["name"] for m in ms) == ["ha", "hb"], ms
tot = sum(m["throughput"] for m in ms)
mean = tot / len(ms)
for m in ms:
    assert abs(m["share"] - m["throughput"] / tot) < 1e-9, m
    hi = m["throughput_ci_high"] if m["throughput_ci_high"] is not None else m["throughput"]
    assert m["straggler"] == (hi < 0.8 * mean), (m, mean)
assert sorted(d["stragglers"]) == sorted(m["name"] for m in ms if m["straggler"])'
  check "plan: the all-reduce charged at the measured curve" \
    "$PY" - "$TMP/fleet.json" "$TMP/plan.json" <<'PY'
import json, math, sys
f = json.load(open(sys.argv[1])); n = json.load(open(sys.argv[2]))["network"]
pts = f["allreduce"]["points"]
b = [p["bytes"] for p in pts]; t = [p["time_us"] * 1e-6 for p in pts]
g = n["gradient_bytes"]
if g >= b[-1]:
    want = t[-1] * g / b[-1]
elif g <= b[0]:
    want = t[0]
else:
    k = next(i for i in range(len(b)) if b[i] >= g)
    x0, x1, y0, y1 = map(math.log, (b[k - 1], b[k], t[k - 1], t[k]))
    want = math.exp(y0 + (y1 - y0) * (math.log(g) - x0) / (x1 - x0))
assert abs(n["allreduce_s"] - want) <= 1e-9 * want, (n["allreduce_s"], want)
assert n["hosts"] == 2 and n["ranks"] == 2 and n["intra_host"] is False, n
PY
fi

# the timing checks: honest only on a quiet machine
skip_timing= timing_skipped=
if ! awk -v a="$load_before" -v b="$load_after" 'BEGIN { exit !(a < 0.25 && b < 0.25) }'; then
  skip_timing="others kept $load_before cores busy before the runs and $load_after after"
fi
if [ $fleet_ok = 1 ] && [ -s "$TMP/pingpong" ]; then
  bare=$(awk '{ if ($NF > m) m = $NF } END { print m }' "$TMP/pingpong")
  ours=$(json "$TMP/fleet.json" '
print(max(p["bandwidth_gbps"] for x in d["links"]["pairs"] for p in x["points"] if p["bytes"] == 16 << 20))')
  echo "16 MiB point to point: ours $ours GB/s, bare MPI loop $bare GB/s (best of two), shaped $RATE_GBPS GB/s"
  timing() { # DESC AWK-CONDITION
    if awk -v o="$ours" -v b="$bare" -v r="$RATE_GBPS" "BEGIN { exit !($2) }"; then
      ok
    elif [ -n "$skip_timing" ]; then
      echo "SKIP: $1 ($skip_timing)"
      timing_skipped=1
    else
      bad "$1: ours $ours, bare $bare, shaped $RATE_GBPS GB/s"
    fi
  }
  timing "16 MiB p2p within 0.75-1.05 of the shaped rate" "o >= 0.75 * r && o <= 1.05 * r"
  timing "16 MiB p2p at least 0.9 of the bare MPI loop" "o >= 0.9 * b"
  faster=$(json "$TMP/fleet.json" '
h = {x["host"]: x["profile"].get("throughput") for x in d["hosts"]}
print(1 if h["ha"] and h["hb"] and h["ha"] > h["hb"] else 0)')
  timing "host ha (every core) faster than hb (one core)" "$faster == 1"
fi

# the measured link set down once the point-to-point traffic has begun
# (a watcher inside the first namespace polls its counter): the watchdog
# (--timeout 5) ends the job, rank 0 names the pair
rm -f "$TMP/stop"
in_a sh -c 'f=/sys/class/net/vm0/statistics/tx_bytes; read t0 <$f
  end=$(($(date +%s) + 100))
  while [ "$(date +%s)" -lt $end ] && [ ! -e "$1" ]; do
    read t <$f
    if [ $((t - t0)) -gt 2000000 ]; then
      ip link set vm0 down && date +%s.%N && exit 0
    fi
    sleep 0.05
  done
  exit 1' watcher "$TMP/stop" >"$TMP/down_at" &
watcher=$!
# (each line of its standard error stamped with the time it arrived)
timeout 90 "${MPI[@]}" "$CAL" fleet --quick --sections batch --batches 1 \
  --no-extend --mode prefill --samples 3 --preset tiny --allow-busy \
  --no-progress "${LINKS[@]}" --timeout 5 -o "$TMP/down.json" \
  2>&1 >"$TMP/out" | while IFS= read -r l; do
    printf '%s %s\n' "$EPOCHREALTIME" "$l"
  done >"$TMP/err.t"
rc=${PIPESTATUS[0]}
end=$(date +%s.%N)
cut -d' ' -f2- "$TMP/err.t" >"$TMP/err"
touch "$TMP/stop"
wait $watcher
down_at=$(cat "$TMP/down_at")
if [ -z "$down_at" ]; then
  bad "link down: the point-to-point traffic never began (exit $rc)"
  tail -5 "$TMP/err"
else
  took=$(awk -v a="$down_at" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  echo "link down: the job ended $took s later with exit $rc"
  [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && ok || bad "link down: exit $rc"
  # rank 0 gives up within --timeout of the link going down; mpirun's
  # own teardown of the job takes a few seconds more
  said=$(awk -v a="$down_at" '/ calibrate fleet: rank 0 / { printf "%.1f", $1 - a; exit }' "$TMP/err.t")
  echo "link down: rank 0 said so ${said:-never} s later"
  awk -v t="${said:-99}" 'BEGIN { exit !(t <= 5 + 1) }' && ok ||
    bad "link down: rank 0 spoke ${said:-never} s after the link went down (--timeout 5)"
  awk -v t="$took" 'BEGIN { exit !(t <= 5 + 10) }' && ok ||
    bad "link down: the job took $took s to end (--timeout 5)"
  n0=$(grep -c '^calibrate fleet: rank 0 ' "$TMP/err")
  [ "$n0" = 1 ] && ok || bad "link down: $n0 lines from rank 0, expected 1"
  grep -Eq '^calibrate fleet: rank 0 (spent over 5 s on one step of |waited 5 s for the other ranks \()the point-to-point link [01] -> [01] \(h[ab] -> h[ab]\)' \
    "$TMP/err" && ok || { bad "link down: rank 0 does not name the pair"; cat "$TMP/err"; }
  ls "$TMP"/down.json* >/dev/null 2>&1 && bad "link down: a fleet file was written" || ok
fi
in_a ip link set vm0 up 2>/dev/null

finish || exit 1
if [ -n "$timing_skipped" ]; then
  echo "timing checks not judged: $skip_timing (run this test on a quiet machine)"
  exit 77
fi
