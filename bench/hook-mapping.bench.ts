/**
 * Part of `npm run bench:hook` (issue 26): the hook mapping's time per byte beside `JSON.parse`'s on the
 * same payloads, at 64 KiB and 1 MiB, for hostile shapes (a Bash command of one long run of commas, an
 * apply_patch header of spaces, a command naming thousands of files, a cwd of `/a` repeated) and a
 * plain large Write. The mapping (`mapClaudeCode` on the parsed payload: classification, paths, the
 * input's digest) is linear by construction, so its ratio to `JSON.parse` should stay flat from 64 KiB
 * to 1 MiB; a super-linear step would show as a ratio growing with the size. Medians of alternating
 * batches (`measureSideBySide`).
 */
import { mapClaudeCode } from "../src/shell/agents/adapters/claude-code.js";
import { type Measurement, measureSideBySide } from "./measure.js";

const KIB = 1024;

const post = (tool: string, input: Record<string, unknown>, cwd = "/work/repo") => ({
  session_id: "bench",
  hook_event_name: "PostToolUse",
  cwd,
  tool_name: tool,
  tool_input: input,
  tool_response: { exit_code: 0 },
});

/** Payload shapes, each as a function of the filler's length. */
const SHAPES: Record<string, (n: number) => unknown> = {
  "Bash cat a,,,…,a": (n) => post("Bash", { command: `cat a${",".repeat(n)}a` }),
  "apply_patch header of spaces": (n) =>
    post("apply_patch", { patch: `*** Begin Patch\n*** Update File: ${" ".repeat(n)}a\n*** End Patch\n` }),
  "Bash cat of many files": (n) =>
    post("Bash", {
      command: `cat ${Array.from({ length: Math.floor(n / 8) }, (_, i) => `f${i}.ts`).join(" ")}`,
    }),
  "cwd /a/a/…": (n) => post("Bash", { command: "ls" }, "/a".repeat(Math.floor(n / 2))),
  "Write of a large file": (n) =>
    post("Write", { file_path: "/work/repo/big.txt", content: "x\n".repeat(n / 2) }),
};

/** The payload's text at `bytes`, give or take its fixed fields. */
function payloadText(shape: (n: number) => unknown, bytes: number): string {
  const fixed = JSON.stringify(shape(0)).length;
  return JSON.stringify(shape(Math.max(0, bytes - fixed)));
}

console.log(`hook mapping against JSON.parse, Node ${process.version}: ns per byte, medians`);
console.log("payload                          size     JSON.parse  mapping  mapping/parse");
for (const [name, shape] of Object.entries(SHAPES))
  for (const bytes of [64 * KIB, 1024 * KIB]) {
    const text = payloadText(shape, bytes);
    const parsed = JSON.parse(text) as Record<string, unknown>;
    const batch = bytes > 64 * KIB ? 2 : 20;
    const [parse, map] = measureSideBySide([() => JSON.parse(text), () => mapClaudeCode(parsed, [])], {
      batch,
      samples: 21,
      warmup: 3,
    }) as [Measurement, Measurement];
    const perByte = (ns: number) => (ns / text.length).toFixed(2).padStart(8);
    console.log(
      `${name.padEnd(31)} ${`${Math.round(text.length / KIB)} KiB`.padStart(8)}  ${perByte(parse.medianNs)}  ${perByte(map.medianNs)}  ${(map.medianNs / parse.medianNs).toFixed(2).padStart(8)}`,
    );
  }
