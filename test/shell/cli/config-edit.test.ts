import { describe, expect, it } from "vitest";
import { editText, keyEdit } from "../../../src/shell/cli/render/config-edit.js";

const FILE = "/home/op/.config/harness/harness.toml";
const LINE = `enforce = ["first-hold@${"a".repeat(64)}"]`;

describe("the config edit a command prints", () => {
  it("with no [memory.rules], the table and the key, at the end", () => {
    const e = keyEdit(FILE, '[notify]\ntimeout = "5s"\n', ["memory", "rules"], "enforce", LINE);
    expect(editText(e)).toEqual([`add to ${FILE}:`, "", "[memory.rules]", LINE, ""]);
  });

  it("under the table when it has no such key, naming the header's line", () => {
    const e = keyEdit(
      FILE,
      '[notify]\ntimeout = "5s"\n\n[memory.rules]\ndisable = ["x"]\n',
      ["memory", "rules"],
      "enforce",
      LINE,
    );
    expect(editText(e)).toEqual([`add under [memory.rules] (line 4) in ${FILE}:`, "", LINE, ""]);
  });

  it("in place of the key when it is written, naming its line", () => {
    const e = keyEdit(
      FILE,
      '[memory.rules]\ndisable = []\n  enforce = ["old"]\n',
      ["memory", "rules"],
      "enforce",
      LINE,
    );
    expect(editText(e)).toEqual([`in ${FILE}, replace enforce (line 3) with:`, "", LINE, ""]);
  });
});
