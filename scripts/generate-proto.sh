#!/usr/bin/env bash
# Lints proto/ and regenerates src/shell/rpc/gen from it (buf.gen.yaml). Offline: buf and protoc-gen-es
# are the pinned npm packages, and the module has no remote dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."
node_modules/.bin/buf lint
node_modules/.bin/buf generate
echo "wrote src/shell/rpc/gen"
