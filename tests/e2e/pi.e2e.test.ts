// End to end: the real `pi` (from integrations/pi/node_modules) with the pi-sandbox
// extension and the real pi-sandbox binary ($PI_SANDBOX_BINARY). The model is Pi's
// scripted (faux) provider, registered by tests/e2e/faux-model.ts: each prompt is the
// JSON arguments of one `bash` tool call. Every test has its own scratch HOME, workspace
// and binary link, and checks that nothing of it is left running before removing it.
// Run by tests/e2e/run.
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "../..");
const EXTENSION = join(ROOT, "integrations/pi");
const PI = join(EXTENSION, "node_modules/.bin/pi");
const FAUX = join(HERE, "faux-model.ts");
const BROKER = join(HERE, "fake-broker.ts");
const MODEL = "e2e-faux/scripted";
const WAIT_MS = 90_000;

const ENABLED = "pi-sandbox enabled: Linux Sandbox Runtime with static filesystem policy and per-connection network review";
const BUILTIN = "pi-sandbox subagent provider: builtin; worker process trees use the outer Sandbox Runtime sandbox";
const FILE_TOOLS = "pi-sandbox file tools: sandboxed; read, write, edit and ls obey the sandbox's policy";
const HOST_WARNING = "Warning: this command will run on the host outside the OS sandbox.";
const ALLOW_ONCE = "Allow this exact operation once";
const DENIED_BY_USER = "Denied by the user.";
const NO_HUMAN = "Approval needs a human, and none could be asked (Pi has no interactive UI in this mode).";
const BROKER_DENIES = "e2e broker: this command is not allowed";
const REVIEWER_DENIES = "e2e reviewer: not this host";
const REVIEWER_ALLOWS = "e2e reviewer: the user vouches for it";
const REVIEWER_CRITICAL = "e2e reviewer: this would send the workspace away";
/** The recovery hints after an automatic denial (docs/approvals.md, "After a wrong denial"). */
const RETRY_HINT = "Use /auto-review-approve for one exact retry.";
const BREAK_GLASS_HINT = "Use /auto-review-break-glass for one exact retry.";
const HARD_DENY_HINT = "This local safety denial cannot be overridden.";
const BREAK_GLASS_REASON = "Allowed once by the user's break-glass confirmation.";
/** A name that is never looked up: the questions about it go through a parent proxy. */
const HOST = "e2e.pi-sandbox.example";
const CURL_403 = "curl: (56) CONNECT tunnel failed, response 403";
/** The body of the proxy's 403 to a plain HTTP request, which `curl -sS` prints (exit 0). */
const CURL_PROXY_403 = "Connection blocked by network allowlist";
/** serve's hard deny of `curl -k` (compatibility C77). */
const HARD_DENY_CURL_K = "Hard deny (transport-security-weakening): `curl -k` turns off TLS certificate verification.";

/** The four choices of a network question, in serve's order (Deny first). */
function networkChoices(destination: string): string[] {
  return ["Deny", ALLOW_ONCE, `Allow ${destination} for the rest of this command`, `Allow ${destination} for this session`];
}

/**
 * Pi's (and so the command's) environment with `parent` as the only parent proxy, for
 * https and http alike. Through a parent proxy serve does not resolve the destination
 * itself (docs/network.md), so the question about HOST is asked, and a refused connection
 * never reaches the parent.
 */
function parentProxyEnv(parent: string): Record<string, string | undefined> {
  return {
    https_proxy: parent,
    HTTPS_PROXY: parent,
    http_proxy: parent,
    HTTP_PROXY: parent,
    all_proxy: undefined,
    ALL_PROXY: undefined,
    no_proxy: undefined,
    NO_PROXY: undefined,
  };
}

/** A parent proxy that nobody listens on: nothing may reach it. */
const NO_PARENT = parentProxyEnv("http://127.0.0.1:9");

const BINARY = process.env.PI_SANDBOX_BINARY ? resolve(process.env.PI_SANDBOX_BINARY) : "";
if (!BINARY) throw new Error("set PI_SANDBOX_BINARY to the pi-sandbox binary under test");

// ---- scratch ---------------------------------------------------------------------------

/**
 * Where scratch trees go: $PI_SANDBOX_TEST_TMPDIR, else ~/.cache/pi-sandbox-tests. Not /tmp: a
 * workspace there draws a warning on every command (docs/security.md), which would be part of
 * every tool result these tests compare.
 */
function scratchBase(): string {
  const base = process.env.PI_SANDBOX_TEST_TMPDIR || join(homedir(), ".cache", "pi-sandbox-tests");
  mkdirSync(base, { recursive: true });
  return base;
}

/** A scratch HOME, workspace and `bin/pi-sandbox` link; `outside` is neither home nor workspace. */
class Scratch {
  readonly base = mkdtempSync(join(scratchBase(), "pi-sandbox-e2e-"));
  readonly home = join(this.base, "home");
  readonly ws = join(this.base, "ws");
  readonly bin = join(this.base, "bin");
  readonly outside = join(this.base, "outside");
  readonly binary = join(this.bin, "pi-sandbox");

  constructor() {
    for (const dir of [this.home, this.ws, this.bin, this.outside]) mkdirSync(dir);
    // serve is started through this link, so its command line names the scratch dir and a
    // process left behind is found by close().
    symlinkSync(BINARY, this.binary);
  }

  env(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const key of Object.keys(env)) if (key.startsWith("PI_")) delete env[key];
    Object.assign(env, {
      HOME: this.home,
      PI_OFFLINE: "1",
      PI_SKIP_VERSION_CHECK: "1",
      PI_TELEMETRY: "0",
      PI_SANDBOX_BIN: this.binary,
      npm_config_update_notifier: "false",
      npm_config_fund: "false",
      npm_config_audit: "false",
    });
    for (const [key, value] of Object.entries(extra)) {
      if (value === undefined) delete env[key];
      else env[key] = value;
    }
    return env;
  }

  /**
   * Processes whose command line names this scratch dir (serve, sandboxed commands) or whose
   * working directory is in it (a subagent worker, whose command line names no path of it).
   */
  leftovers(): string[] {
    const found: string[] = [];
    for (const pid of readdirSync("/proc")) {
      if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
        let cwd = "";
        try {
          cwd = readlinkSync(`/proc/${pid}/cwd`);
        } catch {
          // another user's process, or gone
        }
        if (cmdline.includes(this.base) || cwd === this.base || cwd.startsWith(`${this.base}/`)) {
          found.push(`${pid}: ${cmdline.trim()}`);
        }
      } catch {
        // gone meanwhile
      }
    }
    return found;
  }

  /** Asserts that nothing of the run is left running (waits up to 10 s), then removes it all. */
  async close(): Promise<void> {
    let left = this.leftovers();
    for (let i = 0; i < 100 && left.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = this.leftovers();
    }
    rmSync(this.base, { recursive: true, force: true });
    assert.deepEqual(left, [], "processes left running after pi exited");
  }
}

/** Runs `fn` with a fresh scratch dir, always closing it. */
async function withScratch(fn: (scratch: Scratch) => Promise<void>): Promise<void> {
  const scratch = new Scratch();
  let failure: unknown;
  try {
    await fn(scratch);
  } catch (error) {
    failure = error;
  }
  try {
    await scratch.close();
  } catch (error) {
    failure ??= error;
  }
  if (failure) throw failure;
}

const COMMON_ARGS = ["--no-session", "--no-context-files", "--no-skills", "--no-prompt-templates", "--model", MODEL];

function extensionArgs(extensions: string[]): string[] {
  return extensions.flatMap((path) => ["-e", path]);
}

/**
 * `pi install` of the extension's tarball into the scratch HOME: the tarball of scripts/package
 * when tests/e2e/run was given one, else one packed here.
 */
function installPacked(scratch: Scratch): void {
  let tarball = process.env.PI_SANDBOX_EXTENSION_TARBALL ?? "";
  if (tarball === "") {
    const pack = spawnSync("npm", ["pack", "--silent", "--pack-destination", scratch.base], {
      cwd: EXTENSION,
      env: scratch.env(),
      encoding: "utf8",
    });
    assert.equal(pack.status, 0, pack.stderr);
    tarball = join(scratch.base, pack.stdout.trim().split("\n").at(-1)!);
  }
  const name = JSON.parse(readFileSync(join(EXTENSION, "package.json"), "utf8")).name;
  piInstall(scratch, `npm:${name}@file:${tarball}`);
}

/** `pi install SOURCE` into the scratch HOME. */
function piInstall(scratch: Scratch, source: string): void {
  const run = spawnSync(PI, ["install", source], { cwd: scratch.ws, env: scratch.env(), encoding: "utf8", timeout: WAIT_MS });
  assert.equal(run.status, 0, `pi install ${source} failed:\n${run.stdout}\n${run.stderr}`);
}

// ---- pi --mode json --------------------------------------------------------------------

type ToolResult = { text: string; isError: boolean };

function toolResultOf(event: any): ToolResult {
  return {
    text: (event.result?.content ?? []).map((c: any) => c.text ?? "").join(""),
    isError: event.isError === true,
  };
}

/** A prompt of the faux model: `bash` arguments, or another tool and its arguments. */
type Prompt = { command: string; timeout?: number } | { tool: string; args: object };

