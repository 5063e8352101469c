/**
 * Issue 33: `[otel]` and `harness reload`, and the headers file. A reload applies a changed endpoint,
 * protocol or headers file (a collector token rotated) to the decisions from then on; a headers file
 * that cannot be used fails the reload, naming the file, its line and column, and the export in force
 * goes on; at start it fails the start.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DaemonApp } from "../../../src/shell/app/daemon-app.js";
import { createLog } from "../../../src/shell/support/log.js";
import {
  MAX_HEADERS,
  MAX_HEADERS_FILE_BYTES,
  readOtlpHeaders,
} from "../../../src/shell/telemetry/otlp-headers.js";
import { fires } from "../../support/store-reads.js";
import { jsonl, TestFleet } from "../daemon-harness.js";
import { OtlpReceiver } from "./otlp-receiver.js";

const RULE = {
  name: "tool-notify",
  text: `name = "tool-notify"
description = "every tool call"
on = "run_event"
when = 'event.type == "tool"'
level = "notify"
target = "run"
message = "tool call in {{run}}"
`,
};

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function receiver(): Promise<{ r: OtlpReceiver; url: string }> {
  const r = new OtlpReceiver();
  cleanups.push(() => r.stop());
  return { r, url: await r.start() };
}

const otelTable = (endpoint: string, headersFile?: string, protocol = "http/protobuf") =>
  [
    "[otel]",
    `endpoint = "${endpoint}"`,
    `protocol = "${protocol}"`,
    ...(headersFile === undefined ? [] : [`headers_file = ${JSON.stringify(headersFile)}`]),
  ].join("\n");

/** Replaces the config's `[otel]` table (or drops it, for `undefined`). */
function setOtel(fleet: TestFleet, table: string | undefined): void {
  const file = path.join(fleet.root, "config", "harness", "harness.toml");
  const text = fs.readFileSync(file, "utf8").replace(/\[otel\][^[]*/, "");
  fs.writeFileSync(file, table === undefined ? text : `${text}\n${table}\n`);
}

function writeHeaders(file: string, text: string, mode = 0o600): void {
  fs.writeFileSync(file, text, { mode });
  fs.chmodSync(file, mode);
}

let runs = 0;
async function appendTool(fleet: TestFleet): Promise<string> {
  const run = `impl#${++runs}`;
  const r = await fleet.cli(
    ["journal", "append", "--token-file", fleet.tokens.get("observer") as string],
    jsonl([{ kind: "run_event", type: "tool", harness: "impl", run, action: "edit" }]),
  );
  expect(r.code, r.stderr).toBe(0);
  return run;
}

const fireOf = (r: OtlpReceiver, run: string) =>
  r.records.find(
    (x) => x.attributes["harness.decision"] === "fire" && x.attributes["harness.target.run"] === run,
  );

async function fleetWith(otel: string): Promise<TestFleet> {
  const fleet = new TestFleet({ rules: [RULE], config: otel });
  cleanups.push(() => fleet.dispose());
  await fleet.start();
  return fleet;
}

describe("harness reload and [otel]", () => {
  it("a reload applies a rotated collector token: the decisions after it carry the new header", async () => {
    const { r, url } = await receiver();
    const headers = path.join(fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "otel-")), "h");
    cleanups.push(() => fs.rmSync(path.dirname(headers), { recursive: true, force: true }));
    writeHeaders(headers, "# the collector's token\nAuthorization: Bearer one\n");
    const fleet = await fleetWith(otelTable(url, headers));
    const before = await appendTool(fleet);
    await fleet.until(() => fireOf(r, before) !== undefined, "the first fire's record");
    expect(fireOf(r, before)?.headers?.authorization).toBe("Bearer one");

    writeHeaders(headers, "Authorization: Bearer two\n");
    const reload = await fleet.cli(["reload", "--json"]);
    expect(reload.code, reload.stderr).toBe(0);
    expect(JSON.parse(reload.stdout).needs_restart).toEqual([]);
    const after = await appendTool(fleet);
    await fleet.until(() => fireOf(r, after) !== undefined, "the fire's record after the reload");
    expect(fireOf(r, after)?.headers?.authorization).toBe("Bearer two");
  });

  it("a headers file that cannot be used fails the reload, naming it, and the export in force goes on", async () => {
    const { r, url } = await receiver();
    const dir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "otel-"));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const headers = path.join(dir, "h");
    writeHeaders(headers, "Authorization: Bearer one\n");
    const fleet = await fleetWith(otelTable(url, headers));

    writeHeaders(headers, "Authorization: Bearer two\n", 0o644);
    const open = await fleet.cli(["reload"]);
    expect(open.code).toBe(4);
    expect(open.stderr).toContain(`[otel] headers_file ${headers}: readable by group or others`);
    writeHeaders(headers, "Authorization: Bearer two\nX-Tenant team-a\n");
    const bad = await fleet.cli(["reload"]);
    expect(bad.code).toBe(4);
    expect(bad.stderr).toContain(`[otel] headers_file ${headers}:2:1: want \`Name: value\``);

    const run = await appendTool(fleet);
    await fleet.until(() => fireOf(r, run) !== undefined, "the fire's record");
    expect(fireOf(r, run)?.headers?.authorization).toBe("Bearer one");
  });

  it("a config whose [otel] does not load fails the reload, naming file, key, line and column, and the config and export in force stay", async () => {
    const { r, url } = await receiver();
    const fleet = await fleetWith(otelTable(url));
    setOtel(fleet, otelTable("grpc://collector:4317"));
    const file = path.join(fleet.root, "config", "harness", "harness.toml");
    const line = fs.readFileSync(file, "utf8").split("\n").indexOf('endpoint = "grpc://collector:4317"') + 1;
    const reload = await fleet.cli(["reload"]);
    expect(reload.code).toBe(4);
    expect(reload.stderr).toContain(`${file}:${line}:1: [otel] endpoint: grpc: is not http: or https:`);
    const run = await appendTool(fleet);
    await fleet.until(() => fireOf(r, run) !== undefined, "the fire's record at the collector in force");
    // The rest of the config in force goes on too: the notify hook still hears of the fire.
    await fleet.until(() => fleet.delivered().length > 0, "the fire's notification");
  });

  it("a reload moves the export to a new endpoint and protocol, and one without [otel] ends it", async () => {
    const first = await receiver();
    const second = await receiver();
    const fleet = await fleetWith(otelTable(first.url));
    const one = await appendTool(fleet);
    await fleet.until(() => fireOf(first.r, one) !== undefined, "the record at the first collector");

    setOtel(fleet, otelTable(second.url, undefined, "http/json"));
    expect((await fleet.cli(["reload"])).code).toBe(0);
    const two = await appendTool(fleet);
    await fleet.until(() => fireOf(second.r, two) !== undefined, "the record at the second collector");
    expect(fireOf(first.r, two)).toBeUndefined();
    expect(second.r.contentTypes).toEqual(new Set(["application/json"]));

    setOtel(fleet, undefined);
    expect((await fleet.cli(["reload"])).code).toBe(0);
    const three = await appendTool(fleet);
    await fleet.until(() => fires(fleet, { rule: "tool-notify" }).length === 3, "the third fire");
    // [otel] again: the export starts anew from this reload on; the fire decided without one is not sent.
    setOtel(fleet, otelTable(second.url));
    expect((await fleet.cli(["reload"])).code).toBe(0);
    const four = await appendTool(fleet);
    await fleet.until(() => fireOf(second.r, four) !== undefined, "the fourth fire's record");
    expect([fireOf(first.r, three), fireOf(second.r, three)]).toEqual([undefined, undefined]);
  });
});

