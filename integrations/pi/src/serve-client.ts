// ServeClient: one `pi-sandbox serve` child process and the commands running in it.
//
// Framing follows docs/protocol.md: one JSON object per line, split on LF only (never
// readline, which also splits on U+2028/U+2029), a CR before the LF stripped. stdout is
// protocol; serve's stderr is diagnostics, of which the last few KiB are kept to explain
// a failure.

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import {
  MAX_RESPONSE_REASON_BYTES,
  PROTOCOL_VERSION,
  type ApprovalChoice,
  type ApprovalRequestEvent,
  type ApprovalSettledEvent,
  type ApprovalSource,
  type DeniedEvent,
  type Event,
  type ExecRequest,
  type ExitEvent,
  type OverrideEvent,
  type OverrideKind,
  type OverrideRequest,
  type RecentDenial,
  type RecentDenialsEvent,
  type RecentDenialsRequest,
  type Request,
} from "./protocol.ts";

/** How long `hello` may take before the server counts as not started (milliseconds). */
export const DEFAULT_HELLO_TIMEOUT_MS = 15_000;
/** How long `shutdown` may take before serve is killed (milliseconds). */
const SHUTDOWN_GRACE_MS = 5_000;
/** How much of serve's stderr is kept for error messages (bytes). */
const STDERR_TAIL_BYTES = 4096;

export type ServeOptions = {
  /** Absolute path of the pi-sandbox binary. */
  binary: string;
  /** Arguments after `serve` (e.g. `--config FILE`). */
  args?: readonly string[];
  /** serve's own environment; default: this process's. */
  env?: NodeJS.ProcessEnv;
  helloTimeoutMs?: number;
};

/** What one command asks for (the fields of an `exec` request other than `type`/`id`). */
export type ExecSpec = ExecRequest extends infer R ? (R extends ExecRequest ? Omit<R, "type" | "id"> : never) : never;

/** The largest piece of stdin sent in one `stdin` request (bytes before base64; a line is at most 16 MiB). */
const STDIN_CHUNK_BYTES = 4 * 1024 * 1024;

export type ExecHandlers = {
  onOutput(stream: "stdout" | "stderr", data: Buffer): void;
  /** An approval request of this command; answer with ServeClient.respond(). */
  onApprovalRequest(event: ApprovalRequestEvent): void;
  onDenied?(event: DeniedEvent): void;
  /** serve closed one of this command's open questions itself: close its dialog, answer nothing. */
  onApprovalSettled?(event: ApprovalSettledEvent): void;
};

/** An answer to one approval request: the choice, who decided, and why. */
export type ApprovalAnswer = { choice: ApprovalChoice; source: ApprovalSource; reason?: string };

/** How a command ended: the `exit` event. */
export type ExecOutcome = ExitEvent;

/** A command started by ServeClient.start(): its id, its end, its stdin. */
export type RunningExec = {
  id: string;
  outcome: Promise<ExecOutcome>;
  /** Writes to the command's stdin (`stdin: "pipe"` only; bytes travel as base64). */
  write(data: string | Buffer): void;
  /** Closes the command's stdin. */
  closeStdin(): void;
};

type RunningCommand = {
  handlers: ExecHandlers;
  started: boolean;
  resolve(outcome: ExecOutcome): void;
  reject(error: Error): void;
};

/**
 * `text` cut to at most `maxBytes` bytes of UTF-8, never inside a character (a surrogate
 * pair stays whole).
 */
export function clipUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, "utf8") <= maxBytes) return text;
  let bytes = 0;
  let end = 0;
  for (const character of text) {
    const size = Buffer.byteLength(character, "utf8");
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += character.length;
  }
  return text.slice(0, end);
}

/** Splits a byte stream into LF-terminated lines (CR before LF stripped). */
export class LineSplitter {
  private pending: Buffer[] = [];
  private readonly onLine: (line: string) => void;

  constructor(onLine: (line: string) => void) {
    this.onLine = onLine;
  }

  push(chunk: Buffer): void {
    let start = 0;
    for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
      this.pending.push(chunk.subarray(start, newline));
      let line = Buffer.concat(this.pending);
      this.pending = [];
      if (line.length > 0 && line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1);
      this.onLine(line.toString("utf8"));
      start = newline + 1;
    }
    if (start < chunk.length) this.pending.push(chunk.subarray(start));
  }
}

export class ServeClient {
  /** The `server` string of serve's hello (e.g. `pi-sandbox 0.2.0`). */
  server = "";
  /** The `sandbox` of serve's hello (`linux`, `macos`); `linux` for an older serve, which had no other. */
  sandbox = "linux";
  private readonly running = new Map<string, RunningCommand>();
  private nextId = 1;
  private stderrTail = "";
  private exited: Error | undefined;
  private readonly exitedPromise: Promise<void>;
  private helloWaiter: { resolve(): void; reject(error: Error): void } | undefined;
  /** Session requests waiting for their answer, in the order sent. */
  private readonly controls: Array<{ type: string; resolve(event: Event): void; reject(error: Error): void }> = [];
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly binary: string;

