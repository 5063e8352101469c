/**
 * The hook forwarders' version, sent in `x-harness-version` (decision 0018). A constant rather than
 * `support/version.ts`'s package.json lookup: the forwarder runs bundled as CommonJS, where no module URL
 * finds package.json, and a hook call should read no file it need not. `harness-hook.sh` and
 * `hook-client.c` carry the same text; test/shell/agents/forwarder-version.test.ts holds all three to
 * package.json's version.
 */
export const FORWARDER_VERSION = "0.1.0";
