/**
 * The reload matrix (issue 16): each config section changed under a running daemon, reloaded, and checked
 * to have taken effect, or to be named as needing a restart.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ruleClient } from "../../../src/shell/rpc/client.js";
import { jsonl, TestFleet } from "../daemon-harness.js";

const fleets: TestFleet[] = [];
afterEach(async () => {
  for (const f of fleets.splice(0)) await f.dispose();
});

const observed = (harness: string) => ({
  kind: "run_event",
  type: "closed",
  harness,
  run: `${harness}#1`,
  outcome: "ok",
});

async function started(options: ConstructorParameters<typeof TestFleet>[0] = {}): Promise<TestFleet> {
  const f = new TestFleet(options);
  fleets.push(f);
  await f.start();
  return f;
}

const configFile = (f: TestFleet) => path.join(f.root, "config", "harness", "harness.toml");
const editConfig = (f: TestFleet, edit: (text: string) => string) =>
  fs.writeFileSync(configFile(f), edit(fs.readFileSync(configFile(f), "utf8")));
const writeToken = (file: string, token: string) => fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
const append = (f: TestFleet, tokenFile: string, harness: string) =>
  f.cli(["journal", "append", "--token-file", tokenFile], jsonl([observed(harness)]));

describe("harness reload applies [server]'s credentials", () => {
  it("a producer removed from [server.producers] is refused at once; one added may append", async () => {
    const f = await started();
    const ledger = f.tokens.get("ledger") as string;
    expect((await append(f, ledger, "before")).code).toBe(0);
    editConfig(f, (t) => t.replace(/^ledger = .*\n/m, ""));
    expect((await f.cli(["reload"])).code).toBe(0);
    const refused = await append(f, ledger, "after");
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/unknown bearer token/);
    expect(f.query("SELECT 1 FROM rule_journal WHERE harness = 'after'")).toEqual([]);

    // A producer the config did not name when the daemon last loaded it: known once it is reloaded.
    editConfig(f, (t) =>
      t.replace("[server.producers]", `[server.producers]\nledger = ${JSON.stringify(ledger)}`),
    );
    expect((await f.cli(["reload"])).code).toBe(0);
    expect((await append(f, ledger, "back")).code).toBe(0);
  });

  it("a rotated control token works at once and the old one is refused", async () => {
    const f = await started();
    const control = path.join(f.root, "config", "harness", "control.token");
    const oldToken = fs.readFileSync(control, "utf8").trim();
    const rotated = path.join(f.root, "control-rotated.token");
    writeToken(rotated, `rotated-${"r".repeat(40)}`);
    editConfig(f, (t) =>
      t.replace("[server]\n", `[server]\ncontrol_token_file = ${JSON.stringify(rotated)}\n`),
    );
    // The CLI now reads the rotated token, which the daemon does not know yet: SIGHUP reloads.
    const lock = JSON.parse(fs.readFileSync(`${f.storePath}.lock`, "utf8")) as { pid: number };
    process.kill(lock.pid, "SIGHUP");
    await f.until(() => (f.daemonStdout.match(/rule set loaded/g) ?? []).length === 2, "the reload");
    expect((await f.cli(["reload"])).code).toBe(0);
    const old = await ruleClient({ socketPath: f.socketPath }, oldToken)
      .reload({})
      .catch((e: Error) => e);
    expect(old).toBeInstanceOf(Error);
    expect((old as Error).message).toMatch(/unknown bearer token/);
  });

  it("a reload whose credentials fail to load changes nothing and says why", async () => {
    const f = await started();
    const ledger = f.tokens.get("ledger") as string;
    const loose = path.join(f.root, "loose.token");
    fs.writeFileSync(loose, `loose-${"l".repeat(40)}\n`, { mode: 0o644 });
    fs.chmodSync(loose, 0o644);
    editConfig(f, (t) =>
      t
        .replace(/^ledger = .*\n/m, "")
        .replace(/^observer = .*$/m, `observer = ${JSON.stringify(loose)}`)
        .replace(/enforce = .*/, 'enforce = ["no-such-rule"]'),
    );
    const r = await f.cli(["reload"]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/reload failed; .* unchanged: .*loose\.token: readable by group or others/s);
    // Neither the removed producer nor the rule set changed.
    expect((await append(f, ledger, "still")).code).toBe(0);
    expect(f.daemonStdout).not.toMatch(/enforce names a rule that is not loaded/);
  });

  it("a revoked read token's open WatchEvents stream ends", async () => {
    const read = `read-${"w".repeat(40)}`;
    const f = new TestFleet();
    fleets.push(f);
    const readFile = path.join(f.root, "read.token");
    writeToken(readFile, read);
    editConfig(f, (t) =>
      t.replace("[server]\n", `[server]\nread_token_file = ${JSON.stringify(readFile)}\n`),
    );
    await f.start();
    const socketReader = ruleClient({ socketPath: f.socketPath }).watchEvents({})[Symbol.asyncIterator]();
    const tokenReader = ruleClient({ socketPath: f.socketPath }, read)
      .watchEvents({})
      [Symbol.asyncIterator]();
    await socketReader.next();
    await tokenReader.next();
    writeToken(readFile, `read-${"v".repeat(40)}`);
    expect((await f.cli(["reload"])).code).toBe(0);
    const ended = await tokenReader.next().catch((e: Error) => e);
    expect(ended).toBeInstanceOf(Error);
    expect((ended as Error).message).toMatch(/revoked/);
    // The operator's socket stream, opened without a token, has no credential to lose.
    const still = await Promise.race([
      socketReader.next().then(() => "ended"),
      new Promise((r) => setTimeout(() => r("open"), 300)),
    ]);
    expect(still).toBe("open");
    await socketReader.return?.();
  });
});