describe("the headers file at start", () => {
  it("a daemon whose headers file has a bad line does not start, and says which file, line and column", async () => {
    const fleet = new TestFleet({ rules: [RULE] });
    cleanups.push(() => fleet.dispose());
    const headers = path.join(fleet.root, "otel-headers");
    writeHeaders(headers, "Authorization: Bearer one\n# a comment\nX-Tenant: caf\u00e9\n");
    setOtel(fleet, otelTable("http://127.0.0.1:9/v1/logs", headers));
    const started = DaemonApp.start({
      env: fleet.env,
      configPath: path.join(fleet.root, "config", "harness", "harness.toml"),
      log: createLog({ level: "silent" }),
    });
    await expect(started).rejects.toThrow(
      `[otel] headers_file ${headers}:3:11: the value of X-Tenant is not printable ASCII`,
    );
  });
});

describe("headers file problems", () => {
  const dir = () => {
    const d = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "otel-h-"));
    cleanups.push(() => fs.rmSync(d, { recursive: true, force: true }));
    return d;
  };

  it("a missing file, a directory, a file too big or readable by others are refused, naming the file", () => {
    const d = dir();
    expect(() => readOtlpHeaders(path.join(d, "none"))).toThrow(`${path.join(d, "none")}: does not exist`);
    expect(() => readOtlpHeaders(d)).toThrow(`${d}: not a regular file`);
    const big = path.join(d, "big");
    writeHeaders(big, `X-Pad: ${"a".repeat(MAX_HEADERS_FILE_BYTES)}\n`);
    expect(() => readOtlpHeaders(big)).toThrow(`; at most ${MAX_HEADERS_FILE_BYTES}`);
    const shared = path.join(d, "shared");
    writeHeaders(shared, "Authorization: Bearer k\n", 0o640);
    expect(() => readOtlpHeaders(shared)).toThrow(
      `${shared}: readable by group or others; run chmod 600 ${shared}`,
    );
    fs.chmodSync(shared, 0o600);
    expect(readOtlpHeaders(shared)).toEqual({ Authorization: "Bearer k" });
  });

  it("bad header lines are refused with their line and column", () => {
    const d = dir();
    const file = path.join(d, "h");
    const refused = (text: string) => {
      writeHeaders(file, text);
      return () => readOtlpHeaders(file);
    };
    expect(refused("Authorization Bearer k\n")).toThrow(`${file}:1:1: want \`Name: value\``);
    expect(refused("\nBad Name: v\n")).toThrow(`${file}:2:1: want \`Name: value\``);
    expect(refused("X-Key:   \u001b[2J\n")).toThrow(
      `${file}:1:10: the value of X-Key is not printable ASCII`,
    );
    expect(refused(`X-Long: ${"v".repeat(4097)}\n`)).toThrow(`${file}:1:9: the value of X-Long`);
    const many = Array.from({ length: MAX_HEADERS + 1 }, (_, i) => `X-H${i}: v`).join("\n");
    expect(refused(many)).toThrow(`${file}:${MAX_HEADERS + 1}:1: more than ${MAX_HEADERS} headers`);
  });
});
