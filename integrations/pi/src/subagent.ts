// Process-backed subagents (integrations/pi/README.md, "Subagents"; docs/compatibility.md,
// C81): each worker is `pi --mode rpc
// --no-session` in its own sandbox. This module is the workers' lifecycle, their RPC framing
// and the limits, over a small WorkerLauncher interface (index.ts launches through
// `pi-sandbox serve`; the tests launch a scripted worker), so that it runs without Pi and
// without a sandbox.

import { LineSplitter } from "./serve-client.ts";

/** Live sessions at most (README, "Subagents"). */
export const DEFAULT_MAX_SESSIONS = 4;
/** Nesting depth at most (README, "Subagents"). */
export const DEFAULT_MAX_DEPTH = 3;
/** How long one RPC request may wait for its response (milliseconds). */
export const DEFAULT_RPC_TIMEOUT_MS = 30_000;
/** The variable that carries a worker's depth (README, "Subagents"). */
export const DEPTH_ENV = "PI_SANDBOX_SUBAGENT_DEPTH";
/** How much of a worker's stderr is kept for error messages (bytes). */
const STDERR_TAIL_BYTES = 4096;
/** How many of the sandbox's own lines (refusals) are kept per result. */
const MAX_SANDBOX_LINES = 20;

/** `starting`, `running` and `idle` are live (count against the limit); the others are final. */
export type SubagentState = "starting" | "running" | "idle" | "failed" | "stopped";

/** What the launcher is asked to start: one worker, with its argv and environment. */
export type WorkerSpec = {
  sessionId: string;
  depth: number;
  /** The task as its approvals name it: `process-backed subagent: <task>` (README, "Subagents"). */
  approvalCommand: string;
  /** `subagent` at depth 1, `nested-subagent` deeper (README, "Subagents"). */
  agentName: "subagent" | "nested-subagent";
  /** Extra arguments after `--mode rpc --no-session` (`--model M`, `--tools a,b`). */
  args: string[];
  /** The model the call named (`provider/id`, as in `--model`), absent for the parent's. */
  model?: string;
  /** Variables set for the worker besides the launcher's own ($PI_SANDBOX_SUBAGENT_DEPTH). */
  env: Record<string, string>;
};

/** A running worker as the manager sees it: a byte pipe in each direction and its end. */
export interface WorkerProcess {
  /** Writes bytes to the worker's stdin. */
  write(data: string): void;
  /** Closes the worker's stdin. */
  closeStdin(): void;
  /** Kills the worker and everything it started (its whole sandbox). */
  kill(): void;
}

/** Callbacks a launcher calls for one worker. */
export type WorkerEvents = {
  stdout(chunk: Buffer): void;
  stderr(chunk: Buffer): void;
  /**
   * The worker's sandbox refused something (serve's `denied` event, a channel the worker's
   * commands cannot write to): one line for the parent, e.g. `pi-sandbox: the worker's sandbox
   * refused network e.example:443: Denied by the user.`.
   */
  denied?(line: string): void;
  /** The worker ended: its exit code (128 + signal for a signal), or why it could not start. */
  exit(code: number | undefined, error?: string): void;
};

/** Starts workers. The manager never spawns a process itself. */
export interface WorkerLauncher {
  launch(spec: WorkerSpec, events: WorkerEvents): WorkerProcess;
}

export type SubagentManagerOptions = {
  launcher: WorkerLauncher;
  maxSessions?: number;
  maxDepth?: number;
  rpcTimeoutMs?: number;
  /** This process's depth: $PI_SANDBOX_SUBAGENT_DEPTH (absent or not a number: 0). */
  depth?: number;
  /** Arguments every worker gets after `--mode rpc --no-session` (e.g. `--tools a,b`). */
  workerArgs?: () => string[];
  /** Variables every worker gets (e.g. its model's API key). */
  workerEnv?: () => Record<string, string>;
};

/** What `status` shows of one session. */
export type SubagentInfo = {
  id: string;
  state: SubagentState;
  depth: number;
  task: string;
  parentId?: string;
  model?: string;
  text?: string;
  error?: string;
};

type Pending = { type: string; resolve(): void; reject(error: Error): void; timer: NodeJS.Timeout };
type Waiter = { target: number; resolve(): void; reject(error: Error): void };

