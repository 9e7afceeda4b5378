// The JSON-lines protocol of `pi-sandbox serve`, version 1 (docs/protocol.md in the
// pi-sandbox repository). Types only: the host side of every request and event.

/** The protocol version this extension speaks. */
export const PROTOCOL_VERSION = 1;

/** The three answers to an approval request. */
export type ApprovalChoice = "allow-once" | "allow-command" | "deny";

/**
 * A boundary crossing, as pi-sandbox and the pi-auto-review broker describe it
 * (reference item 174). Only the fields this extension reads are named; the rest
 * travels untouched to the broker.
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
  command: string;
  cwd: string;
  /** The command's whole environment; omitted: serve's own. */
  env?: Record<string, string>;
  /** Seconds, > 0. */
  timeout_s?: number;
  scope_key?: string;
  agent_name?: string;
  stdin?: "closed" | "pipe";
};

export type AbortRequest = { type: "abort"; id: string };

export type ApprovalResponse = {
  type: "approval_response";
  id: string;
  request_id: string;
  choice: ApprovalChoice;
  /**
   * Why, for a deny decided in Pi (a pi-auto-review rationale). Not in protocol version 1:
   * serve ignores unknown fields, and may use it for its refusal text and audit line.
   */
  reason?: string;
};

export type ShutdownRequest = { type: "shutdown" };

export type Request = HelloRequest | ExecRequest | AbortRequest | ApprovalResponse | ShutdownRequest;

// ---- events (serve → host) ----

export type HelloEvent = { type: "hello"; version: number; server?: string };
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
};
export type DeniedEvent = {
  type: "denied";
  id: string;
  surface: string;
  target?: string;
  reason?: string;
};
export type ExitEvent = {
  type: "exit";
  id: string;
  exit_code?: number;
  signal?: number;
  error?: "timeout" | "aborted" | "launch_failed";
  message?: string;
};
export type ErrorEvent = { type: "error"; message: string; id?: string };

export type Event =
  | HelloEvent
  | StartedEvent
  | OutputEvent
  | ApprovalRequestEvent
  | DeniedEvent
  | ExitEvent
  | ErrorEvent;
