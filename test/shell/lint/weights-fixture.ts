/** A valid model-weights snapshot, and the same with its content hash computed. */
import { parse as parseToml } from "smol-toml";
import { weightsHash } from "../../../src/shell/lint/weights-snapshot.js";

export const SNAPSHOT_BODY = `schema = 1
fetched_at = 2026-10-01T06:00:00Z

[[source]]
name = "arena"
url = "https://arena.example/leaderboard.json"
fetched_at = 2026-10-01T05:59:00Z
content_sha256 = "${"ab".repeat(32)}"

[models."claude-sonnet-9"]
family = "claude"
aliases = ["sonnet-9"]
scores = { coding = 0.82, review = 0.77 }

[models."gpt-7"]
family = "gpt"
aliases = []
scores = { coding = 0.8 }

[[family_rule]]
match = "claude-*"
family = "claude"
`;

export const snapshot = (body = SNAPSHOT_BODY): string =>
  `content_sha256 = "${weightsHash(parseToml(body))}"\n${body}`;
