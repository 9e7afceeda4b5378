// External workers in sandboxes of their own (integrations/pi/README.md, "External workers";
// docs/compatibility.md, C87-C89): with `subagents.provider: "pi-subagents"` and
// `subagents.externalWorkerIsolation: "enforce"`, the extension points the orchestrator's launcher
// seam ($PI_SUBAGENT_PI_BINARY) at bin/pi-sandbox-external-worker. That launcher
// (src/external-worker.ts) starts its worker through a `pi-sandbox serve` of its own and asks this
// module's supervisor, over a Unix socket only this Pi process and its host children can reach,
// for the worker's launch and for each approval of its sandbox.
//
// The supervisor's protocol: JSON lines of at most MAX_LINE_BYTES, each
// `{version: 1, id, capability, type, ...}` with an `id` of at most 128 characters used once
// (a replay is denied) and the 32-byte hex capability of this Pi session:
//   register   {workerId, cwd (absolute, at most 4096), args} -> {id, action: "allow", launch}
//              (or {id, action: "deny", reason} when the session cannot launch it)
//   approval   {workerId, event (serve's approval_request)} -> {id, action: "decision", decision}
//   settled    {workerId, requestId} (serve closed that question itself) -> {id, action: "allow"}
//   unregister {workerId} -> {id, action: "allow"}
// and anything else, or anything invalid, -> {id?, action: "deny"}.

import { randomBytes, timingSafeEqual } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { ApprovalDecision } from "./approval.ts";
import type { ApprovalRequestEvent } from "./protocol.ts";

/** The orchestrator's launcher seam: the program it starts for each worker instead of `pi`. */
export const PI_BINARY_ENV = "PI_SUBAGENT_PI_BINARY";
/** The supervisor's socket, for the launcher. */
export const SUPERVISOR_ENV = "PI_SANDBOX_WORKER_SUPERVISOR";
/** The supervisor's capability, for the launcher. */
export const CAPABILITY_ENV = "PI_SANDBOX_WORKER_CAPABILITY";
/** The Node.js the launcher runs on (this process's). */
export const NODE_ENV = "PI_SANDBOX_WORKER_NODE";
/** The variables of the seam, none of which a worker inside its sandbox gets. */
export const SEAM_ENV = [PI_BINARY_ENV, SUPERVISOR_ENV, CAPABILITY_ENV, NODE_ENV] as const;
/** The launcher this package ships. */
export const LAUNCHER = fileURLToPath(new URL("../bin/pi-sandbox-external-worker", import.meta.url));
/** The longest line of the supervisor's protocol (bytes, newline excluded). */
export const MAX_LINE_BYTES = 16 * 1024;
/** The longest request id. */
const MAX_ID_CHARS = 128;
/** The longest worker cwd (characters). */
const MAX_CWD_CHARS = 4096;
/** A worker id: what the launcher draws (16 hex digits), or at most 64 of [A-Za-z0-9_-]. */
const WORKER_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The `agentName` of a worker's approval requests. */
export function workerAgentName(workerId: string): string {
  return `pi-subagents-worker:${workerId}`;
}

/** The warning of a session whose isolation could not be set up. */
export function isolationUnavailableWarning(error: string): string {
  return `pi-sandbox: external worker isolation unavailable; child launches will fail closed: ${error}`;
}

/** Why a worker launch (or a `subagent` tool call) is refused. */
export function hostLaunchRefusal(failure?: string): string {
  return `pi-sandbox: external worker isolation is unavailable; refusing host worker launch${failure ? `: ${failure}` : ""}`;
}

/** What a registered launcher needs to start its worker through serve. */
export type WorkerLaunch = {
  /** The pi-sandbox binary and the arguments after `serve` (`--config FILE`). */
  binary: string;
  serveArgs: string[];
  /** The real Pi: `[node, cli.js]`, the worker's arguments follow. */
  pi: string[];
  /** serve's `scope_key` and `agent_name` for the worker. */
  scopeKey: string;
  agentName: string;
  /** serve's `env_keep`: the variables of the worker's model's key. */
  envKeep: string[];
  /** Variables set for the worker (its Pi's agent directory). */
  env: Record<string, string>;
};

