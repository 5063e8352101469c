/**
 * The settings file and the record of installs on disk (issue 17, section 3): a file that is not JSON
 * or not the agents' shape is named with its line and column; a change keeps the file's mode (narrowed
 * for tokens), writes through a symlink rather than over it, and leaves a 0600 backup of the old bytes;
 * a damaged record of installs is an error, never silently replaced.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  InstallRecordError,
  readInstallRecord,
} from "../../../../src/shell/agents/install/install-record.js";
import { parseJsonText } from "../../../../src/shell/agents/install/json-text.js";
import {
  backUp,
  located,
  readSettings,
  SettingsFileError,
  writeSettings,
} from "../../../../src/shell/agents/install/settings-file.js";
import { mergeEntries } from "../../../../src/shell/agents/install/settings-merge.js";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "harness-settings-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const errorOf = (f: () => unknown): unknown => {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
};

describe("settings files on disk", () => {
  it("names a syntax error and a shape error with the file, line and column", () => {
    const file = path.join(root, "settings.json");
    const text = '{\r\n  "a": 1,\r\n  "b": [1 2]\r\n}\r\n';
    const e = errorOf(() => located(file, text, () => parseJsonText(text))) as SettingsFileError;
    expect(e).toBeInstanceOf(SettingsFileError);
    expect(e.message).toBe(`${file}:3:11: not valid JSON: expected "," or "]", found "2"`);
    const shaped = '{\n  "hooks": {\n    "Stop": "later"\n  }\n}\n';
    const s = errorOf(() =>
      located(file, shaped, () => mergeEntries(shaped, [], () => false)),
    ) as SettingsFileError;
    expect(s.message).toBe(`${file}:3:13: "hooks.Stop" must be an array of matcher groups`);
  });

  it("reads no file as none, keeps a byte order mark, and refuses text that is not UTF-8 at 1:1", () => {
    expect(readSettings(path.join(root, "absent.json"))).toBeUndefined();
    const bom = path.join(root, "bom.json");
    fs.writeFileSync(bom, '\ufeff{"a": 1}\n');
    const text = readSettings(bom) as string;
    expect(text.charCodeAt(0)).toBe(0xfeff);
    expect(parseJsonText(text).kind).toBe("object");
    const latin1 = path.join(root, "latin1.json");
    fs.writeFileSync(latin1, Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d]));
    expect((errorOf(() => readSettings(latin1)) as Error).message).toBe(
      `${latin1}:1:1: the file is not valid UTF-8`,
    );
  });

  it("keeps the file's mode, narrows it when tokens go in, and writes through a symlink", () => {
    const file = path.join(root, "mode.json");
    fs.writeFileSync(file, "{}\n");
    fs.chmodSync(file, 0o640);
    writeSettings(file, '{"a": 1}\n', { newMode: 0o644, narrow: false });
    expect(fs.statSync(file).mode & 0o777).toBe(0o640);
    writeSettings(file, '{"a": 2}\n', { newMode: 0o644, narrow: true });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const real = path.join(root, "dotfiles", "settings.json");
    fs.mkdirSync(path.dirname(real));
    fs.writeFileSync(real, "{}\n");
    const link = path.join(root, "linked.json");
    fs.symlinkSync(real, link);
    writeSettings(link, '{"b": 1}\n', { newMode: 0o644, narrow: false });
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(real, "utf8")).toBe('{"b": 1}\n');
    expect(fs.readdirSync(path.dirname(real))).toEqual(["settings.json"]);
  });

  it("backs the old bytes up, 0600, never over an earlier backup", () => {
    const file = path.join(root, "settings.local.json");
    fs.writeFileSync(file, '{"old": true}\n');
    const dir = path.join(root, "backups");
    const now = Date.parse("2026-12-03T08:15:00.123Z");
    const first = backUp(file, dir, "claude-code", now);
    const second = backUp(file, dir, "claude-code", now);
    expect(path.basename(first)).toBe("2026-12-03T081500Z-claude-code-settings.local.json");
    expect(path.basename(second)).toBe("2026-12-03T081500Z-claude-code-2-settings.local.json");
    expect(fs.readFileSync(first, "utf8")).toBe('{"old": true}\n');
    expect(fs.statSync(first).mode & 0o777).toBe(0o600);
  });

  it("reads no record as empty, and a damaged one as an error naming it", () => {
    expect(readInstallRecord(path.join(root, "none.json"))).toEqual({ installs: [], tokens: {} });
    const file = path.join(root, "installs.json");
    fs.writeFileSync(file, '{"installs": [{"agent": "cursor"}], "tokens": {}}');
    const e = errorOf(() => readInstallRecord(file));
    expect(e).toBeInstanceOf(InstallRecordError);
    expect((e as Error).message).toBe(`${file}: the record of installs is damaged: install 1`);
    fs.writeFileSync(file, "{");
    expect((errorOf(() => readInstallRecord(file)) as Error).message).toMatch(
      new RegExp(`^${file}: the record of installs is not JSON: `),
    );
  });
});
