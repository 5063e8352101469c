/**
 * Test certificates made with `openssl` in a temporary directory: a CA, two server certificates it signed
 * (SAN 127.0.0.1 and localhost; the second for rotation), a client certificate from it, and a second CA
 * with a client certificate of its own. openssl is a real external part: missing, the tests fail.
 */
import { execFileSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

export interface Pair {
  readonly cert: string;
  readonly key: string;
  /** SHA-256 fingerprint, as Node prints it. */
  readonly sha256: string;
}

export interface TestCerts {
  readonly dir: string;
  readonly ca: string;
  readonly server: Pair;
  readonly server2: Pair;
  /** CN `laptop-1`, signed by `ca`. */
  readonly client: Pair;
  readonly otherCa: string;
  /** CN `intruder`, signed by `otherCa`. */
  readonly foreignClient: Pair;
  dispose(): void;
}

const openssl = (dir: string, args: readonly string[]): void => {
  execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
};

function makeCa(dir: string, name: string): { cert: string; key: string } {
  const cert = path.join(dir, `${name}.pem`);
  const key = path.join(dir, `${name}.key`);
  openssl(dir, [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    key,
    "-out",
    cert,
    "-days",
    "2",
    "-subj",
    `/CN=${name}`,
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  ]);
  return { cert, key };
}

function makeLeaf(
  dir: string,
  ca: { cert: string; key: string },
  name: string,
  cn: string,
  ext: string,
): Pair {
  const cert = path.join(dir, `${name}.pem`);
  const key = path.join(dir, `${name}.key`);
  const csr = path.join(dir, `${name}.csr`);
  const extFile = path.join(dir, `${name}.ext`);
  fs.writeFileSync(extFile, `${ext}\n`);
  openssl(dir, [
    "req",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    key,
    "-out",
    csr,
    "-subj",
    `/CN=${cn}`,
  ]);
  openssl(dir, [
    "x509",
    "-req",
    "-in",
    csr,
    "-CA",
    ca.cert,
    "-CAkey",
    ca.key,
    "-set_serial",
    `0x${Date.now().toString(16)}${Math.floor(Math.random() * 1e6).toString(16)}`,
    "-out",
    cert,
    "-days",
    "2",
    "-extfile",
    extFile,
  ]);
  return { cert, key, sha256: new X509Certificate(fs.readFileSync(cert)).fingerprint256 };
}

/** The server certificates' extensions: loopback, and the addresses a test names (a namespace's). */
const serverExt = (ips: readonly string[]): string =>
  `subjectAltName=${["127.0.0.1", ...ips].map((ip) => `IP:${ip}`).join(",")},DNS:localhost\nextendedKeyUsage=serverAuth`;
const CLIENT_EXT = "extendedKeyUsage=clientAuth";

/** `serverIps`: addresses besides 127.0.0.1 the server certificates name (a daemon in a network namespace). */
export function makeTestCerts(serverIps: readonly string[] = []): TestCerts {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "harness-tls-"));
  const ca = makeCa(dir, "test-ca");
  const other = makeCa(dir, "other-ca");
  return {
    dir,
    ca: ca.cert,
    server: makeLeaf(dir, ca, "server", "harness-server", serverExt(serverIps)),
    server2: makeLeaf(dir, ca, "server2", "harness-server-2", serverExt(serverIps)),
    client: makeLeaf(dir, ca, "client", "laptop-1", CLIENT_EXT),
    otherCa: other.cert,
    foreignClient: makeLeaf(dir, other, "intruder", "intruder", CLIENT_EXT),
    dispose: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
