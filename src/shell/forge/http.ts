/**
 * JSON over HTTPS for the forge clients, with plain `fetch`: the token in one `Authorization` header
 * (never in a URL), a timeout per call, redirects refused (a redirect to another host would carry the
 * header along), a bounded body, and a failure as a `ForgeError` carrying the forge's own message.
 */
import { ForgeError } from "./forge.js";

export interface ForgeHttp {
  /** `https://api.github.com`, `https://host/api/v3` or `https://host/api/v1`. */
  readonly base: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly fetch?: typeof fetch;
  readonly timeoutMs?: number;
}

const TIMEOUT_MS = 30_000;
const MAX_BODY_BYTES = 8 * 1024 * 1024;

export interface Answer {
  readonly status: number;
  readonly body: unknown;
}

/** One call; a status outside 2xx is a `ForgeError` unless `accept` lists it. */
export async function call(
  http: ForgeHttp,
  method: string,
  path: string,
  body?: unknown,
  accept: readonly number[] = [],
): Promise<Answer> {
  let response: Response;
  try {
    response = await (http.fetch ?? fetch)(`${http.base}${path}`, {
      method,
      headers: {
        accept: "application/json",
        ...http.headers,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      redirect: "error",
      signal: AbortSignal.timeout(http.timeoutMs ?? TIMEOUT_MS),
    });
  } catch (e) {
    const cause = (e as Error & { cause?: Error }).cause;
    throw new ForgeError(method, path, 0, `${(e as Error).message}${cause ? ` (${cause.message})` : ""}`);
  }
  const text = await boundedText(response, method, path);
  let parsed: unknown = text;
  try {
    parsed = text === "" ? undefined : JSON.parse(text);
  } catch {
    // A proxy's HTML error page: its status says enough.
  }
  if ((response.status >= 200 && response.status < 300) || accept.includes(response.status))
    return { status: response.status, body: parsed };
  throw new ForgeError(method, path, response.status, messageOf(parsed, response.statusText));
}

async function boundedText(response: Response, method: string, path: string): Promise<string> {
  const length = Number(response.headers.get("content-length") ?? "0");
  if (length > MAX_BODY_BYTES) {
    await response.body?.cancel();
    throw new ForgeError(method, path, response.status, `answer of ${length} bytes is too large`);
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (bytes.length > MAX_BODY_BYTES)
    throw new ForgeError(method, path, response.status, `answer of ${bytes.length} bytes is too large`);
  return new TextDecoder().decode(bytes);
}

/**
 * GitHub's `message` and its `errors[].message`; Gitea's `message`; GitLab's `message` as a string, a
 * list of strings or an object of field → strings, or its `error`. Cut short: it goes to a terminal.
 */
function messageOf(body: unknown, fallback: string): string {
  if (typeof body !== "object" || body === null) return fallback;
  const b = body as { message?: unknown; errors?: unknown; error?: unknown };
  const parts = [
    typeof b.message === "string"
      ? b.message
      : typeof b.message === "object" && b.message !== null
        ? gitlabMessage(b.message)
        : typeof b.error === "string"
          ? b.error
          : fallback,
  ];
  if (Array.isArray(b.errors))
    for (const e of b.errors)
      if (typeof e === "object" && e !== null && typeof (e as { message?: unknown }).message === "string")
        parts.push((e as { message: string }).message);
  return parts.join(": ").slice(0, 500);
}

/** GitLab's `["…"]` or `{"field": ["…"]}` as one line. */
function gitlabMessage(m: object): string {
  const entries = Array.isArray(m) ? [["", m]] : Object.entries(m).slice(0, 10);
  return entries
    .map(([k, v]) => {
      const texts = (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === "string");
      return `${k === "" ? "" : `${k} `}${texts.slice(0, 10).join(", ")}`;
    })
    .join("; ");
}

/** Lists are read at most this many pages deep: a policy repo's pulls, reviews, notes or labels. */
const MAX_PAGES = 20;

/** Every item of a paged list, `page(n, size)` giving the query of page `n`. */
export async function listPages(
  http: ForgeHttp,
  path: string,
  page: (n: number, size: number) => string,
  size: number,
): Promise<unknown[]> {
  const out: unknown[] = [];
  for (let n = 1; n <= MAX_PAGES; n++) {
    const sep = path.includes("?") ? "&" : "?";
    const { body } = await call(http, "GET", `${path}${sep}${page(n, size)}`);
    if (!isArray(body)) throw new ForgeError("GET", path, 200, "the forge's answer is not a list");
    out.push(...body);
    if (body.length < size) break;
  }
  return out;
}

/** A field of an object the forge sent, checked for its type. */
export function field<T>(from: unknown, key: string, is: (v: unknown) => v is T, where: string): T {
  const v = typeof from === "object" && from !== null ? (from as Record<string, unknown>)[key] : undefined;
  if (!is(v)) throw new ForgeError("GET", where, 0, `the forge's answer has no valid ${key}`);
  return v;
}

export const isString = (v: unknown): v is string => typeof v === "string";
export const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v);
export const isBoolean = (v: unknown): v is boolean => typeof v === "boolean";
export const isArray = (v: unknown): v is unknown[] => Array.isArray(v);

export const enc = encodeURIComponent;
