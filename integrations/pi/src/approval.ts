// Who answers serve's approval requests: the pi-auto-review broker when one is published in
// this Pi process, else the human through Pi's UI (reference items 50-58).
//
// serve has already applied its own hard denies, circuit breaker and configured reviewer
// before it asks the host; an allow from here becomes serve's exact one-shot grant.

import type { ApprovalChoice, ApprovalChoiceLabel, ApprovalRequestEvent, BoundaryRequest } from "./protocol.ts";

/** Where pi-auto-review publishes its broker (reference item 173). */
export const BROKER_SERVICE_KEY = Symbol.for("pi-auto-review:boundary-approval-broker");

/** The reviewer's verdict (pi-auto-review `BoundaryDecision`, reference item 175). */
export type BoundaryDecision = {
  kind: "allow" | "deny" | "defer";
  review: { rationale: string; [field: string]: unknown };
  grant?: { token: string; [field: string]: unknown };
  denialSource?: string;
  recoveryCommand?: string | false;
  [field: string]: unknown;
};

/** The published broker service (pi-auto-review `BoundaryApprovalBrokerService`). */
export type BoundaryBroker = {
  review(
    request: BoundaryRequest,
    context: { sessionId: string; scopeKey: string; issueGrant?: boolean },
  ): Promise<BoundaryDecision>;
  consumeGrant(request: BoundaryRequest, sessionId: string, token: string): boolean;
};

/** The published broker, if any. */
export function getBoundaryBroker(): BoundaryBroker | undefined {
  const service = (globalThis as Record<symbol, unknown>)[BROKER_SERVICE_KEY] as Partial<BoundaryBroker> | undefined;
  if (service && typeof service.review === "function" && typeof service.consumeGrant === "function") {
    return service as BoundaryBroker;
  }
  return undefined;
}

export const BROKER_UNAVAILABLE_REASON = "pi-auto-review broker is unavailable";
export const INVALID_GRANT_REASON = "The exact one-shot grant is missing, invalid, or expired.";
export const HOST_IPC_PREFLIGHT_WARNING = "Warning: this command will run on the host outside the OS sandbox.";
export const HOST_IPC_RETRY_WARNING =
  "Warning: the first sandboxed attempt may already have had partial side effects. The retry runs on the host outside the OS sandbox.";
export const ALLOW_ONCE_LABEL = "Allow this exact operation once";
export const DENY_LABEL = "Deny";

/** The result of one decision (reference item 55). */
export type ApprovalDecision = {
  choice: ApprovalChoice;
  source: "reviewer" | "hard-deny" | "human" | "unavailable" | "invalid-grant";
  reason?: string;
};

/** Asks the human: the dialog title and the option labels; undefined = dismissed. */
export type SelectPrompt = (title: string, labels: string[], signal: AbortSignal) => Promise<string | undefined>;

export type ApprovalContext = {
  broker: BoundaryBroker | undefined;
  sessionId: string;
  scopeKey: string;
  /** undefined: no UI (print and JSON modes): whatever needs a human is denied. */
  select: SelectPrompt | undefined;
  /** Aborted when the command ends or the tool call is aborted. */
  signal: AbortSignal;
};

/** What the question names (reference item 56). */
export function approvalTarget(request: BoundaryRequest): string {
  if (request.surface === "host-ipc") return request.command ?? request.operation;
  return request.resolvedPath ?? request.path ?? request.destination ?? request.operation;
}

/** The dialog title: title, warning line, reason line (reference items 56-57). */
export function questionTitle(event: ApprovalRequestEvent, reason: string | undefined): string {
  const request = event.request;
  const title = event.title ?? `Sandbox approval required: ${request.operation} ${approvalTarget(request)}`;
  let warning = event.warning;
  if (warning === undefined && request.surface === "host-ipc") {
    warning =
      request.matchedPolicy?.rule === "unix-socket-eperm" ? HOST_IPC_RETRY_WARNING : HOST_IPC_PREFLIGHT_WARNING;
  }
  return `${title}${warning ? `\n${warning}` : ""}${reason ? `\n${reason}` : ""}`;
}

function choicesOf(event: ApprovalRequestEvent): ApprovalChoiceLabel[] {
  const valid = (event.choices ?? []).filter(
    (c) => c && typeof c.label === "string" && ["allow-once", "allow-command", "deny"].includes(c.choice),
  );
  return valid.length > 0
    ? valid
    : [
        { choice: "allow-once", label: ALLOW_ONCE_LABEL },
        { choice: "deny", label: DENY_LABEL },
      ];
}

async function askHuman(
  event: ApprovalRequestEvent,
  context: ApprovalContext,
  reason: string | undefined,
): Promise<ApprovalDecision> {
  if (!context.select || context.signal.aborted) return { choice: "deny", source: "unavailable", reason };
  const choices = choicesOf(event);
  let selected: string | undefined;
  try {
    selected = await context.select(
      questionTitle(event, reason),
      choices.map((c) => c.label),
      context.signal,
    );
  } catch {
    selected = undefined;
  }
  const choice = context.signal.aborted ? "deny" : (choices.find((c) => c.label === selected)?.choice ?? "deny");
  return { choice, source: "human", reason };
}

/**
 * Decides one approval request (reference items 50-54): no broker → the human, with the
 * reason `pi-auto-review broker is unavailable` unless serve gave one; broker throws →
 * deny `Broker failed: …`; deny → deny with the rationale; defer → the human with the
 * rationale; allow → the grant is consumed at once, else deny.
 */
export async function decideApproval(event: ApprovalRequestEvent, context: ApprovalContext): Promise<ApprovalDecision> {
  const broker = context.broker;
  if (!broker) return askHuman(event, context, event.reason ?? BROKER_UNAVAILABLE_REASON);

  let decision: BoundaryDecision;
  try {
    decision = await broker.review(event.request, {
      sessionId: context.sessionId,
      scopeKey: context.scopeKey,
      issueGrant: true,
    });
  } catch (error) {
    return {
      choice: "deny",
      source: "unavailable",
      reason: `Broker failed: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  if (decision?.kind === "deny") {
    // Later brokers name a recovery command (reference item 103); 0.3.x names none.
    const recovery =
      decision.recoveryCommand === undefined
        ? ""
        : decision.recoveryCommand === false
          ? " This local safety denial cannot be overridden."
          : ` Use ${decision.recoveryCommand} for one exact retry.`;
    return {
      choice: "deny",
      source: decision.denialSource === "hard-deny" ? "hard-deny" : "reviewer",
      reason: `${decision.review?.rationale ?? ""}${recovery}`,
    };
  }
  if (decision?.kind === "defer") return askHuman(event, context, decision.review?.rationale);
  if (decision?.kind === "allow") {
    let consumed = false;
    try {
      consumed = !!decision.grant && broker.consumeGrant(event.request, context.sessionId, decision.grant.token);
    } catch {
      consumed = false;
    }
    if (consumed) return { choice: "allow-once", source: "reviewer", reason: decision.review?.rationale };
  }
  return { choice: "deny", source: "invalid-grant", reason: INVALID_GRANT_REASON };
}

/** The notice for a denial with a reason (reference item 58). */
export function denialNotice(surface: string, reason: string): string {
  if (surface === "network") return `Domain proxy denied: ${reason}`;
  if (surface === "host-ipc") return `Host-IPC denied: ${reason}`;
  return `Sandbox denied: ${reason}`;
}
