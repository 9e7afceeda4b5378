// The extension against a fake Pi (ExtensionAPI and context) and a scripted serve
// (test/fake-pi-sandbox): registration, notices, the bash tool, user_bash, approvals,
// timeouts, aborts and failing closed.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { BoundaryBroker, BoundaryDecision } from "../src/approval.ts";
import { registerPiSandbox, type PiSandboxExtensionOptions } from "../src/index.ts";

const FAKE = fileURLToPath(new URL("./fake-pi-sandbox", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "pi-sandbox-ext-test-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

const ENABLED = "pi-sandbox enabled: Linux Sandbox Runtime with static filesystem policy and per-connection network review";
const BUILTIN =
  "pi-sandbox subagent provider: builtin; worker process trees use the outer Sandbox Runtime sandbox";

const FILE_TOOLS = "pi-sandbox file tools: sandboxed; read, write, edit and ls obey the sandbox's policy";

const NO_UI = "Approval needs a human, and none could be asked (Pi has no interactive UI in this mode).";

type Handler = (event: unknown, ctx: unknown) => unknown;
type Dialog = { title: string; options: string[]; signal?: AbortSignal; timeout?: number };
/** The human: a label, undefined (Esc), or a function of the dialog (e.g. one that waits). */
type Answer = string | undefined | ((dialog: Dialog) => Promise<string | undefined>);
let logCounter = 0;

/** Pi's select for a dialog nobody answers: undefined when closed or when its countdown ends. */
export function unanswered(dialog: Dialog): Promise<string | undefined> {
  return new Promise((resolve) => {
    const timer = dialog.timeout ? setTimeout(() => resolve(undefined), dialog.timeout) : undefined;
    dialog.signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve(undefined);
      },
      { once: true },
    );
  });
}

/** A Pi instance reduced to what the extension uses, plus one UI context. */
function fakePi(
  options: {
    env?: NodeJS.ProcessEnv;
    answer?: Answer;
    hasUI?: boolean;
    platform?: NodeJS.Platform;
    broker?: BoundaryBroker;
    /** Whether pi-auto-review published a broker that cannot be used (default: nothing published). */
    brokerFailed?: boolean;
    /** Pi's other tools (getAllTools) and the active names (default: bash only). */
    allTools?: Array<{ name: string; sourceInfo?: { source?: string; path?: string; baseDir?: string } }>;
    activeTools?: string[];
    /** More options of registerPiSandbox(). */
    extra?: Partial<PiSandboxExtensionOptions>;
  } = {},
) {
  const log = join(scratch, `requests-${logCounter++}.jsonl`);
  writeFileSync(log, "");
  const tools: any[] = [];
  const handlers = new Map<string, Handler[]>();
  const notices: Array<[string | undefined, string]> = [];
  const asked: Dialog[] = [];
  const pi = {
    registerTool: (tool: unknown) => tools.push(tool),
    on: (event: string, handler: Handler) => {
      handlers.set(event, [...(handlers.get(event) ?? []), handler]);
      return () => {};
    },
    getActiveTools: () => options.activeTools ?? ["bash"],
    getAllTools: () => options.allTools ?? [],
  };
  const ctx = {
    hasUI: options.hasUI ?? true,
    mode: "rpc",
    cwd: scratch,
    ui: {
      notify: (message: string, type?: string) => notices.push([type, message]),
      select: async (title: string, opts: string[], dialog: { signal?: AbortSignal; timeout?: number } = {}) => {
        const shown: Dialog = { title, options: opts, ...dialog };
        asked.push(shown);
        return typeof options.answer === "function" ? options.answer(shown) : options.answer;
      },
    },
    sessionManager: { getSessionId: () => "sess-1", getSessionFile: () => undefined },
    model: undefined,
    thinkingLevel: undefined,
  };
  const env: NodeJS.ProcessEnv = { ...process.env, PI_SANDBOX_BIN: FAKE, FAKE_SERVE_LOG: log, ...options.env };
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
  const register = () =>
    registerPiSandbox(pi as any, {
      env,
      platform: options.platform ?? "linux",
      broker: () => options.broker,
      brokerFailed: () => options.brokerFailed ?? false,
      ...options.extra,
    });
  const bash = (command: string, extra: { timeout?: number; signal?: AbortSignal } = {}) =>
    tools[0].execute("call-1", { command, timeout: extra.timeout }, extra.signal, undefined, ctx);
  const responses = () => requests().filter((r) => r.type === "approval_response");
  /** Waits until `n` dialogs have been shown. */
  const dialogs = (n: number) => until(`${n} dialog(s)`, () => asked.length >= n);
  return { pi, tools, handlers, notices, asked, ctx, env, emit, requests, responses, dialogs, register, bash };
}