/** One `pi --mode json` run with one scripted tool call; its tool results and stderr. */
async function runJson(
  scratch: Scratch,
  bashArgs: Prompt,
  options: { extensions?: string[]; env?: Record<string, string | undefined>; cwd?: string } = {},
): Promise<{ results: ToolResult[]; stderr: string; events: any[] }> {
  const args = [...COMMON_ARGS, "--mode", "json", ...extensionArgs(options.extensions ?? [EXTENSION, FAUX])];
  const child = spawn(PI, [...args, JSON.stringify(bashArgs)], {
    cwd: options.cwd ?? scratch.ws,
    env: scratch.env(options.env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const timer = setTimeout(() => child.kill("SIGKILL"), WAIT_MS);
  const code = await new Promise<number | null>((r) => child.on("close", r));
  clearTimeout(timer);
  assert.equal(code, 0, `pi --mode json exited with ${code}\nstderr:\n${stderr}\nstdout:\n${stdout.slice(-4000)}`);
  const events = stdout
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line));
  const results = events.filter((e) => e.type === "tool_execution_end").map(toolResultOf);
  return { results, stderr, events };
}

// ---- pi --mode rpc ---------------------------------------------------------------------

type UiRequest = { id: string; method: string; title?: string; options?: string[]; message?: string; notifyType?: string };

/** A `pi --mode rpc` child; dialogs are answered by `answer`, everything is recorded. */
class RpcPi {
  readonly records: any[] = [];
  readonly ui: UiRequest[] = [];
  answer: (request: UiRequest) => string | undefined = () => undefined;
  private readonly child: ChildProcessWithoutNullStreams;
  private stderr = "";
  private nextId = 1;
  private listeners: Array<() => void> = [];

  constructor(scratch: Scratch, options: { extensions?: string[]; env?: Record<string, string | undefined>; cwd?: string } = {}) {
    const args = [...COMMON_ARGS, "--mode", "rpc", ...extensionArgs(options.extensions ?? [EXTENSION, FAUX])];
    this.child = spawn(PI, args, { cwd: options.cwd ?? scratch.ws, env: scratch.env(options.env), stdio: ["pipe", "pipe", "pipe"] });
    let pending = "";
    this.child.stdout.on("data", (chunk: Buffer) => {
      pending += chunk.toString("utf8");
      for (let newline = pending.indexOf("\n"); newline !== -1; newline = pending.indexOf("\n")) {
        const line = pending.slice(0, newline).replace(/\r$/, "");
        pending = pending.slice(newline + 1);
        if (line.trim()) this.onRecord(JSON.parse(line));
      }
    });
    this.child.stderr.on("data", (d) => (this.stderr += d));
  }

  private onRecord(record: any): void {
    this.records.push(record);
    if (record.type === "extension_ui_request") {
      this.ui.push(record);
      if (["select", "confirm", "input", "editor"].includes(record.method)) {
        const value = this.answer(record);
        this.send(value === undefined ? { type: "extension_ui_response", id: record.id, cancelled: true } : { type: "extension_ui_response", id: record.id, value });
      }
    }
    for (const listener of this.listeners) listener();
  }

  private send(record: object): void {
    this.child.stdin.write(`${JSON.stringify(record)}\n`);
  }

  /** Waits until `test` holds for the records so far. */
  async until(what: string, test: () => boolean): Promise<void> {
    if (test()) return;
    await new Promise<void>((resolvePromise, reject) => {
      const timer = setTimeout(() => {
        this.listeners = this.listeners.filter((l) => l !== check);
        reject(new Error(`timed out waiting for ${what}\nstderr:\n${this.stderr}\nrecords:\n${this.records.map((r) => JSON.stringify(r)).join("\n").slice(-6000)}`));
      }, WAIT_MS);
      const check = () => {
        if (!test()) return;
        clearTimeout(timer);
        this.listeners = this.listeners.filter((l) => l !== check);
        resolvePromise();
      };
      this.listeners.push(check);
    });
  }

  /** Sends one prompt (the `bash` arguments) and waits for the run to settle. */
  async prompt(bashArgs: Prompt): Promise<{ results: ToolResult[]; ui: UiRequest[] }> {
    return this.settle(this.start(bashArgs));
  }

  /** One prompt that calls the `subagent` tool with `args`; its result (the tool's text). */
  async subagent(args: Record<string, unknown>): Promise<ToolResult> {
    const started = this.start({ tool: "subagent", args });
    await this.settle(started);
    const results = this.records
      .slice(started.first)
      .filter((r) => r.type === "tool_execution_end" && r.toolName === "subagent")
      .map(toolResultOf);
    assert.equal(results.length, 1, `one subagent call: ${JSON.stringify(results)}`);
    return results[0]!;
  }

  /** Sends one prompt without waiting; returns where its records begin. */
  start(bashArgs: Prompt): { id: string; first: number; firstUi: number } {
    const started = { id: `p${this.nextId++}`, first: this.records.length, firstUi: this.ui.length };
    this.send({ id: started.id, type: "prompt", message: JSON.stringify(bashArgs) });
    return started;
  }

  /** Waits for the run of a started prompt to settle: its bash results and dialogs. */
  async settle(started: { id: string; first: number; firstUi: number }): Promise<{ results: ToolResult[]; ui: UiRequest[] }> {
    const { id, first, firstUi } = started;
    await this.until(`prompt ${id} to settle`, () => this.records.slice(first).some((r) => r.type === "agent_settled"));
    const response = this.records.slice(first).find((r) => r.type === "response" && r.id === id);
    assert.equal(response?.success, true, `prompt failed: ${JSON.stringify(response)}`);
    const results = this.records
      .slice(first)
      .filter((r) => r.type === "tool_execution_end")
      .map(toolResultOf);
    return { results, ui: this.ui.slice(firstUi) };
  }

  /**
   * Types `text` (a slash command, `/name args`) as the user would: an RPC `prompt`, which Pi
   * dispatches to the extension's command before any model sees it. Waits for its response,
   * which Pi sends once the command's handler has returned; asserts that a command handled it
   * (disposition `handled`, not a prompt started for the model). Its dialogs and notices.
   */
  async command(text: string): Promise<UiRequest[]> {
    const id = `c${this.nextId++}`;
    const firstUi = this.ui.length;
    this.send({ id, type: "prompt", message: text });
    await this.until(`command ${id}`, () => this.records.some((r) => r.type === "response" && r.id === id));
    const response = this.records.find((r) => r.type === "response" && r.id === id);
    assert.deepEqual(
      [response.success, response.data?.disposition],
      [true, "handled"],
      `${text} was not handled by a command: ${JSON.stringify(response)}`,
    );
    return this.ui.slice(firstUi);
  }

  /** The RPC `abort` command: aborts the running prompt (Esc in the TUI). */
  abort(): void {
    this.send({ id: `a${this.nextId++}`, type: "abort" });
  }

  /** The RPC `bash` command (Pi's `!` command path: the user_bash hook). */
  async bash(command: string): Promise<any> {
    const id = `b${this.nextId++}`;
    this.send({ id, type: "bash", command });
    await this.until(`bash ${id}`, () => this.records.some((r) => r.type === "response" && r.id === id));
    const response = this.records.find((r) => r.type === "response" && r.id === id);
    assert.equal(response.success, true, `bash failed: ${JSON.stringify(response)}`);
    return response.data;
  }

  /** The RPC `new_session` command: a new Pi session (its session_start notices included). */
  async newSession(): Promise<void> {
    const id = `n${this.nextId++}`;
    const notices = this.notices().length;
    this.send({ id, type: "new_session" });
    await this.until(`new_session ${id}`, () => this.records.some((r) => r.type === "response" && r.id === id));
    const response = this.records.find((r) => r.type === "response" && r.id === id);
    assert.equal(response.success, true, `new_session failed: ${JSON.stringify(response)}`);
    await this.until("the new session's notices", () => this.notices().length >= notices + 2);
    assert.deepEqual(this.notices().slice(notices), [["info", BUILTIN], ["info", FILE_TOOLS], ["info", ENABLED]]);
  }

  notices(): Array<[string | undefined, string | undefined]> {
    return this.ui.filter((r) => r.method === "notify").map((r) => [r.notifyType, r.message]);
  }

  /** Pi's process id. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Kills Pi (SIGKILL: no shutdown handler runs) and waits for the exit. */
  async kill(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.on("close", r));
    this.child.kill("SIGKILL");
    await exited;
  }

  /** Closes stdin (Pi's orderly shutdown) and waits for the exit. */
  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.on("close", r));
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 30_000);
    await exited;
    clearTimeout(timer);
  }
}

async function withRpc(
  scratch: Scratch,
  options: { extensions?: string[]; env?: Record<string, string | undefined>; cwd?: string },
  fn: (pi: RpcPi) => Promise<void>,
): Promise<void> {
  const pi = new RpcPi(scratch, options);
  try {
    // The session_start notices (compatibility C79) come first, in every session.
    await pi.until("the session notices", () => pi.notices().length >= 3);
    assert.deepEqual(pi.notices(), [["info", BUILTIN], ["info", FILE_TOOLS], ["info", ENABLED]]);
    await fn(pi);
  } finally {
    await pi.close();
  }
}

/** A trusted configuration whose workers load the faux model (a worker sees no ~/.pi). */
function subagentConfig(scratch: Scratch): string {
  const path = join(scratch.base, "config.json");
  writeFileSync(path, JSON.stringify({ subagents: { workerExtensions: [FAUX] } }));
  return path;
}

/**
 * The environment of the process whose environment holds every entry of `markers` (a worker
 * inside its sandbox, read from the host: Pi renames its process `pi`, so its command line
 * tells nothing; `PI_SANDBOX=1` is set inside sandboxes only, not in serve's worker process on
 * the host), or undefined.
 */
function workerEnviron(markers: string[]): Map<string, string> | undefined {
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const entries = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean);
      if (!markers.every((marker) => entries.includes(marker))) continue;
      return new Map(entries.map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]));
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

/** A task for a worker's faux model: one bash call, answered with its result. */
function workerTask(command: string): string {
  return JSON.stringify({ command, reply: "result" });
}

/** A trusted configuration outside the workspace, for `PI_SANDBOX_CONFIG`. */
function hostIpcConfig(scratch: Scratch): string {
  const path = join(scratch.base, "config.json");
  writeFileSync(path, JSON.stringify({ hostIPC: { mode: "ask", preflightCommandPrefixes: ["printf"] } }));
  return path;
}

/** A trusted configuration whose reviewer program answers `outcome` with `rationale`. */
function reviewerConfig(scratch: Scratch, outcome: "allow" | "deny", rationale: string): string {
  const reviewer = join(scratch.base, "reviewer.sh");
  const verdict = JSON.stringify({ outcome, risk_level: outcome === "deny" ? "high" : "low", rationale });
  writeFileSync(reviewer, `#!/bin/sh\ncat >/dev/null\nprintf '%s\\n' '${verdict}'\n`, { mode: 0o755 });
  const path = join(scratch.base, "config.json");
  writeFileSync(
    path,
    JSON.stringify({ hostIPC: { mode: "ask", preflightCommandPrefixes: ["printf"] }, approval: { reviewer: [reviewer] } }),
  );
  return path;
}

