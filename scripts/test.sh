#!/usr/bin/env bash
# The one test command: installs redis-server, tmux and spin from the system packages
# when they are missing, then runs every test (vet, staticcheck, formatting, go test
# of every package of the main module and of the bench module, the module-graph
# check, the model check of spec/ with Spin, the console's end-to-end check in tmux). It fails, never skips, when a
# dependency cannot be installed. The lock algorithm and the CLI run under the race
# detector; the heavy scenario tests of the lock algorithm (the mutants, the full
# soak, the pipeline stress attacks) run once more without it, at full length (the
# mutants skip themselves under it: quorum/heavy_test.go); the console's frame-time
# test runs once more without it (it skips itself under the race detector).
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || missing+=(redis-server)
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
command -v spin >/dev/null 2>&1 || missing+=(spin)
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing ${missing[*]}"
  if command -v apt-get >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "error: ${missing[*]} not installed and apt-get is not available;" >&2
    echo "       install them with your system's package manager (e.g. 'brew install redis tmux spin') and run again." >&2
    exit 1
  fi
fi
redis-server --version

# step prints a step's heading with the time since the start, so that a slow step shows.
step() { echo "== $* [at ${SECONDS}s]"; }

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "not gofmt-formatted:" >&2
  echo "$unformatted" >&2
  exit 1
fi

# staticcheck at a pinned version, built by the go command (nothing installed by hand).
staticcheck=honnef.co/go/tools/cmd/staticcheck@v0.8.2

step "go vet"
go vet ./...
(cd bench && go vet ./...)

step "staticcheck"
go run "$staticcheck" ./...
(cd bench && go run "$staticcheck" ./...)

step "go mod tidy"
go mod tidy -diff
(cd bench && go mod tidy -diff)

step "module graph (a program importing quorum pulls in no benchmark peer)"
bash scripts/check-module-graph.sh

step "go test (race detector on the lock algorithm, the CLI and run's guard)"
go test -race -count=1 -timeout 15m ./quorum/ ./internal/cli/ ./internal/guard/

step "go test (the heavy scenarios without the race detector: the mutants, the full soak, the pipeline stress attacks)"
go test -count=1 -timeout 10m -run '^(TestMutantsAreCaught|TestPrimitiveMutantsAreCaught|TestNemesisSoak|TestPipelineLateRepliesNeverMisread|TestPipelineLateRepliesNeverMisreadGoRedis)$' ./quorum/

step "go test (the console's frames while a listing of 100,000 locks runs: without the race detector, whose frame times are not the console's)"
go test -count=1 -run 'TestConsoleFramesWhileListing100k' ./internal/cli/

step "go test (every other package)"
go test -count=1 -timeout 15m $(go list ./... | grep -v -e '/quorum$' -e '/internal/cli$' -e '/internal/guard$')

step "go test (the bench module: benchmark peers, the floor, interop with redsync)"
(cd bench && go test -count=1 -timeout 15m ./...)

step "model check (spec/: Promela models checked by Spin)"
bash scripts/model-check.sh

step "console end-to-end (tmux)"
bash scripts/e2e-console.sh

echo "== done [at ${SECONDS}s]"