/** Waits until `test` holds (at most 10 s, then fails saying what it waited for). */
async function until(what: string, test: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !test(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(test(), `timed out waiting for ${what}`);
}

const text = (result: any) => result.content.map((c: any) => c.text).join("");

describe("registration", () => {
  it("is idempotent per Pi instance and replaces bash with the same parameters", async () => {
    const fake = fakePi();
    await Promise.all([fake.register(), fake.register()]);
    await fake.register();
    // bash, the file tools (README, "File tools"), and the builtin provider's subagent tool.
    assert.deepEqual(fake.tools.map((t) => t.name), ["bash", "read", "write", "edit", "ls", "grep", "find", "subagent"]);
    assert.deepEqual(fake.tools.map((t) => t.defaultActive), [undefined, undefined, undefined, undefined, false, false, false, undefined]);
    assert.equal(fake.tools.at(-1).label, "Subagent (pi-sandbox)");
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
    assert.deepEqual(fake.notices, [["info", BUILTIN], ["info", FILE_TOOLS], ["info", ENABLED]]);
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
    assert.equal(execs[0].stderr, "stdout");
    assert.equal(fake.requests().at(-1).type, "shutdown");
    await assert.rejects(fake.bash("echo after"), /pi-sandbox unavailable: the Pi session has ended; the command was not run/);
  });

  it("shows the provider off notice from the trusted configuration", async () => {
    const fake = fakePi({ env: { FAKE_PROVIDER: "off", PI_SANDBOX_CONFIG: "/trusted/config.json" } });
    await fake.register();
    await fake.emit("session_start", { reason: "startup" });
    assert.deepEqual(fake.notices, [
      ["info", "pi-sandbox subagent provider: off; pi-sandbox protects Bash execution only"],
      ["info", FILE_TOOLS],
      ["info", ENABLED],
    ]);
    // The configuration is read at registration (which tools) and again at session start (the
    // notice) when the session's workspace is another directory.
    assert.deepEqual(fake.requests().filter((r) => r.argv).map((r) => r.argv), [
      ["config", "check", "/trusted/config.json", "--cwd", process.cwd()],
      ["config", "check", "/trusted/config.json", "--cwd", scratch],
      ["serve", "--config", "/trusted/config.json"],
    ]);
    assert.deepEqual(fake.tools.map((t) => t.name), ["bash", "read", "write", "edit", "ls", "grep", "find"]);
    await fake.emit("session_shutdown", { reason: "quit" });
  });

  it("reads the configuration once when the session starts where Pi was started, and again for the next session", async () => {
    const fake = fakePi({ env: { PI_SANDBOX_CONFIG: "/trusted/config.json" } });
    (fake.ctx as { cwd: string }).cwd = process.cwd();
    await fake.register();
    await fake.emit("session_start", { reason: "startup" });
    await fake.emit("session_start", { reason: "new" });
    assert.deepEqual(fake.requests().filter((r) => r.argv).map((r) => r.argv), [
      ["config", "check", "/trusted/config.json", "--cwd", process.cwd()],
      ["serve", "--config", "/trusted/config.json"],
      ["config", "check", "/trusted/config.json", "--cwd", process.cwd()],
      ["serve", "--config", "/trusted/config.json"],
    ]);
    await fake.emit("session_shutdown", { reason: "quit" });
  });

  // Who owns the active `subagent` tool under provider pi-subagents (docs/compatibility.md, C79).
  for (const [name, tool, active, notice] of [
    ["no external tool", undefined, false, ["warning", "pi-sandbox provider pi-subagents selected, but no external subagent tool is active"]],
    ["an inactive one", { source: "npm:pi-subagents", path: "/n/pi-subagents/index.ts" }, false, ["warning", "pi-sandbox provider pi-subagents selected, but no external subagent tool is active"]],
    ["a foreign owner", { source: "npm:my-agents", path: "/n/my-agents/index.ts" }, true, ["warning", "pi-sandbox provider pi-subagents selected, but the active subagent tool is owned by unexpected source npm:my-agents (/n/my-agents/index.ts)"]],
    ["a path that only contains the name", { source: "local", path: "/n/not-pi-subagents-x/index.ts" }, true, ["warning", "pi-sandbox provider pi-subagents selected, but the active subagent tool is owned by unexpected source local (/n/not-pi-subagents-x/index.ts)"]],
    ["pi-subagents itself", { source: "local", path: "/home/u/.pi/agent/extensions/pi-subagents/index.ts" }, true, ["info", "pi-subagents orchestration active; pi-sandbox protects Bash execution. External workers are not yet wrapped in an outer Sandbox Runtime sandbox."]],
  ] as const) {
    it(`provider pi-subagents with ${name}: its diagnostic, and no subagent tool of its own`, async () => {
      const fake = fakePi({
        env: { FAKE_PROVIDER: "pi-subagents" },
        allTools: tool ? [{ name: "subagent", sourceInfo: tool }] : [],
        activeTools: active ? ["bash", "subagent"] : ["bash"],
      });
      await fake.register();
      assert.equal(fake.tools.some((t) => t.name === "subagent"), false);
      await fake.emit("session_start", { reason: "startup" });
      assert.deepEqual(fake.notices, [notice, ["info", FILE_TOOLS], ["info", ENABLED]]);
      await fake.emit("session_shutdown", { reason: "quit" });
    });
  }

  it("registers no subagent tool and shows no builtin notice when the configuration cannot be read", async () => {
    const fake = fakePi({ env: { PI_SANDBOX_BIN: "/nonexistent/pi-sandbox" } });
    await fake.register();
    assert.equal(fake.tools.some((t) => t.name === "subagent"), false);
    await fake.emit("session_start", { reason: "startup" });
    assert.equal(fake.notices.some(([, message]) => message === BUILTIN), false);
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

const NETWORK_CHOICES = [
  "Deny",
  "Allow this exact operation once",
  "Allow example.com:443 for the rest of this command",
  "Allow example.com:443 for this session",
];

type FakePi = ReturnType<typeof fakePi>;

/**
 * Runs `fn` in a started session of a fake Pi (session notices cleared), and always ends the
 * session: serve ends every command still running, so a failing test never hangs.
 */
async function withSession(options: Parameters<typeof fakePi>[0], fn: (fake: FakePi) => Promise<void>): Promise<FakePi> {
  const fake = fakePi(options);
  await fake.register();
  await fake.emit("session_start", { reason: "startup" });
  fake.notices.length = 0;
  try {
    await fn(fake);
  } finally {
    await fake.emit("session_shutdown", { reason: "quit" });
  }
  return fake;
}

function brokerOf(decision: BoundaryDecision | Error, consumes = true): BoundaryBroker {
  return {
    review: async () => {
      if (decision instanceof Error) throw decision;
      return decision;
    },
    consumeGrant: () => consumes,
  };
}

describe("approvals", () => {
  it("asks in Pi's UI with the question's texts, Deny first; Deny answers human, `Denied by the user.`, once", async () => {
    await withSession({ answer: "Deny" }, async (fake) => {
      const result = await fake.bash("approve host-ipc echo-denied");
      assert.equal(result.isError, true);
      assert.equal(text(result), "fake: denied (human): Denied by the user.\n\n\nCommand exited with code 1");
      assert.deepEqual(fake.asked.map((a) => [a.title, a.options, a.timeout]), [
        [
          "Sandbox approval required: execute-host approve host-ipc echo-denied\nWarning: this command will run on the host outside the OS sandbox.",
          ["Deny", "Allow this exact operation once"],
          undefined,
        ],
      ]);
      // The notice says the human denied, not the question's reason line; serve's echo is not shown again.
      assert.deepEqual(fake.notices, [["warning", "Host-IPC denied: Denied by the user."]]);
      assert.deepEqual(fake.responses(), [
        { type: "approval_response", id: "c1", request_id: "r1", choice: "deny", source: "human", reason: "Denied by the user." },
      ]);
    });
  });

  it("a published broker that cannot be used: the question says `pi-auto-review broker is unavailable`", async () => {
    await withSession({ answer: "Deny", brokerFailed: true }, async (fake) => {
      await fake.bash("approve host-ipc echo-denied");
      assert.deepEqual(fake.asked.map((a) => a.title), [
        "Sandbox approval required: execute-host approve host-ipc echo-denied\nWarning: this command will run on the host outside the OS sandbox.\npi-auto-review broker is unavailable",
      ]);
    });
  });

  it("Esc (a dismissed dialog) is the human's deny too", async () => {
    await withSession({ answer: undefined }, async (fake) => {
      assert.equal(text(await fake.bash("approve network echo-denied")), "fake: denied (human): Denied by the user.\n\n\nCommand exited with code 1");
      assert.deepEqual(fake.notices, [["warning", "Domain proxy denied: Denied by the user."]]);
    });
  });

  it("a network question offers the four choices in serve's order; each allow is the human's", async () => {
    for (const [label, choice] of [
      ["Allow this exact operation once", "allow-once"],
      ["Allow example.com:443 for the rest of this command", "allow-command"],
    ]) {
      await withSession({ answer: label }, async (fake) => {
        assert.equal(text(await fake.bash("approve network")), `fake: ${choice} (human)\n`);
        assert.deepEqual(fake.asked[0].options, NETWORK_CHOICES);
        assert.deepEqual(fake.responses(), [{ type: "approval_response", id: "c1", request_id: "r1", choice, source: "human" }]);
        assert.deepEqual(fake.notices, []);
      });
    }
  });

  it("allow-session holds for the serve of this Pi session; a new session starts a new serve and asks again", async () => {
    const ended = await withSession({ answer: "Allow example.com:443 for this session" }, async (fake) => {
      assert.equal(text(await fake.bash("approve network")), "fake: allow-session (human)\n");
      assert.equal(text(await fake.bash("approve network")), "fake: allowed for the session\n");
      assert.equal(fake.asked.length, 1);
      await fake.emit("session_start", { reason: "new" });
      const serves = fake.requests().filter((r) => r.argv?.[0] === "serve");
      assert.equal(serves.length, 2);
      assert.equal(fake.requests().filter((r) => r.type === "shutdown").length, 1);
      assert.equal(text(await fake.bash("approve network")), "fake: allow-session (human)\n");
      assert.equal(fake.asked.length, 2);
    });
    assert.equal(ended.requests().filter((r) => r.type === "shutdown").length, 2);
  });

  it("a countdown that runs out is not a human deny: unavailable, `Not answered in time.`", async () => {
    await withSession({ answer: unanswered }, async (fake) => {
      const result = await fake.bash("approve network expires=0.2 echo-denied");
      assert.equal(text(result), "fake: denied (unavailable): Not answered in time.\n\n\nCommand exited with code 1");
      const timeout = fake.asked[0].timeout!;
      assert.ok(timeout > 0 && timeout <= 200, `Pi's countdown got ${timeout} ms`);
      assert.deepEqual(fake.responses(), [
        { type: "approval_response", id: "c1", request_id: "r1", choice: "deny", source: "unavailable", reason: "Not answered in time." },
      ]);
      assert.deepEqual(fake.notices, [["warning", "Domain proxy denied: Not answered in time."]]);
    });
  });

  it("approval_settled closes the open dialog, and nothing is answered", async () => {
    await withSession({ answer: unanswered }, async (fake) => {
      const waiting = fake.bash("approve network");
      await fake.dialogs(1);
      assert.equal(text(await fake.bash("settle c1")), "settled 1\n");
      // The command still runs: only approval_settled can have closed the dialog.
      await until("the dialog closed", () => fake.asked[0].signal?.aborted === true);
      assert.equal(text(await fake.bash("release c1")), "released 1\n");
      assert.equal(text(await waiting), "fake: settled allow-session\n");
      assert.deepEqual(fake.responses(), []);
      assert.deepEqual(fake.notices, []);
    });
  });

  it("a queued dialog whose question was settled is never shown", async () => {
    let answerFirst!: (label: string) => void;
    const answer: Answer = (dialog) =>
      dialog.title.includes("connect")
        ? new Promise((resolve) => (answerFirst = resolve))
        : Promise.resolve("Allow this exact operation once");
    await withSession({ answer }, async (fake) => {
      const first = fake.bash("approve network echo-denied");
      await fake.dialogs(1);
      const second = fake.bash("approve host-ipc");
      await until("the second command's exec", () => fake.requests().some((r) => r.type === "exec" && r.id === "c2"));
      assert.equal(text(await fake.bash("settle c2")), "settled 1\n");
      answerFirst("Deny");
      assert.equal(text(await first), "fake: denied (human): Denied by the user.\n\n\nCommand exited with code 1");
      // c2 still runs, its question settled: its dialog, next in the queue, is never shown.
      assert.equal(text(await fake.bash("echo after")), "after\n");
      assert.equal(text(await fake.bash("release c2")), "released 1\n");
      assert.equal(text(await second), "fake: settled allow-session\n");
      assert.equal(fake.asked.length, 1);
      assert.deepEqual(fake.responses().map((r) => [r.id, r.choice]), [["c1", "deny"]]);
    });
  });

  it("without UI: denied as unavailable, with the reason that nobody could be asked", async () => {
    await withSession({ hasUI: false, answer: "Allow this exact operation once" }, async (headless) => {
      assert.equal(text(await headless.bash("approve network echo-denied")), `fake: denied (unavailable): ${NO_UI}\n\n\nCommand exited with code 1`);
      assert.equal(headless.asked.length, 0);
      assert.deepEqual(headless.responses(), [
        { type: "approval_response", id: "c1", request_id: "r1", choice: "deny", source: "unavailable", reason: NO_UI },
      ]);
      assert.deepEqual(headless.notices, []);
    });
  });

  it("the broker's deny: its rationale in the answer and the notice (reviewer)", async () => {
    const review = { rationale: "e2e: exfiltration" };
    await withSession({ broker: brokerOf({ kind: "deny", review }) }, async (fake) => {
      assert.equal(text(await fake.bash("approve network echo-denied")), "fake: denied (reviewer): e2e: exfiltration\n\n\nCommand exited with code 1");
      assert.deepEqual(fake.responses().map((r) => [r.choice, r.source, r.reason]), [["deny", "reviewer", "e2e: exfiltration"]]);
      assert.deepEqual(fake.notices, [["warning", "Domain proxy denied: e2e: exfiltration"]]);
      assert.equal(fake.asked.length, 0);
    });
  });

  it("the broker's allow: allow-once from the reviewer, with its rationale", async () => {
    await withSession({ broker: brokerOf({ kind: "allow", review: { rationale: "known host" }, grant: { token: "t" } }) }, async (fake) => {
      assert.equal(text(await fake.bash("approve network")), "fake: allow-once (reviewer)\n");
      assert.deepEqual(fake.responses().map((r) => [r.choice, r.source, r.reason]), [["allow-once", "reviewer", "known host"]]);
    });
  });

  it("an invalid grant, and a broker that fails: deny with that source and reason", async () => {
    await withSession({ broker: brokerOf({ kind: "allow", review: { rationale: "ok" }, grant: { token: "t" } }, false) }, async (invalid) => {
      assert.equal(
        text(await invalid.bash("approve host-ipc echo-denied")),
        "fake: denied (invalid-grant): The exact one-shot grant is missing, invalid, or expired.\n\n\nCommand exited with code 1",
      );
      assert.deepEqual(invalid.notices, [["warning", "Host-IPC denied: The exact one-shot grant is missing, invalid, or expired."]]);
    });

    await withSession({ broker: brokerOf(new Error("model down")) }, async (failing) => {
      assert.equal(text(await failing.bash("approve network echo-denied")), "fake: denied (unavailable): Broker failed: model down\n\n\nCommand exited with code 1");
      assert.deepEqual(failing.responses().map((r) => [r.choice, r.source, r.reason]), [["deny", "unavailable", "Broker failed: model down"]]);
      assert.deepEqual(failing.notices, [["warning", "Domain proxy denied: Broker failed: model down"]]);
    });
  });

  it("shows serve's own denials as notices, each denial once", async () => {
    await withSession({}, async (fake) => {
      await fake.bash("serve-denies 3");
      await fake.bash("serve-denies");
      assert.deepEqual(fake.notices, [
        ["warning", "Domain proxy denied: Automatic review stopped after repeated denials in this turn. Use /auto-review-approve for one exact retry."],
        ["warning", "Domain proxy denied: Automatic review stopped after repeated denials in this turn. Use /auto-review-approve for one exact retry."],
      ]);
    });
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
        `pi-sandbox unavailable: PI_SANDBOX_BIN=${join(scratch, "no-such-binary")} is not an executable file; Bash commands and file tools will fail closed`,
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
      ["error", "pi-sandbox unavailable: invalid pi-sandbox configuration: root must be an object; Bash commands and file tools will fail closed"],
    ]);
    assert.equal(fake.requests().filter((r) => r.argv?.[0] === "serve").length, 0);
  });

  it("serve that does not start: the notice says why", async () => {
    const fake = fakePi({ env: { FAKE_SERVE_BROKEN: "exit" } });
    await fake.register();
    await fake.emit("session_start", { reason: "startup" });
    assert.equal(fake.notices.length, 1);
    assert.match(fake.notices[0][1], /^pi-sandbox unavailable: .* serve exited \(status 125\): fake serve: cannot start; Bash commands and file tools will fail closed$/);
  });

  it("the enabled notice names the sandbox serve runs, not the platform Pi runs on", async () => {
    const MACOS = "pi-sandbox enabled: macOS Sandbox Runtime with static filesystem policy and per-connection network review";
    const shown = async (platform: NodeJS.Platform, sandbox?: string) => {
      const fake = fakePi({ platform, env: sandbox ? { FAKE_SERVE_SANDBOX: sandbox } : {} });
      await fake.register();
      await fake.emit("session_start", { reason: "startup" });
      await fake.emit("session_shutdown", { reason: "quit" });
      return fake.notices.at(-1);
    };
    assert.deepEqual(await shown("darwin"), ["info", ENABLED]);
    assert.deepEqual(await shown("darwin", "linux"), ["info", ENABLED]);
    assert.deepEqual(await shown("darwin", "macos"), ["info", MACOS]);
    assert.deepEqual(await shown("linux", "linux"), ["info", ENABLED]);
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

// External workers (README, "External workers"): where isolation cannot be set up, the session
// warns and the orchestrator's `subagent` calls are refused before anything is launched.
describe("external worker isolation", () => {
  const ORCHESTRATOR = { name: "subagent", sourceInfo: { source: "local", path: "/home/u/.pi/agent/extensions/pi-subagents/index.ts" } };
  const enforce = { FAKE_PROVIDER: "pi-subagents", FAKE_EXTERNAL_ISOLATION: "enforce" };

  it("with the launcher missing: the seam names it (a launch fails), the session warns, every subagent call is refused", async () => {
    const missing = join(scratch, "no-such-launcher");
    const fake = fakePi({
      env: { ...enforce, PI_SUBAGENT_PI_BINARY: undefined },
      allTools: [ORCHESTRATOR],
      activeTools: ["bash", "subagent"],
      extra: { externalWorkerLauncher: missing, externalRuns: async () => undefined },
    });
    await fake.register();
    assert.equal(fake.env.PI_SUBAGENT_PI_BINARY, missing);
    await fake.emit("session_start", { reason: "startup" });
    const failure = `the launcher ${missing} is missing`;
    assert.deepEqual(fake.notices, [
      ["warning", `pi-sandbox: external worker isolation unavailable; child launches will fail closed: ${failure}`],
      ["info", FILE_TOOLS],
      ["info", ENABLED],
    ]);
    assert.deepEqual(await fake.emit("tool_call", { toolName: "subagent", toolCallId: "c1", input: {} }), {
      block: true,
      reason: `pi-sandbox: external worker isolation is unavailable; refusing host worker launch: ${failure}`,
    });
    assert.equal(await fake.emit("tool_call", { toolName: "bash", toolCallId: "c2", input: {} }), undefined);
    assert.equal(fake.env.PI_SANDBOX_WORKER_SUPERVISOR, undefined);
    await fake.emit("session_shutdown", { reason: "quit" });
  });

  it("with the launcher present: the seam, the supervisor's address for the launcher, the notice; none of it reaches a command", async () => {
    const fake = fakePi({
      env: { ...enforce, PI_SUBAGENT_PI_BINARY: undefined },
      allTools: [ORCHESTRATOR],
      activeTools: ["bash", "subagent"],
      extra: { externalRuns: async () => undefined },
    });
    await fake.register();
    await fake.emit("session_start", { reason: "startup" });
    assert.deepEqual(fake.notices, [
      ["info", "pi-subagents orchestration active; pi-sandbox protects Bash execution and runs each external worker in a sandbox of its own"],
      ["info", FILE_TOOLS],
      ["info", ENABLED],
    ]);
    assert.match(fake.env.PI_SUBAGENT_PI_BINARY ?? "", /\/bin\/pi-sandbox-external-worker$/);
    assert.match(fake.env.PI_SANDBOX_WORKER_SUPERVISOR ?? "", /\/pi-sandbox-workers-[^/]+\/supervisor\.sock$/);
    assert.match(fake.env.PI_SANDBOX_WORKER_CAPABILITY ?? "", /^[0-9a-f]{64}$/);
    assert.equal(await fake.emit("tool_call", { toolName: "subagent", toolCallId: "c1", input: {} }), undefined);
    // Pi's bash hands the command its own process's environment, where the seam is set.
    process.env.PI_SANDBOX_WORKER_CAPABILITY = fake.env.PI_SANDBOX_WORKER_CAPABILITY;
    try {
      assert.equal(text(await fake.bash("env PI_SANDBOX_WORKER_CAPABILITY")), "(unset)\n");
    } finally {
      delete process.env.PI_SANDBOX_WORKER_CAPABILITY;
    }
    await fake.emit("session_shutdown", { reason: "quit" });
    // The session has ended: a launcher finds no supervisor and refuses.
    assert.equal(fake.env.PI_SANDBOX_WORKER_SUPERVISOR, undefined);
  });
});
