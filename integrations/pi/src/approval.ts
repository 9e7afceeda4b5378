// Who answers serve's approval requests: the pi-auto-review broker when one is published in
// this Pi process, else the human through Pi's UI (integrations/pi/README.md, "How approvals
// reach you"; docs/compatibility.md, C52-C58).
//
// serve has already applied its own hard denies, circuit breaker and configured reviewer
// before it asks the host; an allow from here becomes serve's exact one-shot grant. Every
// answer names who decided and why (docs/protocol.md, "Answers, sources and reasons"): a
// human's deny says so, "nobody could be asked" says that, and a broker's rationale travels
// unchanged.

import {
  APPROVAL_CHOICES,
  type ApprovalChoice,
  type ApprovalChoiceLabel,
  type ApprovalRequestEvent,
  type ApprovalSource,
  type BoundaryRequest,
} from "./protocol.ts";

/** Where pi-auto-review publishes its broker (docs/compatibility.md, C68). */
export const BROKER_SERVICE_KEY = Symbol.for("pi-auto-review:boundary-approval-broker");

/** The reviewer's verdict (pi-auto-review `BoundaryDecision`; docs/compatibility.md, C70). */
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

/**
 * Whether pi-auto-review published something at BROKER_SERVICE_KEY that is not a usable
 * broker (no `review` or `consumeGrant` function): a reviewer is installed and failed. Nothing
 * published means no reviewer is configured, which is no fault.
 */
export function brokerPublishedButUnusable(): boolean {
  const service = (globalThis as Record<symbol, unknown>)[BROKER_SERVICE_KEY];
  return service !== undefined && service !== null && getBoundaryBroker() === undefined;
}

/**
 * The reason line of a question when pi-auto-review published an unusable broker (README, "How
 * approvals reach you"); a Pi without pi-auto-review gets no reason line.
 */
export const BROKER_UNAVAILABLE_REASON = "pi-auto-review broker is unavailable";
export const INVALID_GRANT_REASON = "The exact one-shot grant is missing, invalid, or expired.";
/** A human's deny: Deny chosen, or the dialog dismissed (Esc). */
export const HUMAN_DENY_REASON = "Denied by the user.";
/** A question in print or JSON mode, where Pi has no UI to ask in. */
export const NO_UI_REASON =
  "Approval needs a human, and none could be asked (Pi has no interactive UI in this mode).";
/** A dialog closed by its countdown (the question's `expires_in_s`): nobody answered. */
export const NOT_ANSWERED_REASON = "Not answered in time.";
export const HOST_IPC_PREFLIGHT_WARNING = "Warning: this command will run on the host outside the OS sandbox.";
export const HOST_IPC_RETRY_WARNING =
  "Warning: the first sandboxed attempt may already have had partial side effects. The retry runs on the host outside the OS sandbox.";
export const ALLOW_ONCE_LABEL = "Allow this exact operation once";
export const DENY_LABEL = "Deny";
/** How much of the command the question's `Command:` line shows (characters). */
export const COMMAND_LINE_LIMIT = 200;

/** The result of one decision (docs/compatibility.md, C56): the answer sent to serve. */
export type ApprovalDecision = {
  choice: ApprovalChoice;
  source: ApprovalSource;
  /** Always set for a deny; for an allow, the reviewer's rationale (a human's allow has none). */
  reason?: string;
};

/** How a dialog ended: a label chosen, dismissed (Esc, or closed), or closed by its countdown. */
export type SelectOutcome = { kind: "selected"; label: string } | { kind: "dismissed" } | { kind: "timed-out" };

/**
 * Asks the human: the dialog text and the option labels. `signal` closes the dialog (the
 * question was settled or its command ended); `deadline` (milliseconds since the epoch) is
 * when the question expires unanswered.
 */
export type SelectPrompt = (
  title: string,
  labels: string[],
  options: { signal: AbortSignal; deadline?: number },
) => Promise<SelectOutcome>;

