/**
 * Issue 34: `[store]` as node-postgres' pool options. Every connection parameter comes from the config;
 * the password and the client key only from files their owner alone reads, each bounded; the TLS options
 * follow libpq's ssl modes; every file problem names the key and the file.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { StoreConfig } from "../../../../src/shell/config/global-config.js";
import {
  MAX_PASSWORD_FILE_BYTES,
  PgConfigError,
  pgPoolConfigOf,
  pgStoreName,
  type StoreFileReads,
} from "../../../../src/shell/store/pg/pg-config.js";

const TCP: StoreConfig = {
  host: "db.internal",
  socket: false,
  port: 5432,
  user: "harness",
  database: "journal",
  passwordFile: undefined,
  sslMode: "disable",
  caFile: undefined,
  certFile: undefined,
  keyFile: undefined,
  poolMax: 10,
  lease: 3_000,
  queryTimeout: 30_000,
};

/** Reads of an in-memory file system, recording which files were read as secrets. */
function memoryReads(files: Record<string, string>): StoreFileReads & { secrets: string[] } {
  const secrets: string[] = [];
  const get = (file: string) =>
    files[file] === undefined
      ? { problem: `cannot read ${file}: ENOENT` }
      : { bytes: Buffer.from(files[file]) };
  return {
    secrets,
    secret: (file) => {
      secrets.push(file);
      return get(file);
    },
    public: get,
  };
}

const FILES = {
  "/etc/harness/pg.password": "correct horse battery\n",
  "/etc/harness/ca.pem": "CA PEM",
  "/etc/harness/client.pem": "CLIENT CERT PEM",
  "/etc/harness/client.key": "CLIENT KEY PEM",
};

const TLS_FILES = {
  caFile: "/etc/harness/ca.pem",
  certFile: "/etc/harness/client.pem",
  keyFile: "/etc/harness/client.key",
};

describe("pgPoolConfigOf", () => {
  it("sets every connection parameter from the config, the pool's size and the password's first line", () => {
    const reads = memoryReads(FILES);
    const config = pgPoolConfigOf(
      { ...TCP, port: 6432, poolMax: 4, passwordFile: "/etc/harness/pg.password" },
      reads,
    );
    expect(config).toEqual({
      host: "db.internal",
      port: 6432,
      user: "harness",
      database: "journal",
      password: "correct horse battery",
      ssl: false,
      max: 4,
      application_name: "harness-rules",
      connectionTimeoutMillis: 5_000,
      keepAlive: true,
    });
    expect(reads.secrets).toEqual(["/etc/harness/pg.password"]);
  });

  it("without password_file, a server that asks for one gets a clear error, not PGPASSWORD or ~/.pgpass", () => {
    const config = pgPoolConfigOf(TCP, memoryReads({}));
    expect(typeof config.password).toBe("function");
    expect(() => (config.password as () => string)()).toThrow(
      "the server asks for a password and [store] has no password_file",
    );
  });

  it("require encrypts and checks no certificate, with the client's pair when given", () => {
    expect(pgPoolConfigOf({ ...TCP, sslMode: "require" }, memoryReads(FILES)).ssl).toEqual({
      rejectUnauthorized: false,
    });
    const reads = memoryReads(FILES);
    const ssl = pgPoolConfigOf({ ...TCP, sslMode: "require", ...TLS_FILES, caFile: undefined }, reads).ssl;
    expect(ssl).toEqual({
      rejectUnauthorized: false,
      cert: Buffer.from("CLIENT CERT PEM"),
      key: Buffer.from("CLIENT KEY PEM"),
    });
    expect(reads.secrets).toEqual(["/etc/harness/client.key"]);
  });

  it("verify-ca checks the chain against ca_file and skips the name check", () => {
    const ssl = pgPoolConfigOf({ ...TCP, sslMode: "verify-ca", ...TLS_FILES }, memoryReads(FILES)).ssl;
    expect(ssl).toMatchObject({
      rejectUnauthorized: true,
      ca: Buffer.from("CA PEM"),
      cert: Buffer.from("CLIENT CERT PEM"),
      key: Buffer.from("CLIENT KEY PEM"),
    });
    const check = (ssl as { checkServerIdentity: (host: string, cert: unknown) => Error | undefined })
      .checkServerIdentity;
    expect(check("db.internal", { subject: { CN: "elsewhere" } })).toBeUndefined();
  });

  it("verify-full checks the chain and leaves Node's name check in place; without ca_file, Node's CAs", () => {
    const ssl = pgPoolConfigOf({ ...TCP, sslMode: "verify-full", ...TLS_FILES }, memoryReads(FILES)).ssl;
    expect(ssl).toEqual({
      rejectUnauthorized: true,
      ca: Buffer.from("CA PEM"),
      cert: Buffer.from("CLIENT CERT PEM"),
      key: Buffer.from("CLIENT KEY PEM"),
    });
    expect(pgPoolConfigOf({ ...TCP, sslMode: "verify-full" }, memoryReads(FILES)).ssl).toEqual({
      rejectUnauthorized: true,
    });
  });

  it("a file that cannot be read, or is empty, fails naming the key and the file", () => {
    const reads = memoryReads({ "/etc/harness/empty": "" });
    const refused = (store: Partial<StoreConfig>) => () => pgPoolConfigOf({ ...TCP, ...store }, reads);
    expect(refused({ passwordFile: "/etc/harness/none" })).toThrow(
      new PgConfigError("password_file", "/etc/harness/none", "cannot read /etc/harness/none: ENOENT"),
    );
    expect(refused({ passwordFile: "/etc/harness/empty" })).toThrow(
      "[store] password_file: /etc/harness/empty is empty",
    );
    expect(refused({ sslMode: "verify-full", caFile: "/etc/harness/none" })).toThrow(
      "[store] ca_file: cannot read /etc/harness/none: ENOENT",
    );
  });

  it("a password file of more than one line, or of only a newline, is refused", () => {
    const reads = memoryReads({ "/p/two": "one\ntwo\n", "/p/nl": "\n", "/p/crlf": "pw\r\n" });
    expect(() => pgPoolConfigOf({ ...TCP, passwordFile: "/p/two" }, reads)).toThrow(
      "[store] password_file: /p/two holds more than one line (or a NUL)",
    );
    expect(() => pgPoolConfigOf({ ...TCP, passwordFile: "/p/nl" }, reads)).toThrow("/p/nl holds no password");
    expect(pgPoolConfigOf({ ...TCP, passwordFile: "/p/crlf" }, reads).password).toBe("pw");
  });

  it("names the database by host and database only", () => {
    expect(pgStoreName(TCP)).toBe("postgresql db.internal/journal");
    expect(pgStoreName({ ...TCP, host: "::1", port: 6432 })).toBe("postgresql [::1]:6432/journal");
    expect(pgStoreName({ ...TCP, host: "/run/postgresql", socket: true })).toBe(
      "postgresql /run/postgresql/journal",
    );
  });
});

