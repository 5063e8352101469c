/**
 * Versions that meet (decision 0018): the daemon answers its version on every call and refuses a client
 * whose version is more than one minor version from its own, naming both; a client that sends none is
 * let through. The hook endpoint's refusal is a 412 that the forwarder turns into its fail mode.
 */
import * as fs from "node:fs";
import * as http from "node:http";
import * as path from "node:path";
import * as fc from "fast-check";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { FORWARDER_VERSION } from "../../../src/shell/agents/forwarder/forwarder-version.js";
import { Spool } from "../../../src/shell/agents/forwarder/spool.js";
import { packageVersion } from "../../../src/shell/support/version.js";
import { VERSION_HEADER, versionRefusal } from "../../../src/shell/support/versions-meet.js";
import { makeRepo, runHook } from "../agents/hook-harness.js";
import { claudeCode } from "../agents/payloads.js";
import { TestFleet } from "../daemon-harness.js";

const VERSION = packageVersion();
const [MAJOR, MINOR] = VERSION.split(".").map(Number) as [number, number];

describe("versionRefusal", () => {
  it("versions one minor apart meet, either way; further apart or another major are refused naming both", () => {
    expect(versionRefusal("1.4.2", "1.4.0")).toBeUndefined();
    expect(versionRefusal("1.4.2", "1.3.9")).toBeUndefined();
    expect(versionRefusal("1.4.2", "1.5.0-rc.1")).toBeUndefined();
    expect(versionRefusal("1.4.2", "1.2.0")).toMatch(
      /^versions do not meet: this client is harness 1\.2\.0, the daemon is 1\.4\.2;/,
    );
    expect(versionRefusal("1.4.2", "2.4.2")).toMatch(/client is harness 2\.4\.2, the daemon is 1\.4\.2/);
  });

  it("a client without a version is let through; one that is not a version is refused, quoted", () => {
    expect(versionRefusal("1.4.2", undefined)).toBeUndefined();
    expect(versionRefusal("1.4.2", "latest\u001b[2J")).toBe(
      `the client's version "latest?[2J" is not a version (major.minor.patch); this daemon is 1.4.2`,
    );
    expect(versionRefusal("1.4.2", "1.4.2".repeat(20))).toMatch(/is not a version/);
  });

  it("meeting is symmetric, and holds exactly within one minor version of one major", () => {
    const v = fc.tuple(fc.nat(3), fc.nat(5), fc.nat(9));
    fc.assert(
      fc.property(v, v, ([a, b, c], [x, y, z]) => {
        const one = `${a}.${b}.${c}`;
        const two = `${x}.${y}.${z}`;
        const meet = versionRefusal(one, two) === undefined;
        expect(versionRefusal(two, one) === undefined).toBe(meet);
        expect(meet).toBe(a === x && Math.abs(b - y) <= 1);
      }),
    );
  });

  it("the fast paths and the forwarder send the package's version", () => {
    const dir = new URL("../../../src/shell/agents/forwarder/", import.meta.url);
    expect(FORWARDER_VERSION).toBe(VERSION);
    expect(fs.readFileSync(new URL("harness-hook.sh", dir), "utf8")).toContain(
      `header = "x-harness-version: ${VERSION}"`,
    );
    expect(fs.readFileSync(new URL("hook-client.c", dir), "utf8")).toContain(
      `#define HARNESS_VERSION "${VERSION}"`,
    );
  });
});

/** A POST on the daemon's socket: its status, headers and body. */
function post(
  socketPath: string,
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, path: url, method: "POST", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString(),
        }),
      );
    });
    req.on("error", reject);
    req.end(body);
  });
}

const getStatus = (fleet: TestFleet, version?: string) =>
  post(
    fleet.socketPath,
    "/harness.v1.RuleService/GetStatus",
    { "content-type": "application/json", ...(version === undefined ? {} : { [VERSION_HEADER]: version }) },
    "{}",
  );

let repo: string;
const fleets: TestFleet[] = [];
beforeAll(() => {
  repo = makeRepo();
});
afterEach(async () => {
  for (const f of fleets.splice(0)) await f.dispose();
});
afterAll(() => fs.rmSync(repo, { recursive: true, force: true }));

