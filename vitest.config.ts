import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.{ts,tsx}"],
    // Property tests print their seed on failure; keep them deterministic per run.
    testTimeout: 60_000,
  },
});
