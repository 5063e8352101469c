import { afterAll, describe, expect, it } from "vitest";
import { printable } from "../../../../src/shell/cli/render/printable.js";
import { fires, holds } from "../../../support/store-reads.js";
import { jsonl, TestFleet } from "../../daemon-harness.js";

describe("printable", () => {
  it("escapes controls, DEL, bidi and zero-width format characters, separators and lone surrogates", () => {
    expect(printable("\u001b]0;owned\u0007impl\r\n\u007f\u009b")).toBe(
      "\\u{1b}]0;owned\\u{7}impl\\u{d}\\u{a}\\u{7f}\\u{9b}",
    );
    expect(printable("impl\u202eexe.txt\u2066\u200b\u200d\ufeff\u2028")).toBe(
      "impl\\u{202e}exe.txt\\u{2066}\\u{200b}\\u{200d}\\u{feff}\\u{2028}",
    );
    expect(printable("a\ud800b")).toBe("a\\u{d800}b");
  });

  it("leaves printable text alone, past ASCII too", () => {
    expect(printable("impl#41 ünïcødé 日本 😀 \u00a0tab-free")).toBe(
      "impl#41 ünïcødé 日本 😀 \u00a0tab-free",
    );
  });
});

describe("the text views of a real daemon", () => {
  const f = new TestFleet({ enforce: ["budget-exhaustion-recurring"] });
  afterAll(() => f.dispose());

  it("escape a bidi override in a harness name in explain, explain --harness, holds and show; JSON keeps it", async () => {
    await f.start();
    // Admission refuses control characters; a bidi override is no control, so it is admitted and shown escaped.
    const harness = "nightly\u202egpj.exe";
    const closed = (n: number) => ({
      kind: "run_event",
      type: "closed",
      harness,
      run: `${harness}#${n}`,
      outcome: "budget_exceeded",
    });
    const r = await f.cli(
      ["journal", "append", "--token-file", f.tokens.get("ledger") as string],
      jsonl([closed(1), closed(2)]),
    );
    expect(r.code).toBe(0);
    await f.until(() => holds(f, { inForce: true }).length === 1, "the hold");
    const fire = fires(f)[0];
    const views = [
      ["rules", "explain", "--harness", harness],
      ["rules", "explain", fire?.fire_id as string],
      ["rules", "holds"],
      ["rules", "show", "budget-exhaustion-recurring"],
    ];
    for (const args of views) {
      const out = await f.cli(args);
      expect(out.code, args.join(" ")).toBe(0);
      expect(out.stdout, args.join(" ")).toContain("nightly\\u{202e}gpj.exe");
      expect(out.stdout, args.join(" ")).not.toContain("\u202e");
    }
    const json = await f.cli(["rules", "holds", "--json"]);
    expect(JSON.parse(json.stdout).holds[0].harness).toBe(harness);
  });
});