describe("Versions that meet", () => {
  it("a client one minor version older or newer works; further apart it is refused with both versions", async () => {
    const fleet = new TestFleet({ config: '[agents]\nlisten = ""' });
    fleets.push(fleet);
    await fleet.start();
    for (const near of [`${MAJOR}.${MINOR + 1}.0`, `${MAJOR}.${Math.max(0, MINOR - 1)}.7`, VERSION]) {
      const r = await getStatus(fleet, near);
      expect(r.status).toBe(200);
      expect(r.headers[VERSION_HEADER]).toBe(VERSION);
    }
    const far = `${MAJOR}.${MINOR + 2}.0`;
    const refused = await getStatus(fleet, far);
    expect(refused.headers[VERSION_HEADER]).toBe(VERSION);
    expect(JSON.parse(refused.body)).toEqual({
      code: "failed_precondition",
      message: expect.stringContaining(`this client is harness ${far}, the daemon is ${VERSION}`),
    });
    // curl and builds before the header send none: let through, and told the daemon's.
    const none = await getStatus(fleet);
    expect(none.status).toBe(200);
    expect(none.headers[VERSION_HEADER]).toBe(VERSION);
    // The CLI's own calls carry the version and meet.
    expect((await fleet.cli(["rules", "list"])).code).toBe(0);
  });

  it("the hook endpoint answers a forwarder of a far version 412 with the reason, before its token is read", async () => {
    const fleet = new TestFleet({ config: '[agents]\nlisten = ""' });
    fleets.push(fleet);
    await fleet.start();
    const r = await post(
      fleet.socketPath,
      "/hooks/claude-code?harness=impl",
      { "content-type": "application/json", [VERSION_HEADER]: `${MAJOR + 1}.0.0` },
      "{}",
    );
    expect(r.status).toBe(412);
    expect(r.headers["x-harness-note"]).toContain(
      `this client is harness ${MAJOR + 1}.0.0, the daemon is ${VERSION}`,
    );
    // The forwarder's own calls meet: a real hook call is recorded.
    const ok = await runHook(fleet, "claude-code", JSON.stringify(claudeCode(repo, "sess-v").SessionStart));
    expect(ok).toMatchObject({ code: 0, stderr: "" });
  });

  it("a daemon whose version does not meet the forwarder's: PreToolUse gets the fail mode, other calls wait in the spool", async () => {
    const fleet = new TestFleet({ config: '[agents]\nlisten = ""' });
    fleets.push(fleet);
    const note = `versions do not meet: this client is harness ${VERSION}, the daemon is 9.0.0`;
    const seen: (string | undefined)[] = [];
    const other = http.createServer((req, res) => {
      seen.push(req.headers[VERSION_HEADER] as string | undefined);
      req.resume();
      res.writeHead(412, { "x-harness-note": note, "content-length": 0, [VERSION_HEADER]: "9.0.0" }).end();
    });
    await new Promise<void>((resolve) => other.listen(fleet.socketPath, resolve));
    try {
      const p = claudeCode(repo, "sess-far");
      const pre = await runHook(fleet, "claude-code", JSON.stringify(p.PreToolUse), ["--timeout", "30000"]);
      expect(pre.code).toBe(0);
      expect(pre.stderr).toBe(
        `harness hook: the daemon answered HTTP 412 (${note}); PreToolUse allowed by [agents] on_unreachable = "allow"\n`,
      );
      const stop = await runHook(fleet, "claude-code", JSON.stringify(p.Stop), ["--timeout", "30000"]);
      expect(stop.stderr).toMatch(
        /^harness hook: the daemon answered HTTP 412 \(versions do not meet: .*\); the call waits in .*spool/,
      );
      const spool = new Spool(path.join(fleet.root, "state", "harness", "agents", "spool"));
      expect(spool.entries()).toHaveLength(1);
      expect(seen.every((v) => v === VERSION)).toBe(true);
      expect(seen.length).toBeGreaterThan(0);
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });
});
