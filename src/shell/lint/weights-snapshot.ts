/**
 * Checking `weights/models.toml`, the model-weights snapshot of the fact store (SPEC-0028 REQ "Model
 * Weights", as `docs/policy-repo.md` records its format): `schema = 1`, `fetched_at`, the sources it
 * was built from, the models with their family, aliases and scores, the family rules, and
 * `content_sha256`, the hash of all of them. Every problem is an error: the fact store would refuse
 * the snapshot, and a snapshot edited after its hash was computed was not produced by a refresh.
 */
import { createHash } from "node:crypto";
import { TomlDate } from "smol-toml";
import { isTable, parseTomlDocument, type TomlTable } from "../config/toml-document.js";
import type { Position } from "../config/toml-positions.js";
import { arrayTableHeaders } from "./array-table-headers.js";
import { type Finding, finding } from "./findings.js";

export const WEIGHTS_FILE = "weights/models.toml";
/** A snapshot holds a few hundred models; 4 MiB refuses a runaway file before parsing it. */
export const MAX_WEIGHTS_BYTES = 4 * 1024 * 1024;

const TOP_KEYS = ["schema", "fetched_at", "content_sha256", "source", "models", "family_rule"] as const;
const SOURCE_KEYS = ["name", "url", "fetched_at", "content_sha256"] as const;
const MODEL_KEYS = ["family", "aliases", "scores"] as const;
const FAMILY_RULE_KEYS = ["match", "family"] as const;
const SHA256 = /^[0-9a-f]{64}$/;
/** The domain tag that opens the hashed encoding, so no other hash of ours can collide with it. */
const HASH_TAG = "harness-weights/v1";

const isOffsetDateTime = (v: unknown): v is TomlDate =>
  v instanceof TomlDate && v.isDateTime() && !v.isLocal();

/**
 * The snapshot's content hash: SHA-256, hex, over the canonical JSON of the document without its own
 * `content_sha256`: tables with their keys sorted, arrays in file order, date-times as UTC RFC 3339
 * with milliseconds, numbers as JavaScript prints them (so `1` and `1.0` hash alike), prefixed by a tag.
 */
export function weightsHash(doc: TomlTable): string {
  const { content_sha256: _own, ...rest } = doc;
  return createHash("sha256")
    .update(`${HASH_TAG}\n${canonical(rest)}`)
    .digest("hex");
}

