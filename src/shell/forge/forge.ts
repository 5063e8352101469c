/**
 * A forge, as `harness rules propose` uses one (SPEC-0029 REQ-16): the few calls that open a pull
 * request, ask for reviews, label it and read back what became of it. GitHub (`github.ts`),
 * Gitea/Forgejo (`gitea.ts`) and GitLab (`gitlab.ts`, whose merge requests are its pull requests) implement it; `detect.ts` picks one from the remote. Nothing here merges,
 * approves, arms auto-merge or force-pushes: those calls do not exist on this interface.
 */

import type { ForgeKind } from "../config/global-config.js";

export type { ForgeKind };

export interface ForgePull {
  readonly number: number;
  /** The page a reviewer opens (`html_url`). */
  readonly url: string;
  readonly state: "open" | "closed";
  readonly merged: boolean;
  /**
   * Open, but the forge is merging it now (GitLab's `locked`): nothing is pushed to it or asked of it
   * until a later pass reads it merged, or open again when the merge failed.
   */
  readonly merging: boolean;
  /** The head branch's name (without an owner). */
  readonly head: string;
  /** The body as the forge holds it ("" when it has none). */
  readonly body: string;
  /** Reviewers requested now: users by login, teams as `team:<slug>`. */
  readonly requested: readonly string[];
  /** The labels' names. */
  readonly labels: readonly string[];
}

export interface NewPull {
  readonly title: string;
  readonly head: string;
  readonly base: string;
  readonly body: string;
}

export interface Forge {
  readonly kind: ForgeKind;
  /** The API's base URL, for messages. */
  readonly api: string;
  /** The login the token acts as. */
  login(): Promise<string>;
  /** The user name git sends with the token over HTTPS, given the token's login when known. */
  gitUser(login: string | undefined): string;
  /** The open pull request whose head is `head` in this repository, if any. */
  findOpenPull(head: string): Promise<ForgePull | undefined>;
  getPull(number: number): Promise<ForgePull>;
  openPull(pull: NewPull): Promise<ForgePull>;
  updateBody(number: number, body: string): Promise<void>;
  requestReviewers(number: number, reviewers: readonly string[]): Promise<void>;
  /** The logins that submitted a review (a forge drops them from the requested reviewers). */
  reviewedBy(number: number): Promise<readonly string[]>;
  addLabels(number: number, labels: readonly string[]): Promise<void>;
  /** The last non-empty review or comment body on the pull request, or "" when it has none. */
  lastReviewComment(number: number): Promise<string>;
}

/** A forge call that failed: its method, path, HTTP status and the forge's own message. */
export class ForgeError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    detail: string,
  ) {
    super(`${method} ${path}: ${status === 0 ? "" : `HTTP ${status}: `}${detail}`);
    this.name = "ForgeError";
  }
}
