import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { OUTPUT_TAIL_BYTES, runOperatorCommand } from "../../../src/shell/notify/hook-process.js";
import { alive, hook, tempDir, until } from "./helpers.js";

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
const TIMEOUT = 300;

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(() => tmp.remove());

const readPid = (file: string): number => Number(fs.readFileSync(file, "utf8").trim());

describe("runOperatorCommand", () => {
  it("writes the input to stdin, closes it, and reports exit 0 as ok", async () => {
    const out = await runOperatorCommand({
      argv: [hook("record"), tmp.dir],
      input: '{"a":1}',
      env,
      timeoutMs: 5_000,
    });
    expect(out).toMatchObject({ result: "ok", reason: "" });
    const [json] = fs.readdirSync(tmp.dir).filter((f) => f.endsWith(".json"));
    expect(fs.readFileSync(path.join(tmp.dir, json as string), "utf8")).toBe('{"a":1}');
  });

  it("passes exactly the given environment", async () => {
    await runOperatorCommand({
      argv: [hook("record"), tmp.dir],
      input: "",
      env: { ...env, ONLY: "me" },
      timeoutMs: 5_000,
    });
    const [file] = fs.readdirSync(tmp.dir).filter((f) => f.endsWith(".env"));
    const lines = fs.readFileSync(path.join(tmp.dir, file as string), "utf8").split("\n");
    expect(lines).toContain("ONLY=me");
    expect(lines.some((l) => l.startsWith("HOME="))).toBe(false);
  });

  it("reports a non-zero exit as error", async () => {
    const count = path.join(tmp.dir, "count");
    const out = await runOperatorCommand({ argv: [hook("fail"), count], input: "{}", env, timeoutMs: 5_000 });
    expect(out).toMatchObject({ result: "error", reason: "exit status 3" });
  });

  it("kills the whole process group at the timeout, grandchild included", async () => {
    const pidFile = path.join(tmp.dir, "pid");
    const out = await runOperatorCommand({
      argv: [hook("hang-with-child"), pidFile],
      input: "{}",
      env,
      timeoutMs: TIMEOUT,
    });
    expect(out).toMatchObject({ result: "timeout", reason: `killed after ${TIMEOUT} ms` });
    expect(out.durationMs).toBeGreaterThanOrEqual(TIMEOUT - 5);
    expect(out.durationMs).toBeLessThan(TIMEOUT + 1_500);
    const grandchild = readPid(pidFile);
    expect(await until(() => !alive(grandchild))).toBe(true);
  });

  it("stops waiting at the timeout on pipes held by a process outside the group", async () => {
    const pidFile = path.join(tmp.dir, "pid");
    try {
      const out = await runOperatorCommand({
        argv: [hook("escape"), pidFile],
        input: "{}",
        env,
        timeoutMs: TIMEOUT,
      });
      expect(out.result).toBe("timeout");
      expect(out.durationMs).toBeLessThan(TIMEOUT + 1_500);
      // Outside the group, so the kill did not reach it: it is still there, holding the pipe.
      expect(alive(readPid(pidFile))).toBe(true);
    } finally {
      if (await until(() => fs.existsSync(pidFile))) process.kill(readPid(pidFile), "SIGKILL");
    }
  });

  it("drains a flood on both pipes so the hook can finish, keeping only a bounded tail", async () => {
    const out = await runOperatorCommand({
      argv: [hook("flood-then-exit")],
      input: "{}",
      env,
      timeoutMs: 5_000,
    });
    expect(out.result).toBe("ok");
    expect(Buffer.byteLength(out.output)).toBeLessThanOrEqual(OUTPUT_TAIL_BYTES);
  });

  it("kills a hook that floods until the timeout, keeping only a bounded tail", async () => {
    const out = await runOperatorCommand({ argv: [hook("flood")], input: "{}", env, timeoutMs: TIMEOUT });
    expect(out.result).toBe("timeout");
    expect(out.output.length).toBe(OUTPUT_TAIL_BYTES);
    expect(out.output.startsWith("y\n") || out.output.startsWith("\ny")).toBe(true);
  });

  it("reports a missing or non-executable hook as error, without throwing", async () => {
    const missing = await runOperatorCommand({
      argv: [path.join(tmp.dir, "nope")],
      input: "{}",
      env,
      timeoutMs: 5_000,
    });
    expect(missing).toMatchObject({ result: "error", reason: "spawn ENOENT" });
    const plain = path.join(tmp.dir, "plain.sh");
    fs.writeFileSync(plain, "#!/bin/sh\nexit 0\n", { mode: 0o644 });
    const notExec = await runOperatorCommand({ argv: [plain], input: "{}", env, timeoutMs: 5_000 });
    expect(notExec).toMatchObject({ result: "error", reason: "spawn EACCES" });
  });

  it("kills the group when aborted and reports error", async () => {
    const pidFile = path.join(tmp.dir, "pid");
    const abort = new AbortController();
    const running = runOperatorCommand({
      argv: [hook("hang-with-child"), pidFile],
      input: "{}",
      env,
      timeoutMs: 10_000,
      signal: abort.signal,
    });
    expect(await until(() => fs.existsSync(pidFile))).toBe(true);
    abort.abort();
    expect(await running).toMatchObject({ result: "error", reason: "killed: aborted" });
    const grandchild = readPid(pidFile);
    expect(await until(() => !alive(grandchild))).toBe(true);
  });
});