/**
 * A trusted configuration whose reviewer program appends each request it reads (its stdin,
 * one JSON line) to the returned `log` and answers: an allow for a request that carries the
 * user's word (`"userRetry":true`), else a deny rated `riskLevel` with `rationale`.
 */
function recordingReviewerConfig(scratch: Scratch, riskLevel: "high" | "critical", rationale: string): { config: string; log: string } {
  const log = join(scratch.base, "reviewer-stdin.jsonl");
  const reviewer = join(scratch.base, "reviewer.sh");
  const allow = JSON.stringify({ outcome: "allow", risk_level: "low", rationale: REVIEWER_ALLOWS });
  const deny = JSON.stringify({ outcome: "deny", risk_level: riskLevel, rationale });
  writeFileSync(
    reviewer,
    `#!/bin/sh\nrequest=$(cat)\nprintf '%s\\n' "$request" >> '${log}'\n` +
      `case "$request" in\n*'"userRetry":true'*) printf '%s\\n' '${allow}' ;;\n*) printf '%s\\n' '${deny}' ;;\nesac\n`,
    { mode: 0o755 },
  );
  const config = join(scratch.base, "config.json");
  writeFileSync(config, JSON.stringify({ approval: { reviewer: [reviewer] } }));
  return { config, log };
}

/** The requests the reviewer of recordingReviewerConfig() has read, in order. */
function reviewerCalls(log: string): Array<Record<string, unknown>> {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8").trim().split("\n").filter(Boolean).map((line) => JSON.parse(line));
}

/**
 * docs/approvals.md, "The hash": the SHA-256 of the request's canonical JSON (every field but
 * `id`, keys sorted, no whitespace), computed here from what the reviewer read; the user's word
 * (`userRetry`) is evidence, not part of the request. String fields only (a network request).
 */
function requestHash(request: Record<string, unknown>): string {
  const { id: _id, userRetry: _userRetry, ...fields } = request;
  const canonical = Object.keys(fields)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${JSON.stringify(fields[key])}`);
  return createHash("sha256").update(`{${canonical.join(",")}}`).digest("hex");
}

/** The audit log's lines (JSON objects) that concern the request `hash`. */
function auditOf(scratch: Scratch, hash: string): Array<Record<string, unknown>> {
  return readFileSync(join(scratch.home, ".pi/agent/logs/pi-sandbox-audit.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line))
    .filter((entry) => entry.request_hash === hash);
}

/** The dialog text of a host-IPC question without a broker: no reason line (no reviewer is configured, which is no fault). */
function hostIpcQuestion(command: string): string {
  return `Sandbox approval required: execute-host ${command}\n${HOST_WARNING}`;
}

/**
 * Runs `fn` with a parent proxy on 127.0.0.1 (docs/network.md, "A parent proxy"): it opens
 * every CONNECT tunnel and, as the destination at its end, answers the request that comes
 * through it with `from the parent proxy`. It records the request lines it saw.
 */
async function withParentProxy(fn: (parent: { url: string; requests: string[] }) => Promise<void>): Promise<void> {
  const requests: string[] = [];
  const server = createServer((socket) => {
    let head = "";
    socket.on("data", (chunk) => {
      head += chunk.toString("latin1");
      for (let end = head.indexOf("\r\n\r\n"); end !== -1; end = head.indexOf("\r\n\r\n")) {
        const line = head.slice(0, head.indexOf("\r\n"));
        head = head.slice(end + 4);
        requests.push(line);
        if (line.startsWith("CONNECT ")) {
          socket.write("HTTP/1.1 200 Connection established\r\n\r\n");
        } else {
          const body = "from the parent proxy\n";
          socket.end(`HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
        }
      }
    });
    socket.on("error", () => {});
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  try {
    await fn({ url: `http://127.0.0.1:${port}`, requests });
  } finally {
    await new Promise((r) => server.close(r));
  }
}

const marker = () => `pi-sandbox-e2e-${randomBytes(6).toString("hex")}`;

// ---- tests -----------------------------------------------------------------------------

describe("pi --mode json with the extension installed", () => {
  it("runs bash in the sandbox: a write outside the workspace is refused, a write inside is done", async () => {
    await withScratch(async (scratch) => {
      piInstall(scratch, EXTENSION);
      const etc = `/etc/${marker()}`;
      const { results } = await runJson(
        scratch,
        // One stream (exec 2>&1): serve keeps the order within stdout and within stderr, not
        // between them.
        { command: `exec 2>&1; echo refused > ${etc}; echo written > inside.txt && echo "inside: $(cat inside.txt)"` },
        { extensions: [FAUX] },
      );
      assert.deepEqual(results, [
        { text: `/bin/bash: line 1: ${etc}: Read-only file system\ninside: written\n`, isError: false },
      ]);
      assert.equal(existsSync(etc), false, `${etc} was written on the host`);
      assert.equal(readFileSync(join(scratch.ws, "inside.txt"), "utf8"), "written\n");
    });
  });

  it("works installed from a packed tarball (npm:NAME@file:TARBALL), with the tool's timeout", async () => {
    await withScratch(async (scratch) => {
      installPacked(scratch);
      // First show that the installed extension is the one running bash (Pi's own bash
      // would write there: the sandbox sees the host outside the workspace read-only), then
      // the timeout.
      const outside = join(scratch.outside, "x");
      const refused = await runJson(scratch, { command: `echo no > ${outside}` }, { extensions: [FAUX] });
      assert.deepEqual(refused.results, [
        { text: `/bin/bash: line 1: ${outside}: Read-only file system\n\n\nCommand exited with code 1`, isError: true },
      ]);
      assert.equal(existsSync(outside), false);
      const timedOut = await runJson(scratch, { command: "echo started; sleep 30", timeout: 1 }, { extensions: [FAUX] });
      assert.deepEqual(timedOut.results, [{ text: "started\n\n\nCommand timed out after 1 seconds", isError: true }]);
    });
  });

  it("nobody to ask (no UI): denied as unavailable, and the tool result says so, not that a user denied", async () => {
    await withScratch(async (scratch) => {
      const config = hostIpcConfig(scratch);
      const notRun = join(scratch.outside, "no-human");
      const hostIpc = await runJson(scratch, { command: `printf 'must not run\\n' > ${notRun}` }, { env: { PI_SANDBOX_CONFIG: config } });
      assert.deepEqual(hostIpc.results, [
        { text: `pi-sandbox: host-IPC execution denied: ${NO_HUMAN}\n\n\nCommand exited with code 1`, isError: true },
      ]);
      assert.equal(existsSync(notRun), false);
      const network = await runJson(scratch, { command: `curl -sS --max-time 30 https://${HOST}/` }, { env: NO_PARENT });
      assert.deepEqual(network.results, [
        { text: `pi-sandbox: network: refused ${HOST}:443: ${NO_HUMAN}\n${CURL_403}\n\n\nCommand exited with code 56`, isError: true },
      ]);
      // No UI, so no notice (notices are UI only), not even on stderr.
      for (const run of [hostIpc, network]) {
        assert.equal(/(Domain proxy|Host-IPC) denied/.test(run.stderr + JSON.stringify(run.events)), false, run.stderr);
      }
      const audit = readFileSync(join(scratch.home, ".pi/agent/logs/pi-sandbox-audit.jsonl"), "utf8");
      assert.ok(audit.includes('"source":"unavailable"'), audit);
      assert.ok(audit.includes(`"reason":"${NO_HUMAN}"`), audit);
      assert.equal(audit.includes(DENIED_BY_USER), false, audit);
    });
  });

  it("finds pi-sandbox on PATH when PI_SANDBOX_BIN is not set", async () => {
    await withScratch(async (scratch) => {
      const etc = `/etc/${marker()}`;
      const { results } = await runJson(scratch, { command: `exec 2>&1; touch ${etc} || echo refused` }, {
        env: { PI_SANDBOX_BIN: undefined, PATH: `${scratch.bin}:${process.env.PATH}` },
      });
      assert.deepEqual(results, [{ text: `touch: cannot touch '${etc}': Read-only file system\nrefused\n`, isError: false }]);
      assert.equal(existsSync(etc), false);
    });
  });

  it("fails closed without the binary: the command is not run, and the error is shown", async () => {
    await withScratch(async (scratch) => {
      const missing = join(scratch.bin, "missing");
      const { results, stderr } = await runJson(scratch, { command: "touch ran-unsandboxed" }, { env: { PI_SANDBOX_BIN: missing } });
      assert.deepEqual(results, [
        {
          text: `pi-sandbox unavailable: PI_SANDBOX_BIN=${missing} is not an executable file; the command was not run`,
          isError: true,
        },
      ]);
      assert.equal(existsSync(join(scratch.ws, "ran-unsandboxed")), false);
      assert.ok(
        stderr.includes(`pi-sandbox unavailable: PI_SANDBOX_BIN=${missing} is not an executable file; Bash commands and file tools will fail closed`),
        stderr,
      );
    });
  });
});