/** A display-only record of FleetView (`pi-subagents/external-runs`). */
export type ExternalRun = { id: string; sessionId: string; source: string; label: string; state: "running"; startedAt: number };

/** What the supervisor uses of `pi-subagents/external-runs` when the host offers it. */
export type ExternalRuns = {
  registerExternalRun(run: ExternalRun): unknown;
  unregisterExternalRun(sessionId: string, id: string): unknown;
};

/** The FleetView record of an isolated worker. */
export const FLEET_LABEL = "isolated pi-subagents worker";
export const FLEET_SOURCE = "pi-sandbox";

/** What the supervisor asks of the Pi session. */
export interface SupervisorHost {
  /** The launch of worker `workerId` in `cwd` with `args` (throws: the register is denied). */
  launch(workerId: string, cwd: string, args: string[]): Promise<WorkerLaunch>;
  /** Decides one approval request of a worker (undefined: nobody answers; the launcher denies). */
  approve(workerId: string, event: ApprovalRequestEvent): Promise<ApprovalDecision | undefined>;
  /** serve closed the worker's question `requestId` without an answer: its dialog closes. */
  settled(workerId: string, requestId: string): void;
  /** The worker has ended (unregistered, or its launcher's connection closed). */
  ended(workerId: string): void;
  /** The Pi session id (FleetView's sessionId). */
  sessionId(): string;
  /** `pi-subagents/external-runs`, when the host offers it. */
  runs(): Promise<ExternalRuns | undefined>;
}

type Message = {
  version?: unknown;
  id?: unknown;
  capability?: unknown;
  type?: unknown;
  workerId?: unknown;
  cwd?: unknown;
  args?: unknown;
  event?: unknown;
  requestId?: unknown;
};

/** The supervisor of one Pi session's external workers. */
export class WorkerSupervisor {
  readonly socketPath: string;
  readonly capability: string;
  private readonly dir: string;
  private readonly server: Server;
  private readonly host: SupervisorHost;
  private readonly seen = new Set<string>();
  /** Registered workers, by id, with their connection. */
  private readonly workers = new Map<string, Socket>();
  private readonly sockets = new Set<Socket>();

  private constructor(dir: string, server: Server, host: SupervisorHost) {
    this.dir = dir;
    this.socketPath = join(dir, "supervisor.sock");
    this.capability = randomBytes(32).toString("hex");
    this.server = server;
    this.host = host;
    server.on("connection", (socket) => this.accept(socket));
  }

