#!/usr/bin/env bash
# Checks that a program importing quorum pulls no benchmark peer into its build: it
# writes a throwaway module outside the repository that imports quorum (replaced by
# this checkout) and fails when its module graph (go mod graph) or its packages
# (go list -deps) name one. The peers are redsync and rueidis, and every module the
# bench module requires that the main module does not.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

peers=(github.com/go-redsync/ github.com/redis/rueidis)
main_reqs=$(cd "$root" && go list -m -f '{{.Path}}' all)
for m in $(cd "$root/bench" && go list -m -f '{{if and (not .Main) (not .Indirect)}}{{.Path}}{{end}}' all); do
  grep -qxF "$m" <<<"$main_reqs" || peers+=("$m")
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/go.mod" <<MOD
module example.com/quorumuser

go 1.26.0

require github.com/redlock/redlock v0.0.0-00010101000000-000000000000

replace github.com/redlock/redlock => $root
MOD
cat >"$tmp/main.go" <<'GO'
package main

import (
	"fmt"

	"github.com/redlock/redlock/quorum"
)

func main() { fmt.Println(quorum.NoExpiry) }
GO
cp "$root/go.sum" "$tmp/go.sum"
cd "$tmp"
go mod tidy
graph=$(go mod graph)
deps=$(go list -deps .)
bad=0
for p in "${peers[@]}"; do
  if grep -F -- "$p" <<<"$graph$deps" >/dev/null; then
    echo "a program importing quorum pulls in the benchmark peer $p:" >&2
    grep -F -- "$p" <<<"$graph$deps" | head -5 >&2
    bad=1
  fi
done
[ "$bad" -eq 0 ] || exit 1
echo "no benchmark peer in the module graph of a program importing quorum (checked: $(printf "%s\n" "${peers[@]}" | sort -u | tr "\n" " "))"
