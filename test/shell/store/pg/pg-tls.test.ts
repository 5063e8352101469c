/**
 * Issue 34: `[store]`'s password and TLS against a real server that asks for both (a cluster of this
 * file's own, `test/support/pg-tls-cluster.ts`): the right password over verified TLS passes doctor's
 * store row; a wrong or missing password, a server certificate from another CA, a name the certificate
 * does not carry under verify-full, a missing client certificate where one is asked for, and plaintext
 * each fail it, naming the database and the cause.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storePgCheck } from "../../../../src/shell/cli/doctor/store-pg-check.js";
import { formatConfigError } from "../../../../src/shell/config/config-error.js";
import { loadGlobalConfig, type StoreConfig } from "../../../../src/shell/config/global-config.js";
import { startTlsCluster, type TlsCluster } from "../../../support/pg-tls-cluster.js";
import { makeTestCerts, type TestCerts } from "../../../support/test-certs.js";

let certs: TestCerts;
let cluster: TlsCluster;
let dir: string;

beforeAll(async () => {
  certs = makeTestCerts();
  cluster = await startTlsCluster(certs);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "pg-tls-files-"));
}, 120_000);

afterAll(() => {
  cluster?.stop();
  certs?.dispose();
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
});

/** A 0600 file holding `text`. */
const secret = (name: string, text: string): string => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text, { mode: 0o600 });
  return file;
};

/**
 * `[store]` to `host` at the cluster's port (`host/database` for another database), with `lines` and the
 * right password unless one is given.
 */
function storeOf(where: string, ...lines: string[]): StoreConfig {
  const [host, database = cluster.database] = where.split("/");
  const password = lines.some((l) => l.startsWith("password_file"))
    ? []
    : [`password_file = ${JSON.stringify(secret("right", `${cluster.password}\n`))}`];
  const text = [
    "[store]",
    `url = "postgresql://${cluster.user}@${host}:${cluster.port}/${database}"`,
    ...password,
    ...lines,
  ].join("\n");
  const r = loadGlobalConfig(text, path.join(dir, "harness.toml"), {});
  if (!r.ok) throw new Error(r.errors.map(formatConfigError).join("\n"));
  return r.config.store as StoreConfig;
}

const ca = () => `ca_file = ${JSON.stringify(certs.ca)}`;

describe("[store] against a server that asks for a password over TLS", () => {
  it("the right password over verify-full with the test CA passes, by address and by name", async () => {
    for (const host of ["127.0.0.1", "localhost"]) {
      const row = await storePgCheck(storeOf(host, 'ssl_mode = "verify-full"', ca()));
      expect(row.detail).toContain(`postgresql ${host}:${cluster.port}/journal (PostgreSQL`);
      expect(row.status).toBe("warn"); // no harness schema yet: the daemon makes it
    }
  });

  it("a wrong password fails, naming the database and the server's answer", async () => {
    const wrong = secret("wrong", "wrong horse\n");
    const row = await storePgCheck(
      storeOf("127.0.0.1", `password_file = ${JSON.stringify(wrong)}`, 'ssl_mode = "verify-full"', ca()),
    );
    expect(row).toMatchObject({ status: "fail" });
    expect(row.detail).toBe(
      `postgresql 127.0.0.1:${cluster.port}/journal: cannot use the database: password authentication failed for user "harness"`,
    );
  });

  it("no password_file fails saying the server asks for one", async () => {
    const text = [
      "[store]",
      `url = "postgresql://${cluster.user}@127.0.0.1:${cluster.port}/${cluster.database}"`,
      'ssl_mode = "verify-full"',
      ca(),
    ].join("\n");
    const r = loadGlobalConfig(text, path.join(dir, "harness.toml"), {});
    if (!r.ok) throw new Error("config did not load");
    const row = await storePgCheck(r.config.store as StoreConfig);
    expect(row.detail).toBe(
      `postgresql 127.0.0.1:${cluster.port}/journal: cannot use the database: the server asks for a password and [store] has no password_file`,
    );
  });

  it("a server certificate from another CA fails verify-ca; require, which checks none, passes", async () => {
    const other = `ca_file = ${JSON.stringify(certs.otherCa)}`;
    const row = await storePgCheck(storeOf("127.0.0.1", 'ssl_mode = "verify-ca"', other));
    expect(row.status).toBe("fail");
    expect(row.detail).toBe(
      `postgresql 127.0.0.1:${cluster.port}/journal: cannot use the database: self-signed certificate in certificate chain`,
    );
    expect((await storePgCheck(storeOf("127.0.0.1", 'ssl_mode = "require"'))).status).toBe("warn");
  });

  it("an address the certificate does not name fails verify-full and passes verify-ca", async () => {
    const full = await storePgCheck(storeOf("127.0.0.2", 'ssl_mode = "verify-full"', ca()));
    expect(full.status).toBe("fail");
    expect(full.detail).toMatch(/cannot use the database: .*IP: 127\.0\.0\.2 is not in the cert's list/);
    expect((await storePgCheck(storeOf("127.0.0.2", 'ssl_mode = "verify-ca"', ca()))).status).toBe("warn");
  });

  it("where the server asks for a client certificate, cert_file and key_file present it; none fails", async () => {
    const pair = [
      `cert_file = ${JSON.stringify(certs.client.cert)}`,
      `key_file = ${JSON.stringify(secret("client.key", fs.readFileSync(certs.client.key, "utf8")))}`,
    ];
    const where = `127.0.0.1/${cluster.certDatabase}`;
    expect((await storePgCheck(storeOf(where, 'ssl_mode = "verify-full"', ca(), ...pair))).status).toBe(
      "warn",
    );
    const row = await storePgCheck(storeOf(where, 'ssl_mode = "verify-full"', ca()));
    expect(row.status).toBe("fail");
    expect(row.detail).toBe(
      `postgresql 127.0.0.1:${cluster.port}/${cluster.certDatabase}: cannot use the database: connection requires a valid client certificate`,
    );
  });

  it("plaintext, which the server refuses, fails", async () => {
    const row = await storePgCheck(storeOf("127.0.0.1", 'ssl_mode = "disable"'));
    expect(row.status).toBe("fail");
    expect(row.detail).toMatch(
      /cannot use the database: no pg_hba\.conf entry for host "127\.0\.0\.1".*no encryption/,
    );
  });
});