  /** Listens on a socket in a new 0700 directory under the temporary directory. */
  static async start(host: SupervisorHost): Promise<WorkerSupervisor> {
    const dir = await mkdtemp(join(tmpdir(), "pi-sandbox-workers-"));
    const server = createServer();
    const supervisor = new WorkerSupervisor(dir, server, host);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(supervisor.socketPath, () => resolve());
      });
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
    server.unref();
    return supervisor;
  }

  /** The variables the launcher needs (set in this process for the orchestrator's children). */
  env(node: string): Record<string, string> {
    return { [PI_BINARY_ENV]: LAUNCHER, [SUPERVISOR_ENV]: this.socketPath, [CAPABILITY_ENV]: this.capability, [NODE_ENV]: node };
  }

  /** The ids of the registered workers. */
  registered(): string[] {
    return [...this.workers.keys()];
  }

  /** Stops listening, drops every connection (their launchers deny and end) and removes the directory. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(this.dir, { recursive: true, force: true });
  }

  private accept(socket: Socket): void {
    this.sockets.add(socket);
    let pending = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (let newline = pending.indexOf(10); newline !== -1; newline = pending.indexOf(10)) {
        const line = pending.subarray(0, newline);
        pending = pending.subarray(newline + 1);
        if (line.length > MAX_LINE_BYTES) {
          this.reply(socket, undefined, { action: "deny" });
          continue;
        }
        void this.onLine(socket, line.toString("utf8"));
      }
      if (pending.length > MAX_LINE_BYTES) {
        // A line that cannot end within the limit: denied, and the connection with it.
        this.reply(socket, undefined, { action: "deny" });
        socket.end();
        pending = Buffer.alloc(0);
      }
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      this.sockets.delete(socket);
      for (const [id, owner] of this.workers) if (owner === socket) void this.unregister(id);
    });
  }

  private reply(socket: Socket, id: string | undefined, body: object): void {
    if (!socket.destroyed) socket.write(`${JSON.stringify({ ...(id !== undefined ? { id } : {}), ...body })}\n`);
  }

  private authentic(message: Message): message is Message & { id: string } {
    if (message.version !== 1 || typeof message.id !== "string") return false;
    if (message.id.length === 0 || message.id.length > MAX_ID_CHARS) return false;
    if (typeof message.capability !== "string") return false;
    const given = Buffer.from(message.capability);
    const expected = Buffer.from(this.capability);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private async onLine(socket: Socket, line: string): Promise<void> {
    let message: Message;
    try {
      message = JSON.parse(line);
    } catch {
      this.reply(socket, undefined, { action: "deny" });
      return;
    }
    if (typeof message !== "object" || message === null || Array.isArray(message)) {
      this.reply(socket, undefined, { action: "deny" });
      return;
    }
    const id = typeof message.id === "string" && message.id.length <= MAX_ID_CHARS ? message.id : undefined;
    // A request id is used once: a replay (even a forged one) is denied.
    if (!this.authentic(message) || this.seen.has(message.id)) {
      this.reply(socket, id, { action: "deny" });
      return;
    }
    this.seen.add(message.id);
    try {
      this.reply(socket, message.id, await this.handle(socket, message));
    } catch (error) {
      // The launcher says why (a session that has ended, no pi-sandbox binary).
      this.reply(socket, message.id, { action: "deny", reason: error instanceof Error ? error.message : String(error) });
    }
  }

  private async handle(socket: Socket, message: Message): Promise<object> {
    const workerId = typeof message.workerId === "string" && WORKER_ID.test(message.workerId) ? message.workerId : undefined;
    if (!workerId) return { action: "deny" };
    switch (message.type) {
      case "register": {
        const cwd = message.cwd;
        if (typeof cwd !== "string" || !isAbsolute(cwd) || cwd.length > MAX_CWD_CHARS || cwd.includes("\0")) return { action: "deny" };
        const args = message.args;
        if (!Array.isArray(args) || !args.every((a) => typeof a === "string")) return { action: "deny" };
        if (this.workers.has(workerId)) return { action: "deny" };
        const launch = await this.host.launch(workerId, cwd, args as string[]);
        this.workers.set(workerId, socket);
        await this.fleet((runs) =>
          runs.registerExternalRun({
            id: workerId,
            sessionId: this.host.sessionId(),
            source: FLEET_SOURCE,
            label: FLEET_LABEL,
            state: "running",
            startedAt: Date.now(),
          }),
        );
        return { action: "allow", launch };
      }
      case "approval": {
        if (this.workers.get(workerId) !== socket) return { action: "deny" };
        const event = message.event as ApprovalRequestEvent | undefined;
        if (typeof event !== "object" || event === null || typeof event.request !== "object" || event.request === null) {
          return { action: "deny" };
        }
        // The worker's name is the supervisor's, whatever the launcher's serve wrote.
        event.request.agentName = workerAgentName(workerId);
        const decision = await this.host.approve(workerId, event);
        return decision ? { action: "decision", decision } : { action: "deny" };
      }
      case "settled":
        if (this.workers.get(workerId) !== socket || typeof message.requestId !== "string") return { action: "deny" };
        this.host.settled(workerId, message.requestId);
        return { action: "allow" };
      case "unregister":
        if (this.workers.get(workerId) !== socket) return { action: "deny" };
        await this.unregister(workerId);
        return { action: "allow" };
      default:
        return { action: "deny" };
    }
  }

  private async unregister(workerId: string): Promise<void> {
    if (!this.workers.delete(workerId)) return;
    this.host.ended(workerId);
    await this.fleet((runs) => runs.unregisterExternalRun(this.host.sessionId(), workerId));
  }

  /** FleetView is observability only: its absence or failure changes nothing. */
  private async fleet(use: (runs: ExternalRuns) => unknown): Promise<void> {
    try {
      const runs = await this.host.runs();
      if (runs) use(runs);
    } catch {
      // not offered, or it refused the record
    }
  }
}