describe("pi --mode rpc: approvals in Pi's UI", () => {
  it("shows the session notices; host-IPC allowed runs on the host; denied by the human, it does not run", async () => {
    await withScratch(async (scratch) => {
      const config = hostIpcConfig(scratch);
      await withRpc(scratch, { env: { PI_SANDBOX_CONFIG: config } }, async (pi) => {
        const allowedMarker = join(scratch.outside, "allowed");
        const allowedCommand = `printf 'ran on the host\\n' > ${allowedMarker} && cat ${allowedMarker}`;
        pi.answer = () => ALLOW_ONCE;
        const allowed = await pi.prompt({ command: allowedCommand });
        assert.deepEqual(
          allowed.ui.map((r) => [r.method, r.title, r.options]),
          [["select", hostIpcQuestion(allowedCommand), ["Deny", ALLOW_ONCE]]],
        );
        assert.deepEqual(allowed.results, [{ text: "ran on the host\n", isError: false }]);
        assert.equal(readFileSync(allowedMarker, "utf8"), "ran on the host\n");

        const deniedMarker = join(scratch.outside, "denied");
        const deniedCommand = `printf 'must not run\\n' > ${deniedMarker}`;
        pi.answer = () => "Deny";
        const denied = await pi.prompt({ command: deniedCommand });
        assert.deepEqual(
          denied.ui.map((r) => [r.method, r.title ?? r.message, r.options ?? r.notifyType]),
          [
            ["select", hostIpcQuestion(deniedCommand), ["Deny", ALLOW_ONCE]],
            // The human's deny, not the question's reason line (docs/approvals.md, "Sources and reasons").
            ["notify", `Host-IPC denied: ${DENIED_BY_USER}`, "warning"],
          ],
        );
        assert.deepEqual(denied.results, [
          { text: `pi-sandbox: host-IPC execution denied: ${DENIED_BY_USER}\n\n\nCommand exited with code 1`, isError: true },
        ]);
        assert.equal(existsSync(deniedMarker), false);
      });
      const audit = readFileSync(join(scratch.home, ".pi/agent/logs/pi-sandbox-audit.jsonl"), "utf8");
      assert.match(audit, /"event":"grant_consumed"/);
      assert.match(audit, /"action":"deny","source":"human"/);
    });
  });

  it("a network approval: the question names the command, four choices, Deny first; the human's deny refuses", async () => {
    await withScratch(async (scratch) => {
      await withRpc(scratch, { env: NO_PARENT }, async (pi) => {
        pi.answer = () => "Deny";
        // Denied before any connection: nothing reaches the parent proxy or leaves the machine.
        const command = `curl -sS --max-time 30 https://${HOST}/`;
        const { results, ui } = await pi.prompt({ command });
        assert.deepEqual(
          ui.map((r) => [r.method, r.title ?? r.message, r.options ?? r.notifyType]),
          [
            [
              "select",
              `Sandbox approval required: connect ${HOST}:443\nCommand: ${command}`,
              networkChoices(`${HOST}:443`),
            ],
            ["notify", `Domain proxy denied: ${DENIED_BY_USER}`, "warning"],
          ],
        );
        assert.deepEqual(results, [
          {
            text: `pi-sandbox: network: refused ${HOST}:443: ${DENIED_BY_USER}\n${CURL_403}\n\n\nCommand exited with code 56`,
            isError: true,
          },
        ]);
      });
    });
  });

  it("serve's reviewer program denies: its rationale in the notice and the tool result, and nobody is asked", async () => {
    await withScratch(async (scratch) => {
      const config = reviewerConfig(scratch, "deny", REVIEWER_DENIES);
      await withRpc(scratch, { env: { ...NO_PARENT, PI_SANDBOX_CONFIG: config } }, async (pi) => {
        pi.answer = () => assert.fail("the human must not be asked");
        const { results, ui } = await pi.prompt({ command: `curl -sS --max-time 30 https://${HOST}/` });
        assert.deepEqual(ui.map((r) => [r.method, r.message, r.notifyType]), [
          ["notify", `Domain proxy denied: ${REVIEWER_DENIES} Use /auto-review-approve for one exact retry.`, "warning"],
        ]);
        assert.deepEqual(results, [
          {
            text: `pi-sandbox: network: refused ${HOST}:443: ${REVIEWER_DENIES}\n${CURL_403}\n\n\nCommand exited with code 56`,
            isError: true,
          },
        ]);
      });
    });
  });

  it("allow-session holds for the commands of this Pi session, and a new session asks again", async () => {
    await withScratch(async (scratch) => {
      await withParentProxy(async (parent) => {
        await withRpc(scratch, { env: parentProxyEnv(parent.url) }, async (pi) => {
          const destination = `${HOST}:80`;
          const command = `curl -sS --max-time 30 http://${HOST}/`;
          pi.answer = () => `Allow ${destination} for this session`;
          const first = await pi.prompt({ command });
          assert.deepEqual(first.ui.map((r) => [r.method, r.options]), [["select", networkChoices(destination)]]);
          assert.deepEqual(first.results, [{ text: "from the parent proxy\n", isError: false }]);
          pi.answer = () => assert.fail("asked again in the same session");
          const second = await pi.prompt({ command: `${command} && echo again` });
          assert.deepEqual(second.ui, []);
          assert.deepEqual(second.results, [{ text: "from the parent proxy\nagain\n", isError: false }]);

          await pi.newSession();
          pi.answer = () => ALLOW_ONCE;
          const third = await pi.prompt({ command });
          assert.deepEqual(third.ui.map((r) => [r.method, r.options]), [["select", networkChoices(destination)]]);
          assert.deepEqual(third.results, [{ text: "from the parent proxy\n", isError: false }]);
          // Each allowed connection went through the parent, by name; nothing else did.
          const tunnel = [`CONNECT ${destination} HTTP/1.1`, "GET / HTTP/1.1"];
          assert.deepEqual(parent.requests, [...tunnel, ...tunnel, ...tunnel]);
        });
      });
    });
  });

  it("runs ! commands (the RPC bash command, user_bash) in the sandbox", async () => {
    await withScratch(async (scratch) => {
      await withRpc(scratch, {}, async (pi) => {
        const etc = `/etc/${marker()}`;
        // One stream (exec 2>&1), as above.
        const data = await pi.bash(`exec 2>&1; echo typed > ${etc}; echo typed > typed.txt; cat typed.txt`);
        assert.equal(data.output, `/bin/bash: line 1: ${etc}: Read-only file system\ntyped\n`);
        assert.equal(data.exitCode, 0);
        assert.equal(existsSync(etc), false);
        assert.equal(readFileSync(join(scratch.ws, "typed.txt"), "utf8"), "typed\n");
      });
    });
  });
});

describe("pi --mode rpc: abort", () => {
  it("aborting the tool call kills the command's whole sandbox", async () => {
    await withScratch(async (scratch) => {
      await withRpc(scratch, {}, async (pi) => {
        const late = join(scratch.ws, "late");
        const started = pi.start({ command: `echo started; sleep 120; echo late > ${late}` });
        await pi.until("the command's first output", () =>
          pi.records.some(
            (r) => r.type === "tool_execution_update" && JSON.stringify(r.partialResult ?? {}).includes("started"),
          ),
        );
        // Pi itself (its working directory is the workspace) and serve are still running, and so
        // may serve's worker waiting with the next command's sandbox (docs/ARCHITECTURE.md, "A
        // sandbox made ahead"), which is not the aborted command's.
        const serve = `${scratch.binary} serve`;
        const others = (p: string) =>
          !p.includes(serve) && !p.startsWith(`${pi.pid}: `) && !/ serve-worker .*--ready$/.test(p);
        const running = scratch.leftovers().filter(others);
        assert.ok(running.some((p) => p.includes(`sleep 120; echo late > ${late}`)), `the command is not seen running: ${running}`);
        pi.abort();
        const { results } = await pi.settle(started);
        assert.deepEqual(results, [{ text: "started\n\n\nCommand aborted", isError: true }]);
        // serve is still running; the command (bash and its sleep) must be gone.
        let left = scratch.leftovers().filter(others);
        for (let i = 0; i < 50 && left.length > 0; i++) {
          await new Promise((r) => setTimeout(r, 100));
          left = scratch.leftovers().filter(others);
        }
        assert.deepEqual(left, []);
        assert.equal(existsSync(late), false);
      });
    });
  });
});

describe("pi --mode rpc: approvals through the pi-auto-review broker", () => {
  it("an allow consumes the broker's grant and asks nobody; a deny carries its rationale to the notice and the tool result", async () => {
    await withScratch(async (scratch) => {
      const config = hostIpcConfig(scratch);
      const brokerLog = join(scratch.base, "broker.jsonl");
      const env = { ...NO_PARENT, PI_SANDBOX_CONFIG: config, E2E_BROKER_LOG: brokerLog };
      await withRpc(scratch, { extensions: [EXTENSION, FAUX, BROKER], env }, async (pi) => {
        pi.answer = () => assert.fail("the human must not be asked");
        const allowedMarker = join(scratch.outside, "broker-allows");
        const allowed = await pi.prompt({ command: `printf 'broker-allows\\n' > ${allowedMarker} && cat ${allowedMarker}` });
        assert.deepEqual(allowed.results, [{ text: "broker-allows\n", isError: false }]);
        assert.deepEqual(allowed.ui, []);

        const deniedMarker = join(scratch.outside, "denied");
        const denied = await pi.prompt({ command: `printf 'no\\n' > ${deniedMarker}` });
        assert.deepEqual(denied.results, [
          { text: `pi-sandbox: host-IPC execution denied: ${BROKER_DENIES}\n\n\nCommand exited with code 1`, isError: true },
        ]);
        assert.deepEqual(denied.ui.map((r) => [r.method, r.message, r.notifyType]), [
          ["notify", `Host-IPC denied: ${BROKER_DENIES}`, "warning"],
        ]);
        assert.equal(existsSync(deniedMarker), false);

        const network = await pi.prompt({ command: `curl -sS --max-time 30 https://${HOST}/` });
        assert.deepEqual(network.results, [
          { text: `pi-sandbox: network: refused ${HOST}:443: ${BROKER_DENIES}\n${CURL_403}\n\n\nCommand exited with code 56`, isError: true },
        ]);
        assert.deepEqual(network.ui.map((r) => [r.method, r.message, r.notifyType]), [
          ["notify", `Domain proxy denied: ${BROKER_DENIES}`, "warning"],
        ]);
      });
      const calls = readFileSync(brokerLog, "utf8").trim().split("\n").map((line) => JSON.parse(line));
      assert.deepEqual(calls.map((c) => [c.call, c.surface ?? null, c.ok ?? null]), [
        ["review", "host-ipc", null],
        ["consumeGrant", null, true],
        ["review", "host-ipc", null],
        ["review", "network", null],
      ]);
      const sessionId = calls[0].context.sessionId;
      assert.match(sessionId, /\S/);
      assert.equal(calls[1].sessionId, sessionId);
      for (const review of [calls[0], calls[2], calls[3]]) {
        assert.match(review.context.scopeKey, new RegExp(`^${sessionId}:turn:\\d+$`));
        assert.equal(review.context.issueGrant, true);
      }
      const audit = readFileSync(join(scratch.home, ".pi/agent/logs/pi-sandbox-audit.jsonl"), "utf8");
      assert.ok(audit.includes(`"reason":"${BROKER_DENIES}"`), audit);
    });
  });
});

