/**
 * `[store] url` (issue 34): a PostgreSQL URL read into its parts here, rather than handed to
 * node-postgres' own parser, so that its bounds and its errors are ours and nothing of it is left for the
 * environment (`PGHOST`, `PGUSER`…) to fill in. `postgresql://USER@HOST[:PORT]/DATABASE` (or `postgres://`)
 * over TCP; a unix socket's directory as `?host=/run/postgresql` or percent-encoded in the host
 * (`postgresql://USER@%2Frun%2Fpostgresql/DATABASE`), as libpq and pg-connection-string read them. A
 * password is refused: config files get shared and committed, so it belongs in `password_file`.
 */

export interface StoreAddress {
  /** A host name or address (an IPv6 one without brackets), or a unix socket's directory. */
  readonly host: string;
  /** True when `host` is a unix socket's directory. */
  readonly socket: boolean;
  readonly port: number;
  readonly user: string;
  readonly database: string;
}

/** A longer URL is not one. */
export const MAX_STORE_URL = 2048;
/** PostgreSQL keeps the first 63 bytes of a name (NAMEDATALEN - 1): a longer one would be cut, silently. */
export const MAX_PG_NAME_BYTES = 63;
export const DEFAULT_PG_PORT = 5432;
/** `sun_path` holds 107 bytes and a NUL: the directory, `/.s.PGSQL.`, and the port must fit. */
const MAX_SOCKET_PATH_BYTES = 107;

const FORM = "postgresql://USER@HOST[:PORT]/DATABASE, or postgresql://USER@/DATABASE?host=/socket/directory";

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
const PORT = /^\d{1,5}$/;
const HOST_NAME = /^[A-Za-z0-9._-]+$/;
const IPV6 = /^\[([0-9A-Fa-f:.]+)\]$/;

/**
 * Read by hand rather than by WHATWG's `URL`, which refuses libpq's `USER@/DATABASE?host=…` (a user with
 * no host in the authority). Each part is split at one character, so the work is linear in the text.
 */
export function parseStoreUrl(text: string): StoreAddress | { readonly problem: string } {
  if (text.length > MAX_STORE_URL) return { problem: `longer than ${MAX_STORE_URL} characters` };
  const scheme = SCHEME.exec(text)?.[1];
  if (scheme === undefined || !text.startsWith(`${scheme}://`))
    return { problem: `not a URL (want ${FORM})` };
  if (scheme !== "postgresql" && scheme !== "postgres")
    return { problem: `${scheme}: is not postgresql: (want ${FORM})` };
  const rest = text.slice(scheme.length + 3);
  const query = rest.indexOf("?");
  const beforeQuery = query < 0 ? rest : rest.slice(0, query);
  const slash = beforeQuery.indexOf("/");
  const authority = slash < 0 ? beforeQuery : beforeQuery.slice(0, slash);
  const at = authority.lastIndexOf("@");
  const userinfo = at < 0 ? "" : authority.slice(0, at);
  const colon = userinfo.indexOf(":");
  // Said before anything else. No message repeats a part of the url, so none can repeat a password the
  // split above did not find (one holding `/`, `?` or `@` unencoded).
  if (colon >= 0 && colon < userinfo.length - 1)
    return {
      problem:
        "a password in the url would sit in a config file that gets shared or committed: put it in password_file (mode 0600)",
    };
  if (rest.includes("#")) return { problem: `not a PostgreSQL URL: a # fragment (want ${FORM})` };
  const user = decoded(colon < 0 ? userinfo : userinfo.slice(0, colon));
  const database = decoded(slash < 0 ? "" : beforeQuery.slice(slash + 1));
  const params = new URLSearchParams(query < 0 ? "" : rest.slice(query + 1));
  for (const key of new Set(params.keys()))
    if (key !== "host")
      return {
        problem:
          "the url takes one parameter, ?host= (a socket directory); TLS is [store] ssl_mode, ca_file, cert_file and key_file",
      };
  const hostParam = params.getAll("host");
  if (hostParam.length > 1) return { problem: "?host= given more than once" };
  if (user === undefined || database === undefined) return { problem: `not a PostgreSQL URL (want ${FORM})` };
  if (user === "") return { problem: `names no user (want ${FORM})` };
  if (database === "" || database.includes("/")) return { problem: `names no database (want ${FORM})` };
  for (const [what, name] of [
    ["user", user],
    ["database", database],
  ] as const)
    if (Buffer.byteLength(name) > MAX_PG_NAME_BYTES || /\p{Cc}/u.test(name))
      return {
        problem: `the ${what} name is longer than ${MAX_PG_NAME_BYTES} bytes or holds a control character`,
      };

  const hostPort = at < 0 ? authority : authority.slice(at + 1);
  const bracket = hostPort.startsWith("[") ? hostPort.indexOf("]") : -1;
  const portColon = hostPort.indexOf(":", Math.max(bracket, 0));
  const portText = portColon < 0 ? "" : hostPort.slice(portColon + 1);
  const port = portText === "" ? DEFAULT_PG_PORT : PORT.test(portText) ? Number(portText) : 0;
  if (port < 1 || port > 65_535) return { problem: "the port is not a number from 1 to 65535" };
  const authorityHost = decoded(portColon < 0 ? hostPort : hostPort.slice(0, portColon));
  if (authorityHost === undefined) return { problem: `not a PostgreSQL URL (want ${FORM})` };
  const paramHost = hostParam[0];
  if (paramHost !== undefined && authorityHost !== "")
    return { problem: "names a host twice, in the authority and in ?host=" };
  const host = paramHost ?? authorityHost;
  if (host === "") return { problem: `names no host (want ${FORM})` };
  if (host.startsWith("/")) {
    const socketFile = `${host.replace(/\/+$/, "")}/.s.PGSQL.${port}`;
    if (/\p{Cc}/u.test(host)) return { problem: "the socket directory holds a control character" };
    if (Buffer.byteLength(socketFile) > MAX_SOCKET_PATH_BYTES)
      return {
        problem: `the socket directory is too long: with /.s.PGSQL.${port} it must fit a unix socket path's ${MAX_SOCKET_PATH_BYTES} bytes`,
      };
    return { host, socket: true, port, user, database };
  }
  if (paramHost !== undefined) return { problem: "?host= names a socket directory, an absolute path" };
  const v6 = IPV6.exec(host)?.[1];
  if (v6 === undefined && !HOST_NAME.test(host))
    return { problem: "the host is not a host name, an IP address or a socket directory" };
  return { host: v6 ?? host, socket: false, port, user, database };
}

const decoded = (s: string): string | undefined => {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
};

/** Loopback: a socket, `localhost` or a loopback address; elsewhere TLS is verified by default. */
export const isLoopbackStore = (a: Pick<StoreAddress, "host" | "socket">): boolean =>
  a.socket || a.host === "localhost" || a.host === "::1" || /^127\./.test(a.host);
