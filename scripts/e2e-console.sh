#!/usr/bin/env bash
# End-to-end check of the console against five real redis-server masters, driven
# through tmux at 80x24: take a lock with the keys, see it listed with a countdown,
# kill a master and see its row change, force-expire the lock and find it in the
# history, move through 20 locks with a burst of keys and G (at least 12 rows on
# screen), filter by owner and by glob, write hostile keys (an OSC sequence in a
# name, a 1 MB value, a hash, a key without TTL) and check that nothing raw reaches
# the terminal, see a semaphore, a multi-name hold, shared holders and a leader each
# with its KIND (and no row for the election's record), open a node's detail, quit.
# On any failing step it prints the captured screen and exits non-zero. Everything it creates (the build, the
# masters' data directories) lives in one temporary directory, removed at exit.
#
# Needs go, tmux, redis-server and redis-cli. CAPTURE=FILE saves the screen after
# the 20 locks are listed (used for the capture in docs/console.md).
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in go tmux; do
  command -v "$tool" >/dev/null 2>&1 || { echo "e2e-console: $tool is not installed" >&2; exit 1; }
done
command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || { echo "e2e-console: redis-server is not installed" >&2; exit 1; }
command -v redis-cli >/dev/null 2>&1 || { echo "e2e-console: redis-cli is not installed" >&2; exit 1; }