  private constructor(child: ChildProcessWithoutNullStreams, binary: string) {
    this.child = child;
    this.binary = binary;
    let markExited!: () => void;
    this.exitedPromise = new Promise((resolve) => (markExited = resolve));
    const lines = new LineSplitter((line) => this.onLine(line));
    child.stdout.on("data", (chunk: Buffer) => lines.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL_BYTES);
    });
    // A write after serve died fails with EPIPE; the close handler below reports that.
    child.stdin.on("error", () => {});
    child.on("error", (error) => this.fail(`${this.binary} serve could not be started: ${error.message}`));
    child.on("close", (code, signal) => {
      const how = signal ? `signal ${signal}` : `status ${code}`;
      this.fail(`${this.binary} serve exited (${how})${this.stderrSuffix()}`);
      markExited();
    });
  }

  /**
   * Starts `<binary> serve [args]` and exchanges `hello` (protocol version 1).
   * Errors: the binary cannot be spawned, serve exits or answers with an `error`, or no
   * `hello` arrives within helloTimeoutMs. The message says which, with serve's stderr.
   */
  static async start(options: ServeOptions): Promise<ServeClient> {
    const child = spawn(options.binary, ["serve", ...(options.args ?? [])], {
      env: options.env ?? process.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const client = new ServeClient(child, options.binary);
    const timeoutMs = options.helloTimeoutMs ?? DEFAULT_HELLO_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        client.helloWaiter = { resolve, reject };
        if (client.exited) reject(client.exited);
        timer = setTimeout(
          () => reject(new Error(`${options.binary} serve did not answer hello within ${timeoutMs} ms${client.stderrSuffix()}`)),
          timeoutMs,
        );
        client.send({ type: "hello", version: PROTOCOL_VERSION });
      });
    } catch (error) {
      client.kill();
      throw error;
    } finally {
      clearTimeout(timer);
      client.helloWaiter = undefined;
    }
    client.updateRef();
    return client;
  }

  /** False once serve has exited or failed. */
  get alive(): boolean {
    return this.exited === undefined;
  }

  /**
   * Runs one command. Resolves with its `exit` event; rejects when serve refuses the
   * request (an `error` event for it) or dies. `signal` aborting sends an `abort` request.
   * `input`: the command's whole stdin (needs `stdin: "pipe"`), sent at once and closed.
   */
  exec(spec: ExecSpec, handlers: ExecHandlers, signal?: AbortSignal, input?: Buffer): Promise<ExecOutcome> {
    const running = this.start(spec, handlers, signal);
    if (input !== undefined) {
      running.write(input);
      running.closeStdin();
    }
    return running.outcome;
  }

  /** As exec(), with the command's id and stdin (for `stdin: "pipe"`). */
  start(spec: ExecSpec, handlers: ExecHandlers, signal?: AbortSignal): RunningExec {
    const id = `c${this.nextId++}`;
    const write = (data: string | Buffer) => {
      if (!this.running.has(id)) return;
      const bytes = Buffer.from(data);
      for (let at = 0; at < bytes.length; at += STDIN_CHUNK_BYTES) {
        this.send({ type: "stdin", id, data: bytes.subarray(at, at + STDIN_CHUNK_BYTES).toString("base64"), encoding: "base64" });
      }
    };
    const closeStdin = () => {
      if (this.running.has(id)) this.send({ type: "stdin_close", id });
    };
    return { id, outcome: this.run(id, spec, handlers, signal), write, closeStdin };
  }

  private run(id: string, spec: ExecSpec, handlers: ExecHandlers, signal?: AbortSignal): Promise<ExecOutcome> {
    if (this.exited) return Promise.reject(this.exited);
    const onAbort = () => this.send({ type: "abort", id });
    const outcome = new Promise<ExecOutcome>((resolve, reject) => {
      this.running.set(id, { handlers, started: false, resolve, reject });
    });
    this.updateRef();
    this.send({ type: "exec", id, ...spec } as Request);
    if (signal) {
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    }
    return outcome.finally(() => {
      signal?.removeEventListener("abort", onAbort);
      this.running.delete(id);
      this.updateRef();
    });
  }

  /**
   * Answers one approval request of command `id` with its true source and reason (the
   * reason cut to MAX_RESPONSE_REASON_BYTES). Ignored once the command has ended.
   */
  respond(id: string, requestId: string, answer: ApprovalAnswer): void {
    if (!this.running.has(id)) return;
    this.send({
      type: "approval_response",
      id,
      request_id: requestId,
      choice: answer.choice,
      source: answer.source,
      ...(answer.reason ? { reason: clipUtf8(answer.reason, MAX_RESPONSE_REASON_BYTES) } : {}),
    });
  }

  /**
   * The automatic denials of this serve session the user may override now, newest first
   * (`recent_denials`). Rejects when serve refuses the request or dies.
   */
  recentDenials(): Promise<RecentDenial[]> {
    return this.control({ type: "recent_denials" }).then((event) => (event as RecentDenialsEvent).denials ?? []);
  }

  /**
   * Authorises one retry or one break-glass allow of the recent denial `requestHash`
   * (`override`). Resolves with the seconds it stays usable; rejects with serve's reason.
   */
  override(requestHash: string, kind: OverrideKind): Promise<number> {
    return this.control({ type: "override", request_hash: requestHash, kind }).then((event) => (event as OverrideEvent).expires_in_s);
  }

  /** Sends `shutdown`, closes stdin and waits for serve to exit (killed after a grace period). */
  async shutdown(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.send({ type: "shutdown" });
      this.child.stdin.end();
      const timer = setTimeout(() => this.kill(), SHUTDOWN_GRACE_MS);
      await this.exitedPromise;
      clearTimeout(timer);
    }
  }

  private kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
  }

  /** Sends a session request answered by an event of its own type, or by an `error` without an id. */
  private control(request: RecentDenialsRequest | OverrideRequest): Promise<Event> {
    if (this.exited) return Promise.reject(this.exited);
    return new Promise<Event>((resolve, reject) => {
      this.controls.push({ type: request.type, resolve, reject });
      this.updateRef();
      this.send(request);
    }).finally(() => this.updateRef());
  }

  private send(request: Request): void {
    if (this.exited || !this.child.stdin.writable) return;
    this.child.stdin.write(`${JSON.stringify(request)}\n`);
  }

  private stderrSuffix(): string {
    const tail = this.stderrTail.trim();
    return tail ? `: ${tail}` : "";
  }

  /** Keeps Pi's event loop alive only while commands or requests run: an idle serve never holds Pi open. */
  private updateRef(): void {
    const busy = this.running.size > 0 || this.helloWaiter !== undefined || this.controls.length > 0;
    for (const handle of [this.child, this.child.stdout, this.child.stderr, this.child.stdin] as Array<{
      ref?(): void;
      unref?(): void;
    }>) {
      if (busy) handle.ref?.();
      else handle.unref?.();
    }
  }

  private fail(message: string): void {
    if (this.exited) return;
    this.exited = new Error(message);
    this.helloWaiter?.reject(this.exited);
    for (const command of this.running.values()) command.reject(this.exited);
    this.running.clear();
    for (const waiter of this.controls.splice(0)) waiter.reject(this.exited);
  }

  private onLine(line: string): void {
    if (line.trim() === "") return;
    let event: Event;
    try {
      event = JSON.parse(line) as Event;
    } catch {
      this.stderrTail = `${this.stderrTail}\n(not JSON on serve's stdout: ${line.slice(0, 200)})`.slice(-STDERR_TAIL_BYTES);
      return;
    }
    if (typeof event !== "object" || event === null) return;
    this.dispatch(event);
  }

  private dispatch(event: Event): void {
    switch (event.type) {
      case "hello":
        if (event.version !== PROTOCOL_VERSION) {
          this.helloWaiter?.reject(new Error(`${this.binary} serve speaks protocol version ${event.version}, not ${PROTOCOL_VERSION}`));
          return;
        }
        this.server = typeof event.server === "string" ? event.server : "";
        this.sandbox = typeof event.sandbox === "string" ? event.sandbox : "linux";
        this.helloWaiter?.resolve();
        return;
      case "error":
        if (event.id === undefined && this.controls.length > 0) {
          this.controls.shift()!.reject(new Error(event.message));
          return;
        }
        this.onError(event.message, event.id);
        return;
      case "recent_denials":
      case "override": {
        const waiter = this.controls.findIndex((c) => c.type === event.type);
        if (waiter !== -1) this.controls.splice(waiter, 1)[0]!.resolve(event);
        return;
      }
      default:
        break;
    }
    const command = typeof event.id === "string" ? this.running.get(event.id) : undefined;
    if (!command) return;
    switch (event.type) {
      case "started":
        command.started = true;
        return;
      case "output":
        command.started = true;
        command.handlers.onOutput(
          event.stream === "stderr" ? "stderr" : "stdout",
          Buffer.from(event.data ?? "", event.encoding === "base64" ? "base64" : "utf8"),
        );
        return;
      case "approval_request":
        command.handlers.onApprovalRequest(event);
        return;
      case "denied":
        command.handlers.onDenied?.(event);
        return;
      case "approval_settled":
        command.handlers.onApprovalSettled?.(event);
        return;
      case "exit":
        command.resolve(event);
        return;
    }
  }

  private onError(message: string, id: string | undefined): void {
    const text = typeof message === "string" ? message : JSON.stringify(message);
    if (this.helloWaiter) {
      this.helloWaiter.reject(new Error(`${this.binary} serve refused hello: ${text}`));
      return;
    }
    // An error about an exec that has not started means serve did not take it; any other
    // error (a late abort, an answer to a request that has gone) changes nothing.
    const command = id !== undefined ? this.running.get(id) : undefined;
    if (command && !command.started) command.reject(new Error(`pi-sandbox serve refused the command: ${text}`));
    else this.stderrTail = `${this.stderrTail}\n(serve error: ${text})`.slice(-STDERR_TAIL_BYTES);
  }
}
