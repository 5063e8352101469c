#!/usr/bin/env bash
# Node 22 and 24 (docs: README's "Supported Node lines"): in a copy of the checkout, better-sqlite3
# rebuilt for the line's ABI against its own headers, then the build, the store, daemon and agents tests
# and `harness demo`, all on that line. Run by .ci/run after `npm test` (Node 20, the checkout's own).
set -euo pipefail
cd "$(dirname "$0")/.."
for line in ${HARNESS_NODE_LINES:-22 24}; do
  start=$SECONDS
  node_dir=$(bash .ci/node-line.sh "$line")
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  cp -a . "$work/repo"
  (
    cd "$work/repo"
    export PATH="$node_dir/bin:$PATH"
    echo "node-lines: Node $(node --version) in $work/repo"
    npm rebuild better-sqlite3 --nodedir="$node_dir" >/dev/null
    npm run -s build
    npx vitest run test/shell/store test/shell/daemon test/shell/agents
    node dist/shell/cli/bin.cjs demo --seconds 5 >/dev/null
    echo "node-lines: Node $line: harness demo ok"
  )
  rm -rf "$work"
  trap - EXIT
  echo "node-lines: Node $line done in $((SECONDS - start)) s"
done
