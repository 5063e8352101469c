import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import type {
  CooldownKey,
  CooldownStore,
  NotifyEventName,
  NotifyOutcomeDetail,
  NotifyResult,
  RuleFiredEvent,
} from "../../../src/shell/notify/index.js";

/** The fixture hooks' absolute paths. */
export const hook = (name: string): string =>
  fileURLToPath(new URL(`../../fixtures/hooks/${name}`, import.meta.url));

export const T0 = Date.parse("2026-12-01T21:52:30.789Z");

export function ruleFired(fields: Partial<RuleFiredEvent> = {}): RuleFiredEvent {
  return {
    event: "rule_fired",
    harness: "reduit-agent",
    state: "running",
    message: "verify failed 3 times in 10m on reduit-agent",
    cause: "npm test",
    rule: "verify-failures",
    level: "notify",
    declaredLevel: "hold",
    fireId: "f-0001",
    action: "notify",
    at: T0,
    ...fields,
  };
}

/** A fresh directory, removed by the returned function. */
export function tempDir(): { dir: string; remove: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "notify-test-"));
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** Whether a pid names a live process; a zombie no one has reaped yet counts as dead. */
export function alive(pid: number): boolean {
  if (!fs.existsSync("/proc/self/stat")) {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

export async function until(cond: () => boolean, ms = 2_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
  return true;
}

export interface Recorded {
  readonly event: NotifyEventName;
  readonly result: NotifyResult;
  readonly detail: NotifyOutcomeDetail;
}

/** An onOutcome that keeps every call. */
export function recorder(): {
  outcomes: Recorded[];
  onOutcome: (e: NotifyEventName, r: NotifyResult, d: NotifyOutcomeDetail) => void;
} {
  const outcomes: Recorded[] = [];
  return { outcomes, onOutcome: (event, result, detail) => outcomes.push({ event, result, detail }) };
}

/** A cooldown store that lives as long as the test: what a notifier without the daemon's store keeps. */
export function memoryCooldowns(): CooldownStore {
  const sent = new Map<string, number>();
  const id = (k: CooldownKey) => JSON.stringify([k.harness, k.event, k.rule]);
  return {
    lastSent: async (key) => sent.get(id(key)),
    recordSent: async (key, at) => {
      sent.set(id(key), at);
    },
    forgetSentBy: async (at) => {
      for (const [key, sentAt] of sent) if (sentAt <= at) sent.delete(key);
    },
  };
}
