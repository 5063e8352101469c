/**
 * `BASELINE=<commit> BENCH=daemon npm run bench:ab`: one bench of this checkout and of another commit,
 * run alternately in child processes (`ROUNDS` rounds, default 3), so drift on a busy machine lands on
 * both alike; then each figure's median over the rounds, side by side, with their ratio. The figures
 * are read from the bench's own table lines (`label  value  note`, as `line()` in the benches prints
 * them): the value's number, or each of `p50 / p99 / max`. The environment (SECTIONS, ADMIT_ROWS, LIVE_SECONDS…)
 * reaches both runs as it is.
 */
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { buildCommit, CANDIDATE_DIR } from "./baseline-build.js";

const BASELINE = process.env.BASELINE;
const BENCH = process.env.BENCH ?? "daemon";
const ROUNDS = Number(process.env.ROUNDS ?? 3);
if (BASELINE === undefined || BASELINE === "") throw new Error("set BASELINE to the commit to compare with");

/** A table line: two spaces, a label padded to 40, the value right-aligned in 14, then a note. */
const TABLE_LINE = /^ {2}(\S.{39}) +(-?[\d,.]+(?: \/ -?[\d,.]+)*)/;
const QUANTILES = ["p50", "p99", "max"];

function run(dir: string, label: string): Map<string, number> {
  const script = path.join(dir, ".bench-build", "bench", `${BENCH}.bench.js`);
  process.stderr.write(`\n--- ${label}: ${script}\n`);
  const out = execFileSync(process.execPath, ["--expose-gc", script], {
    cwd: dir,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 64 * 1024 * 1024,
  });
  process.stderr.write(out);
  const figures = new Map<string, number>();
  for (const l of out.split("\n")) {
    const m = TABLE_LINE.exec(l);
    if (m === null) continue;
    const label = (m[1] as string).trim();
    const values = (m[2] as string).split(" / ").map((v) => Number(v.replaceAll(",", "")));
    if (values.length === 1) figures.set(label, values[0] as number);
    else for (const [i, v] of values.entries()) figures.set(`${label} ${QUANTILES[i] ?? i}`, v);
  }
  return figures;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

const baselineDir = buildCommit(BASELINE);
const rounds: { candidate: Map<string, number>; baseline: Map<string, number> }[] = [];
for (let r = 0; r < ROUNDS; r++) {
  // The order alternates too: neither build always runs on a machine the other has just warmed.
  const first = r % 2 === 0;
  const a = run(first ? CANDIDATE_DIR : baselineDir, first ? "this checkout" : `baseline ${BASELINE}`);
  const b = run(first ? baselineDir : CANDIDATE_DIR, first ? `baseline ${BASELINE}` : "this checkout");
  rounds.push(first ? { candidate: a, baseline: b } : { candidate: b, baseline: a });
}

const labels = [...new Set(rounds.flatMap((r) => [...r.candidate.keys()]))];
console.log(`\n${BENCH}: this checkout against ${BASELINE}, median of ${ROUNDS} alternating rounds`);
console.log(
  `  ${"figure".padEnd(40)} ${"this".padStart(12)} ${"baseline".padStart(12)} ${"ratio".padStart(7)}`,
);
for (const label of labels) {
  const c = rounds.map((r) => r.candidate.get(label)).filter((x): x is number => x !== undefined);
  const b = rounds.map((r) => r.baseline.get(label)).filter((x): x is number => x !== undefined);
  if (c.length === 0 || b.length === 0) continue;
  const mc = median(c);
  const mb = median(b);
  console.log(
    `  ${label.padEnd(40)} ${mc.toFixed(2).padStart(12)} ${mb.toFixed(2).padStart(12)} ${(mb === 0 ? Number.NaN : mc / mb).toFixed(2).padStart(7)}`,
  );
}
