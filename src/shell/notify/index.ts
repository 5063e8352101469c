/** The notify hook runner: what the daemon uses to deliver `rule_fired` and the hold events. */
export {
  checkCommand,
  DEFAULT_NOTIFY_CONFIG,
  NOTIFY_BOUNDS,
  NOTIFY_EVENTS,
  type NotifyConfig,
  NotifyConfigError,
  type NotifyEventName,
  notifyConfig,
} from "./config.js";
export type { CooldownKey, CooldownStore } from "./cooldown-store.js";
export { OUTPUT_TAIL_BYTES } from "./hook-process.js";
export {
  Notifier,
  type NotifierDeps,
  type NotifyOutcomeDetail,
  type NotifyResult,
  type OnOutcome,
} from "./notifier.js";
export {
  buildPayload,
  hookEnv,
  type NotifyEvent,
  type NotifyPayload,
  PAYLOAD_VERSION,
  type RuleFiredEvent,
  type RuleHoldEvent,
  type RuleHoldReleasedEvent,
} from "./payload.js";
