// The JSON-lines protocol of `pi-sandbox serve`, version 1 (docs/protocol.md in the
// pi-sandbox repository). Types only: the host side of every request and event.

/** The protocol version this extension speaks. */
export const PROTOCOL_VERSION = 1;

/**
 * The answers to an approval request, in the order every question offers them (docs/approvals.md,
 * "The question and its answers"): Deny first, so that the default (Enter, Esc, the first item) is Deny.
 * `allow-command` and `allow-session` are offered for network requests only; the session is
 * the serve process, one per Pi session.
 */
export type ApprovalChoice = "deny" | "allow-once" | "allow-command" | "allow-session";

/** Every choice this extension knows, in the order above. */
export const APPROVAL_CHOICES: readonly ApprovalChoice[] = ["deny", "allow-once", "allow-command", "allow-session"];

/**
 * Who decided (docs/compatibility.md, C56; docs/approvals.md, "Sources and reasons"). An allow is only ever `human` or
 * `reviewer`; serve refuses any other source for an allow.
 */
export type ApprovalSource = "human" | "reviewer" | "unavailable" | "hard-deny" | "invalid-grant";

/** The longest `reason` serve takes in an `approval_response` (bytes of UTF-8). */
export const MAX_RESPONSE_REASON_BYTES = 4096;

/**
 * A boundary crossing, as pi-sandbox and the pi-auto-review broker describe it
 * (docs/approvals.md, "The request (BoundaryRequest)"; docs/compatibility.md, C69). Only the
 * fields this extension reads are named; the rest travels untouched to the broker.
 */
export type BoundaryRequest = {
  id: string;
  source: string;
  surface: string;
  operation: string;
  cwd: string;
  command?: string;
  path?: string;
  resolvedPath?: string;
  destination?: string;
  agentName?: string;
  matchedPolicy?: { decision: string; rule?: string };
  [field: string]: unknown;
};

// ---- requests (host → serve) ----

export type HelloRequest = { type: "hello"; version: number };

export type ExecRequest = {
  type: "exec";
  id: string;
  cwd: string;
  /** The command's whole environment; omitted: serve's own. */
  env?: Record<string, string>;
  /** Seconds, > 0. */
  timeout_s?: number;
  scope_key?: string;
  agent_name?: string;
  /** Exact names the credential filter keeps (a subagent's model API key; docs/protocol.md, "Requests"). */
  env_keep?: string[];
  /** The command as its approval requests name it (`process-backed subagent: <task>`). */
  approval_command?: string;
  stdin?: "closed" | "pipe";
  /** `"stdout"`: the command's stderr is its stdout pipe, so the output keeps the order it was written in. */
  stderr?: "separate" | "stdout";
} & ({ command: string; argv?: never } | { argv: string[]; command?: never });

/** Bytes for the stdin of a command started with `stdin: "pipe"`. */
export type StdinRequest = { type: "stdin"; id: string; data: string; encoding?: "base64" };
export type StdinCloseRequest = { type: "stdin_close"; id: string };

export type AbortRequest = { type: "abort"; id: string };

export type ApprovalResponse = {
  type: "approval_response";
  id: string;
  request_id: string;
  choice: ApprovalChoice;
  /** Who decided; serve's default is `human`. */
  source?: ApprovalSource;
  /**
   * Why (at most MAX_RESPONSE_REASON_BYTES): serve puts it in the command's refusal line,
   * its `denied` event and the audit line. serve's defaults: `Denied by the user.` for a
   * human deny, its own "nobody could be asked" text for an `unavailable` deny.
   */
  reason?: string;
};

export type ShutdownRequest = { type: "shutdown" };

/** Which automatic denials of the session the user may override now (docs/approvals.md, "After a wrong denial"). */
export type RecentDenialsRequest = { type: "recent_denials" };

/** The user authorises one retry or one break-glass allow of a recent denial, within 60 s. */
export type OverrideKind = "retry" | "break-glass";
export type OverrideRequest = { type: "override"; request_hash: string; kind: OverrideKind; scope_key?: string };

export type Request =
  | HelloRequest
  | ExecRequest
  | StdinRequest
  | StdinCloseRequest
  | AbortRequest
  | ApprovalResponse
  | ShutdownRequest
  | RecentDenialsRequest
  | OverrideRequest;

// ---- events (serve → host) ----

/** `sandbox`: the sandbox serve runs commands in (`linux`, `macos`); absent from older serves (Linux only). */
export type HelloEvent = { type: "hello"; version: number; server?: string; sandbox?: string };
export type StartedEvent = { type: "started"; id: string };
export type OutputEvent = {
  type: "output";
  id: string;
  stream: "stdout" | "stderr";
  data: string;
  encoding?: "base64";
};
export type ApprovalChoiceLabel = { choice: ApprovalChoice; label: string };
export type ApprovalRequestEvent = {
  type: "approval_request";
  id: string;
  request_id: string;
  request: BoundaryRequest;
  title?: string;
  warning?: string;
  reason?: string;
  choices?: ApprovalChoiceLabel[];
  /** Seconds until serve refuses the question unanswered; absent: no deadline. */
  expires_in_s?: number;
};
export type DeniedEvent = {
  type: "denied";
  id: string;
  surface: string;
  target?: string;
  reason?: string;
  /** Who decided the denial (absent from older servers). */
  source?: ApprovalSource;
  /** How the user may override an automatic denial (absent: none, or an older server). */
  recovery?: OverrideKind;
};
/**
 * serve closed an open question without the host's answer (another answer covered it, its
 * deadline passed, its command ended): the host closes the dialog and sends nothing; a
 * later `approval_response` to it is an `unknown request_id` error.
 */
export type ApprovalSettledEvent = {
  type: "approval_settled";
  id: string;
  request_id: string;
  choice: ApprovalChoice;
  source: ApprovalSource;
  reason?: string;
};
export type ExitEvent = {
  type: "exit";
  id: string;
  exit_code?: number;
  signal?: number;
  error?: "timeout" | "aborted" | "launch_failed" | "guard_failed";
  message?: string;
  /** The resource limit the command reached (`memory`: the sandbox was killed out of memory). */
  limit?: "memory" | "pids";
};
export type ErrorEvent = { type: "error"; message: string; id?: string };
/** One automatic denial the user may override: `recovery` says how. */
/** One overridable denial; `command`: the denied request's command (absent when it had none, or from an older serve). */
export type RecentDenial = { request_hash: string; recovery: OverrideKind; surface: string; target: string; reason: string; command?: string };
export type RecentDenialsEvent = { type: "recent_denials"; denials: RecentDenial[] };
export type OverrideEvent = { type: "override"; request_hash: string; kind: OverrideKind; expires_in_s: number };

export type Event =
  | HelloEvent
  | StartedEvent
  | OutputEvent
  | ApprovalRequestEvent
  | DeniedEvent
  | ApprovalSettledEvent
  | ExitEvent
  | ErrorEvent
  | RecentDenialsEvent
  | OverrideEvent;
