#!/usr/bin/env bash
# Model-checks the Promela specification in spec/ with Spin: every check prints one
# line, "verified NAME" or "counterexample NAME" (with spin's state count), and the
# script exits non-zero when an outcome is not the expected one. Each check is an
# exhaustive search (spin -a, gcc -DSAFETY, no bitstate, no hash compaction); a
# counterexample's trail is kept in $MODEL_TRAILS (default: a temporary directory).
# Installs the Debian package spin when it is missing, as scripts/test.sh does.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v spin >/dev/null 2>&1; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "error: spin is not installed and apt-get is not available; install spin (e.g. 'brew install spin') and run again." >&2
    exit 1
  fi
  echo "== installing spin"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends spin >/dev/null
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trails=${MODEL_TRAILS:-$work/trails}
mkdir -p "$trails"

# NAME EXPECTED MODEL FLAGS...: expected is verified or counterexample.
checks=(
  "mutex verified mutex.pml -DACQS=1"
  "no_false_loss verified mutex.pml -DACQS=1 -DRESTARTS=0 -DEXTS=1"
  "fencing verified mutex.pml -DACQS=1 -DEXTS=0 -DFENCING -DPERSIST"
  "election verified mutex.pml -DACQS=1 -DEXTS=0 -DFENCING -DELECTION -DPERSIST"
  "holder_stops_at_until verified mutex.pml -DACQS=1 -DEXTS=0 -DWRITES"
  "late_write_fenced verified mutex.pml -DACQS=1 -DEXTS=0 -DRESTARTS=0 -DFENCING -DLATE_WRITE -DFENCED_RESOURCE"
  "semaphore verified semaphore.pml -DRESTARTS=0 -DCERR=0"
  "shared verified shared.pml -DRESTARTS=0"
  "shared_restart verified shared.pml -DCERR=0"
  "no_quarantine counterexample mutex.pml -DACQS=1 -DEXTS=0 -DNO_QUARANTINE"
  "clock_beyond_budget counterexample mutex.pml -DACQS=1 -DEXTS=0 -DRESTARTS=0 -DCERR=2"
  "late_write counterexample mutex.pml -DACQS=1 -DEXTS=0 -DRESTARTS=0 -DLATE_WRITE"
  "wall_clock_jump counterexample mutex.pml -DACQS=1 -DEXTS=0 -DRESTARTS=0 -DWALL_CLOCK_JUMP"
  "eviction counterexample mutex.pml -DACQS=1 -DEXTS=0 -DRESTARTS=0 -DEVICTION"
)
only=${1:-}
bad=0

# The checks run as many at a time as there are processors (each search is one
# process); their outcomes are read and printed in the order above.
run_check() { # DIR MODEL FLAGS: spin, gcc and pan in DIR; a failure shows in pan.out
  local d=$1 model=$2 flags=$3
  (
    cd "$d"
    # shellcheck disable=SC2086
    spin $flags -a "$model" >spin.out 2>&1 &&
      gcc -O2 -DSAFETY -DNOBOUNDCHECK -DVECTORSZ=256 -o pan pan.c 2>>spin.out &&
      { ./pan -m200000 >pan.out 2>&1 || true; }
  ) || true
}
slots=$(nproc 2>/dev/null || echo 2)
for c in "${checks[@]}"; do
  read -r name want model flags <<<"$c"
  [ -z "$only" ] || [ "$only" = "$name" ] || continue
  d=$work/$name
  mkdir -p "$d"
  cp spec/*.pml "$d/"
  run_check "$d" "$model" "$flags" &
  while [ "$(jobs -rp | wc -l)" -ge "$slots" ]; do
    wait -n || true
  done
done
wait

for c in "${checks[@]}"; do
  read -r name want model flags <<<"$c"
  [ -z "$only" ] || [ "$only" = "$name" ] || continue
  d=$work/$name
  touch "$d/pan.out"
  states=$(awk '/states, stored/ {print $1; exit}' "$d/pan.out")
  if grep -q "errors: 0" "$d/pan.out"; then
    got=verified
  elif grep -q "errors: [1-9]" "$d/pan.out"; then
    got=counterexample
    cp "$d/$model.trail" "$trails/$name.trail"
    # shellcheck disable=SC2086
    (cd "$d" && spin $flags -t -p -g "$model" >"$trails/$name.txt" 2>&1 || true)
  else
    echo "error $name: spin or pan failed" >&2
    cat "$d/spin.out" "$d/pan.out" >&2
    bad=1
    continue
  fi
  echo "$got $name ($states states)"
  if [ "$got" != "$want" ]; then
    echo "  expected $want: see $d/pan.out" >&2
    grep -E "assert|error" "$d/pan.out" >&2 || true
    bad=1
  fi
done
exit $bad
