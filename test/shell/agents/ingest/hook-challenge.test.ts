/**
 * The hook endpoint's challenge (issue 26, port squat): only the daemon that drew a secret answers a
 * nonce as it does; anything that is not a nonce is refused unread. And the remote probe install and
 * doctor make: an endpoint that is not a daemon's is told apart, however it answers.
 */
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as https from "node:https";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HookChallenge, probeRemote } from "../../../../src/shell/agents/ingest/hook-challenge.js";
import { makeTestCerts } from "../../../support/test-certs.js";

const nonce = () => randomBytes(32).toString("hex");

describe("HookChallenge", () => {
  it("answers a nonce the same every time, and another daemon's secret answers otherwise", () => {
    const a = new HookChallenge();
    const n = nonce();
    expect(a.answer(n)).toMatch(/^[0-9a-f]{64}$/);
    expect(a.answer(n)).toBe(a.answer(n));
    expect(new HookChallenge().answer(n)).not.toBe(a.answer(n));
    expect(a.answer(nonce())).not.toBe(a.answer(n));
  });

  it("refuses anything but 64 lowercase hex characters", () => {
    const c = new HookChallenge();
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (s) => {
        fc.pre(!/^[0-9a-f]{64}$/.test(s));
        expect(c.answer(s)).toBeUndefined();
      }),
    );
    expect(c.answer("A".repeat(64))).toBeUndefined();
    expect(c.answer(`${nonce()}0`)).toBeUndefined();
  });
});

describe("probeRemote", () => {
  it("an endpoint that streams a long answer is told apart at once, not waited on forever", async () => {
    const certs = makeTestCerts();
    // Any https server at the wrong address: a page sent in pieces, past the challenge's answer bound.
    const server = https.createServer(
      { cert: fs.readFileSync(certs.server.cert), key: fs.readFileSync(certs.server.key) },
      (_req, res) => {
        res.writeHead(404, { "content-type": "text/html" });
        res.write("x".repeat(100));
        setTimeout(() => res.end("y".repeat(100)), 50);
      },
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const probe = await probeRemote({ url }, { ca: fs.readFileSync(certs.ca) });
      expect(probe).toEqual({
        kind: "other",
        detail: `${url} answers, but not as a harness daemon's hook endpoint (HTTP 404)`,
      });
    } finally {
      server.closeAllConnections();
      server.close();
      certs.dispose();
    }
  });
});