describe("pi --mode rpc: after a wrong automatic denial (docs/approvals.md)", () => {
  /** [method, title or message, options or notice type] of each dialog and notice. */
  const shown = (ui: UiRequest[]) => ui.map((r) => [r.method, r.title ?? r.message, r.options ?? r.notifyType]);

  it("/auto-review-approve: one retry of exactly the denied request, which the reviewer sees as the user's word; once per hash", async () => {
    await withScratch(async (scratch) => {
      const { config, log } = recordingReviewerConfig(scratch, "high", REVIEWER_DENIES);
      await withParentProxy(async (parent) => {
        await withRpc(scratch, { env: { ...parentProxyEnv(parent.url), PI_SANDBOX_CONFIG: config } }, async (pi) => {
          pi.answer = () => assert.fail("the human must not be asked");
          const destination = `${HOST}:80`;
          const command = `curl -sS --max-time 30 http://${HOST}/`;
          const refused = (reason: string) => [
            { text: `pi-sandbox: network: refused ${destination}: ${reason}\n${CURL_PROXY_403}`, isError: false },
          ];

          const denied = await pi.prompt({ command });
          assert.deepEqual(shown(denied.ui), [["notify", `Domain proxy denied: ${REVIEWER_DENIES} ${RETRY_HINT}`, "warning"]]);
          assert.deepEqual(denied.results, refused(REVIEWER_DENIES));
          const [first] = reviewerCalls(log);
          assert.deepEqual([first.command, first.destination, first.userRetry], [command, destination, undefined]);
          const hash = requestHash(first);

          assert.deepEqual(shown(await pi.command("/auto-review-approve")), [
            [
              "notify",
              `pi-sandbox: one retry of ${destination} authorised for 60 s: the reviewer decides again, knowing you asked for it. Ask the agent to run the same command again.`,
              "info",
            ],
          ]);

          // Another command to the same destination is another request: not covered.
          const other = `${command} && echo other`;
          const notCovered = await pi.prompt({ command: other });
          assert.deepEqual(notCovered.results, [
            { text: `pi-sandbox: network: refused ${destination}: ${REVIEWER_DENIES}\n${CURL_PROXY_403}other\n`, isError: false },
          ]);
          assert.deepEqual(
            reviewerCalls(log).slice(1).map((c) => [c.command, c.userRetry]),
            [[other, undefined]],
          );

          // The same command again: reviewed once more, the user's word on the reviewer's stdin.
          const retried = await pi.prompt({ command });
          assert.deepEqual(retried.results, [{ text: "from the parent proxy\n", isError: false }]);
          assert.deepEqual(retried.ui, []);
          const third = reviewerCalls(log)[2];
          assert.equal(third.userRetry, true);
          assert.equal(requestHash(third), hash);
          assert.deepEqual(parent.requests, [`CONNECT ${destination} HTTP/1.1`, "GET / HTTP/1.1"]);

          // A second retry of the same request is refused by serve, in serve's words; the user
          // picks it among the two denials (newest first), each named by its command.
          const labels = [`network ${destination}: ${REVIEWER_DENIES} (command: ${other})`, `network ${destination}: ${REVIEWER_DENIES} (command: ${command})`];
          pi.answer = (request) => (request.method === "select" ? labels[1] : assert.fail(JSON.stringify(request)));
          const again = await pi.command("/auto-review-approve");
          pi.answer = () => assert.fail("the human must not be asked");
          assert.deepEqual(shown(again), [
            ["select", "Retry which automatic denial once?", labels],
            ["notify", `pi-sandbox: override: a retry of ${hash} was already authorised in this session`, "warning"],
          ]);

          // So the same command is reviewed as any other again, and denied.
          const afterwards = await pi.prompt({ command });
          assert.deepEqual(afterwards.results, refused(REVIEWER_DENIES));
          assert.deepEqual(
            reviewerCalls(log).map((c) => [c.command, c.userRetry]),
            [
              [command, undefined],
              [other, undefined],
              [command, true],
              [command, undefined],
            ],
          );
        });
      });
      assert.deepEqual(
        auditOf(scratch, requestHash(reviewerCalls(log)[0])).map((e) => [e.event, e.action ?? null, e.source, e.reason ?? null]),
        [
          ["review_decision", "deny", "reviewer", REVIEWER_DENIES],
          ["review_decision", "allow", "reviewer", REVIEWER_ALLOWS],
          // A reviewer's allow of a destination holds for the rest of its command (approvals.md).
          ["grant_issued", null, "broker", "valid for the rest of this command"],
          ["grant_consumed", null, "broker", null],
          ["review_decision", "deny", "reviewer", REVIEWER_DENIES],
        ],
      );
    });
  });

  it("a hard deny has no way out; a critical denial: no retry, break-glass after the typed phrase skips the reviewer once, with its grant", async () => {
    await withScratch(async (scratch) => {
      const { config, log } = recordingReviewerConfig(scratch, "critical", REVIEWER_CRITICAL);
      await withParentProxy(async (parent) => {
        await withRpc(scratch, { env: { ...parentProxyEnv(parent.url), PI_SANDBOX_CONFIG: config } }, async (pi) => {
          pi.answer = () => assert.fail("the human must not be asked");
          const NO_RETRY = "pi-sandbox: no automatic denial to retry in this session (hard denies cannot be overridden; critical ones need /auto-review-break-glass)";
          const NO_CRITICAL = "pi-sandbox: no critical automatic denial in the last 5 minutes (others: /auto-review-approve)";

          // A hard deny (compatibility C77): serve refuses before any review, and says there is no way out.
          const insecure = `curl -sS -k --max-time 30 http://${HOST}/`;
          const hard = await pi.prompt({ command: insecure });
          assert.equal(hard.results.length, 1);
          const hardReason = HARD_DENY_CURL_K;
          assert.deepEqual(shown(hard.ui), [["notify", `Domain proxy denied: ${hardReason} ${HARD_DENY_HINT}`, "warning"]]);
          assert.deepEqual(hard.results, [
            { text: `pi-sandbox: network: refused ${HOST}:80: ${hardReason}\n${CURL_PROXY_403}`, isError: false },
          ]);
          assert.deepEqual(shown(await pi.command("/auto-review-approve")), [["notify", NO_RETRY, "warning"]]);
          assert.deepEqual(shown(await pi.command("/auto-review-break-glass")), [["notify", NO_CRITICAL, "warning"]]);
          assert.deepEqual(reviewerCalls(log), []);

          // A critical denial by the reviewer.
          const destination = `${HOST}:80`;
          const command = `curl -sS --max-time 30 http://${HOST}/`;
          const denied = await pi.prompt({ command });
          assert.deepEqual(denied.results, [
            { text: `pi-sandbox: network: refused ${destination}: ${REVIEWER_CRITICAL}\n${CURL_PROXY_403}`, isError: false },
          ]);
          // serve's critical reviewer denial names break-glass (docs/approvals.md, "After a wrong denial").
          assert.deepEqual(shown(denied.ui), [["notify", `Domain proxy denied: ${REVIEWER_CRITICAL} ${BREAK_GLASS_HINT}`, "warning"]]);
          const hash = requestHash(reviewerCalls(log)[0]);
          const phrase = `break glass ${hash.slice(0, 8)}`;
          const question = `Allow ${destination} once WITHOUT review? It was denied as critical: ${REVIEWER_CRITICAL} Type "${phrase}" to confirm.`;

          // Not by a retry: only break-glass, and only with the exact phrase.
          assert.deepEqual(shown(await pi.command("/auto-review-approve")), [["notify", NO_RETRY, "warning"]]);
          pi.answer = (request) => (request.method === "input" ? `break glass ${"0".repeat(8)}` : assert.fail(JSON.stringify(request)));
          assert.deepEqual(shown(await pi.command("/auto-review-break-glass")), [
            ["input", question, undefined],
            ["notify", "pi-sandbox: break-glass cancelled: the phrase did not match", "warning"],
          ]);
          pi.answer = (request) => (request.method === "input" ? phrase : assert.fail(JSON.stringify(request)));
          assert.deepEqual(shown(await pi.command("/auto-review-break-glass")), [
            ["input", question, undefined],
            [
              "notify",
              `pi-sandbox: ${destination} may be reached once without review in the next 60 s (break-glass; hard denies still apply). Ask the agent to run the same command again.`,
              "info",
            ],
          ]);
          pi.answer = () => assert.fail("the human must not be asked");

          // The retry: allowed without the reviewer, once.
          const allowed = await pi.prompt({ command });
          assert.deepEqual(allowed.results, [{ text: "from the parent proxy\n", isError: false }]);
          assert.deepEqual(allowed.ui, []);
          assert.equal(reviewerCalls(log).length, 1);
          assert.deepEqual(parent.requests, [`CONNECT ${destination} HTTP/1.1`, "GET / HTTP/1.1"]);
          const once = await pi.prompt({ command });
          assert.deepEqual(once.results, [
            { text: `pi-sandbox: network: refused ${destination}: ${REVIEWER_CRITICAL}\n${CURL_PROXY_403}`, isError: false },
          ]);
          assert.deepEqual(shown(once.ui), [["notify", `Domain proxy denied: ${REVIEWER_CRITICAL} ${BREAK_GLASS_HINT}`, "warning"]]);
          assert.deepEqual(
            reviewerCalls(log).map((c) => [c.command, c.userRetry]),
            [
              [command, undefined],
              [command, undefined],
            ],
          );

          // The break-glass of the critical denial never covers the hard-denied command.
          const stillHard = await pi.prompt({ command: insecure });
          assert.deepEqual(stillHard.results, hard.results);
          assert.equal(reviewerCalls(log).length, 2);
          assert.deepEqual(parent.requests, [`CONNECT ${destination} HTTP/1.1`, "GET / HTTP/1.1"]);
        });
      });
      const hash = requestHash(reviewerCalls(log)[0]);
      assert.deepEqual(
        auditOf(scratch, hash).map((e) => [e.event, e.action ?? null, e.source, e.reason ?? null]),
        [
          ["review_decision", "deny", "reviewer", REVIEWER_CRITICAL],
          ["review_decision", "allow", "human", BREAK_GLASS_REASON],
          ["grant_issued", null, "broker", null],
          ["grant_consumed", null, "broker", null],
          ["review_decision", "deny", "reviewer", REVIEWER_CRITICAL],
        ],
      );
    });
  });
});