export type ApprovalContext = {
  broker: BoundaryBroker | undefined;
  /** With no `broker`: pi-auto-review published one that cannot be used (brokerPublishedButUnusable). */
  brokerFailed?: boolean;
  sessionId: string;
  scopeKey: string;
  /** undefined: no UI (print and JSON modes): whatever needs a human is denied. */
  select: SelectPrompt | undefined;
  /** Aborted when the question closes without an answer from here (settled, command ended). */
  signal: AbortSignal;
  /** When the question expires unanswered (milliseconds since the epoch); none: no deadline. */
  deadline?: number;
};

/**
 * What the question names (docs/compatibility.md, C57): a host run's command; a host socket's path
 * (operation `connect-unix`, docs/host-ipc.md "Host sockets"), like any other request's path or destination.
 */
export function approvalTarget(request: BoundaryRequest): string {
  if (request.surface === "host-ipc" && request.operation !== "connect-unix") return request.command ?? request.operation;
  return request.resolvedPath ?? request.path ?? request.destination ?? request.operation;
}

/**
 * Untrusted text made safe to show, as pi-sandbox's `printable()` does: a newline becomes
 * `\n`, other C0 controls and DEL `\xNN`, C1 controls `\u00NN`, and the bidirectional
 * controls (U+200E, U+200F, U+202A-U+202E, U+2066-U+2069; CVE-2021-42574) `\uNNNN`.
 */
export function printable(text: string): string {
  let out = "";
  for (const character of text) {
    const code = character.codePointAt(0)!;
    if (code === 0x0a) out += "\\n";
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else if (code >= 0x80 && code <= 0x9f) out += `\\u00${code.toString(16)}`;
    else if (code === 0x200e || code === 0x200f || (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069)) {
      out += `\\u${code.toString(16)}`;
    } else out += character;
  }
  return out;
}

/** The question's `Command: …` line: the command, printable, cut to COMMAND_LINE_LIMIT characters + `…`. */
export function commandLine(command: string): string {
  const characters = [...printable(command)];
  const shown = characters.length > COMMAND_LINE_LIMIT ? `${characters.slice(0, COMMAND_LINE_LIMIT).join("")}…` : characters.join("");
  return `Command: ${shown}`;
}

/**
 * The dialog text (docs/compatibility.md, C57-C58; docs/approvals.md, "The question and its
 * answers"): the title, the `Command:`
 * line naming the command, the warning line, the reason line.
 */
export function questionTitle(event: ApprovalRequestEvent, reason: string | undefined): string {
  const request = event.request;
  const title = event.title ?? `Sandbox approval required: ${request.operation} ${approvalTarget(request)}`;
  let warning = event.warning;
  if (warning === undefined && request.surface === "host-ipc" && request.operation === "execute-host") {
    warning =
      request.matchedPolicy?.rule === "unix-socket-eperm" ? HOST_IPC_RETRY_WARNING : HOST_IPC_PREFLIGHT_WARNING;
  }
  const lines = [title];
  // The command, unless the title already names it (host IPC), as the terminal's question does.
  if (typeof request.command === "string" && request.command !== "" && request.command !== approvalTarget(request)) {
    lines.push(commandLine(request.command));
  }
  if (warning) lines.push(warning);
  if (reason) lines.push(reason);
  return lines.join("\n");
}