work=$(mktemp -d -t redlock-e2e-console.XXXXXX)
session="redlock-e2e-$$"
up_pid=""
elect_pid=""
cleanup() {
  tmux kill-session -t "$session" 2>/dev/null || true
  if [ -n "$elect_pid" ]; then kill "$elect_pid" 2>/dev/null || true; wait "$elect_pid" 2>/dev/null || true; fi
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

  # TMPDIR: the masters' data directories (redlock-local-*) go under $work too.
  TMPDIR="$work" "$work/redlock" up -config "$work/redlock.hcl" >"$work/up.out" 2>"$work/up.err" &
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
tmux new-session -d -s "$session" -x 80 -y 24 \
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
wait_for 'e2e/job-1 +● held +5/5 +lock +this console .* [0-9]+\.[0-9]s *$'

step "checking the countdown goes down"
# Tenths of a second: "19.5s" reads 195.
first=$(line_of 'e2e/job-1 +● held' | grep -Eo '[0-9]+\.[0-9]s *$' | tr -dc 0-9)
sleep 1.2
second=$(line_of 'e2e/job-1 +● held' | grep -Eo '[0-9]+\.[0-9]s *$' | tr -dc 0-9)
{ [ -n "$first" ] && [ -n "$second" ] && [ "$second" -lt "$first" ] && [ "$second" -gt 100 ]; } ||
  fail "countdown did not go down: $first then $second (tenths)"

step "killing master c (pid $c_pid)"
kill -9 "$c_pid"
wait_for '✖ down +c ' 15
wait_for 'healthy 4/5'

step "force-expiring e2e/job-1 (x asks to revoke; D deletes at once)"
tmux send-keys -t "$session" x
wait_for 'Revoke e2e/job-1 held by this console\? y/n'
tmux send-keys -t "$session" n
tmux send-keys -t "$session" D
wait_for 'Delete e2e/job-1 held by this console now\? y/n'
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
rows=$(screen | grep -cE '^[ ›] bulk/[0-9]+ +● held')
[ "$rows" -ge 12 ] || fail "only $rows lock rows at 80x24 (want at least 12)"
[ -n "${CAPTURE:-}" ] && screen >"$CAPTURE"

step "a burst of five j in one read moves five rows; G goes to the bottom"
tmux send-keys -t "$session" g
wait_for '› bulk/00 '
tmux send-keys -t "$session" -l 'jjjjj'
wait_for '› bulk/05 '
tmux send-keys -t "$session" G
wait_for '› bulk/19 '

step "filtering by owner, then by a glob"
tmux send-keys -t "$session" /
tmux send-keys -t "$session" -l 'bulker'
tmux send-keys -t "$session" Enter
wait_for 'Locks +20 of 20 matching "bulker"'
tmux send-keys -t "$session" Escape
wait_for 'filter cleared'
tmux send-keys -t "$session" /
tmux send-keys -t "$session" -l 'bulk/1*'
tmux send-keys -t "$session" Enter
wait_for 'Locks +10 of 20 matching "bulk/1\*"'
# After Escape, wait until it is read: ESC and the next key in one read are one
# alt+key press.
tmux send-keys -t "$session" Escape
wait_for 'Locks +20 · '

step "hostile keys: an OSC sequence in a name, a 1 MB value, a hash, a key without TTL"
title_before=$(tmux display-message -p -t "$session" '#{pane_title}')
big=$(head -c 1048576 /dev/zero | tr '\0' 'v')
for port in "${ports[@]}"; do
  [ "$port" = "${ports[2]}" ] && continue # master c is down
  cli=(redis-cli -h 127.0.0.1 -p "$port")
  "${cli[@]}" SET "$(printf 'lock:x\033]0;owned\007')" rl1.foreign PX 300000 >/dev/null
  printf '%s' "$big" | "${cli[@]}" -x SET lock:huge >/dev/null # the value from stdin: too long for an argument
  "${cli[@]}" PEXPIRE lock:huge 300000 >/dev/null
  "${cli[@]}" HSET lock:redisson-hash f 1 >/dev/null
  "${cli[@]}" PEXPIRE lock:redisson-hash 300000 >/dev/null
  "${cli[@]}" SET lock:forever v >/dev/null
done
wait_for 'Locks +24' 15
tmux send-keys -t "$session" /
tmux send-keys -t "$session" -l 'owned'
tmux send-keys -t "$session" Enter
wait_for 'Locks +1 of 24 matching "owned"'
tmux send-keys -t "$session" x
wait_for 'Revoke x\\x1b\]0;owned\\a held by'
tmux send-keys -t "$session" n
wait_for 'force-expire of x\\x1b\]0;owned\\a cancelled'
title_after=$(tmux display-message -p -t "$session" '#{pane_title}')
[ "$title_after" = "$title_before" ] || fail "a raw OSC sequence reached the terminal: the pane title is now '$title_after'"
tmux send-keys -t "$session" Escape
wait_for 'Locks +24 · '
tmux send-keys -t "$session" G
wait_for 'forever +● held +4/5 .* no ttl *$'
wait_for 'redisson-hash +○ orphaned'
wait_for 'huge +● held +4/5 '
lines=$(screen | wc -l)
[ "$lines" -le 24 ] || fail "$lines lines on a 24-line terminal"

step "the primitives: a semaphore (2 of 3), a multi-name hold, two shared holders, a leader"
rl() { "$work/redlock" "$@" -config "$work/redlock.hcl" >/dev/null 2>&1 || fail "redlock $*"; }
rl acquire nightly -permits 3 -ttl 5m -owner job-a
rl acquire nightly -permits 3 -ttl 5m -owner job-b
rl acquire etl/in etl/out -ttl 5m -owner etl
rl acquire doc -shared -ttl 5m -owner r1
rl acquire doc -shared -ttl 5m -owner r2
"$work/redlock" elect crond -ttl 30s -config "$work/redlock.hcl" -- sleep 120 >"$work/elect.out" 2>&1 &
elect_pid=$!
# 24 + 2 permits + 2 names + 1 shared key + 1 leadership: the election's record
# (crond:leader:term, no TTL) is not a row.
wait_for 'Locks +30 · ' 15
for f in 'sem|nightly:permit:[0-9] +● held +4/5 +sem 2/3 ' 'etl|etl/out +● held +4/5 +multi 2 +etl ' \
  'doc|doc +● held +4/5 +shared 2 ' 'crond|crond:leader +● held +4/5 +leader t1 '; do
  tmux send-keys -t "$session" /
  tmux send-keys -t "$session" -l "${f%%|*}"
  tmux send-keys -t "$session" Enter
  wait_for "${f#*|}"
  screen | grep -q 'crond:leader:term' && fail "the election's record is shown as a row"
  tmux send-keys -t "$session" Escape
  wait_for 'Locks +30 · '
done

step "a node's detail"
tmux send-keys -t "$session" Tab Enter
wait_for 'Master a +● up'
wait_for 'clock offset'
tmux send-keys -t "$session" Enter Tab

step "quitting"
tmux send-keys -t "$session" q
wait_for 'console-exit=0' 10

step "ok"