describe("pi --mode rpc: built-in subagents, each in its own sandbox", () => {
  it("a foreground worker: its Bash writes inside the workspace and is refused outside; its text is the result", async () => {
    await withScratch(async (scratch) => {
      const env = { ...NO_PARENT, PI_SANDBOX_CONFIG: subagentConfig(scratch) };
      await withRpc(scratch, { env }, async (pi) => {
        const inside = join(scratch.ws, "from-worker");
        const outside = join(scratch.outside, "from-worker");
        const command = `echo inside > ${inside} && cat ${inside}; echo escape > ${outside}`;
        const result = await pi.subagent({ task: workerTask(command) });
        assert.deepEqual(result, {
          text: `done: inside\n/bin/bash: line 1: ${outside}: Read-only file system\n\n\nCommand exited with code 1`,
          isError: false,
        });
        assert.equal(readFileSync(inside, "utf8"), "inside\n");
        assert.equal(existsSync(outside), false);
        // The foreground worker was removed when it settled.
        assert.deepEqual(await pi.subagent({ action: "status" }), { text: "(no subagent sessions)", isError: false });
      });
    });
  });

  it("background start, follow_up, wait, status, handoff and stop; a fourth level and a fifth worker are refused", async () => {
    await withScratch(async (scratch) => {
      const env = { ...NO_PARENT, PI_SANDBOX_CONFIG: subagentConfig(scratch) };
      await withRpc(scratch, { env }, async (pi) => {
        const task = workerTask("echo one");
        assert.deepEqual(await pi.subagent({ task, background: true }), { text: "Started background subagent subagent-1", isError: false });
        assert.deepEqual(await pi.subagent({ action: "wait", sessionId: "subagent-1" }), { text: "done: one", isError: false });
        assert.deepEqual(await pi.subagent({ action: "follow_up", sessionId: "subagent-1", task: workerTask("echo two") }), {
          text: "done: two",
          isError: false,
        });
        assert.deepEqual(
          await pi.subagent({ action: "follow_up", sessionId: "subagent-1", task: workerTask("echo three"), background: true }),
          { text: "Follow-up queued for subagent subagent-1", isError: false },
        );
        assert.deepEqual(await pi.subagent({ action: "wait", sessionId: "subagent-1" }), { text: "done: three", isError: false });
        const status = JSON.parse((await pi.subagent({ action: "status" })).text);
        assert.deepEqual(status, [
          { id: "subagent-1", state: "idle", depth: 1, task, model: MODEL, text: "done: three" },
        ]);
        // Handoffs: depth 2, then 3; a fourth level is refused.
        const second = await pi.subagent({ action: "handoff", sessionId: "subagent-1", task: workerTask("echo handed") });
        assert.deepEqual(second, { text: "done: handed", isError: false });
        await pi.subagent({ action: "handoff", sessionId: "subagent-2", task: workerTask("echo third") });
        assert.deepEqual(await pi.subagent({ action: "handoff", sessionId: "subagent-3", task: workerTask("echo fourth") }), {
          text: "subagent nesting depth limit reached (3)",
          isError: true,
        });
        // Three live sessions; a fourth starts; a fifth is refused.
        assert.deepEqual(await pi.subagent({ task, background: true }), { text: "Started background subagent subagent-4", isError: false });
        assert.deepEqual(await pi.subagent({ task, background: true }), { text: "subagent concurrency limit reached (4)", isError: true });
        for (const id of ["subagent-1", "subagent-2", "subagent-3", "subagent-4"]) {
          assert.deepEqual(await pi.subagent({ action: "stop", sessionId: id }), { text: `Stopped subagent ${id}`, isError: false });
        }
        assert.deepEqual(await pi.subagent({ action: "status" }), { text: "(no subagent sessions)", isError: false });
      });
    });
  });

  it("the worker gets exactly the API key Pi reports for its model's provider; every other credential is removed", async () => {
    await withScratch(async (scratch) => {
      const env = {
        ...NO_PARENT,
        PI_SANDBOX_CONFIG: subagentConfig(scratch),
        OPENAI_API_KEY: "sk-e2e",
        OPENAI_ORG_SECRET: "org-secret",
        GITHUB_TOKEN: "gh-token",
      };
      await withRpc(scratch, { env }, async (pi) => {
        // The worker's model is openai's: its first connection asks; the worker's environment is
        // read from the host while the question is open, then the connection is denied.
        let environ: Map<string, string> | undefined;
        pi.answer = (request) => {
          environ ??= workerEnviron(["PI_CODING_AGENT_DIR=/tmp/pi-sandbox-subagent/agent", "PI_SANDBOX=1"]);
          return request.method === "select" ? "Deny" : undefined;
        };
        assert.deepEqual(await pi.subagent({ task: "hello", model: "openai/gpt-4o", background: true }), {
          text: "Started background subagent subagent-1",
          isError: false,
        });
        await pi.until("the worker's model connection question", () => environ !== undefined);
        const question = pi.ui.find((r) => r.method === "select");
        assert.equal(
          question?.title,
          `Sandbox approval required: connect api.openai.com:443\nCommand: process-backed subagent: hello`,
        );
        assert.equal(environ!.get("OPENAI_API_KEY"), "sk-e2e");
        assert.equal(environ!.has("OPENAI_ORG_SECRET"), false);
        assert.equal(environ!.has("GITHUB_TOKEN"), false);
        assert.equal(environ!.get("PI_SANDBOX_SUBAGENT_DEPTH"), "1");
        assert.equal(environ!.get("PI_CODING_AGENT_DIR"), "/tmp/pi-sandbox-subagent/agent");
        assert.deepEqual(await pi.subagent({ action: "stop", sessionId: "subagent-1" }), { text: "Stopped subagent subagent-1", isError: false });
        // The parent's own commands keep losing every credential, the provider's included.
        const { results } = await pi.prompt({ command: `printf '%s|%s\\n' "\${OPENAI_API_KEY-unset}" "\${GITHUB_TOKEN-unset}"` });
        assert.deepEqual(results, [{ text: "unset|unset\n", isError: false }]);
      });
    });
  });

  it("works with the workspace as the home: the worker's Pi keeps its state in its sandbox", async () => {
    await withScratch(async (scratch) => {
      const env = { ...NO_PARENT, PI_SANDBOX_CONFIG: subagentConfig(scratch) };
      // The home's top level is not writable then (security.md); its ordinary directories are.
      mkdirSync(join(scratch.home, "project"));
      await withRpc(scratch, { env, cwd: scratch.home }, async (pi) => {
        const result = await pi.subagent({ task: workerTask("echo from-home > project/in-home && cat project/in-home") });
        assert.deepEqual(result, { text: "done: from-home", isError: false });
        assert.equal(readFileSync(join(scratch.home, "project/in-home"), "utf8"), "from-home\n");
        // Nothing of the worker's Pi reached the user's ~/.pi.
        assert.equal(existsSync(join(scratch.home, ".pi/agent/trust.json")), false);
      });
    });
  });

  it("a worker's network request reaches the approval path as `subagent`, with the task as its command", async () => {
    await withScratch(async (scratch) => {
      const brokerLog = join(scratch.base, "broker.jsonl");
      const env = { ...NO_PARENT, PI_SANDBOX_CONFIG: subagentConfig(scratch), E2E_BROKER_LOG: brokerLog };
      await withRpc(scratch, { extensions: [EXTENSION, FAUX, BROKER], env }, async (pi) => {
        pi.answer = () => assert.fail("the human must not be asked");
        const task = workerTask(`curl -sS --max-time 30 https://${HOST}/`);
        // The worker's model sees curl's answer; the refusal in its sandbox reaches the parent
        // with the result (from serve's denied event), and the parent's UI shows the notice.
        const { results, ui } = await pi.settle(pi.start({ tool: "subagent", args: { task } }));
        assert.deepEqual(results, [
          {
            text: `done: ${CURL_403}\n\n\nCommand exited with code 56\n\npi-sandbox: the worker's sandbox refused network ${HOST}:443: ${BROKER_DENIES}`,
            isError: false,
          },
        ]);
        assert.deepEqual(ui.map((r) => [r.method, r.message, r.notifyType]), [
          ["notify", `Domain proxy denied: ${BROKER_DENIES}`, "warning"],
        ]);
      });
      const reviews = readFileSync(brokerLog, "utf8").trim().split("\n").map((line) => JSON.parse(line));
      assert.deepEqual(
        reviews.map((c) => [c.call, c.surface, c.agentName, c.command]),
        [["review", "network", "subagent", `process-backed subagent: ${JSON.stringify({ command: `curl -sS --max-time 30 https://${HOST}/`, reply: "result" })}`]],
      );
      assert.match(reviews[0].context.scopeKey, /:subagent:subagent-1$/);
    });
  });

  it("killing Pi leaves no worker, no sandbox and nothing of them behind", async () => {
    await withScratch(async (scratch) => {
      const env = { ...NO_PARENT, PI_SANDBOX_CONFIG: subagentConfig(scratch) };
      const pi = new RpcPi(scratch, { env });
      await pi.until("the session notices", () => pi.notices().length >= 2);
      const late = join(scratch.ws, "late");
      const result = await pi.subagent({ task: workerTask(`echo started; sleep 120; echo late > ${late}`), background: true });
      assert.deepEqual(result, { text: "Started background subagent subagent-1", isError: false });
      // The worker's sleep is running inside its sandbox.
      for (let i = 0; i < 300 && !scratch.leftovers().some((p) => p.includes(`sleep 120; echo late > ${late}`)); i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(
        scratch.leftovers().some((p) => p.includes(`sleep 120; echo late > ${late}`)),
        `the worker's command is not seen running: ${scratch.leftovers()}`,
      );
      await pi.kill();
      // Scratch.close() (withScratch) asserts that nothing is left running.
      let left = scratch.leftovers();
      for (let i = 0; i < 100 && left.length > 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        left = scratch.leftovers();
      }
      assert.deepEqual(left, []);
      assert.equal(existsSync(late), false);
    });
  });
});

// ---- external workers (integrations/pi/README.md, "External workers") ----

const ORCHESTRATOR = join(HERE, "pi-subagents", "index.ts");
const ISOLATED = "pi-subagents orchestration active; pi-sandbox protects Bash execution and runs each external worker in a sandbox of its own";

/** A trusted configuration: provider pi-subagents, isolation enforced, workers load the faux model. */
function externalConfig(scratch: Scratch): string {
  const path = join(scratch.base, "config.json");
  writeFileSync(path, JSON.stringify({ subagents: { provider: "pi-subagents", externalWorkerIsolation: "enforce", workerExtensions: [FAUX] } }));
  return path;
}

describe("pi --mode rpc: external workers of pi-subagents (a stand-in), each in its own sandbox", () => {
  it("a worker launched through PI_SUBAGENT_PI_BINARY reads no hidden home file, writes only its workspace, and its network request is asked as pi-subagents-worker:<id>", async () => {
    await withScratch(async (scratch) => {
      const brokerLog = join(scratch.base, "broker.jsonl");
      writeFileSync(join(scratch.home, "secret"), "s3cret\n");
      const env = { ...NO_PARENT, PI_SANDBOX_CONFIG: externalConfig(scratch), E2E_BROKER_LOG: brokerLog };
      const pi = new RpcPi(scratch, { extensions: [EXTENSION, FAUX, BROKER, ORCHESTRATOR], env });
      try {
        await pi.until("the session notices", () => pi.notices().length >= 3);
        assert.deepEqual(pi.notices(), [["info", ISOLATED], ["info", FILE_TOOLS], ["info", ENABLED]]);
        pi.answer = () => assert.fail("the human must not be asked");
        const inside = join(scratch.ws, "from-worker");
        const outside = join(scratch.outside, "from-worker");
        // One pipe for both streams: the worker's Pi's own bash may interleave two pipes.
        const command = `(cat ${join(scratch.home, "secret")}; echo inside > ${inside} && cat ${inside}; echo escape > ${outside}) 2>&1`;
        const confined = await pi.settle(pi.start({ tool: "subagent", args: { task: workerTask(command) } }));
        assert.deepEqual(confined.results, [
          {
            text: `exit 0: done: cat: ${join(scratch.home, "secret")}: No such file or directory\ninside\n/bin/bash: line 1: ${outside}: Read-only file system\n\n\nCommand exited with code 1`,
            isError: false,
          },
        ]);
        assert.equal(readFileSync(inside, "utf8"), "inside\n");
        assert.equal(existsSync(outside), false);

        const network = await pi.settle(pi.start({ tool: "subagent", args: { task: workerTask(`curl -sS --max-time 30 https://${HOST}/`) } }));
        assert.deepEqual(network.results, [{ text: `exit 0: done: ${CURL_403}\n\n\nCommand exited with code 56`, isError: false }]);
        assert.deepEqual(network.ui.map((r) => [r.method, r.message, r.notifyType]), [
          ["notify", `Domain proxy denied: ${BROKER_DENIES}`, "warning"],
        ]);
      } finally {
        await pi.close();
      }
      const reviews = readFileSync(brokerLog, "utf8").trim().split("\n").map((line) => JSON.parse(line));
      assert.deepEqual(reviews.map((c) => [c.call, c.surface]), [["review", "network"]]);
      const agentName: string = reviews[0].agentName;
      assert.match(agentName, /^pi-subagents-worker:[0-9a-f]{16}$/);
      assert.match(reviews[0].context.scopeKey, new RegExp(`:${agentName}$`));
    });
  });

  it("the installed extension's launcher (in node_modules) runs the worker in its sandbox", async () => {
    await withScratch(async (scratch) => {
      installPacked(scratch);
      const env = { ...NO_PARENT, PI_SANDBOX_CONFIG: externalConfig(scratch) };
      const inside = join(scratch.ws, "from-worker");
      const outside = join(scratch.outside, "from-worker");
      const task = workerTask(`(echo inside > ${inside} && cat ${inside}; echo escape > ${outside}) 2>&1`);
      const run = await runJson(scratch, { tool: "subagent", args: { task } }, { extensions: [FAUX, ORCHESTRATOR], env });
      assert.deepEqual(run.results, [
        { text: `exit 0: done: inside\n/bin/bash: line 1: ${outside}: Read-only file system\n\n\nCommand exited with code 1`, isError: false },
      ]);
      assert.equal(existsSync(outside), false);
    });
  });

  it("killing Pi stops a running external worker: nothing of it is left behind", async () => {
    await withScratch(async (scratch) => {
      // A killed Pi removes neither its supervisor's socket directory nor the orchestrator's task
      // file: both go to a temporary directory in the scratch dir, removed with it.
      const tmp = join(scratch.base, "tmp");
      mkdirSync(tmp);
      const env = { ...NO_PARENT, PI_SANDBOX_CONFIG: externalConfig(scratch), TMPDIR: tmp };
      const pi = new RpcPi(scratch, { extensions: [EXTENSION, FAUX, ORCHESTRATOR], env });
      await pi.until("the session notices", () => pi.notices().length >= 3);
      const late = join(scratch.ws, "late");
      pi.start({ tool: "subagent", args: { task: workerTask(`echo started; sleep 120; echo late > ${late}`) } });
      for (let i = 0; i < 300 && !scratch.leftovers().some((p) => p.includes(`sleep 120; echo late > ${late}`)); i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(
        scratch.leftovers().some((p) => p.includes(`sleep 120; echo late > ${late}`)),
        `the worker's command is not seen running: ${scratch.leftovers()}`,
      );
      await pi.kill();
      let left = scratch.leftovers();
      for (let i = 0; i < 200 && left.length > 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        left = scratch.leftovers();
      }
      assert.deepEqual(left, []);
      assert.equal(existsSync(late), false);
    });
  });

  it("fails closed: with PI_SUBAGENT_PI_BINARY already set, the session warns and every subagent call is refused", async () => {
    await withScratch(async (scratch) => {
      const marker = join(scratch.outside, "host-launch");
      const other = join(scratch.base, "other-launcher");
      writeFileSync(other, `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
      const env = { ...NO_PARENT, PI_SANDBOX_CONFIG: externalConfig(scratch), PI_SUBAGENT_PI_BINARY: other };
      const pi = new RpcPi(scratch, { extensions: [EXTENSION, FAUX, ORCHESTRATOR], env });
      try {
        await pi.until("the session notices", () => pi.notices().length >= 3);
        const failure = `PI_SUBAGENT_PI_BINARY is already set (${other}); pi-sandbox will not wrap another launcher`;
        assert.deepEqual(pi.notices(), [
          ["warning", `pi-sandbox: external worker isolation unavailable; child launches will fail closed: ${failure}`],
          ["info", FILE_TOOLS],
          ["info", ENABLED],
        ]);
        const { results } = await pi.settle(pi.start({ tool: "subagent", args: { task: workerTask("echo hi") } }));
        assert.deepEqual(results, [
          { text: `pi-sandbox: external worker isolation is unavailable; refusing host worker launch: ${failure}`, isError: true },
        ]);
        assert.equal(existsSync(marker), false);
      } finally {
        await pi.close();
      }
    });
  });
});

// ---- Pi's file tools under the sandbox's policy (docs/security.md, "Pi's file tools") ----

/** The faux model's call of `tool` with `args`. */
const call = (tool: string, args: object): Prompt => ({ tool, args });

/** Text and isError of each tool result, and the result's full content (images too). */
function contentsOf(events: any[]): unknown[] {
  return events.filter((e) => e.type === "tool_execution_end").map((e) => [e.result?.content, e.isError === true]);
}

describe("pi --mode json: the file tools under the sandbox's policy", () => {
  it("reads, writes and edits inside the workspace exactly as Pi's own tools do", async () => {
    await withScratch(async (scratch) => {
      // Long enough for Pi's truncation notice, with a line over the byte limit further on.
      const lines = Array.from({ length: 2500 }, (_, i) => `line ${i + 1}\t${"é".repeat(i % 7)}`);
      const text = `${lines.join("\n")}\n`;
      const png = Buffer.from(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
        "base64",
      );
      const prompts: Prompt[] = [
        call("read", { path: "big.txt" }),
        call("read", { path: "big.txt", offset: 2400, limit: 50 }),
        call("read", { path: "pixel.png" }),
        call("write", { path: "sub/dir/new.txt", content: "new\nfile\n" }),
        call("edit", { path: "big.txt", edits: [{ oldText: "line 7\t", newText: "LINE SEVEN\t" }] }),
        call("read", { path: "missing.txt" }),
      ];
      const seen: Record<string, { contents: unknown[]; files: string[] }> = {};
      for (const [name, extensions] of [
        ["sandboxed", [EXTENSION, FAUX]],
        ["pi's own", [FAUX]],
      ] as const) {
        rmSync(scratch.ws, { recursive: true, force: true });
        mkdirSync(scratch.ws);
        writeFileSync(join(scratch.ws, "big.txt"), text);
        writeFileSync(join(scratch.ws, "pixel.png"), png);
        const contents: unknown[] = [];
        for (const prompt of prompts) contents.push(...contentsOf((await runJson(scratch, prompt, { extensions: [...extensions] })).events));
        const files = ["big.txt", "sub/dir/new.txt"].map((f) => readFileSync(join(scratch.ws, f), "utf8"));
        seen[name] = { contents, files };
      }
      // The refused read of a missing file keeps Pi's own error text, with the path.
      assert.deepEqual(seen.sandboxed.files, seen["pi's own"].files);
      assert.deepEqual(seen.sandboxed.contents.slice(0, 5), seen["pi's own"].contents.slice(0, 5));
      assert.equal((seen.sandboxed.contents[5] as any)[1], true);
      assert.match(JSON.stringify(seen.sandboxed.contents[5]), /ENOENT/);
      assert.match(JSON.stringify(seen.sandboxed.contents[0]), /Use offset=2001 to continue/);
      assert.match(JSON.stringify(seen.sandboxed.contents[2]), /"type":"image"/);
    });
  });

  it("refuses a hidden home file, a write outside the workspace, into the hidden home and to protected paths", async () => {
    await withScratch(async (scratch) => {
      mkdirSync(join(scratch.home, ".ssh"));
      const key = join(scratch.home, ".ssh/id_rsa");
      writeFileSync(key, "PRIVATE KEY\n");
      const bashrc = join(scratch.home, ".bashrc");
      writeFileSync(bashrc, "# host bashrc\n");
      writeFileSync(join(scratch.ws, ".bashrc"), "# workspace bashrc\n");
      symlinkSync(key, join(scratch.ws, "key-link"));
      const outside = join(scratch.outside, "x.txt");
      const cases: Array<[Prompt, string | RegExp]> = [
        [call("read", { path: key }), `pi-sandbox: read refused: ${key} is outside what the sandbox may read (hidden home)`],
        [call("read", { path: "~/.ssh/id_rsa" }), `pi-sandbox: read refused: ${key} is outside what the sandbox may read (hidden home)`],
        [call("read", { path: "key-link" }), `pi-sandbox: read refused: ${join(scratch.ws, "key-link")} is outside what the sandbox may read (hidden home)`],
        [call("write", { path: outside, content: "no\n" }), `pi-sandbox: write refused: ${outside} is outside what the sandbox may write`],
        [call("write", { path: bashrc, content: "evil\n" }), `pi-sandbox: write refused: ${bashrc} is outside what the sandbox may write (hidden home)`],
        [call("edit", { path: bashrc, edits: [{ oldText: "host", newText: "evil" }] }), `pi-sandbox: edit refused: ${bashrc} is outside what the sandbox may read (hidden home)`],
        [call("write", { path: ".bashrc", content: "evil\n" }), new RegExp(`^pi-sandbox: write refused: ${join(scratch.ws, ".bashrc")} is a protected path`)],
        [call("write", { path: ".mcp.json", content: "{}\n" }), new RegExp(`^pi-sandbox: write refused: ${join(scratch.ws, ".mcp.json")} is a protected path`)],
        [call("write", { path: "/tmp/pi-sandbox-e2e-discarded", content: "x\n" }), "pi-sandbox: write refused: /tmp/pi-sandbox-e2e-discarded is outside what the sandbox may write (the sandbox's private /tmp, discarded after the command)"],
      ];
      for (const [prompt, expected] of cases) {
        const { results } = await runJson(scratch, prompt);
        assert.equal(results.length, 1, JSON.stringify(prompt));
        assert.equal(results[0].isError, true, `${JSON.stringify(prompt)}: ${results[0].text}`);
        if (typeof expected === "string") assert.equal(results[0].text, expected);
        else assert.match(results[0].text, expected);
      }
      assert.equal(existsSync(outside), false);
      assert.equal(readFileSync(bashrc, "utf8"), "# host bashrc\n");
      assert.equal(readFileSync(join(scratch.ws, ".bashrc"), "utf8"), "# workspace bashrc\n");
      assert.equal(existsSync(join(scratch.ws, ".mcp.json")), false);
      assert.equal(existsSync("/tmp/pi-sandbox-e2e-discarded"), false);
    });
  });

  it("started in the home: a read of a credential, or of a hard link to one, never shows it", async () => {
    await withScratch(async (scratch) => {
      // docs/security.md, "Credentials" and "Hard links and binds of a credential": the file
      // tools read inside the sandbox, where the key and its link are masked (empty).
      mkdirSync(join(scratch.home, ".ssh"), { recursive: true });
      const key = join(scratch.home, ".ssh/id_ed25519");
      writeFileSync(key, "PRIVATE KEY MATERIAL\n");
      mkdirSync(join(scratch.home, "project"), { recursive: true });
      linkSync(key, join(scratch.home, "project/key"));
      for (const path of [key, "~/.ssh/id_ed25519", ".ssh/id_ed25519", "project/key"]) {
        const { results, events } = await runJson(scratch, call("read", { path }), { cwd: scratch.home });
        assert.equal(results.length, 1, path);
        assert.doesNotMatch(JSON.stringify(events), /PRIVATE KEY MATERIAL/, path);
        assert.equal(results[0].isError, false, `${path}: ${results[0].text}`);
        assert.equal(results[0].text, "", path);
      }
      assert.equal(readFileSync(key, "utf8"), "PRIVATE KEY MATERIAL\n");
    });
  });

  it("with pi.fileTools host, Pi's own tools run unconfined, and the notice says so", async () => {
    await withScratch(async (scratch) => {
      const config = join(scratch.base, "config.json");
      writeFileSync(config, JSON.stringify({ pi: { fileTools: "host" } }));
      const outside = join(scratch.outside, "host.txt");
      const { results } = await runJson(scratch, call("write", { path: outside, content: "host\n" }), { env: { PI_SANDBOX_CONFIG: config } });
      assert.deepEqual(results, [{ text: `Successfully wrote to ${outside}`, isError: false }]);
      assert.equal(readFileSync(outside, "utf8"), "host\n");
    });
  });

  it("edit through a symlink that a concurrent sandboxed command swaps: never outside", async () => {
    await withScratch(async (scratch) => {
      // PI_SANDBOX_E2E_RACES: fewer for a quick run; 1000 by default.
      const races = Number(process.env.PI_SANDBOX_E2E_RACES ?? 1000);
      const victim = join(scratch.outside, "victim.txt");
      writeFileSync(victim, "needle\n");
      writeFileSync(join(scratch.ws, "f"), "needle\n");
      // The swapper: a sandboxed command of the same workspace that replaces `f` by a symlink
      // to the victim and back, atomically, as fast as it can.
      const swapper = spawn(
        scratch.binary,
        ["run", "--cwd", scratch.ws, "--timeout", "3600", "-c", `while :; do printf 'needle\\n' > f.new; mv -f f.new f; ln -sfn ${victim} f.lnk; mv -fT f.lnk f; done`],
        { cwd: scratch.ws, env: scratch.env(), stdio: "ignore" },
      );
      const counts = { edited: 0, refused: 0, other: 0 };
      const others: string[] = [];
      try {
        await withRpc(scratch, {}, async (pi) => {
          for (let i = 0; i < races; i++) {
            const { results } = await pi.prompt(call("edit", { path: "f", edits: [{ oldText: "needle", newText: `edit-${i}` }] }));
            const result = results[0];
            if (!result.isError) counts.edited++;
            else if (result.text === `pi-sandbox: edit refused: ${join(scratch.ws, "f")} is outside what the sandbox may write`) counts.refused++;
            else {
              counts.other++;
              if (others.length < 5) others.push(result.text);
            }
            assert.equal(readFileSync(victim, "utf8"), "needle\n", `race ${i}: the victim outside the workspace changed`);
          }
        });
      } finally {
        swapper.kill("SIGTERM");
        await new Promise((r) => swapper.on("close", r));
      }
      process.stderr.write(`edit races: ${JSON.stringify(counts)} ${others.join(" | ")}\n`);
      assert.equal(readFileSync(victim, "utf8"), "needle\n");
      assert.equal(counts.edited + counts.refused + counts.other, races);
      // The swap did race the edits: some writes met the symlink (and were refused).
      assert.ok(counts.refused > 0, JSON.stringify(counts));
      // Other errors are Pi's own for a file that changed under it (oldText not found), never a write outside.
      for (const text of others) assert.match(text, /Could not find|ENOENT|no such file|not found/i);
    });
  });
});

describe("pi --mode json: output order, a refused configuration, /sandbox", () => {
  it("stdout and stderr reach the model in the order the command wrote them", async () => {
    await withScratch(async (scratch) => {
      const { results } = await runJson(scratch, { command: "for i in $(seq 50); do echo o$i; echo e$i >&2; done" });
      const expected = Array.from({ length: 50 }, (_, i) => `o${i + 1}\ne${i + 1}\n`).join("");
      assert.deepEqual(results, [{ text: expected, isError: false }]);
    });
  });

  it("a PI_SANDBOX_CONFIG inside the workspace: the session says Bash fails closed, and nothing runs", async () => {
    await withScratch(async (scratch) => {
      const config = join(scratch.ws, "config.json");
      writeFileSync(config, "{}");
      const { results, stderr } = await runJson(scratch, { command: "touch ran" }, { env: { PI_SANDBOX_CONFIG: config } });
      const why = `refusing the configuration ${config}: it lies inside the workspace, where sandboxed commands can write`;
      const HINT = "hint: keep it outside the workspace, e.g. in ~/.pi/agent/extensions/pi-sandbox/config.json";
      assert.ok(
        stderr.includes(`pi-sandbox unavailable: ${why}; Bash commands and file tools will fail closed\n${HINT}\n`),
        stderr,
      );
      assert.equal(results.length, 1);
      assert.equal(results[0].isError, true);
      assert.equal(results[0].text, `pi-sandbox unavailable: ${why}; the command was not run\n${HINT}`);
      assert.equal(existsSync(join(scratch.ws, "ran")), false);
      const read = await runJson(scratch, call("read", { path: "config.json" }), { env: { PI_SANDBOX_CONFIG: config } });
      assert.equal(read.results[0].isError, true);
      assert.equal(read.results[0].text, `pi-sandbox unavailable: ${why}; the read tool was not run\n${HINT}`);
    });
  });

  it("/sandbox prints the status in print mode, where no notice is shown", async () => {
    await withScratch(async (scratch) => {
      const run = spawnSync(PI, [...COMMON_ARGS, "-p", ...extensionArgs([EXTENSION, FAUX]), "/sandbox"], {
        cwd: scratch.ws,
        env: scratch.env(),
        encoding: "utf8",
        timeout: WAIT_MS,
      });
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.stdout, /^pi-sandbox: enabled \(pi-sandbox [^)]*\); Bash runs in the sandbox\nfile tools: sandboxed\n/);
      assert.ok(run.stdout.includes(`workspace: ${scratch.ws} (read-write)`), run.stdout);
      assert.ok(run.stdout.includes(`home: ${scratch.home} hidden`), run.stdout);
    });
  });
});

describe("pi --mode json: /sandbox keeps stdout JSON", () => {
  it("/sandbox in json mode prints the status on stderr; every stdout line is JSON", async () => {
    await withScratch(async (scratch) => {
      const run = spawnSync(PI, [...COMMON_ARGS, "--mode", "json", ...extensionArgs([EXTENSION, FAUX]), "/sandbox"], {
        cwd: scratch.ws,
        env: scratch.env(),
        encoding: "utf8",
        timeout: WAIT_MS,
      });
      assert.equal(run.status, 0, run.stderr);
      for (const line of run.stdout.split("\n").filter((l) => l.trim())) assert.doesNotThrow(() => JSON.parse(line), line);
      assert.match(run.stderr, /^pi-sandbox: enabled \(pi-sandbox [^)]*\); Bash runs in the sandbox\nfile tools: sandboxed\n/m);
      assert.ok(run.stderr.includes(`workspace: ${scratch.ws} (read-write)`), run.stderr);
    });
  });
});