function canonical(v: unknown): string {
  if (v instanceof Date) return JSON.stringify(new Date(v.getTime()).toISOString());
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (isTable(v)) {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(",")}}`;
  }
  return JSON.stringify(v);
}

export function lintWeightsSnapshot(text: string): Finding[] {
  const parsed = parseTomlDocument(text, WEIGHTS_FILE);
  if (!parsed.ok)
    return [finding(WEIGHTS_FILE, parsed.error, "error", "weights_format", parsed.error.message)];
  const { doc, positions } = parsed;
  const sourceHeaders = arrayTableHeaders(text, "source");
  const ruleHeaders = arrayTableHeaders(text, "family_rule");
  const findings: Finding[] = [];
  const fail = (
    at: Position | undefined,
    message: string,
    reason: "weights_format" | "weights_hash" = "weights_format",
  ) => findings.push(finding(WEIGHTS_FILE, at, "error", reason, message));

  const strictKeys = (
    t: TomlTable,
    allowed: readonly string[],
    what: string,
    at: (k: string) => Position | undefined,
  ) => {
    for (const k of Object.keys(t))
      if (!allowed.includes(k)) fail(at(k), `unknown key ${k} in ${what} (allowed: ${allowed.join(", ")})`);
  };
  strictKeys(doc, TOP_KEYS, "the snapshot", (k) => positions.of([k]));
  if (doc.schema !== 1) fail(positions.of(["schema"]), "schema must be 1");
  if (!isOffsetDateTime(doc.fetched_at))
    fail(
      positions.of(["fetched_at"]),
      "fetched_at must be a date-time with an offset, such as 2026-10-01T00:00:00Z",
    );

  const sources = doc.source;
  if (!Array.isArray(sources) || sources.length === 0 || !sources.every(isTable)) {
    fail(
      positions.of(["source"]),
      "the snapshot must list the sources it was built from as [[source]] tables",
    );
  } else {
    const names = new Set<string>();
    sources.forEach((s: TomlTable, i) => {
      const at = sourceHeaders.length === sources.length ? sourceHeaders[i] : positions.of(["source"]);
      const what = `[[source]] #${i + 1}`;
      strictKeys(s, SOURCE_KEYS, what, () => at);
      if (typeof s.name !== "string" || s.name === "") fail(at, `${what} needs a name`);
      else if (names.has(s.name)) fail(at, `${what}: source ${s.name} is listed twice`);
      else names.add(s.name);
      if (typeof s.url !== "string" || !/^https?:\/\/\S+$/.test(s.url))
        fail(at, `${what} needs a url (http or https)`);
      if (!isOffsetDateTime(s.fetched_at)) fail(at, `${what}: fetched_at must be a date-time with an offset`);
      if (typeof s.content_sha256 !== "string" || !SHA256.test(s.content_sha256))
        fail(at, `${what}: content_sha256 must be 64 lowercase hex digits (the SHA-256 of what was fetched)`);
    });
  }

  const models = doc.models;
  if (!isTable(models)) fail(positions.of(["models"]), 'the snapshot must hold [models."<id>"] tables');
  else {
    const aliasOwner = new Map<string, string>();
    for (const id of Object.keys(models).sort()) {
      const m = models[id];
      const at = positions.of(["models", id]);
      const what = `models."${id}"`;
      if (!isTable(m)) {
        fail(at, `${what} must be a table`);
        continue;
      }
      strictKeys(m, MODEL_KEYS, what, (k) => positions.of(["models", id, k]) ?? at);
      if (typeof m.family !== "string" || m.family === "")
        fail(positions.of(["models", id, "family"]) ?? at, `${what} needs a family`);
      if (!Array.isArray(m.aliases) || !m.aliases.every((a) => typeof a === "string" && a !== ""))
        fail(positions.of(["models", id, "aliases"]) ?? at, `${what}: aliases must be a list of names`);
      else
        for (const a of m.aliases as string[]) {
          const owner = aliasOwner.get(a) ?? (Object.hasOwn(models, a) && a !== id ? a : undefined);
          if (owner !== undefined && owner !== id)
            fail(positions.of(["models", id, "aliases"]) ?? at, `${what}: alias ${a} also names ${owner}`);
          aliasOwner.set(a, id);
        }
      const scores = m.scores;
      if (!isTable(scores) || Object.keys(scores).length === 0)
        fail(
          positions.of(["models", id, "scores"]) ?? at,
          `${what}: scores must be a table of named numbers`,
        );
      else
        for (const [k, v] of Object.entries(scores))
          if (typeof v !== "number" || !Number.isFinite(v))
            fail(
              positions.of(["models", id, "scores", k]) ?? at,
              `${what}: score ${k} must be a finite number`,
            );
    }
  }

  const rules = doc.family_rule;
  if (rules !== undefined) {
    if (!Array.isArray(rules) || !rules.every(isTable))
      fail(positions.of(["family_rule"]), "family_rule must be [[family_rule]] tables");
    else
      rules.forEach((r: TomlTable, i) => {
        const at = ruleHeaders.length === rules.length ? ruleHeaders[i] : positions.of(["family_rule"]);
        const what = `[[family_rule]] #${i + 1}`;
        strictKeys(r, FAMILY_RULE_KEYS, what, () => at);
        if (typeof r.match !== "string" || r.match === "") fail(at, `${what} needs a match`);
        if (typeof r.family !== "string" || r.family === "") fail(at, `${what} needs a family`);
      });
  }

  const declared = doc.content_sha256;
  const actual = weightsHash(doc);
  if (typeof declared !== "string" || !SHA256.test(declared))
    fail(
      positions.of(["content_sha256"]),
      `content_sha256 must be 64 lowercase hex digits (the snapshot hashes to ${actual})`,
    );
  else if (declared !== actual)
    fail(
      positions.of(["content_sha256"]),
      `hash mismatch: content_sha256 is ${declared} but the snapshot hashes to ${actual}; it was edited after the hash was computed`,
      "weights_hash",
    );
  return findings;
}
