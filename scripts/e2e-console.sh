#!/usr/bin/env bash
# End-to-end check of the console against five real redis-server masters, driven
# through tmux: take a lock with the keys, see it listed with a countdown, kill a
# master and see its row change, force-expire the lock and find it in the history,
# move through 20 locks with a burst of keys and G, filter by owner, open a node's
# detail, quit. On any failing step it
# prints the captured screen and exits non-zero.
#
# Needs go, tmux and redis-server. CAPTURE=FILE saves the screen after the lock is
# taken (used for the capture in README.md).
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in go tmux; do
  command -v "$tool" >/dev/null 2>&1 || { echo "e2e-console: $tool is not installed" >&2; exit 1; }
done
command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || { echo "e2e-console: redis-server is not installed" >&2; exit 1; }

work=$(mktemp -d)
session="redlock-e2e-$$"
up_pid=""
cleanup() {
  tmux kill-session -t "$session" 2>/dev/null || true
  if [ -n "$up_pid" ]; then kill "$up_pid" 2>/dev/null || true; wait "$up_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

step() { echo "e2e-console: [$SECONDS s] $*"; }
screen() { tmux capture-pane -p -t "$session" 2>/dev/null || true; }
fail() {
  echo "e2e-console: FAILED: $*" >&2
  echo "----- screen -----" >&2
  screen >&2
  echo "------------------" >&2
  if [ -s "$work/up.err" ]; then echo "----- up stderr -----" >&2; cat "$work/up.err" >&2; fi
  exit 1
}
# wait_for PATTERN [SECONDS]: poll the screen until a line matches the extended regex.
wait_for() {
  local pattern=$1 limit=${2:-20} i
  for ((i = 0; i < limit * 10; i++)); do
    if screen | grep -Eq -- "$pattern"; then return 0; fi
    sleep 0.1
  done
  fail "no line matching /$pattern/ within ${limit}s"
}
# line_of PATTERN: the first screen line matching the extended regex.
line_of() { screen | grep -E -- "$1" | head -n1; }

step "building"
go build -o "$work/redlock" .

# Five free loopback ports: a port is free when nothing accepts a connection on it.
# Another process may bind one between the check and redis-server's start, so the
# whole start is tried up to three times with fresh ports.
start_masters() {
  ports=()
  candidate=$((20000 + RANDOM % 10000))
  while [ ${#ports[@]} -lt 5 ]; do
    candidate=$((candidate + 1))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then ports+=("$candidate"); fi
  done

  cat >"$work/redlock.hcl" <<HCL
cluster "e2e" {
  key_prefix         = "lock:"
  ttl                = "30s"
  max_ttl            = "5m"
  node_timeout       = "50ms"
  restart_quarantine = false # brand-new throwaway masters

  master "a" { address = "127.0.0.1:${ports[0]}" }
  master "b" { address = "127.0.0.1:${ports[1]}" }
  master "c" { address = "127.0.0.1:${ports[2]}" }
  master "d" { address = "127.0.0.1:${ports[3]}" }
  master "e" { address = "127.0.0.1:${ports[4]}" }
}
HCL

  "$work/redlock" up -config "$work/redlock.hcl" >"$work/up.out" 2>"$work/up.err" &
  up_pid=$!
  for ((i = 0; i < 100; i++)); do
    [ "$(grep -c '^master ' "$work/up.out" 2>/dev/null || true)" -ge 5 ] && return 0
    if ! kill -0 "$up_pid" 2>/dev/null; then
      wait "$up_pid" 2>/dev/null || true
      up_pid=""
      return 1
    fi
    sleep 0.1
  done
  return 1
}

step "starting 5 redis-server masters with redlock up"
started=""
for attempt in 1 2 3; do
  if start_masters; then started=1; break; fi
  echo "e2e-console: redlock up failed (attempt $attempt):" >&2
  cat "$work/up.err" >&2
  if [ -n "$up_pid" ]; then kill "$up_pid" 2>/dev/null || true; wait "$up_pid" 2>/dev/null || true; up_pid=""; fi
done
[ -n "$started" ] || { echo "e2e-console: FAILED: masters did not start" >&2; exit 1; }
c_pid=$(awk '$2 == "c" { gsub(/[^0-9]/, "", $NF); print $NF }' "$work/up.out")
[ -n "$c_pid" ] || { cat "$work/up.out" >&2; echo "e2e-console: FAILED: no pid for master c" >&2; exit 1; }

step "opening the console in tmux"
tmux new-session -d -s "$session" -x 120 -y 40 \
  "NO_COLOR=1 '$work/redlock' console -config '$work/redlock.hcl' -interval 500ms; echo console-exit=\$?; sleep 30"
wait_for 'healthy 5/5' 15

step "acquiring e2e/job-1 through the prompt"
tmux send-keys -t "$session" a
wait_for '^Acquire +name:'
tmux send-keys -t "$session" -l 'e2e/job-1'
tmux send-keys -t "$session" Tab BSpace BSpace BSpace
tmux send-keys -t "$session" -l '20s'
tmux send-keys -t "$session" Enter
wait_for 'acquired e2e/job-1: 5/5 votes'
wait_for 'e2e/job-1 +● held +5/5 +this console .* [0-9]+ms'
[ -n "${CAPTURE:-}" ] && screen >"$CAPTURE"

step "checking the countdown goes down"
first=$(line_of 'e2e/job-1 +● held' | grep -Eo '[0-9]+ms *$' | tr -dc 0-9)
sleep 1.2
second=$(line_of 'e2e/job-1 +● held' | grep -Eo '[0-9]+ms *$' | tr -dc 0-9)
{ [ -n "$first" ] && [ -n "$second" ] && [ "$second" -lt "$first" ] && [ "$second" -gt 10000 ]; } ||
  fail "countdown did not go down: $first then $second"

step "killing master c (pid $c_pid)"
kill -9 "$c_pid"
wait_for '✖ down +c ' 15
wait_for 'healthy 4/5'

step "force-expiring e2e/job-1"
tmux send-keys -t "$session" x
wait_for 'Force-expire e2e/job-1 held by this console\? y/n'
tmux send-keys -t "$session" y
wait_for 'force-expired e2e/job-1: deleted on 4/5 masters'
wait_for 'no locks' 15

step "history pane shows the force-expired lock"
tmux send-keys -t "$session" H
wait_for 'History +[0-9]+ recent lock events'
wait_for '(released|expired) +e2e/job-1'
tmux send-keys -t "$session" H

step "taking 20 locks from the command line"
for i in $(seq -w 0 19); do
  "$work/redlock" acquire "bulk/$i" -ttl 5m -owner bulker -config "$work/redlock.hcl" >/dev/null 2>&1 ||
    fail "acquire bulk/$i failed"
done
wait_for 'Locks +20' 15

step "a burst of five j in one read moves five rows; G goes to the bottom"
tmux send-keys -t "$session" g
wait_for '› bulk/00 '
tmux send-keys -t "$session" -l 'jjjjj'
wait_for '› bulk/05 '
tmux send-keys -t "$session" G
wait_for '› bulk/19 '

step "filtering by owner"
tmux send-keys -t "$session" /
tmux send-keys -t "$session" -l 'bulker'
tmux send-keys -t "$session" Enter
wait_for 'Locks +20 of 20 matching "bulker"'
tmux send-keys -t "$session" Escape
wait_for 'filter cleared'

step "a node's detail"
tmux send-keys -t "$session" Tab Enter
wait_for 'Master a +● up'
wait_for 'clock offset'
tmux send-keys -t "$session" Enter Tab

step "quitting"
tmux send-keys -t "$session" q
wait_for 'console-exit=0' 10

step "ok"
