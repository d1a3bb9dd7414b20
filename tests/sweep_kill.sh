#!/usr/bin/env bash
# Sweeps that are killed, interrupted, run twice at once or resumed after an edit (podsim issue 11): the
# final results.csv must be byte-identical to an uninterrupted run, and nothing may be lost or duplicated.
# Signals go to the whole process group, as a terminal (Ctrl-C) or Slurm (scancel, time limit) send them.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PODSIM=$(readlink -f "$PODSIM")
set -m  # every background job in its own process group, so `kill -- -PID` reaches its workers too

# 24 cheap points (GPT-2 small, a fraction of a second each).
cat > "$tmp/study.yaml" <<YAML
name: kill test
topology: $PWD/topologies/dgx-a100-superpod.yaml
workload: $PWD/workloads/gpt2-small.yaml
set: {workload.model.vocab: 50304}  # padded, so that every tp divides it
axes:
  - grid: {workload.training.global_batch: [256, 512]}
  - grid: {topology.nodes: [1, 2], workload.parallel.tp: [1, 2, 4], workload.parallel.pp: [1, 2]}
YAML

start() {  # start DIR [ARGS...]: a sweep in the background, its pid (= process group) in $pid
  local dir=$1; shift
  "$PODSIM" sweep "$tmp/study.yaml" --out "$dir" --jobs 2 --quiet "$@" 2> "$dir.err" &
  pid=$!
}
wait_rows() { wait_lines_in "$1/results.partial.csv" "$2"; }  # wait_rows DIR N
clean() {  # clean DIR: nothing but the results is left behind
  test -z "$(find "$1" -name '*.running*' -o -name '*.lock' -o -name '*.tmp*' -o -name '*.partial.csv')"
}

"$PODSIM" sweep "$tmp/study.yaml" --out "$tmp/ref" --jobs 2 --quiet
check "reference sweep exits 0" test $? -eq 0
check "reference: 24 points + header" test "$(wc -l < "$tmp/ref/results.csv")" -eq 25
check "reference leaves nothing behind" clean "$tmp/ref"

# SIGKILL to the group mid-sweep, several times over (also while resuming), then resume to the end.
start "$tmp/kill"
wait_rows "$tmp/kill" 6
kill -KILL -- -$pid; wait $pid 2> /dev/null
check "SIGKILL: no results.csv yet" test ! -e "$tmp/kill/results.csv"
for delay in 0.1 0.3 0.2 0.4; do
  start "$tmp/kill" --resume
  sleep $delay
  kill -KILL -- -$pid 2> /dev/null; wait $pid 2> /dev/null
done
start "$tmp/kill" --resume; wait $pid
check "SIGKILL: resume exits 0" test $? -eq 0
check "SIGKILL: resumed results equal an uninterrupted run" cmp "$tmp/kill/results.csv" "$tmp/ref/results.csv"
check "SIGKILL: nothing left behind" clean "$tmp/kill"

# SIGINT and SIGTERM to the group: the points in flight die too; they must not be recorded as results.
for sig in INT TERM; do
  start "$tmp/$sig"
  wait_rows "$tmp/$sig" 6
  kill -$sig -- -$pid; wait $pid
  code=$?
  expected=$([ $sig = INT ] && echo 130 || echo 143)
  check "SIG$sig: exit $expected" test $code -eq $expected
  check "SIG$sig: no results.csv yet" test ! -e "$tmp/$sig/results.csv"
  check "SIG$sig: no point recorded as failed or signalled" \
    test -z "$(grep -E ',(failed|error),|signal' "$tmp/$sig/results.partial.csv")"
  start "$tmp/$sig" --resume; wait $pid
  check "SIG$sig: resume exits 0" test $? -eq 0
  check "SIG$sig: resumed results equal an uninterrupted run" cmp "$tmp/$sig/results.csv" "$tmp/ref/results.csv"
done

# Two sweeps into one --out: the second is refused at once and the first is not disturbed.
start "$tmp/two"
first=$pid
wait_exists "$tmp/two/results.lock"
expect_error "second sweep into the same --out" "another podsim sweep (pid $first)" \
  sweep "$tmp/study.yaml" --out "$tmp/two" --quiet
expect_error "second sweep with --resume" "another podsim sweep" \
  sweep "$tmp/study.yaml" --out "$tmp/two" --resume --quiet
wait $first
check "first sweep exits 0" test $? -eq 0
check "first sweep's results are intact" cmp "$tmp/two/results.csv" "$tmp/ref/results.csv"

# Resume after editing the study: rows of points no longer in it go, new points run.
cp -r "$tmp/ref" "$tmp/edit"
sed 's/\[256, 512\]/[512, 1024]/' "$tmp/study.yaml" > "$tmp/edited.yaml"
"$PODSIM" sweep "$tmp/edited.yaml" --out "$tmp/edited-ref" --jobs 2 --quiet
"$PODSIM" sweep "$tmp/edited.yaml" --out "$tmp/edit" --jobs 2 --resume > "$tmp/edit.out" 2> "$tmp/edit.err"
check "edited study: resume exits 0" test $? -eq 0
check "edited study: says it dropped the 12 rows" grep -q "dropped 12 rows" "$tmp/edit.err"
check "edited study: reused the 12 rows still in it" grep -q "12 reused from disk" "$tmp/edit.out"
check "edited study: results equal a fresh sweep of it" cmp "$tmp/edit/results.csv" "$tmp/edited-ref/results.csv"

finish sweep_kill