/** The choices to offer, in the event's order (Deny first); none valid: Deny, allow once. */
export function choicesOf(event: ApprovalRequestEvent): ApprovalChoiceLabel[] {
  const valid = (Array.isArray(event.choices) ? event.choices : []).filter(
    (c) => c && typeof c.label === "string" && APPROVAL_CHOICES.includes(c.choice),
  );
  return valid.length > 0
    ? valid
    : [
        { choice: "deny", label: DENY_LABEL },
        { choice: "allow-once", label: ALLOW_ONCE_LABEL },
      ];
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Asks the human; undefined when the question closed before an answer. */
async function askHuman(
  event: ApprovalRequestEvent,
  context: ApprovalContext,
  reasonLine: string | undefined,
): Promise<ApprovalDecision | undefined> {
  if (!context.select) return { choice: "deny", source: "unavailable", reason: NO_UI_REASON };
  if (context.signal.aborted) return undefined;
  const choices = choicesOf(event);
  let outcome: SelectOutcome;
  try {
    outcome = await context.select(
      questionTitle(event, reasonLine),
      choices.map((c) => c.label),
      { signal: context.signal, ...(context.deadline !== undefined ? { deadline: context.deadline } : {}) },
    );
  } catch (error) {
    if (context.signal.aborted) return undefined;
    return { choice: "deny", source: "unavailable", reason: `The question could not be shown: ${messageOf(error)}` };
  }
  if (context.signal.aborted) return undefined;
  if (outcome.kind === "timed-out") return { choice: "deny", source: "unavailable", reason: NOT_ANSWERED_REASON };
  const chosen = outcome.kind === "selected" ? choices.find((c) => c.label === outcome.label)?.choice : undefined;
  if (chosen !== undefined && chosen !== "deny") return { choice: chosen, source: "human" };
  return { choice: "deny", source: "human", reason: HUMAN_DENY_REASON };
}

/**
 * Decides one approval request (docs/compatibility.md, C52-C55; README, "How approvals reach you"):
 *  - no broker → the human, with serve's reason line if it gave one, else
 *    `pi-auto-review broker is unavailable` when a broker was published and cannot be used
 *    (`brokerFailed`), else none; no UI → deny (`unavailable`, NO_UI_REASON);
 *  - the human: Deny or Esc → deny (`human`, `Denied by the user.`); the countdown ran out →
 *    deny (`unavailable`, `Not answered in time.`); an allow → that allow (`human`);
 *  - broker throws → deny (`unavailable`, `Broker failed: …`); deny → deny with the
 *    rationale (`reviewer`, or `hard-deny`); defer → the human with the rationale as reason
 *    line; allow → the grant consumed at once → allow-once (`reviewer`, the rationale),
 *    else deny (`invalid-grant`).
 * Resolves undefined when the question closed (context.signal) before a decision: nothing
 * is to be sent.
 */
export async function decideApproval(
  event: ApprovalRequestEvent,
  context: ApprovalContext,
): Promise<ApprovalDecision | undefined> {
  const broker = context.broker;
  if (!broker) return askHuman(event, context, event.reason ?? (context.brokerFailed ? BROKER_UNAVAILABLE_REASON : undefined));

  let decision: BoundaryDecision;
  try {
    decision = await broker.review(event.request, {
      sessionId: context.sessionId,
      scopeKey: context.scopeKey,
      issueGrant: true,
    });
  } catch (error) {
    if (context.signal.aborted) return undefined;
    return { choice: "deny", source: "unavailable", reason: `Broker failed: ${messageOf(error)}` };
  }
  if (context.signal.aborted) return undefined;
  if (decision?.kind === "deny") {
    // Later brokers name a recovery command; 0.3.x names none.
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
    if (consumed) {
      const rationale = decision.review?.rationale;
      return { choice: "allow-once", source: "reviewer", ...(rationale ? { reason: rationale } : {}) };
    }
  }
  return { choice: "deny", source: "invalid-grant", reason: INVALID_GRANT_REASON };
}

/** The recovery hint after an automatic denial (docs/approvals.md, "After a wrong denial"): the command that overrides it. */
export const RETRY_HINT = "Use /auto-review-approve for one exact retry.";
export const BREAK_GLASS_HINT = "Use /auto-review-break-glass for one exact retry.";
export const HARD_DENY_HINT = "This local safety denial cannot be overridden.";

/**
 * The hint after a denial serve decided itself (docs/approvals.md, "After a wrong denial"): by the `denied`
 * event's `recovery` (`retry`, `break-glass`), else by its `source` (an older serve names no recovery:
 * `reviewer` is a retry).
 */
export function serveDenialHint(source: string | undefined, recovery?: string): string {
  if (recovery === "break-glass") return BREAK_GLASS_HINT;
  if (recovery === "retry" || source === "reviewer") return RETRY_HINT;
  if (source === "hard-deny") return HARD_DENY_HINT;
  return "";
}

/** The notice for a denial with a reason (README, "How approvals reach you"), then `hint` if any. */
export function denialNotice(surface: string, reason: string, hint = ""): string {
  const text = hint ? `${reason} ${hint}` : reason;
  if (surface === "network") return `Domain proxy denied: ${text}`;
  if (surface === "host-ipc") return `Host-IPC denied: ${text}`;
  if (surface === "credential") return `Credential denied: ${text}`;
  return `Sandbox denied: ${text}`;
}
