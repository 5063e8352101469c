/**
 * Masks secret-shaped substrings: credentials in URLs, bearer tokens, common key and token formats,
 * long high-entropy runs. Shared by rule messages and (later) the notify payload.
 */
const PATTERNS: readonly RegExp[] = [
  // user:password@ in a URL
  /(?<=[a-z][a-z0-9+.-]*:\/\/)[^\s/@:]+:[^\s/@]+(?=@)/gi,
  // Authorization-style bearer tokens
  /(?<=\bbearer\s+)[A-Za-z0-9._~+/-]{8,}=*/gi,
  // Provider tokens with well-known prefixes (GitHub, Slack, AWS access keys, OpenAI-style keys)
  /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|sk-[A-Za-z0-9_-]{20,})\b/g,
  // key=value where the key says it is secret
  /(?<=\b(?:password|passwd|secret|token|api[_-]?key|access[_-]?key)=)[^\s&;]+/gi,
];

export const REDACTED = "[redacted]";

export function redact(text: string): string {
  let out = text;
  for (const p of PATTERNS) out = out.replace(p, REDACTED);
  return out;
}
