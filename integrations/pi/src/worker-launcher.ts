// How the Pi extension starts a subagent worker (integrations/pi/README.md, "Subagents"): `pi --mode
// rpc` as a direct invocation through the session's serve, in a sandbox of its own, with its
// own approval scope, its Pi state in the sandbox's private /tmp, and its model's key the only
// credential kept for it (serve's `env_keep`).

import { resolve } from "node:path";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { messageOf, stringEnv, unavailable } from "./common.ts";
import { DenialNotices } from "./notices.ts";
import type { ApprovalRequestEvent, DeniedEvent } from "./protocol.ts";
import type { ExecOutcome, ServeClient } from "./serve-client.ts";
import type { WorkerEvents, WorkerProcess, WorkerSpec } from "./subagent.ts";
import { piCliPath } from "./subagent-tool.ts";

/** What one running command's approvals share: its end, its open questions, its notices. */
export type CommandApprovals = {
  scopeKey: string;
  /** Aborted when the command ends or the tool call is aborted. */
  ended: AbortSignal;
  /** The open questions by request_id: aborting one closes its dialog. */
  open: Map<string, AbortController>;
  notices: DenialNotices;
};


/** What launchWorker() needs of the Pi session that starts the worker. */
export interface WorkerHost {
  /** The extension's environment (the worker's base environment, and where its key is read). */
  env(): NodeJS.ProcessEnv;
  /** Whether the Pi session has ended: then no worker starts. */
  ended(): boolean;
  /** The session's running serve (started when there is none). */
  serve(): Promise<ServeClient>;
  /** Decides one approval request of the worker and answers serve (SessionSandbox.approve). */
  approve(ctx: ExtensionContext, client: ServeClient, event: ApprovalRequestEvent, approvals: CommandApprovals): void;
}

/**
 * The variables of this process that carry the API key of the worker's model (README,
 * "Subagents": a worker's model credentials reach it explicitly, named in serve's `env_keep`): exactly what
 * Pi reports as the provider's environment source (`getProviderAuthStatus().label`, e.g.
 * `GEMINI_API_KEY`), when set. Nothing else: no guess from the provider's name.
 */
export function providerCredentialNames(env: NodeJS.ProcessEnv, reported: { source?: string; label?: string } | undefined): string[] {
  if (reported?.source !== "environment" || !reported.label) return [];
  const names = reported.label.split(/,\s*/).filter((name) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && env[name]);
  return [...new Set(names)];
}


/** Where a worker's Pi keeps its agent directory: the private /tmp of its sandbox. */
export const WORKER_AGENT_DIR = "/tmp/pi-sandbox-subagent/agent";


/** The parent's line for a refusal in a worker's sandbox (serve's `denied` event). */
export function workerDenialLine(event: DeniedEvent): string {
  const target = event.target ? ` ${event.target}` : "";
  return `pi-sandbox: the worker's sandbox refused ${event.surface}${target}: ${event.reason ?? "denied"}`;
}


/** A worker's exit code as the manager reports it: 128 + the signal for a signal. */
function workerExitCode(outcome: ExecOutcome): number | undefined {
  if (typeof outcome.exit_code === "number") return outcome.exit_code;
  if (typeof outcome.signal === "number") return 128 + outcome.signal;
  return undefined;
}


/**
 * Starts one worker through serve (`stdin: "pipe"`, no timeout): bytes written before serve
 * accepted it are queued; `kill()` aborts it (serve kills and removes its whole sandbox).
 * `events.exit` gets its exit code (128 + a signal) or why it could not start.
 */
export function launchWorker(host: WorkerHost, ctx: ExtensionContext, spec: WorkerSpec, events: WorkerEvents): WorkerProcess {
  const ended = new AbortController();
  const queued: string[] = [];
  let running: ReturnType<ServeClient["start"]> | undefined;
  let stdinClosed = false;
  const approvals: CommandApprovals = {
    scopeKey: `${ctx.sessionManager.getSessionId()}:subagent:${spec.sessionId}`,
    ended: ended.signal,
    open: new Map(),
    notices: new DenialNotices((text) => {
      if (ctx.hasUI) ctx.ui.notify(text, "warning");
    }),
  };
  // The worker's model: the one the subagent call named (`provider/id`), else the parent's.
  const provider = spec.model ? spec.model.split("/")[0] : ctx.model?.provider;
  const env = host.env();
  const keep = provider ? providerCredentialNames(env, ctx.modelRegistry?.getProviderAuthStatus?.(provider)) : [];
  const launch = async () => {
    if (host.ended()) throw unavailable("the Pi session has ended");
    let client: ServeClient;
    try {
      client = await host.serve();
    } catch (error) {
      throw unavailable(messageOf(error));
    }
    if (ended.signal.aborted) throw new Error("stopped before it started");
    running = client.start(
      {
        argv: [process.execPath, piCliPath(), "--mode", "rpc", "--no-session", ...spec.args],
        cwd: resolve(ctx.cwd),
        // The worker's Pi keeps its state in the sandbox's private /tmp: it never reads or
        // writes the user's ~/.pi (hidden; read-only when the workspace is the home).
        env: { ...stringEnv(env), ...spec.env, PI_CODING_AGENT_DIR: WORKER_AGENT_DIR, NODE_NO_WARNINGS: "1" },
        ...(keep.length > 0 ? { env_keep: keep } : {}),
        scope_key: approvals.scopeKey,
        agent_name: spec.agentName,
        approval_command: spec.approvalCommand,
        stdin: "pipe",
      },
      {
        onOutput: (stream, data) => (stream === "stdout" ? events.stdout(data) : events.stderr(data)),
        onApprovalRequest: (event) => host.approve(ctx, client, event, approvals),
        onDenied: (event) => {
          approvals.notices.denied(event);
          events.denied?.(workerDenialLine(event));
        },
        onApprovalSettled: (event) => approvals.open.get(event.request_id)?.abort(),
      },
      ended.signal,
    );
    for (const data of queued.splice(0)) running.write(data);
    if (stdinClosed) running.closeStdin();
    return running.outcome;
  };
  launch().then(
    (outcome) => events.exit(workerExitCode(outcome), outcome.error === "launch_failed" ? outcome.message : undefined),
    (error: unknown) => events.exit(undefined, messageOf(error)),
  ).finally(() => ended.abort());
  return {
    write: (data) => (running ? running.write(data) : queued.push(data)),
    closeStdin: () => {
      stdinClosed = true;
      running?.closeStdin();
    },
    kill: () => ended.abort(),
  };
}
