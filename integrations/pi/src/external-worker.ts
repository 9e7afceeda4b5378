// The launcher of one external worker (bin/pi-sandbox-external-worker runs it; integrations/pi/
// README.md, "External workers"): the orchestrator starts it where it would start `pi`, with
// Pi's arguments, the worker's cwd and environment. It registers with the Pi session's
// supervisor (src/external-workers.ts), starts the real Pi through a `pi-sandbox serve` of its
// own in a sandbox of the worker's cwd, passes stdin, stdout and stderr through, sends each
// approval request of the sandbox to the supervisor, and exits with the worker's status.
// It never runs Pi on the host: whatever is missing, it refuses with hostLaunchRefusal().

import { randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";
import { messageOf, stringEnv } from "./common.ts";
import {
  CAPABILITY_ENV,
  hostLaunchRefusal,
  inlineHostFiles,
  SEAM_ENV,
  SUPERVISOR_ENV,
  type WorkerLaunch,
} from "./external-workers.ts";
import type { ApprovalDecision } from "./approval.ts";
import { LineSplitter, ServeClient, type ExecOutcome } from "./serve-client.ts";

/** How long the supervisor may take to answer a register or an unregister (milliseconds). */
const REGISTER_TIMEOUT_MS = 30_000;

type Reply = { id?: string; action?: string; reason?: string; launch?: WorkerLaunch; decision?: ApprovalDecision };

/** One connection to the supervisor: requests with unique ids, their replies by id. */
class Supervisor {
  private readonly socket: Socket;
  private readonly capability: string;
  private readonly waiting = new Map<string, (reply: Reply) => void>();
  private seq = 0;
  private readonly prefix = randomBytes(8).toString("hex");
  closed = false;
  /** Called once when the connection closes. */
  onClose: () => void = () => {};

  private constructor(socket: Socket, capability: string) {
    this.socket = socket;
    this.capability = capability;
    const lines = new LineSplitter((line) => {
      let reply: Reply;
      try {
        reply = JSON.parse(line);
      } catch {
        return;
      }
      if (typeof reply?.id !== "string") return;
      this.waiting.get(reply.id)?.(reply);
      this.waiting.delete(reply.id);
    });
    socket.on("data", (chunk: Buffer) => lines.push(chunk));
    socket.on("error", () => {});
    socket.on("close", () => {
      // The Pi session is gone: every open request is denied.
      this.closed = true;
      for (const answer of this.waiting.values()) answer({ action: "deny" });
      this.waiting.clear();
      this.onClose();
    });
  }

  static connect(path: string, capability: string): Promise<Supervisor> {
    return new Promise((resolve, reject) => {
      const socket = connect(path);
      socket.once("connect", () => resolve(new Supervisor(socket, capability)));
      socket.once("error", (error) => reject(new Error(`cannot reach the supervisor at ${path}: ${error.message}`)));
    });
  }

  /** Sends one request; resolves with its reply (a deny when the connection closes or after timeoutMs). */
  request(body: object, timeoutMs?: number): Promise<Reply> {
    if (this.closed) return Promise.resolve({ action: "deny" });
    const id = `${this.prefix}-${++this.seq}`;
    return new Promise((resolve) => {
      const timer = timeoutMs === undefined ? undefined : setTimeout(() => {
        this.waiting.delete(id);
        resolve({ action: "deny" });
      }, timeoutMs);
      this.waiting.set(id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      this.socket.write(`${JSON.stringify({ version: 1, id, capability: this.capability, ...body })}\n`);
    });
  }

  end(): void {
    this.socket.end();
  }
}

function refuse(failure: string): never {
  process.stderr.write(`${hostLaunchRefusal(failure)}\n`);
  process.exit(1);
}

/** The worker's exit status: its code, 128 + a signal, 143 when stopped, or 1 when it could not run. */
function statusOf(outcome: ExecOutcome): number {
  if (typeof outcome.exit_code === "number") return outcome.exit_code;
  if (typeof outcome.signal === "number") return 128 + outcome.signal;
  if (outcome.error === "aborted") {
    process.stderr.write("pi-sandbox: the external worker was stopped: its Pi session ended, or the launcher got a signal\n");
    return 143;
  }
  process.stderr.write(`pi-sandbox: the external worker did not run: ${outcome.message ?? outcome.error ?? "no status"}\n`);
  return 1;
}

async function main(): Promise<number> {
  const socketPath = process.env[SUPERVISOR_ENV];
  const capability = process.env[CAPABILITY_ENV];
  if (!socketPath || !capability) refuse(`${SUPERVISOR_ENV} and ${CAPABILITY_ENV} must be set by the pi-sandbox extension`);
  const args = process.argv.slice(2);
  const workerId = randomBytes(8).toString("hex");
  let supervisor: Supervisor;
  try {
    supervisor = await Supervisor.connect(socketPath, capability);
  } catch (error) {
    refuse(messageOf(error));
  }
  const registered = await supervisor.request({ type: "register", workerId, cwd: process.cwd(), args }, REGISTER_TIMEOUT_MS);
  if (registered.action !== "allow" || !registered.launch) {
    supervisor.end();
    refuse(`the supervisor refused the worker${typeof registered.reason === "string" ? `: ${registered.reason}` : ""}`);
  }
  const launch = registered.launch;
  // Neither serve nor the worker gets the seam: the supervisor is the launcher's alone.
  const env = stringEnv(process.env) ?? {};
  for (const name of SEAM_ENV) delete env[name];
  let client: ServeClient;
  try {
    client = await ServeClient.start({ binary: launch.binary, args: launch.serveArgs, env });
  } catch (error) {
    await supervisor.request({ type: "unregister", workerId }, REGISTER_TIMEOUT_MS);
    supervisor.end();
    refuse(messageOf(error));
  }
  const stop = new AbortController();
  /** Questions serve closed itself: the supervisor's late answer to one is dropped. */
  const settled = new Set<string>();
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, () => stop.abort());
  // The Pi session is gone (ended, or Pi died): so is its worker, whose questions nobody answers.
  supervisor.onClose = () => stop.abort();
  if (supervisor.closed) stop.abort();
  const running = client.start(
    {
      argv: [...launch.pi, ...inlineHostFiles(args, process.cwd())],
      cwd: process.cwd(),
      env: { ...env, ...launch.env },
      ...(launch.envKeep.length > 0 ? { env_keep: launch.envKeep } : {}),
      scope_key: launch.scopeKey,
      agent_name: launch.agentName,
      stdin: "pipe",
    },
    {
      onOutput: (stream, data) => (stream === "stdout" ? process.stdout : process.stderr).write(data),
      onApprovalRequest: (event) => {
        void supervisor.request({ type: "approval", workerId, event }).then((reply) => {
          if (settled.delete(event.request_id)) return;
          const decision: ApprovalDecision =
            reply.action === "decision" && reply.decision
              ? reply.decision
              : { choice: "deny", source: "unavailable", reason: "The Pi session's supervisor did not answer." };
          client.respond(event.id, event.request_id, decision);
        });
      },
      // As a built-in worker's parent gets it (worker-launcher.ts, workerDenialLine()).
      onApprovalSettled: (event) => {
        settled.add(event.request_id);
        void supervisor.request({ type: "settled", workerId, requestId: event.request_id });
      },
      onDenied: (event) =>
        process.stderr.write(
          `pi-sandbox: the worker's sandbox refused ${event.surface}${event.target ? ` ${event.target}` : ""}: ${event.reason ?? "denied"}\n`,
        ),
    },
    stop.signal,
  );
  process.stdin.on("data", (data: Buffer) => running.write(data));
  process.stdin.on("end", () => running.closeStdin());
  process.stdin.on("error", () => running.closeStdin());
  let status: number;
  try {
    status = statusOf(await running.outcome);
  } catch (error) {
    process.stderr.write(`pi-sandbox: the external worker did not run: ${messageOf(error)}\n`);
    status = 1;
  }
  process.stdin.destroy();
  await supervisor.request({ type: "unregister", workerId }, REGISTER_TIMEOUT_MS);
  supervisor.end();
  await client.shutdown();
  return status;
}

main().then(
  (status) => process.exit(status),
  (error: unknown) => refuse(messageOf(error)),
);
