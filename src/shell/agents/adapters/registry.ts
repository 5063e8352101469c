/**
 * The agents the harness knows, by name: each is one module of this folder (`adapter.ts` says what it
 * holds). The ingest, the forwarder, the hook endpoint, install, doctor and the CLI find an agent and
 * its hook formats here and nowhere else, so adding an agent is adding its module to `AGENTS`, or, for
 * one defined elsewhere (a test's), `AGENTS.with(adapter)` handed to whatever serves it.
 */
import type { HookFormat, HookFormats } from "../ingest/hook-format.js";
import { CHALLENGE_PATH, HOOK_PATH_PREFIX } from "../ingest/hook-limits.js";
import type { AgentAdapter } from "./adapter.js";
import { claudeCode } from "./claude-code.js";
import { codex } from "./codex.js";

/** A name that is a URL path segment, a shell word and a file name as it stands. */
const NAME = /^[a-z][a-z0-9-]{0,31}$/;

/** An adapter that cannot join: a name that is not one, or already taken. */
export class AdapterRegistryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AdapterRegistryError";
  }
}

export class AdapterRegistry implements HookFormats {
  private readonly byAgent = new Map<string, AgentAdapter>();
  private readonly byHook = new Map<string, HookFormat>();

  private constructor(readonly agents: readonly AgentAdapter[]) {
    for (const agent of agents) {
      if (!NAME.test(agent.name))
        throw new AdapterRegistryError(`${JSON.stringify(agent.name)} is not an agent name`);
      if (this.byAgent.has(agent.name))
        throw new AdapterRegistryError(`the agent ${agent.name} is already registered`);
      this.byAgent.set(agent.name, agent);
      for (const hook of agent.hooks) {
        if (!NAME.test(hook.name) || `${HOOK_PATH_PREFIX}${hook.name}` === CHALLENGE_PATH)
          throw new AdapterRegistryError(`${JSON.stringify(hook.name)} is not a hook name`);
        if (this.byHook.has(hook.name))
          throw new AdapterRegistryError(`the hook ${hook.name} is already registered`);
        if (hook.agent !== agent.name)
          throw new AdapterRegistryError(
            `the hook ${hook.name} of ${agent.name} names another agent, ${hook.agent}`,
          );
        this.byHook.set(hook.name, hook);
      }
    }
  }

  static of(agents: readonly AgentAdapter[]): AdapterRegistry {
    return new AdapterRegistry(agents);
  }

  /** This registry with `adapter` registered beside the others. */
  with(adapter: AgentAdapter): AdapterRegistry {
    return new AdapterRegistry([...this.agents, adapter]);
  }

  agent(name: string): AgentAdapter | undefined {
    return this.byAgent.get(name);
  }

  hook(name: string): HookFormat | undefined {
    return this.byHook.get(name);
  }

  get agentNames(): readonly string[] {
    return [...this.byAgent.keys()];
  }

  get hookNames(): readonly string[] {
    return [...this.byHook.keys()];
  }
}

/** The agents this build knows. */
export const AGENTS: AdapterRegistry = AdapterRegistry.of([claudeCode, codex]);
