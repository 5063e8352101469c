/** Store files in temporary directories for a test file: each opened store closed, each directory removed, after every test. */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach } from "vitest";
import { type OpenedStore, openStore } from "../../../src/shell/store/open-store.js";

export function tempStores(prefix: string): {
  readonly storeFile: () => string;
  readonly open: (file: string) => OpenedStore;
} {
  const dirs: string[] = [];
  const stores: OpenedStore[] = [];
  afterEach(() => {
    for (const s of stores.splice(0)) s.close();
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
  return {
    storeFile: () => {
      const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
      dirs.push(d);
      return path.join(d, "harness.db");
    },
    open: (file) => {
      const s = openStore(file, "test");
      stores.push(s);
      return s;
    },
  };
}
