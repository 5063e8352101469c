/**
 * The spool's files (issue 26, finding 2): a failed delivery counted in its entry, set aside at
 * `MAX_TRIES`, put back in line with no tries, or dropped; names outside the spool's own never touched.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, expect, it } from "vitest";
import { keyOf, MAX_TRIES, Spool, type SpoolEntry } from "../../../../src/shell/agents/forwarder/spool.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const entry = (at: number, key?: string): SpoolEntry => ({
  v: 1,
  adapter: "claude-code",
  harness: "impl",
  observer_token_file: "/o",
  ledger_token_file: "/l",
  at,
  ...(key === undefined ? {} : { key }),
  payload: { session_id: "s", hook_event_name: "Stop" },
});

it("a failed delivery is counted in its entry; at MAX_TRIES it is set aside, kept; retry puts it back with none; drop deletes it", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "harness-spool-"));
  dirs.push(root);
  const spool = new Spool(path.join(root, "spool"));
  expect(spool.add(entry(1, "hook:k1"))).toBe(true);
  expect(spool.add(entry(2))).toBe(true);
  const [first, second] = spool.entries();
  expect(keyOf(first as string, spool.read(first as string) as SpoolEntry)).toBe("hook:k1");
  // An entry spooled before keys were sent is keyed by its name, as before.
  expect(keyOf(second as string, spool.read(second as string) as SpoolEntry)).toBe(
    (second as string).replace(/\.json$/, ""),
  );
  for (let i = 1; i < MAX_TRIES; i++) {
    expect(spool.countTry(first as string, spool.read(first as string) as SpoolEntry)).toBe(false);
    expect(spool.read(first as string)?.tries).toBe(i);
  }
  expect(spool.countTry(first as string, spool.read(first as string) as SpoolEntry)).toBe(true);
  expect(spool.entries()).toEqual([second]);
  expect(spool.entries("set-aside")).toEqual([first]);
  expect(spool.read(first as string, "set-aside")).toMatchObject({ tries: MAX_TRIES, key: "hook:k1" });

  expect(spool.retry(first as string, "set-aside")).toBe(true);
  expect(spool.entries()).toEqual([first, second]);
  expect(spool.read(first as string)?.tries).toBeUndefined();

  expect(spool.drop("../../etc/passwd", "waiting")).toBe(false);
  expect(spool.retry("../x.json", "failed")).toBe(false);
  expect(spool.drop(first as string, "waiting")).toBe(true);
  expect(spool.drop(first as string, "waiting")).toBe(false);
  expect(spool.entries()).toEqual([second]);
});
