import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ProducerSource } from "../../../src/core/sources.js";
import { CredentialError, digestToken, loadCredentials } from "../../../src/shell/rpc/credentials.js";
import { newToken, type TempDir, tempDir, writeTokenFile } from "./helpers.js";

let dir: TempDir;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.remove());

const refusal = async (files: Parameters<typeof loadCredentials>[0]): Promise<CredentialError> => {
  const err = await loadCredentials(files).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(CredentialError);
  return err as CredentialError;
};

describe("loading credentials", () => {
  it("reads each token, trimmed, bound to its source", async () => {
    const observer = newToken();
    const control = newToken();
    const creds = await loadCredentials({
      producers: new Map([["observer", writeTokenFile(dir.path, "observer.token", `  ${observer}\n`)]]),
      controlTokenFile: writeTokenFile(dir.path, "control.token", control),
    });
    expect(creds.producers.get("observer")).toEqual(digestToken(observer));
    expect(creds.control).toEqual(digestToken(control));
    expect(creds.read).toBeUndefined();
  });

  it("refuses a credential file readable by group or others, naming it", async () => {
    const file = writeTokenFile(dir.path, "graph.token", newToken(), 0o644);
    const err = await refusal({ producers: new Map([["graph", file]]) });
    expect(err.file).toBe(file);
    expect(err.message).toBe(
      `credential file ${file}: readable by group or others (mode 0644); run chmod 600 ${file}`,
    );
    const groupOnly = writeTokenFile(dir.path, "read.token", newToken(), 0o640);
    expect((await refusal({ producers: new Map(), readTokenFile: groupOnly })).file).toBe(groupOnly);
  });

  it("refuses a token shorter than 32 bytes, or one that cannot travel in a header", async () => {
    const short = writeTokenFile(dir.path, "short.token", `${"x".repeat(31)}\n`);
    expect((await refusal({ producers: new Map(), controlTokenFile: short })).message).toBe(
      `credential file ${short}: holds a token of 31 bytes; a token must be at least 32`,
    );
    const spaced = writeTokenFile(dir.path, "spaced.token", `${"x".repeat(20)} ${"y".repeat(20)}`);
    expect((await refusal({ producers: new Map(), readTokenFile: spaced })).file).toBe(spaced);
  });

  it("refuses a missing file, and two credentials sharing a token", async () => {
    const missing = join(dir.path, "nope.token");
    expect((await refusal({ producers: new Map(), readTokenFile: missing })).message).toMatch(
      /^credential file .*nope\.token: cannot read it: ENOENT/,
    );
    const token = newToken();
    const a = writeTokenFile(dir.path, "a.token", token);
    const b = writeTokenFile(dir.path, "b.token", token);
    const producers = new Map<ProducerSource, string>([
      ["observer", a],
      ["ledger", b],
    ]);
    expect((await refusal({ producers })).message).toBe(
      `credential file ${b}: holds the same token as ${a}; each credential needs its own token`,
    );
  });
});
