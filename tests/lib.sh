# What the shell tests of the podsim binary share (sourced, not run): the binary under test ($PODSIM, by
# default build/podsim), a scratch directory $tmp removed on exit, and checks that print one "ok"/"FAIL"
# line each and remember any failure for `finish`.
PODSIM=${PODSIM:-build/podsim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

check() {  # check NAME CONDITION-COMMAND...
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fail=1; fi
}

# Bad input must exit with status 2 and a message matching PATTERN (shown in full when it does not).
expect_error() {  # expect_error NAME PATTERN ARGS...
  local name=$1 pattern=$2; shift 2
  $PODSIM "$@" > "$tmp/err.txt" 2>&1
  local code=$?
  check "$name: exit 2" test $code -eq 2
  check "$name: message" grep -q -- "$pattern" "$tmp/err.txt"
  [ $code -eq 2 ] && grep -q -- "$pattern" "$tmp/err.txt" || cat "$tmp/err.txt"
}

# For tests that kill a background podsim ($pid, started by the test) mid-job: wait until FILE has N lines,
# or until that job has ended (then there is nothing more to wait for).
wait_lines_in() {  # wait_lines_in FILE N
  for _ in $(seq 1 2000); do
    [ -f "$1" ] && [ "$(wc -l < "$1")" -ge "$2" ] && return 0
    kill -0 "$pid" 2> /dev/null || return 0
    sleep 0.01
  done
}
wait_exists() {  # wait_exists PATH: until it exists (at most 5 s)
  for _ in $(seq 1 500); do [ -e "$1" ] && return 0; sleep 0.01; done
}

finish() {  # finish TEST-NAME: the verdict line and the exit status
  if [ $fail -ne 0 ]; then echo "$1: some checks failed"; exit 1; fi
  echo "$1: all checks passed"
}
