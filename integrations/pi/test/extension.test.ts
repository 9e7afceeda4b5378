// The extension against a fake Pi (ExtensionAPI and context) and a scripted serve
// (test/fake-pi-sandbox): registration, notices, the bash tool, user_bash, approvals,
// timeouts, aborts and failing closed.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { registerPiSandbox } from "../src/index.ts";

const FAKE = fileURLToPath(new URL("./fake-pi-sandbox", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "pi-sandbox-ext-test-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

const ENABLED = "pi-sandbox enabled: Linux Sandbox Runtime with static filesystem policy and per-connection network review";
const BUILTIN =
  "pi-sandbox subagent provider: builtin; worker process trees use the outer Sandbox Runtime sandbox";

type Handler = (event: unknown, ctx: unknown) => unknown;
let logCounter = 0;

/** A Pi instance reduced to what the extension uses, plus one UI context. */
function fakePi(options: { env?: NodeJS.ProcessEnv; answer?: string; hasUI?: boolean; platform?: NodeJS.Platform } = {}) {
  const log = join(scratch, `requests-${logCounter++}.jsonl`);
  writeFileSync(log, "");
  const tools: any[] = [];
  const handlers = new Map<string, Handler[]>();
  const notices: Array<[string | undefined, string]> = [];
  const asked: Array<{ title: string; options: string[] }> = [];
  const pi = {
    registerTool: (tool: unknown) => tools.push(tool),
    on: (event: string, handler: Handler) => {
      handlers.set(event, [...(handlers.get(event) ?? []), handler]);
      return () => {};
    },
    getActiveTools: () => ["bash"],
    getAllTools: () => [],
  };
  const ctx = {
    hasUI: options.hasUI ?? true,
    mode: "rpc",
    cwd: scratch,
    ui: {
      notify: (message: string, type?: string) => notices.push([type, message]),
      select: async (title: string, opts: string[]) => {
        asked.push({ title, options: opts });
        return options.answer;
      },
    },
    sessionManager: { getSessionId: () => "sess-1", getSessionFile: () => undefined },
    model: undefined,
    thinkingLevel: undefined,
  };
  const env = { ...process.env, PI_SANDBOX_BIN: FAKE, FAKE_SERVE_LOG: log, ...options.env };
  const emit = async (event: string, payload: object) => {
    let result: unknown;
    for (const handler of handlers.get(event) ?? []) result = await handler({ type: event, ...payload }, ctx);
    return result;
  };
  const requests = () =>
    readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  const register = () => registerPiSandbox(pi as any, { env, platform: options.platform ?? "linux", broker: () => undefined });
  const bash = (command: string, extra: { timeout?: number; signal?: AbortSignal } = {}) =>
    tools[0].execute("call-1", { command, timeout: extra.timeout }, extra.signal, undefined, ctx);
  return { pi, tools, handlers, notices, asked, ctx, emit, requests, register, bash };
}

const text = (result: any) => result.content.map((c: any) => c.text).join("");

describe("registration", () => {
  it("is idempotent per Pi instance and replaces bash with the same parameters", async () => {
    const fake = fakePi();
    await Promise.all([fake.register(), fake.register()]);
    await fake.register();
    assert.equal(fake.tools.length, 1);
    assert.equal(fake.tools[0].name, "bash");
    assert.equal(fake.tools[0].label, "bash (pi-sandbox)");
    assert.deepEqual(Object.keys(fake.tools[0].parameters.properties), ["command", "timeout"]);
    assert.deepEqual(
      [...fake.handlers].map(([event, list]) => [event, list.length]),
      [["user_bash", 1], ["turn_start", 1], ["session_start", 1], ["session_shutdown", 1]],
    );
  });
});

describe("a session", () => {
  it("starts serve, shows the notices, runs the tool with the turn's scope key, and stops serve", async () => {
    const fake = fakePi();
    await fake.register();
    await fake.emit("session_start", { reason: "startup" });
    assert.deepEqual(fake.notices, [["info", BUILTIN], ["info", ENABLED]]);
    await fake.emit("turn_start", { turnIndex: 3, timestamp: 0 });
    const result = await fake.bash("echo hi");
    assert.equal(text(result), "hi\n");
    assert.equal(result.isError, undefined);
    const session = await fake.bash("env PI_SESSION_ID");
    assert.equal(text(session), "sess-1\n");
    await fake.emit("session_shutdown", { reason: "quit" });
    const execs = fake.requests().filter((r) => r.type === "exec");
    assert.equal(execs[0].scope_key, "sess-1:turn:3");
    assert.equal(execs[0].cwd, scratch);
    assert.equal(execs[0].stdin, "closed");
    assert.equal(fake.requests().at(-1).type, "shutdown");
    await assert.rejects(fake.bash("echo after"), /pi-sandbox unavailable: the Pi session has ended; the command was not run/);
  });

  it("shows the provider off notice from the trusted configuration", async () => {
    const fake = fakePi({ env: { FAKE_PROVIDER: "off", PI_SANDBOX_CONFIG: "/trusted/config.json" } });
    await fake.register();
    await fake.emit("session_start", { reason: "startup" });
    assert.deepEqual(fake.notices, [["info", "pi-sandbox subagent provider: off; pi-sandbox protects Bash execution only"], ["info", ENABLED]]);
    assert.deepEqual(fake.requests().filter((r) => r.argv).map((r) => r.argv), [
      ["config", "check", "/trusted/config.json"],
      ["serve", "--config", "/trusted/config.json"],
    ]);
    await fake.emit("session_shutdown", { reason: "quit" });
  });

  it("reports exit codes, signals, timeouts, aborts and launch failures as Pi's bash does", async () => {
    const fake = fakePi();
    await fake.register();
    await fake.emit("session_start", { reason: "startup" });
    const bytes = await fake.bash("bytes");
    assert.equal(bytes.isError, true);
    assert.match(text(bytes), /é\n\n\nCommand exited with code 3$/);
    assert.match(text(await fake.bash("signal")), /Command exited with code 137$/);
    await assert.rejects(fake.bash("sleep", { timeout: 0.2 }), { message: "Command timed out after 0.2 seconds" });
    const controller = new AbortController();
    const sleeping = fake.bash("sleep", { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await assert.rejects(sleeping, { message: "Command aborted" });
    await assert.rejects(fake.bash("launch-fail"), {
      message: "pi-sandbox could not start the command: mount(/ws): EPERM",
    });
    await assert.rejects(fake.bash("echo x", { timeout: -1 }), /Invalid timeout/);
    await fake.emit("session_shutdown", { reason: "quit" });
  });

  it("runs ! commands through serve (user_bash)", async () => {
    const fake = fakePi();
    await fake.register();
    await fake.emit("session_start", { reason: "startup" });
    const result = (await fake.emit("user_bash", { command: "echo typed", excludeFromContext: false, cwd: scratch })) as any;
    const chunks: Buffer[] = [];
    const { exitCode } = await result.operations.exec("echo typed", scratch, { onData: (d: Buffer) => chunks.push(d) });
    assert.equal(exitCode, 0);
    assert.equal(Buffer.concat(chunks).toString(), "typed\n");
    await fake.emit("session_shutdown", { reason: "quit" });
  });

  it("starts a new serve when the old one died", async () => {
    const fake = fakePi();
    await fake.register();
    await fake.emit("session_start", { reason: "startup" });
    await assert.rejects(fake.bash("die"), /serve exited \(status 7\)/);
    assert.equal(text(await fake.bash("echo again")), "again\n");
    assert.equal(fake.requests().filter((r) => r.argv?.[0] === "serve").length, 2);
    await fake.emit("session_shutdown", { reason: "quit" });
  });
});

describe("approvals", () => {
  it("asks in Pi's UI with the reference's texts; a deny raises the notice once", async () => {
    const fake = fakePi({ answer: "Deny" });
    await fake.register();
    await fake.emit("session_start", { reason: "startup" });
    fake.notices.length = 0;
    const result = await fake.bash("approve host-ipc echo-denied");
    assert.equal(result.isError, true);
    assert.equal(text(result), "fake: denied\n\n\nCommand exited with code 1");
    assert.deepEqual(fake.asked, [
      {
        title:
          "Sandbox approval required: execute-host approve host-ipc echo-denied\nWarning: this command will run on the host outside the OS sandbox.\npi-auto-review broker is unavailable",
        options: ["Allow this exact operation once", "Deny"],
      },
    ]);
    assert.deepEqual(fake.notices, [["warning", "Host-IPC denied: pi-auto-review broker is unavailable"]]);
    const response = fake.requests().find((r) => r.type === "approval_response");
    assert.deepEqual(response, {
      type: "approval_response",
      id: "c1",
      request_id: "r1",
      choice: "deny",
      reason: "pi-auto-review broker is unavailable",
    });
    await fake.emit("session_shutdown", { reason: "quit" });
  });

  it("answers allow-command with the label serve gave", async () => {
    const fake = fakePi({ answer: "Allow example.com:443 for the rest of this command" });
    await fake.register();
    await fake.emit("session_start", { reason: "startup" });
    const result = await fake.bash("approve network");
    assert.equal(text(result), "fake: allow-command\n");
    assert.deepEqual(fake.asked[0].options, [
      "Allow this exact operation once",
      "Allow example.com:443 for the rest of this command",
      "Deny",
    ]);
    await fake.emit("session_shutdown", { reason: "quit" });
  });

  it("denies without UI, and shows serve's own denials as notices", async () => {
    const headless = fakePi({ hasUI: false, answer: "Allow this exact operation once" });
    await headless.register();
    await headless.emit("session_start", { reason: "startup" });
    assert.equal(text(await headless.bash("approve network")), "fake: denied\n\n\nCommand exited with code 1");
    assert.equal(headless.asked.length, 0);
    await headless.emit("session_shutdown", { reason: "quit" });

    const fake = fakePi();
    await fake.register();
    await fake.emit("session_start", { reason: "startup" });
    fake.notices.length = 0;
    await fake.bash("serve-denies");
    assert.deepEqual(fake.notices, [
      ["warning", "Domain proxy denied: Automatic review stopped after repeated denials in this turn."],
    ]);
    await fake.emit("session_shutdown", { reason: "quit" });
  });
});

describe("failing closed", () => {
  it("no binary: an error notice, and every command fails without running", async () => {
    const fake = fakePi({ env: { PI_SANDBOX_BIN: join(scratch, "no-such-binary") } });
    await fake.register();
    await fake.emit("session_start", { reason: "startup" });
    assert.deepEqual(fake.notices, [
      [
        "error",
        `pi-sandbox unavailable: PI_SANDBOX_BIN=${join(scratch, "no-such-binary")} is not an executable file; Bash commands will fail closed`,
      ],
    ]);
    await assert.rejects(fake.bash("echo never"), {
      message: `pi-sandbox unavailable: PI_SANDBOX_BIN=${join(scratch, "no-such-binary")} is not an executable file; the command was not run`,
    });
    const userBash = (await fake.emit("user_bash", { command: "echo never", excludeFromContext: false, cwd: scratch })) as any;
    await assert.rejects(userBash.operations.exec("echo never", scratch, { onData: () => {} }), /pi-sandbox unavailable/);
  });

  it("an invalid configuration: the message, and no serve", async () => {
    const fake = fakePi({ env: { FAKE_CONFIG_ERROR: "invalid pi-sandbox configuration: root must be an object" } });
    await fake.register();
    await fake.emit("session_start", { reason: "startup" });
    assert.deepEqual(fake.notices, [
      ["error", "pi-sandbox unavailable: invalid pi-sandbox configuration: root must be an object; Bash commands will fail closed"],
    ]);
    assert.equal(fake.requests().filter((r) => r.argv?.[0] === "serve").length, 0);
  });

  it("serve that does not start: the notice says why", async () => {
    const fake = fakePi({ env: { FAKE_SERVE_BROKEN: "exit" } });
    await fake.register();
    await fake.emit("session_start", { reason: "startup" });
    assert.equal(fake.notices.length, 1);
    assert.match(fake.notices[0][1], /^pi-sandbox unavailable: .* serve exited \(status 125\): fake serve: cannot start; Bash commands will fail closed$/);
  });

  it("another platform: the reference's warning, and commands refuse", async () => {
    const fake = fakePi({ platform: "win32" });
    await fake.register();
    await fake.emit("session_start", { reason: "startup" });
    assert.deepEqual(fake.notices, [["warning", "pi-sandbox is unavailable on win32; Bash commands will fail closed"]]);
    await assert.rejects(fake.bash("echo never"), { message: "pi-sandbox does not support win32" });
  });

  it("a tool call without a context throws", async () => {
    const fake = fakePi();
    await fake.register();
    await assert.rejects(fake.tools[0].execute("id", { command: "echo" }, undefined, undefined, undefined), {
      message: "pi-sandbox: missing extension context",
    });
  });
});
