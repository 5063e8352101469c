/**
 * A small PostgreSQL cluster of its own for the `[store]` TLS and password tests (issue 34): unlike the
 * run's shared cluster (`pg-cluster.ts`: unix socket, trust), it listens on 127.0.0.1 and 127.0.0.2 at a
 * free port, with TLS from `test-certs.ts`, and takes TCP logins over TLS only, by SCRAM password; to
 * `certDatabase` it also asks for a client certificate from the test CA. Its certificate names 127.0.0.1 and
 * localhost, not 127.0.0.2, so verify-full and verify-ca answer differently there. Started and stopped
 * by the one test file that uses it.
 */
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import pg from "pg";
import { makeClusterDir, runAsServer, serverUser } from "./pg-cluster.js";
import type { TestCerts } from "./test-certs.js";

export interface TlsCluster {
  readonly port: number;
  /** The role the tests log in as, its password, and its database. */
  readonly user: string;
  readonly password: string;
  readonly database: string;
  /** A database whose logins must also present a client certificate from the test CA. */
  readonly certDatabase: string;
  stop(): void;
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

/** Copies `from` into the cluster's directory, owned by the server's user, readable by it alone. */
function serverFile(dir: string, from: string, name: string): string {
  const to = path.join(dir, name);
  fs.copyFileSync(from, to);
  fs.chmodSync(to, 0o600);
  const user = serverUser();
  if (user !== undefined) fs.chownSync(to, user.uid, user.gid);
  return to;
}

export async function startTlsCluster(certs: TestCerts): Promise<TlsCluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "harness-pg-tls-"));
  makeClusterDir(dir);
  const data = path.join(dir, "data");
  runAsServer(dir, "initdb", ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"]);
  const hba = [
    "local all all trust",
    // The client's address is 127.0.0.1 whichever loopback address it dials, so the database says which.
    "hostssl journal_cert all 127.0.0.1/32 scram-sha-256 clientcert=verify-ca",
    "hostssl all all 127.0.0.1/32 scram-sha-256",
    "",
  ].join("\n");
  fs.writeFileSync(path.join(data, "pg_hba.conf"), hba);
  const user = serverUser();
  if (user !== undefined) fs.chownSync(path.join(data, "pg_hba.conf"), user.uid, user.gid);
  const cert = serverFile(dir, certs.server.cert, "server.pem");
  const key = serverFile(dir, certs.server.key, "server.key");
  const ca = serverFile(dir, certs.ca, "ca.pem");
  const port = await freePort();
  const settings = [
    "listen_addresses='127.0.0.1,127.0.0.2'",
    `port=${port}`,
    `unix_socket_directories='${dir}'`,
    "ssl=on",
    `ssl_cert_file='${cert}'`,
    `ssl_key_file='${key}'`,
    `ssl_ca_file='${ca}'`,
  ];
  runAsServer(dir, "pg_ctl", [
    "-D",
    data,
    "-l",
    path.join(dir, "server.log"),
    "-w",
    "-t",
    "60",
    "-o",
    settings.map((s) => `-c ${s}`).join(" "),
    "start",
  ]);
  const stop = () => {
    runAsServer(dir, "pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const cluster = {
    port,
    user: "harness",
    password: "right horse",
    database: "journal",
    certDatabase: "journal_cert",
    stop,
  };
  const admin = new pg.Client({ host: dir, port, user: "postgres", database: "postgres" });
  try {
    await admin.connect();
    await admin.query(`CREATE ROLE harness LOGIN PASSWORD '${cluster.password}'`);
    await admin.query("CREATE DATABASE journal OWNER harness");
    await admin.query("CREATE DATABASE journal_cert OWNER harness");
  } catch (e) {
    stop();
    throw e;
  } finally {
    await admin.end().catch(() => {});
  }
  return cluster;
}
