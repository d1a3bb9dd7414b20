#!/usr/bin/env bash
# Sweeps through the real binary: identical results whatever --jobs, shards + merge equal a single run,
# an interrupted sweep resumes to the same result, reports load in a real browser, traces are valid.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PODSIM=$(readlink -f "$PODSIM")
STUDY=tests/data/study-small.yaml

$PODSIM sweep $STUDY --out "$tmp/j1" --jobs 1 --quiet; check "sweep --jobs 1 exits 0" test $? -eq 0
$PODSIM sweep $STUDY --out "$tmp/j2" --jobs 2 --quiet; check "sweep --jobs 2 exits 0" test $? -eq 0
check "results identical for 1 and 2 workers" cmp -s "$tmp/j1/results.csv" "$tmp/j2/results.csv"
check "9 points + header" test "$(wc -l < "$tmp/j1/results.csv")" -eq 10
check "filtered point recorded as skipped" grep -q ',skipped,' "$tmp/j1/results.csv"
check "report.html written" test -s "$tmp/j1/report.html"
check "no partial file left" test ! -e "$tmp/j1/results.partial.csv"

for i in 0 1 2; do $PODSIM sweep $STUDY --out "$tmp/shards" --shard $i/3 --quiet || fail=1; done
SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=3 $PODSIM sweep $STUDY --out "$tmp/env" --quiet
check "shard from SLURM_ARRAY_TASK_ID" test -s "$tmp/env/results.shard-1-of-3.csv"
$PODSIM merge "$tmp/shards" > /dev/null; check "merge exits 0" test $? -eq 0
check "merged shards equal a single run" cmp -s "$tmp/shards/results.csv" "$tmp/j1/results.csv"
rm "$tmp/env/results.shard-1-of-3.csv"
$PODSIM merge "$tmp/env" > "$tmp/merge.txt" 2>&1
check "merge without shards: exit 2" test $? -eq 2

# Bad input is refused before any point runs (exit 2, naming file, line and field).
expect_error "sweep --jobs -1" "jobs -1: expected 1 to" sweep $STUDY --out "$tmp/bad" --jobs -1
printf 'name: m\ntopology: nope.yaml\nworkload: %s/workloads/gpt2-small.yaml\n' "$PWD" > "$tmp/missing.yaml"
expect_error "study naming a missing topology" "missing.yaml:2:11: topology: nope.yaml: no such file" \
  sweep "$tmp/missing.yaml" --out "$tmp/bad"
sed 's/pp: \[2, 4, 8\]/pp: [2, 4, 2]/' $STUDY > "$tmp/repeated.yaml"
expect_error "repeated axis value" "value '2' appears twice" sweep "$tmp/repeated.yaml" --out "$tmp/bad"
{ cat $STUDY; printf '  - "%s1%s"\n' "$(printf '(%.0s' $(seq 1 10000))" "$(printf ')%.0s' $(seq 1 10000))"; } > "$tmp/deep.yaml"
expect_error "filter nested 10000 deep" "filters\[1\]: filter does not parse: nested more than 100" \
  sweep "$tmp/deep.yaml" --out "$tmp/bad"
touch "$tmp/a-file"
expect_error "sweep --out below a file" "--out $tmp/a-file/out: cannot create the directory" sweep $STUDY --out "$tmp/a-file/out"
check "refused sweeps wrote no results" test -z "$(ls "$tmp/bad" 2> /dev/null)"

# Interrupt a slower sweep, then resume it.
cat > "$tmp/slow.yaml" <<YAML
name: slow
topology: $PWD/topologies/dgx-a100-superpod.yaml
workload: $PWD/workloads/gpt3-175b.yaml
axes:
  - grid: {workload.parallel.virtual_stages: [1, 2, 3, 4, 6]}
  - zip: {topology.nodes: [64, 128], workload.training.global_batch: [768, 1536]}
