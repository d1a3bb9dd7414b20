#!/usr/bin/env bash
# A plan search that is killed (SIGKILL to its process group, as scancel or a node failure would) and resumed
# with --resume, several times over: its N best rows in plan.csv must be byte-identical to an uninterrupted
# search's (which candidates beyond them a search simulates depends on the order outcomes arrive in, and
# recalled ones arrive at once), the candidates simulated before a kill are recalled, not simulated again,
# and nothing may be left behind.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PODSIM=$(readlink -f "$PODSIM")
set -m  # every background job in its own process group, so `kill -- -PID` reaches its workers too

# Llama 3 8B cut to 4 layers of 1024 tokens on 16 H100: a few hundred candidates of a few ms each.
args=(plan -t topologies/dgx-h100-superpod.yaml -w workloads/llama3-8b.yaml --set topology.nodes=2
      --set workload.model.layers=4 --set workload.model.seq_len=1024 --set workload.training.global_batch=32
      --set workload.parallel.tp_overlap=false --set workload.parallel.rank_order=tp-cp-dp-pp
      --top 60 --jobs 2 --quiet)
journal() { [ -f "$1/plan.partial.jsonl" ] && wc -l < "$1/plan.partial.jsonl" || echo 0; }
start() {  # start DIR [ARGS...]: a search in the background, its pid (= process group) in $pid
  local dir=$1; shift
  "$PODSIM" "${args[@]}" --out "$dir" "$@" > "$dir.out" 2> "$dir.err" &
  pid=$!
}
wait_lines() { wait_lines_in "$1/plan.partial.jsonl" "$2"; }  # wait_lines DIR N
clean() {  # clean DIR: nothing but plan.csv and plan.html
  test "$(ls "$1" | tr '\n' ' ')" = "plan.csv plan.html "
}

"$PODSIM" "${args[@]}" --out "$tmp/ref" > "$tmp/ref.out"
check "reference search exits 0" test $? -eq 0
check "reference leaves only plan.csv and plan.html" clean "$tmp/ref"

start "$tmp/kill"
wait_lines "$tmp/kill" 11
kill -KILL -- -$pid; wait $pid 2> /dev/null
check "SIGKILL: no plan.csv yet" test ! -e "$tmp/kill/plan.csv"
check "SIGKILL: the candidates simulated are in the journal" test "$(journal "$tmp/kill")" -ge 11
expect_error "after a kill, a search without --resume" "--resume continues that search" \
  "${args[@]}" --out "$tmp/kill"
for delay in 0.2 0.5; do
  start "$tmp/kill" --resume
  sleep $delay
  kill -KILL -- -$pid 2> /dev/null; wait $pid 2> /dev/null
done
start "$tmp/kill" --resume; wait $pid
check "SIGKILL: resume exits 0" test $? -eq 0
best() { head -n 61 "$1/plan.csv"; }  # the header and the 60 best (--top 60)
check "SIGKILL: the resumed search's 60 best equal an uninterrupted search's" \
  cmp <(best "$tmp/kill") <(best "$tmp/ref")
check "SIGKILL: the resumed search says how many it recalled" \
  grep -qE "simulated, [1-9][0-9]* of them before the search was interrupted" "$tmp/kill.out"
check "SIGKILL: nothing left behind" clean "$tmp/kill"

# SIGINT (Ctrl-C) to the group: exit 130, one line that says how to continue, and --resume does.
start "$tmp/int"
wait_lines "$tmp/int" 6
kill -INT -- -$pid; wait $pid
check "SIGINT: exit 130" test $? -eq 130
check "SIGINT: one note on how to continue" test "$(grep -c -- "--resume continues the search" "$tmp/int.err")" -eq 1
start "$tmp/int" --resume; wait $pid
check "SIGINT: resume exits 0" test $? -eq 0
check "SIGINT: the resumed search's 60 best equal an uninterrupted search's" cmp <(best "$tmp/int") <(best "$tmp/ref")

# A journal of another search (another --set) is refused, naming what differs.
start "$tmp/other"
wait_lines "$tmp/other" 3
kill -KILL -- -$pid; wait $pid 2> /dev/null
expect_error "--resume with another --set" "differs from this one in the --set list" \
  "${args[@]}" --set workload.training.micro_batch=1 --out "$tmp/other" --resume

# Two searches into one --out: the second is refused at once.
start "$tmp/two"
first=$pid
wait_exists "$tmp/two/plan.lock"
expect_error "a second search into the same --out" "another podsim plan search (pid $first)" \
  "${args[@]}" --out "$tmp/two" --resume
kill -KILL -- -$first; wait $first 2> /dev/null

expect_error "--resume without --out" "give --out" "${args[@]}" --resume
finish plan_kill