describe("the real file reads", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
  const dir = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), "pg-config-"));
    dirs.push(d);
    return d;
  };
  const write = (file: string, text: string | Buffer, mode: number) => {
    fs.writeFileSync(file, text, { mode });
    fs.chmodSync(file, mode);
    return file;
  };

  it("a password file or client key readable by group or others is refused; a public CA is read", () => {
    const d = dir();
    const shared = write(path.join(d, "pw"), "s3cret\n", 0o640);
    expect(() => pgPoolConfigOf({ ...TCP, passwordFile: shared })).toThrow(
      `[store] password_file: ${shared} is readable by group or others; run chmod 600 ${shared}`,
    );
    fs.chmodSync(shared, 0o600);
    expect(pgPoolConfigOf({ ...TCP, passwordFile: shared }).password).toBe("s3cret");
    const ca = write(path.join(d, "ca.pem"), "CA", 0o644);
    const cert = write(path.join(d, "client.pem"), "CERT", 0o644);
    const key = write(path.join(d, "client.key"), "KEY", 0o644);
    const tls = { sslMode: "verify-full", caFile: ca, certFile: cert, keyFile: key } as const;
    expect(() => pgPoolConfigOf({ ...TCP, ...tls })).toThrow(
      `[store] key_file: ${key} is readable by group or others`,
    );
    fs.chmodSync(key, 0o600);
    expect(pgPoolConfigOf({ ...TCP, ...tls }).ssl).toEqual({
      rejectUnauthorized: true,
      ca: Buffer.from("CA"),
      cert: Buffer.from("CERT"),
      key: Buffer.from("KEY"),
    });
  });

  it("a password file over the bound, a directory, or a missing file is refused naming it", () => {
    const d = dir();
    const big = write(path.join(d, "big"), "p".repeat(MAX_PASSWORD_FILE_BYTES + 1), 0o600);
    expect(() => pgPoolConfigOf({ ...TCP, passwordFile: big })).toThrow(
      `[store] password_file: ${big} is ${MAX_PASSWORD_FILE_BYTES + 1} bytes long`,
    );
    expect(() => pgPoolConfigOf({ ...TCP, passwordFile: d })).toThrow(`${d} is not a regular file`);
    expect(() => pgPoolConfigOf({ ...TCP, passwordFile: path.join(d, "none") })).toThrow(
      `cannot read ${path.join(d, "none")}: ENOENT`,
    );
  });
});
