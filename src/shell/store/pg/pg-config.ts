/**
 * `[store]` as node-postgres' pool options (issue 34): every connection parameter set from the config, so
 * none is left to the environment (`PGHOST`, `PGPASSWORD`, `PGSSLMODE`…) or to `~/.pgpass`; the password
 * and the TLS files read here, each with a length bound, the password and the client key only from a
 * file its owner alone can read. The TLS options follow libpq's `sslmode`: `require` encrypts and checks
 * nothing, `verify-ca` checks the chain but not the name, `verify-full` both.
 */
import type pg from "pg";
import type { StoreConfig } from "../../config/global-config.js";
import { DEFAULT_PG_PORT } from "../../config/store-url.js";
import { readBounded } from "../../support/bounded-read.js";
import { MAX_TLS_FILE_BYTES } from "../../support/tls-listener.js";
import { readSecretFileSync } from "../../support/token-file.js";

/** A password is a line; more than this is not one. */
export const MAX_PASSWORD_FILE_BYTES = 4096;
/** How long a new connection may take to answer. */
export const CONNECT_TIMEOUT_MS = 5_000;

/** A `[store]` file that cannot be used: the key, the file and why. */
export class PgConfigError extends Error {
  constructor(
    readonly key: string,
    readonly file: string,
    readonly problem: string,
  ) {
    super(`[store] ${key}: ${problem}`);
    this.name = "PgConfigError";
  }
}

/** How the files are read: the real reads, or a test's. Each returns the bytes or why not. */
export interface StoreFileReads {
  /** A file its owner alone may read (the password, the client key). */
  readonly secret: (file: string, maxBytes: number) => { bytes: Uint8Array } | { problem: string };
  /** A certificate or CA bundle, which may be public. */
  readonly public: (file: string, maxBytes: number) => { bytes: Uint8Array } | { problem: string };
}

export const realStoreFileReads: StoreFileReads = {
  secret: (file, maxBytes) => readSecretFileSync(file, maxBytes, "[store] secret file"),
  public: (file, maxBytes) => {
    const r = readBounded(file, maxBytes);
    if ("error" in r) return { problem: `${file}: ${r.error}` };
    return r.bytes.length > maxBytes ? { problem: `${file} is larger than ${maxBytes} bytes` } : r;
  },
};

/** The database in messages: where it is and which, never the user or the password. */
export const pgStoreName = (s: Pick<StoreConfig, "host" | "socket" | "port" | "database">): string =>
  s.socket || s.port === DEFAULT_PG_PORT
    ? `postgresql ${s.host}/${s.database}`
    : `postgresql ${s.host.includes(":") ? `[${s.host}]` : s.host}:${s.port}/${s.database}`;

export function pgPoolConfigOf(
  store: StoreConfig,
  reads: StoreFileReads = realStoreFileReads,
): pg.PoolConfig {
  const file = (key: string, path: string, secret: boolean, maxBytes: number): Buffer => {
    const r = (secret ? reads.secret : reads.public)(path, maxBytes);
    if ("problem" in r) throw new PgConfigError(key, path, r.problem);
    if (r.bytes.length === 0) throw new PgConfigError(key, path, `${path} is empty`);
    return Buffer.from(r.bytes);
  };
  return {
    host: store.host,
    port: store.port,
    user: store.user,
    database: store.database,
    password:
      store.passwordFile === undefined
        ? noPassword
        : passwordOf(
            file("password_file", store.passwordFile, true, MAX_PASSWORD_FILE_BYTES),
            store.passwordFile,
          ),
    ssl: sslOf(store, file),
    max: store.poolMax,
    application_name: "harness-rules",
    // A server that does not answer a connect (a host gone without a reset) is an error in seconds, not
    // the system's minutes: the writer answers its producers, and hooks their fail mode, meanwhile.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // Probes an idle connection, so one to a host that went away is found dead rather than hung on.
    keepAlive: true,
  };
}

/** The password: the file's first line, without its line ending. */
function passwordOf(bytes: Buffer, path: string): string {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new PgConfigError("password_file", path, `${path} is not UTF-8 text`);
  }
  const password = text.replace(/\r?\n$/, "");
  if (password === "") throw new PgConfigError("password_file", path, `${path} holds no password`);
  if (/[\r\n\0]/.test(password))
    throw new PgConfigError("password_file", path, `${path} holds more than one line (or a NUL)`);
  return password;
}

/**
 * Asked only when the server wants a password and none is configured: a clear error rather than
 * node-postgres' fallback to `PGPASSWORD` or `~/.pgpass`.
 */
const noPassword = (): never => {
  throw new Error("the server asks for a password and [store] has no password_file");
};

type FileRead = (key: string, path: string, secret: boolean, maxBytes: number) => Buffer;

function sslOf(store: StoreConfig, file: FileRead): pg.PoolConfig["ssl"] {
  if (store.sslMode === "disable") return false;
  const client =
    store.certFile === undefined || store.keyFile === undefined
      ? {}
      : {
          cert: file("cert_file", store.certFile, false, MAX_TLS_FILE_BYTES),
          key: file("key_file", store.keyFile, true, MAX_TLS_FILE_BYTES),
        };
  if (store.sslMode === "require") return { rejectUnauthorized: false, ...client };
  const ca =
    store.caFile === undefined ? {} : { ca: file("ca_file", store.caFile, false, MAX_TLS_FILE_BYTES) };
  // verify-ca: the chain is checked, the name is not (a server reached by an address its certificate
  // does not carry); verify-full keeps Node's own check of the name against the host.
  return store.sslMode === "verify-ca"
    ? { rejectUnauthorized: true, ...ca, ...client, checkServerIdentity: () => undefined }
    : { rejectUnauthorized: true, ...ca, ...client };
}