/**
 * The depth this process runs at, from its environment (`PI_SANDBOX_SUBAGENT_DEPTH`): absent or empty
 * is 0. Throws for anything but a whole number from 0: a depth that cannot be read refuses
 * subagents rather than starting over at 0.
 */
export function depthFromEnv(env: NodeJS.ProcessEnv): number {
  const value = (env[DEPTH_ENV] ?? "").trim();
  if (value === "") return 0;
  if (!/^\d+$/.test(value)) throw new Error(`${DEPTH_ENV}=${value} is not a nesting depth (a whole number from 0); subagents are refused`);
  return Number(value);
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, not ${value}`);
  return value;
}

/** The joined, trimmed text parts of an assistant message. */
export function assistantText(message: unknown): string | undefined {
  const m = message as { role?: unknown; content?: unknown } | undefined;
  if (m?.role !== "assistant") return undefined;
  if (typeof m.content === "string") return m.content.trim();
  if (!Array.isArray(m.content)) return "";
  return m.content
    .filter((part: { type?: unknown }) => part?.type === "text")
    .map((part: { text?: unknown }) => (typeof part.text === "string" ? part.text : ""))
    .join("")
    .trim();
}

/** One worker: its RPC, its state, its last assistant text. */
export class SubagentSession {
  readonly id: string;
  readonly depth: number;
  readonly task: string;
  readonly parentId: string | undefined;
  readonly model: string | undefined;
  state: SubagentState = "starting";
  /** The last assistant message's text. */
  text = "";
  /** How many times the worker settled (`agent_settled`). */
  settles = 0;
  /** The settle count that the last message sent ends with. */
  private expected = 0;
  /** Why the session failed, or that it was stopped. */
  error: Error | undefined;
  /**
   * What the worker's sandbox refused since the last result (WorkerEvents.denied): serve's own
   * lines reach the worker's stderr, where its model does not see them, so the parent's result
   * carries them. Each once, at most MAX_SANDBOX_LINES.
   */
  private sandboxLines: string[] = [];
  /** The error of the worker's last assistant message (`stopReason: "error"`), if any. */
  workerError: string | undefined;
  /** Called with each assistant text as it arrives (tool updates). */
  onText: ((text: string) => void) | undefined;
  private process: WorkerProcess | undefined;
  private seq = 0;
  private stderrTail = "";
  private readonly pending = new Map<string, Pending>();
  private waiters: Waiter[] = [];
  private readonly rpcTimeoutMs: number;
  private readonly exited: Promise<void>;
  private markExited!: () => void;

  constructor(fields: { id: string; depth: number; task: string; parentId?: string; model?: string }, rpcTimeoutMs: number) {
    this.id = fields.id;
    this.depth = fields.depth;
    this.task = fields.task;
    this.parentId = fields.parentId;
    this.model = fields.model;
    this.rpcTimeoutMs = rpcTimeoutMs;
    this.exited = new Promise((resolve) => (this.markExited = resolve));
  }

  get live(): boolean {
    return this.state === "starting" || this.state === "running" || this.state === "idle";
  }

  info(): SubagentInfo {
    return {
      id: this.id,
      state: this.state,
      depth: this.depth,
      task: this.task,
      ...(this.parentId ? { parentId: this.parentId } : {}),
      ...(this.model ? { model: this.model } : {}),
      ...(this.text ? { text: this.text } : {}),
      ...(this.error ? { error: this.error.message } : {}),
    };
  }

  /** Launches the worker; then `get_state`, so that a worker that cannot answer fails its start. */
  async start(launcher: WorkerLauncher, spec: WorkerSpec): Promise<void> {
    const lines = new LineSplitter((line) => this.onLine(line));
    this.process = launcher.launch(spec, {
      stdout: (chunk) => lines.push(chunk),
      stderr: (chunk) => {
        this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL_BYTES);
      },
      denied: (line) => {
        if (!this.sandboxLines.includes(line) && this.sandboxLines.length < MAX_SANDBOX_LINES) this.sandboxLines.push(line);
      },
      exit: (code, error) => this.onExit(code, error),
    });
    await this.rpc("get_state");
    if (this.state === "starting") this.state = "idle";
  }

  /** Sends `prompt` (idle) or `follow_up` (running); returns the settle count that ends it. */
  async send(message: string): Promise<number> {
    this.check();
    // A message while a run is under way (sent, or started) joins it as a follow-up; the run
    // it starts or joins ends with the next settle.
    const busy = this.state === "running" || this.expected > this.settles;
    const target = this.settles + 1;
    this.expected = Math.max(this.expected, target);
    await this.rpc(busy ? "follow_up" : "prompt", message);
    // Accepted: the run is under way until it settles (agent_start may still be on its way).
    if (this.live && this.settles < target) this.state = "running";
    return target;
  }

  /** Resolves once the worker has settled `target` times; rejects when it fails or stops. */
  settled(target: number): Promise<void> {
    if (this.error) return Promise.reject(this.error);
    if (this.settles >= target) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ target, resolve, reject }));
  }

  /** The settle count that the current run ends with (the current count when idle). */
  currentTarget(): number {
    return Math.max(this.expected, this.state === "running" ? this.settles + 1 : this.settles);
  }

  /** Asks the worker to abort its run (RPC `abort`). */
  async abort(): Promise<void> {
    if (this.live) await this.rpc("abort");
  }

  /**
   * Stops the session: marks it stopped, kills the worker's whole
   * sandbox, closes its stdin, rejects every open RPC and waiter. Resolves when the worker
   * has ended.
   */
  async stop(): Promise<void> {
    if (this.live) {
      this.state = "stopped";
      this.error = new Error(`subagent session ${this.id} is stopped`);
      this.rejectAll(new Error(`subagent session ${this.id} stopped`));
      this.process?.closeStdin();
      this.process?.kill();
    }
    if (this.process) await this.exited;
  }

  /** The sandbox's lines since the last call, and forgets them. */
  takeSandboxLines(): string[] {
    return this.sandboxLines.splice(0);
  }

  private check(): void {
    if (this.error) throw this.error;
  }

  private rpc(type: "get_state" | "prompt" | "follow_up" | "abort", message?: string): Promise<void> {
    this.check();
    const id = `${this.id}:${++this.seq}`;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`timeout waiting for subagent RPC ${type}: ${this.stderrTail.trim()}`));
      }, this.rpcTimeoutMs);
      this.pending.set(id, { type, resolve, reject, timer });
      this.process?.write(`${JSON.stringify({ id, type, ...(message !== undefined ? { message } : {}) })}\n`);
    }).finally(() => {
      const pending = this.pending.get(id);
      if (pending) clearTimeout(pending.timer);
      this.pending.delete(id);
    });
  }

  private onLine(line: string): void {
    let record: { type?: unknown; id?: unknown; success?: unknown; error?: unknown; message?: unknown };
    try {
      record = JSON.parse(line);
    } catch {
      return; // not JSON: ignored
    }
    if (typeof record !== "object" || record === null) return;
    switch (record.type) {
      case "response":
        this.onResponse(record);
        return;
      case "agent_start":
        if (this.live) this.state = "running";
        return;
      case "message_end": {
        const text = assistantText(record.message);
        if (text === undefined) return;
        this.text = text;
        const { stopReason, errorMessage } = record.message as { stopReason?: unknown; errorMessage?: unknown };
        this.workerError = stopReason === "error" && typeof errorMessage === "string" ? errorMessage : undefined;
        this.onText?.(text);
        return;
      }
      case "agent_settled":
        if (this.state === "running") this.state = "idle";
        this.settles++;
        this.waiters = this.waiters.filter((w) => {
          if (this.settles < w.target) return true;
          w.resolve();
          return false;
        });
        return;
    }
  }

  private onResponse(record: { id?: unknown; success?: unknown; error?: unknown }): void {
    if (typeof record.id !== "string") return;
    const pending = this.pending.get(record.id);
    if (!pending) return;
    clearTimeout(pending.timer);
    this.pending.delete(record.id);
    if (record.success === true) {
      pending.resolve();
      return;
    }
    pending.reject(
      new Error(typeof record.error === "string" && record.error ? record.error : `subagent RPC ${pending.type} failed`),
    );
  }

  private onExit(code: number | undefined, error?: string): void {
    if (this.live) {
      this.state = "failed";
      const why = error ?? `${code ?? "unknown"}: ${this.stderrTail.trim()}`;
      this.error = new Error(`subagent session ${this.id} exited with ${why}`);
      this.rejectAll(this.error);
    }
    this.markExited();
  }

  private rejectAll(error: Error): void {
    for (const pending of this.pending.values()) {
      clearTimeout(pending.timer);
      pending.reject(error);
    }
    this.pending.clear();
    for (const waiter of this.waiters) waiter.reject(error);
    this.waiters = [];
  }
}

/** The sessions of one Pi session, their limits and their ids. */
export class SubagentManager {
  private readonly launcher: WorkerLauncher;
  private readonly maxSessions: number;
  private readonly maxDepth: number;
  private readonly rpcTimeoutMs: number;
  private readonly depth: number;
  private readonly workerArgs: () => string[];
  private readonly workerEnv: () => Record<string, string>;
  private readonly sessions = new Map<string, SubagentSession>();
  private nextId = 1;

  /** Throws when a limit is not a positive integer. */
  constructor(options: SubagentManagerOptions) {
    this.launcher = options.launcher;
    this.maxSessions = positiveInteger("maxSessions", options.maxSessions ?? DEFAULT_MAX_SESSIONS);
    this.maxDepth = positiveInteger("maxDepth", options.maxDepth ?? DEFAULT_MAX_DEPTH);
    this.rpcTimeoutMs = positiveInteger("rpcTimeoutMs", options.rpcTimeoutMs ?? DEFAULT_RPC_TIMEOUT_MS);
    this.depth = options.depth ?? 0;
    this.workerArgs = options.workerArgs ?? (() => []);
    this.workerEnv = options.workerEnv ?? (() => ({}));
  }

  /**
   * Starts a worker and waits until it is idle. Depth: this process's + 1, or the parent
   * session's + 1 for a handoff. Throws the limits' texts (README, "Subagents");
   * a failure while starting removes and stops the session. `approvalTask`: the task as its
   * approvals name it (a handoff's own task, not the previous result before it); default `task`.
   */
  async start(fields: { task: string; model?: string; parentId?: string; approvalTask?: string }): Promise<SubagentSession> {
    const parent = fields.parentId !== undefined ? this.get(fields.parentId) : undefined;
    const depth = (parent ? parent.depth : this.depth) + 1;
    if (depth > this.maxDepth) throw new Error(`subagent nesting depth limit reached (${this.maxDepth})`);
    const live = [...this.sessions.values()].filter((s) => s.live).length;
    if (live >= this.maxSessions) throw new Error(`subagent concurrency limit reached (${this.maxSessions})`);
    const id = `subagent-${this.nextId++}`;
    const session = new SubagentSession(
      { id, depth, task: fields.task, ...(parent ? { parentId: parent.id } : {}), ...(fields.model ? { model: fields.model } : {}) },
      this.rpcTimeoutMs,
    );
    this.sessions.set(id, session);
    const args = [...(fields.model ? ["--model", fields.model] : []), ...this.workerArgs()];
    try {
      await session.start(this.launcher, {
        sessionId: id,
        depth,
        approvalCommand: `process-backed subagent: ${fields.approvalTask ?? fields.task}`,
        agentName: depth > 1 ? "nested-subagent" : "subagent",
        args,
        ...(fields.model ? { model: fields.model } : {}),
        env: { ...this.workerEnv(), [DEPTH_ENV]: String(depth) },
      });
    } catch (error) {
      this.sessions.delete(id);
      await session.stop();
      throw error;
    }
    return session;
  }

  /** The session `id`; throws `unknown subagent session: <id>`. */
  get(id: string): SubagentSession {
    const session = this.sessions.get(id);
    if (!session) throw new Error(`unknown subagent session: ${id}`);
    return session;
  }

  /** Every session's info, in start order. */
  status(): SubagentInfo[] {
    return [...this.sessions.values()].map((s) => s.info());
  }

  /** Stops `id` and forgets it. */
  async stop(id: string): Promise<void> {
    const session = this.get(id);
    await session.stop();
    this.sessions.delete(id);
  }

  /** Stops and forgets `id` if it is still known (a foreground start's end). */
  async remove(id: string): Promise<void> {
    const session = this.sessions.get(id);
    this.sessions.delete(id);
    await session?.stop();
  }

  /** Stops every session (session shutdown): every worker's sandbox is killed and removed. */
  async stopAll(): Promise<void> {
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(sessions.map((s) => s.stop()));
  }
}
