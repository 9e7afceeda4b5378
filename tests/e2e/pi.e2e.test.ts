// End to end: the real `pi` (from integrations/pi/node_modules) with the pi-sandbox
// extension and the real pi-sandbox binary ($PI_SANDBOX_BINARY). The model is Pi's
// scripted (faux) provider, registered by tests/e2e/faux-model.ts: each prompt is the
// JSON arguments of one `bash` tool call. Every test has its own scratch HOME, workspace
// and binary link, and checks that nothing of it is left running before removing it.
// Run by tests/e2e/run.
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
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
const HOST_WARNING = "Warning: this command will run on the host outside the OS sandbox.";
const NO_BROKER = "pi-auto-review broker is unavailable";
const ALLOW_ONCE = "Allow this exact operation once";

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

  /** Processes whose command line names this scratch dir (serve, sandboxed commands). */
  leftovers(): string[] {
    const found: string[] = [];
    for (const pid of readdirSync("/proc")) {
      if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
        if (cmdline.includes(this.base)) found.push(`${pid}: ${cmdline.trim()}`);
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

/** One `pi --mode json` run with one scripted `bash` call; its tool results and stderr. */
async function runJson(
  scratch: Scratch,
  bashArgs: { command: string; timeout?: number },
  options: { extensions?: string[]; env?: Record<string, string | undefined> } = {},
): Promise<{ results: ToolResult[]; stderr: string; events: any[] }> {
  const args = [...COMMON_ARGS, "--mode", "json", ...extensionArgs(options.extensions ?? [EXTENSION, FAUX])];
  const child = spawn(PI, [...args, JSON.stringify(bashArgs)], {
    cwd: scratch.ws,
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
  const results = events.filter((e) => e.type === "tool_execution_end" && e.toolName === "bash").map(toolResultOf);
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

  constructor(scratch: Scratch, options: { extensions?: string[]; env?: Record<string, string | undefined> } = {}) {
    const args = [...COMMON_ARGS, "--mode", "rpc", ...extensionArgs(options.extensions ?? [EXTENSION, FAUX])];
    this.child = spawn(PI, args, { cwd: scratch.ws, env: scratch.env(options.env), stdio: ["pipe", "pipe", "pipe"] });
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
  async prompt(bashArgs: { command: string; timeout?: number }): Promise<{ results: ToolResult[]; ui: UiRequest[] }> {
    return this.settle(this.start(bashArgs));
  }

  /** Sends one prompt without waiting; returns where its records begin. */
  start(bashArgs: { command: string; timeout?: number }): { id: string; first: number; firstUi: number } {
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
      .filter((r) => r.type === "tool_execution_end" && r.toolName === "bash")
      .map(toolResultOf);
    return { results, ui: this.ui.slice(firstUi) };
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

  notices(): Array<[string | undefined, string | undefined]> {
    return this.ui.filter((r) => r.method === "notify").map((r) => [r.notifyType, r.message]);
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
  options: { extensions?: string[]; env?: Record<string, string | undefined> },
  fn: (pi: RpcPi) => Promise<void>,
): Promise<void> {
  const pi = new RpcPi(scratch, options);
  try {
    // The session_start notices (compatibility C79) come first, in every session.
    await pi.until("the session notices", () => pi.notices().length >= 2);
    assert.deepEqual(pi.notices(), [["info", BUILTIN], ["info", ENABLED]]);
    await fn(pi);
  } finally {
    await pi.close();
  }
}

/** A trusted configuration outside the workspace, for `PI_SANDBOX_CONFIG`. */
function hostIpcConfig(scratch: Scratch): string {
  const path = join(scratch.base, "config.json");
  writeFileSync(path, JSON.stringify({ hostIPC: { mode: "ask", preflightCommandPrefixes: ["printf"] } }));
  return path;
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
        { command: `echo refused > ${etc}; echo written > inside.txt && echo "inside: $(cat inside.txt)"` },
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
      const pack = spawnSync("npm", ["pack", "--silent", "--pack-destination", scratch.base], {
        cwd: EXTENSION,
        env: scratch.env(),
        encoding: "utf8",
      });
      assert.equal(pack.status, 0, pack.stderr);
      const tarball = join(scratch.base, pack.stdout.trim().split("\n").at(-1)!);
      const name = JSON.parse(readFileSync(join(EXTENSION, "package.json"), "utf8")).name;
      piInstall(scratch, `npm:${name}@file:${tarball}`);
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

  it("finds pi-sandbox on PATH when PI_SANDBOX_BIN is not set", async () => {
    await withScratch(async (scratch) => {
      const etc = `/etc/${marker()}`;
      const { results } = await runJson(scratch, { command: `touch ${etc} || echo refused` }, {
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
        stderr.includes(`pi-sandbox unavailable: PI_SANDBOX_BIN=${missing} is not an executable file; Bash commands will fail closed`),
        stderr,
      );
    });
  });
});

describe("pi --mode rpc: approvals in Pi's UI", () => {
  it("shows the session notices; host-IPC allowed runs on the host, denied does not run", async () => {
    await withScratch(async (scratch) => {
      const config = hostIpcConfig(scratch);
      await withRpc(scratch, { env: { PI_SANDBOX_CONFIG: config } }, async (pi) => {
        const allowedMarker = join(scratch.outside, "allowed");
        const allowedCommand = `printf 'ran on the host\\n' > ${allowedMarker} && cat ${allowedMarker}`;
        pi.answer = () => ALLOW_ONCE;
        const allowed = await pi.prompt({ command: allowedCommand });
        assert.deepEqual(
          allowed.ui.map((r) => [r.method, r.title, r.options]),
          [["select", `Sandbox approval required: execute-host ${allowedCommand}\n${HOST_WARNING}\n${NO_BROKER}`, [ALLOW_ONCE, "Deny"]]],
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
            ["select", `Sandbox approval required: execute-host ${deniedCommand}\n${HOST_WARNING}\n${NO_BROKER}`, [ALLOW_ONCE, "Deny"]],
            ["notify", `Host-IPC denied: ${NO_BROKER}`, "warning"],
          ],
        );
        assert.deepEqual(denied.results, [
          { text: "pi-sandbox: host-IPC execution denied: Denied by the user.\n\n\nCommand exited with code 1", isError: true },
        ]);
        assert.equal(existsSync(deniedMarker), false);
      });
      const audit = readFileSync(join(scratch.home, ".pi/agent/logs/pi-sandbox-audit.jsonl"), "utf8");
      assert.match(audit, /"event":"grant_consumed"/);
      assert.match(audit, /"action":"deny","source":"human"/);
    });
  });

  it("a network approval: the question with the three choices; deny refuses the connection", async () => {
    await withScratch(async (scratch) => {
      await withRpc(scratch, {}, async (pi) => {
        pi.answer = () => "Deny";
        // Denied before any lookup or connection: no traffic leaves the machine.
        const { results, ui } = await pi.prompt({ command: "curl -sS --max-time 30 https://e2e.pi-sandbox.example/" });
        assert.deepEqual(
          ui.map((r) => [r.method, r.title ?? r.message, r.options ?? r.notifyType]),
          [
            [
              "select",
              `Sandbox approval required: connect e2e.pi-sandbox.example:443\n${NO_BROKER}`,
              [ALLOW_ONCE, "Allow e2e.pi-sandbox.example:443 for the rest of this command", "Deny"],
            ],
            ["notify", `Domain proxy denied: ${NO_BROKER}`, "warning"],
          ],
        );
        assert.deepEqual(results, [
          {
            text:
              "pi-sandbox: network: refused e2e.pi-sandbox.example:443: Denied by the user.\n" +
              "curl: (56) CONNECT tunnel failed, response 403\n\n\nCommand exited with code 56",
            isError: true,
          },
        ]);
      });
    });
  });

  it("runs ! commands (the RPC bash command, user_bash) in the sandbox", async () => {
    await withScratch(async (scratch) => {
      await withRpc(scratch, {}, async (pi) => {
        const etc = `/etc/${marker()}`;
        const data = await pi.bash(`echo typed > ${etc}; echo typed > typed.txt; cat typed.txt`);
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
        const serve = `${scratch.binary} serve`;
        const running = scratch.leftovers().filter((p) => !p.includes(serve));
        assert.ok(running.some((p) => p.includes(`sleep 120; echo late > ${late}`)), `the command is not seen running: ${running}`);
        pi.abort();
        const { results } = await pi.settle(started);
        assert.deepEqual(results, [{ text: "started\n\n\nCommand aborted", isError: true }]);
        // serve is still running; the command (bash and its sleep) must be gone.
        let left = scratch.leftovers().filter((p) => !p.includes(serve));
        for (let i = 0; i < 50 && left.length > 0; i++) {
          await new Promise((r) => setTimeout(r, 100));
          left = scratch.leftovers().filter((p) => !p.includes(serve));
        }
        assert.deepEqual(left, []);
        assert.equal(existsSync(late), false);
      });
    });
  });
});

describe("pi --mode rpc: approvals through the pi-auto-review broker", () => {
  it("an allow consumes the broker's grant and asks nobody; a deny raises the notice with the rationale", async () => {
    await withScratch(async (scratch) => {
      const config = hostIpcConfig(scratch);
      const brokerLog = join(scratch.base, "broker.jsonl");
      await withRpc(scratch, { extensions: [EXTENSION, FAUX, BROKER], env: { PI_SANDBOX_CONFIG: config, E2E_BROKER_LOG: brokerLog } }, async (pi) => {
        pi.answer = () => assert.fail("the human must not be asked");
        const allowedMarker = join(scratch.outside, "broker-allows");
        const allowed = await pi.prompt({ command: `printf 'broker-allows\\n' > ${allowedMarker} && cat ${allowedMarker}` });
        assert.deepEqual(allowed.results, [{ text: "broker-allows\n", isError: false }]);
        assert.deepEqual(allowed.ui, []);

        const deniedMarker = join(scratch.outside, "denied");
        const denied = await pi.prompt({ command: `printf 'no\\n' > ${deniedMarker}` });
        assert.deepEqual(denied.results, [
          { text: "pi-sandbox: host-IPC execution denied: Denied by the user.\n\n\nCommand exited with code 1", isError: true },
        ]);
        assert.deepEqual(denied.ui.map((r) => [r.method, r.message, r.notifyType]), [
          ["notify", "Host-IPC denied: e2e broker: this command is not allowed", "warning"],
        ]);
        assert.equal(existsSync(deniedMarker), false);
      });
      const calls = readFileSync(brokerLog, "utf8").trim().split("\n").map((line) => JSON.parse(line));
      assert.deepEqual(calls.map((c) => [c.call, c.surface ?? null, c.ok ?? null]), [
        ["review", "host-ipc", null],
        ["consumeGrant", null, true],
        ["review", "host-ipc", null],
      ]);
      const sessionId = calls[0].context.sessionId;
      assert.match(sessionId, /\S/);
      assert.equal(calls[1].sessionId, sessionId);
      for (const review of [calls[0], calls[2]]) {
        assert.match(review.context.scopeKey, new RegExp(`^${sessionId}:turn:\\d+$`));
        assert.equal(review.context.issueGrant, true);
      }
    });
  });
});