/** FleetView's module in pi-subagents (its `external-runs` subpath export). */
export const EXTERNAL_RUNS_MODULE: string = "pi-subagents/external-runs";

/** `pi-subagents/external-runs` when this Pi process can import it (FleetView), else undefined. */
export async function importExternalRuns(): Promise<ExternalRuns | undefined> {
  try {
    const runs = (await import(EXTERNAL_RUNS_MODULE)) as Partial<ExternalRuns>;
    return typeof runs.registerExternalRun === "function" && typeof runs.unregisterExternalRun === "function"
      ? (runs as ExternalRuns)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Why isolation cannot be set up in `env` now, or undefined. */
export function seamProblem(env: NodeJS.ProcessEnv, launcher: string): string | undefined {
  if (env[PI_BINARY_ENV]?.trim()) {
    return `${PI_BINARY_ENV} is already set (${env[PI_BINARY_ENV]}); pi-sandbox will not wrap another launcher`;
  }
  if (!existsSync(launcher)) return `the launcher ${launcher} is missing`;
  return undefined;
}

/** The largest file inlined into a worker's arguments (bytes; an argument may hold 128 KiB, execve(2)). */
export const MAX_INLINE_BYTES = 100 * 1024;

/** The text of `path` when it is a regular file outside `cwd` of at most MAX_INLINE_BYTES, else undefined. */
function hostFileText(path: string, cwd: string): string | undefined {
  const inside = relative(cwd, path);
  if (inside === "" || (!inside.startsWith("..") && !isAbsolute(inside))) return undefined;
  try {
    const stat = statSync(path);
    if (!stat.isFile() || stat.size > MAX_INLINE_BYTES) return undefined;
    return readFileSync(path, "utf8").replace(/^\uFEFF/, "");
  } catch {
    return undefined;
  }
}

/**
 * The worker's Pi arguments with the files the orchestrator wrote for it on the host inlined:
 * the text of `--system-prompt FILE` and `--append-system-prompt FILE` (Pi takes text or a
 * file there, and would take the path of a file it cannot see as the prompt itself), and of an
 * `@FILE` message (Pi's file argument). Only regular files outside `cwd` (the sandbox sees the
 * workspace, not the host's temporary directory) of at most MAX_INLINE_BYTES; an `@FILE` whose
 * text starts with `-` or `@`, which Pi would take for an option or a file, stays as it is.
 */
export function inlineHostFiles(args: readonly string[], cwd: string): string[] {
  const out = [...args];
  for (let i = 0; i < out.length; i++) {
    const arg = out[i]!;
    if ((arg === "--system-prompt" || arg === "--append-system-prompt") && i + 1 < out.length) {
      const text = isAbsolute(out[i + 1]!) ? hostFileText(out[i + 1]!, cwd) : undefined;
      if (text !== undefined) out[i + 1] = text;
      i++;
    } else if (arg.startsWith("@") && arg.length > 1) {
      const text = hostFileText(resolve(cwd, arg.slice(1)), cwd);
      if (text !== undefined && !/^[-@]/.test(text)) out[i] = text;
    }
  }
  return out;
}