YAML
$PODSIM sweep "$tmp/slow.yaml" --out "$tmp/ref" --quiet
$PODSIM sweep "$tmp/slow.yaml" --out "$tmp/cut" --jobs 1 --quiet &
pid=$!
# Interrupt once a point has finished (header + one row), however slow this machine or build (sanitizers).
for _ in $(seq 1 600); do
  [ "$(wc -l < "$tmp/cut/results.partial.csv" 2> /dev/null || echo 0)" -ge 2 ] && break
  sleep 0.1
done
kill -INT $pid
wait $pid
code=$?
check "interrupted sweep exits 130" test $code -eq 130
check "interrupted sweep leaves no results.csv" test ! -e "$tmp/cut/results.csv"
check "interrupted sweep kept finished points" test "$(wc -l < "$tmp/cut/results.partial.csv")" -ge 2
$PODSIM sweep "$tmp/slow.yaml" --out "$tmp/cut" --resume --quiet
check "resumed sweep equals an uninterrupted one" cmp -s "$tmp/cut/results.csv" "$tmp/ref/results.csv"

# Single run: report and trace.
$PODSIM run -t topologies/dgx-a100-superpod.yaml -w workloads/gpt3-175b.yaml --set topology.nodes=8 \
  --set workload.training.global_batch=96 --set workload.parallel.virtual_stages=2 --out "$tmp/run" --trace "$tmp/run/trace.json" > /dev/null
check "run report.html" test -s "$tmp/run/report.html"
python3 - "$tmp/run/trace.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
slices = [e for e in ev if e["ph"] == "X"]
assert slices, "no slices"
for e in slices:
    assert {"name", "ph", "ts", "dur", "pid", "tid"} <= e.keys(), e
    assert e["dur"] > 0 and e["ts"] >= 0, e
names = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
assert names == {f"stage {i}" for i in range(8)} | {"links"}, names  # links: utilization per link class
assert any(e["ph"] == "C" and e["name"].startswith("link utilization") for e in ev), "no link counters"
assert any("forward" in e["name"] for e in slices) and any("send activations" in e["name"] for e in slices)
end = max(e["ts"] + e["dur"] for e in slices) / 1e6
assert abs(end - t["otherData"]["step_time_s"]) < 1e-6 * end + 1e-9, (end, t["otherData"])
PY
check "trace is valid trace-event JSON covering the step" test $? -eq 0

# The reports in a real headless browser: they load, run without errors, draw their charts.
if [ -x /usr/bin/chromium ] || scripts/setup.sh chromium > /dev/null 2>&1; then
  browse() {  # browse FILE PNG -> prints the <body> tag after scripts ran
    chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
      --disable-component-update --disable-sync --user-data-dir="$tmp/chrome-$2" --window-size=1300,1500 \
      --virtual-time-budget=5000 --screenshot="$2" "file://$1" > /dev/null 2>&1
    chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
      --disable-component-update --disable-sync --user-data-dir="$tmp/chrome-$2-dom" --virtual-time-budget=5000 \
      --dump-dom "file://$1" 2>/dev/null | grep -o '<body[^>]*>'
  }
  body=$(browse "$tmp/j1/report.html" "$tmp/sweep.png")
  check "sweep report renders 4 charts" grep -q 'data-rendered="4"' <<<"$body"
  check "sweep report has no script errors" test -z "$(grep -o 'data-errors' <<<"$body")"
  check "sweep report screenshot" test -s "$tmp/sweep.png"
  body=$(browse "$tmp/run/report.html" "$tmp/run.png")
  check "run report renders 3 charts" grep -q 'data-rendered="3"' <<<"$body"
  check "run report has no script errors" test -z "$(grep -o 'data-errors' <<<"$body")"
  if [ -n "${PODSIM_SCREENSHOTS:-}" ]; then cp "$tmp/sweep.png" "$tmp/run.png" "$PODSIM_SCREENSHOTS"/; fi
else
  echo "FAIL chromium is not installable here"; fail=1
fi

finish sweep_contract
