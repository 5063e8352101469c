#!/usr/bin/env bash
# The real Claude Code for test/shell/agents/claude-code-real.test.ts: the registry's package, whose
# platform package holds a native binary (no Node needed), installed outside the project's dependencies
# into a cache directory, without install scripts. Prints the binary's path on stdout.
set -euo pipefail
version=2.1.332
dir=${HARNESS_CI_CACHE:-$HOME/.cache/harness-ci}/claude-code-$version
bin=$dir/node_modules/@anthropic-ai/claude-code-linux-x64/claude
if [ ! -x "$bin" ]; then
  mkdir -p "$dir"
  npm install --ignore-scripts --no-audit --no-fund --loglevel=error --prefix "$dir" \
    "@anthropic-ai/claude-code@$version" >&2
fi
"$bin" --version >&2
echo "$bin"
