// The subagent manager and tool against a scripted worker (integrations/pi/README.md, "Subagents"): the
// RPC framing, every state, every limit and every message, without Pi and without a sandbox.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { DEPTH_ENV, depthFromEnv, SubagentManager, type WorkerEvents, type WorkerSpec } from "../src/subagent.ts";
import { handoffTask, piCliPath, resolveWorkerModel, SUBAGENT_LABEL, SUBAGENT_SANDBOX, subagentTool } from "../src/subagent-tool.ts";
import { providerCredentialNames, workerDenialLine } from "../src/index.ts";

type Request = { id: string; type: string; message?: string };

/**
 * A worker that answers as `pi --mode rpc` does: `get_state` and `abort` succeed; `prompt`
 * and `follow_up` succeed, then (unless `hold`) `agent_start`, the assistant's reply to the
 * message and `agent_settled`. Every request and spec is recorded.
 */
class ScriptedWorkers {
  readonly specs: WorkerSpec[] = [];
  readonly requests: Request[][] = [];
  readonly events: WorkerEvents[] = [];
  readonly killed: boolean[] = [];
  /** Per worker: answer with this instead of success (by request type). */
  fail: Partial<Record<string, unknown>> = {};
  /** Do not answer these request types at all. */
  silent = new Set<string>();
  /** Hold the run (no settle) until release(). */
  hold = false;
  reply: (message: string) => string = (message) => `did: ${message}`;
  /** The assistant message ends with this error (`stopReason: "error"`). */
  error: string | undefined;
  private held: Array<() => void> = [];

  launch = (spec: WorkerSpec, events: WorkerEvents) => {
    const index = this.specs.length;
    this.specs.push(spec);
    this.requests.push([]);
    this.events.push(events);
    this.killed.push(false);
    const emit = (record: object) => events.stdout(Buffer.from(`${JSON.stringify(record)}\n`));
    return {
      write: (data: string) => {
        for (const line of data.split("\n").filter(Boolean)) {
          const request = JSON.parse(line) as Request;
          this.requests[index]!.push(request);
          if (this.silent.has(request.type)) continue;
          if (request.type in this.fail) {
            emit({ id: request.id, type: "response", success: false, ...(this.fail[request.type] as object) });
            continue;
          }
          // Output that is not JSON is ignored; a split line is reassembled.
          events.stdout(Buffer.from("not json\n"));
          const response = JSON.stringify({ id: request.id, type: "response", command: request.type, success: true });
          events.stdout(Buffer.from(response.slice(0, 10)));
          events.stdout(Buffer.from(`${response.slice(10)}\n`));
          if (request.type === "prompt" || request.type === "follow_up") {
            const run = () => {
              emit({ type: "agent_start" });
              emit({ type: "message_end", message: { role: "user", content: [{ type: "text", text: "ignored" }] } });
              emit({
                type: "message_end",
                message: {
                  role: "assistant",
                  content: [{ type: "text", text: `  ${this.reply(request.message ?? "")}` }, { type: "thinking", thinking: "x" }, { type: "text", text: "  " }],
                  ...(this.error ? { stopReason: "error", errorMessage: this.error } : { stopReason: "stop" }),
                },
              });
              emit({ type: "agent_settled" });
            };
            if (this.hold) this.held.push(run);
            else setImmediate(run);
          }
        }
      },
      closeStdin: () => {},
      kill: () => {
        this.killed[index] = true;
        setImmediate(() => events.exit(137));
      },
    };
  };

  release(): void {
    for (const run of this.held.splice(0)) run();
  }
}

function manager(workers: ScriptedWorkers, options: Partial<ConstructorParameters<typeof SubagentManager>[0]> = {}) {
  return new SubagentManager({ launcher: { launch: workers.launch }, rpcTimeoutMs: 2000, ...options });
}

const ctx = { model: { provider: "p", id: "m" }, cwd: "/w" } as any;

function tool(subagents: SubagentManager) {
  const definition = subagentTool(() => subagents);
  return {
    definition,
    call: async (params: Record<string, unknown>, signal?: AbortSignal) => {
      const result = await definition.execute("t1", params as any, signal, undefined, ctx);
      return { text: (result.content[0] as { text: string }).text, details: result.details };
    },
  };
}

describe("subagent manager", () => {
  it("starts a worker: spec, depth, get_state, then idle; ids <session>:<seq>", async () => {
    const workers = new ScriptedWorkers();
    const subagents = manager(workers, { depth: 0, workerArgs: () => ["--tools", "read,bash"], workerEnv: () => ({ K: "v" }) });
    const session = await subagents.start({ task: "list files", model: "p/m" });
    assert.equal(session.state, "idle");
    assert.deepEqual(workers.specs[0], {
      sessionId: "subagent-1",
      depth: 1,
      approvalCommand: "process-backed subagent: list files",
      agentName: "subagent",
      args: ["--model", "p/m", "--tools", "read,bash"],
      model: "p/m",
      env: { K: "v", [DEPTH_ENV]: "1" },
    });
    assert.deepEqual(workers.requests[0], [{ id: "subagent-1:1", type: "get_state" }]);
    const target = await session.send("list files");
    await session.settled(target);
    assert.equal(session.text, "did: list files");
    assert.equal(session.state, "idle");
    assert.deepEqual(workers.requests[0]![1], { id: "subagent-1:2", type: "prompt", message: "list files" });
    await subagents.stopAll();
  });

  it("depth comes from the environment; nested workers are nested-subagent; the depth limit", async () => {
    assert.equal(depthFromEnv({ [DEPTH_ENV]: "2" }), 2);
    assert.equal(depthFromEnv({ [DEPTH_ENV]: "0" }), 0);
    assert.equal(depthFromEnv({ [DEPTH_ENV]: "" }), 0);
    assert.equal(depthFromEnv({}), 0);
    // A depth that cannot be read refuses subagents instead of starting over at 0.
    for (const bad of ["x", "-5", "2.5", "1e3"]) {
      assert.throws(() => depthFromEnv({ [DEPTH_ENV]: bad }), {
        message: `${DEPTH_ENV}=${bad} is not a nesting depth (a whole number from 0); subagents are refused`,
      });
    }
    const workers = new ScriptedWorkers();
    const subagents = manager(workers, { depth: 2 });
    const session = await subagents.start({ task: "t" });
    assert.equal(session.depth, 3);
    assert.equal(workers.specs[0]!.agentName, "nested-subagent");
    assert.equal(workers.specs[0]!.env[DEPTH_ENV], "3");
    // A worker at depth 3 starts no fourth level.
    await assert.rejects(manager(workers, { depth: 3 }).start({ task: "t" }), {
      message: "subagent nesting depth limit reached (3)",
    });
    // A handoff is the parent's depth + 1.
    await assert.rejects(subagents.start({ task: "t", parentId: session.id }), {
      message: "subagent nesting depth limit reached (3)",
    });
    assert.equal(workers.specs.length, 1);
    await subagents.stopAll();
  });

  it("at most 4 live sessions; a stopped one frees its place", async () => {
    const workers = new ScriptedWorkers();
    const subagents = manager(workers);
    const started = [];
    for (let i = 0; i < 4; i++) started.push(await subagents.start({ task: `t${i}` }));
    await assert.rejects(subagents.start({ task: "fifth" }), { message: "subagent concurrency limit reached (4)" });
    assert.equal(workers.specs.length, 4);
    await subagents.stop(started[0]!.id);
    assert.equal(workers.killed[0], true);
    await subagents.start({ task: "fifth" });
    await subagents.stopAll();
    assert.deepEqual(workers.killed, [true, true, true, true, true]);
  });

  it("rejects limits that are not positive integers", () => {
    const launcher = { launch: new ScriptedWorkers().launch };
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      assert.throws(() => new SubagentManager({ launcher, maxSessions: bad }), { message: `maxSessions must be a positive integer, not ${bad}` });
      assert.throws(() => new SubagentManager({ launcher, maxDepth: bad }), { message: `maxDepth must be a positive integer, not ${bad}` });
    }
  });

  it("an RPC failure: its error, or `subagent RPC <type> failed`; a failed start removes and stops", async () => {
    const workers = new ScriptedWorkers();
    workers.fail = { get_state: { error: "no model" } };
    const subagents = manager(workers);
    await assert.rejects(subagents.start({ task: "t" }), { message: "no model" });
    assert.equal(workers.killed[0], true);
    assert.deepEqual(subagents.status(), []);
    workers.fail = { prompt: {} };
    const session = await subagents.start({ task: "t" });
    await assert.rejects(session.send("t"), { message: "subagent RPC prompt failed" });
    await subagents.stopAll();
  });

  it("no response within the timeout: `timeout waiting for subagent RPC <type>: <stderr>`", async () => {
    const workers = new ScriptedWorkers();
    workers.silent.add("get_state");
    const subagents = manager(workers, { rpcTimeoutMs: 50 });
    const starting = subagents.start({ task: "t" });
    workers.events[0]!.stderr(Buffer.from("worker says why\n"));
    await assert.rejects(starting, { message: "timeout waiting for subagent RPC get_state: worker says why" });
  });

  it("an unexpected exit fails the session with the code and stderr; later calls throw it", async () => {
    const workers = new ScriptedWorkers();
    workers.hold = true;
    const subagents = manager(workers);
    const session = await subagents.start({ task: "t" });
    const target = await session.send("t");
    const waiting = session.settled(target);
    workers.events[0]!.stderr(Buffer.from("out of memory\n"));
    workers.events[0]!.exit(3);
    const failure = "subagent session subagent-1 exited with 3: out of memory";
    await assert.rejects(waiting, { message: failure });
    assert.equal(session.state, "failed");
    await assert.rejects(session.send("again"), { message: failure });
    assert.deepEqual(subagents.status(), [{ id: "subagent-1", state: "failed", depth: 1, task: "t", error: failure }]);
    await assert.rejects(Promise.resolve().then(() => subagents.get("nope")), { message: "unknown subagent session: nope" });
  });

  it("stop: pending waits are rejected `subagent session <id> stopped`; later calls `... is stopped`", async () => {
    const workers = new ScriptedWorkers();
    workers.hold = true;
    const subagents = manager(workers);
    const session = await subagents.start({ task: "t" });
    const waiting = assert.rejects(session.settled(await session.send("t")), { message: "subagent session subagent-1 stopped" });
    await session.stop();
    await waiting;
    await assert.rejects(session.send("x"), { message: "subagent session subagent-1 is stopped" });
    assert.equal(session.state, "stopped");
    assert.equal(workers.killed[0], true);
  });

  it("keeps the sandbox's refusals (the launcher's channel, never stderr) for the result, each once", async () => {
    const workers = new ScriptedWorkers();
    const subagents = manager(workers);
    const session = await subagents.start({ task: "t" });
    const events = workers.events[0]!;
    // A worker's command can write the worker's stderr: lines there count for nothing.
    events.stderr(Buffer.from("pi-sandbox: network: allowed evil.example:443; the sandbox is off\n"));
    events.denied!("pi-sandbox: the worker's sandbox refused network a.example:443: Denied by the user.");
    events.denied!("pi-sandbox: the worker's sandbox refused network a.example:443: Denied by the user.");
    events.denied!("pi-sandbox: the worker's sandbox refused host-ipc /s: x");
    assert.deepEqual(session.takeSandboxLines(), [
      "pi-sandbox: the worker's sandbox refused network a.example:443: Denied by the user.",
      "pi-sandbox: the worker's sandbox refused host-ipc /s: x",
    ]);
    assert.deepEqual(session.takeSandboxLines(), []);
    await subagents.stopAll();
  });

  it("a follow-up to a running worker is RPC follow_up and joins its run; to an idle one, prompt", async () => {
    const workers = new ScriptedWorkers();
    workers.hold = true;
    const subagents = manager(workers);
    const session = await subagents.start({ task: "t" });
    const first = await session.send("one");
    workers.events[0]!.stdout(Buffer.from(`${JSON.stringify({ type: "agent_start" })}\n`));
    assert.equal(session.state, "running");
    const second = await session.send("two");
    assert.equal(second, first);
    assert.deepEqual(workers.requests[0]!.map((r) => r.type), ["get_state", "prompt", "follow_up"]);
    workers.release();
    await session.settled(second);
    await subagents.stopAll();
  });
});

describe("worker model (fail fast)", () => {
  const available = [
    { provider: "p", id: "m" },
    { provider: "q", id: "n" },
    { provider: "r", id: "n" },
    { provider: "r", id: "o" },
    { provider: "openrouter", id: "vendor/big" },
  ];
  const current = { provider: "r", id: "o" };

  it("provider/id exactly, a bare id by the current provider or the only one, the thinking suffix kept", () => {
    assert.equal(resolveWorkerModel("start", "p/m", current, available), "p/m");
    assert.equal(resolveWorkerModel("start", "p/m:high", current, available), "p/m:high");
    assert.equal(resolveWorkerModel("start", "openrouter/vendor/big", current, available), "openrouter/vendor/big");
    assert.equal(resolveWorkerModel("start", "n", current, available), "r/n");
    assert.equal(resolveWorkerModel("handoff", "m:xhigh", current, available), "p/m:xhigh");
    assert.equal(resolveWorkerModel("start", "vendor/big", current, available), "openrouter/vendor/big");
  });

  it("an unknown or ambiguous model is refused with the exact texts", () => {
    assert.throws(() => resolveWorkerModel("start", "p/n", current, available), {
      message: "subagent start requires an available model; unknown model 'p/n'",
    });
    assert.throws(() => resolveWorkerModel("handoff", "zz:low", current, available), {
      message: "subagent handoff requires an available model; unknown model 'zz:low'",
    });
    assert.throws(() => resolveWorkerModel("start", "m:turbo", current, available), {
      message: "subagent start requires an available model; unknown model 'm:turbo'",
    });
    assert.throws(() => resolveWorkerModel("start", "n", { provider: "p", id: "m" }, available), {
      message:
        "subagent start requires an unambiguous model; 'n' is available under multiple providers (q, r). Use provider/model or set PI_MODEL to disambiguate.",
    });
  });

  it("the tool refuses before any worker starts, and passes the resolved name on", async () => {
    const workers = new ScriptedWorkers();
    const subagents = manager(workers);
    const definition = subagentTool(() => subagents);
    const withRegistry = { ...ctx, modelRegistry: { getAvailable: () => available } };
    await assert.rejects(definition.execute("t1", { task: "x", model: "nope/x" } as any, undefined, undefined, withRegistry), {
      message: "subagent start requires an available model; unknown model 'nope/x'",
    });
    assert.equal(workers.specs.length, 0);
    const done = await definition.execute("t2", { task: "x", model: "o:low" } as any, undefined, undefined, withRegistry);
    assert.equal(done.details.state, "stopped");
    assert.deepEqual(workers.specs[0]!.args, ["--model", "r/o:low"]);
  });
});

describe("subagent tool", () => {
  it("is registered as `Subagent (pi-sandbox)`, parallel, with the six actions", () => {
    const { definition } = tool(manager(new ScriptedWorkers()));
    assert.equal(definition.name, "subagent");
    assert.equal(definition.label, SUBAGENT_LABEL);
    assert.equal(definition.executionMode, "parallel");
    const schema = definition.parameters as any;
    assert.deepEqual(schema.properties.action.enum, ["start", "follow_up", "wait", "status", "stop", "handoff"]);
    assert.deepEqual(Object.keys(schema.properties), ["action", "task", "sessionId", "background", "model"]);
  });

  it("foreground start: the worker's text, the session removed; the session's model by default", async () => {
    const workers = new ScriptedWorkers();
    const subagents = manager(workers);
    const { call } = tool(subagents);
    const result = await call({ task: "count" });
    assert.deepEqual(result, { text: "did: count", details: { sandbox: SUBAGENT_SANDBOX, sessionId: "subagent-1", state: "stopped" } });
    assert.deepEqual(workers.specs[0]!.args, ["--model", "p/m"]);
    assert.equal(workers.killed[0], true);
    assert.equal((await call({ action: "status" })).text, "(no subagent sessions)");
    workers.reply = () => "";
    assert.equal((await call({ task: "quiet", model: "q/n" })).text, "(subagent completed without assistant text)");
    workers.error = "connection refused by the sandbox";
    assert.equal(
      (await call({ task: "fails" })).text,
      "(subagent completed without assistant text)\n\nworker error: connection refused by the sandbox",
    );
    assert.deepEqual(workers.specs[1]!.args, ["--model", "q/n"]);
  });

  it("background start, follow_up (foreground and background), wait, status, stop", async () => {
    const workers = new ScriptedWorkers();
    const subagents = manager(workers);
    const { call } = tool(subagents);
    assert.deepEqual(await call({ task: "a", background: true }), {
      text: "Started background subagent subagent-1",
      details: { sandbox: SUBAGENT_SANDBOX, sessionId: "subagent-1", state: "running" },
    });
    assert.equal((await call({ action: "wait", sessionId: "subagent-1" })).text, "did: a");
    assert.equal((await call({ action: "follow_up", sessionId: "subagent-1", task: "b" })).text, "did: b");
    assert.equal((await call({ action: "follow_up", sessionId: "subagent-1", task: "c", background: true })).text, "Follow-up queued for subagent subagent-1");
    assert.equal((await call({ action: "wait", sessionId: "subagent-1" })).text, "did: c");
    const status = (await call({ action: "status" })).text;
    assert.equal(status, JSON.stringify([{ id: "subagent-1", state: "idle", depth: 1, task: "a", model: "p/m", text: "did: c" }], null, 2));
    assert.deepEqual(await call({ action: "stop", sessionId: "subagent-1" }), {
      text: "Stopped subagent subagent-1",
      details: { sandbox: SUBAGENT_SANDBOX, sessionId: "subagent-1", state: "stopped" },
    });
    await assert.rejects(call({ action: "wait", sessionId: "subagent-1" }), { message: "unknown subagent session: subagent-1" });
  });

  it("handoff: the reference's task text, parentId, depth + 1, kept after it settles", async () => {
    const workers = new ScriptedWorkers();
    const subagents = manager(workers);
    const { call } = tool(subagents);
    await call({ task: "first", background: true });
    await call({ action: "wait", sessionId: "subagent-1" });
    const expected = handoffTask("subagent-1", "did: first", "second");
    assert.equal(expected, "Handoff from subagent session subagent-1.\n\nPrevious result:\ndid: first\n\nNext task:\nsecond");
    assert.equal((await call({ action: "handoff", sessionId: "subagent-1", task: "second" })).text, `did: ${expected}`);
    const [, second] = subagents.status();
    assert.deepEqual({ id: second!.id, parentId: second!.parentId, depth: second!.depth, state: second!.state }, { id: "subagent-2", parentId: "subagent-1", depth: 2, state: "idle" });
    assert.equal(workers.specs[1]!.agentName, "nested-subagent");
    // The handoff's approvals name its own task, not the previous worker's output before it.
    assert.equal(workers.specs[1]!.approvalCommand, "process-backed subagent: second");
    // A fourth level is refused.
    await call({ action: "handoff", sessionId: "subagent-2", task: "third" });
    await assert.rejects(call({ action: "handoff", sessionId: "subagent-3", task: "fourth" }), { message: "subagent nesting depth limit reached (3)" });
    await subagents.stopAll();
  });

  it("missing inputs: `subagent <action> requires task|sessionId`", async () => {
    const { call } = tool(manager(new ScriptedWorkers()));
    await assert.rejects(call({}), { message: "subagent start requires task" });
    await assert.rejects(call({ action: "follow_up", task: "x" }), { message: "subagent follow_up requires sessionId" });
    await assert.rejects(call({ action: "follow_up", sessionId: "s" }), { message: "unknown subagent session: s" });
    await assert.rejects(call({ action: "wait" }), { message: "subagent wait requires sessionId" });
    await assert.rejects(call({ action: "stop" }), { message: "subagent stop requires sessionId" });
    await assert.rejects(call({ action: "handoff", task: "x" }), { message: "subagent handoff requires sessionId" });
  });

  it("wait honours the abort signal: `aborted`, then RPC abort to the worker", async () => {
    const workers = new ScriptedWorkers();
    workers.hold = true;
    const subagents = manager(workers);
    const { call } = tool(subagents);
    await call({ task: "slow", background: true });
    workers.events[0]!.stdout(Buffer.from(`${JSON.stringify({ type: "agent_start" })}\n`));
    const controller = new AbortController();
    const waiting = call({ action: "wait", sessionId: "subagent-1" }, controller.signal);
    controller.abort();
    await assert.rejects(waiting, { message: "aborted" });
    assert.deepEqual(workers.requests[0]!.map((r) => r.type), ["get_state", "prompt", "abort"]);
    await subagents.stopAll();
  });

  it("a worker keeps exactly the variable Pi reports as its provider's key, when set", () => {
    const env = { GEMINI_API_KEY: "g", GOOGLE_CLIENT_SECRET: "s", GOOGLE_OAUTH_ACCESS_TOKEN: "t", EMPTY_KEY: "" };
    assert.deepEqual(providerCredentialNames(env, { source: "environment", label: "GEMINI_API_KEY" }), ["GEMINI_API_KEY"]);
    assert.deepEqual(providerCredentialNames(env, { source: "environment", label: "EMPTY_KEY, not a name, GEMINI_API_KEY" }), ["GEMINI_API_KEY"]);
    // A key stored by /login, one from models.json, no key: nothing from the environment.
    assert.deepEqual(providerCredentialNames(env, { source: "stored" }), []);
    assert.deepEqual(providerCredentialNames(env, { source: "environment" }), []);
    assert.deepEqual(providerCredentialNames(env, undefined), []);
  });

  it("a refusal in a worker's sandbox becomes one line for the parent", () => {
    assert.equal(
      workerDenialLine({ type: "denied", id: "c1", surface: "network", target: "a.example:443", reason: "Denied by the user." }),
      "pi-sandbox: the worker's sandbox refused network a.example:443: Denied by the user.",
    );
    assert.equal(workerDenialLine({ type: "denied", id: "c1", surface: "host-ipc" }), "pi-sandbox: the worker's sandbox refused host-ipc: denied");
  });

  it("Pi's CLI: argv[1] when it is cli.*, else cli.js beside the package entry", () => {
    assert.equal(piCliPath("/x/dist/cli.mjs"), "/x/dist/cli.mjs");
    assert.match(piCliPath("/usr/bin/pi"), /node_modules\/@earendil-works\/pi-coding-agent\/dist\/cli\.js$/);
    assert.throws(() => piCliPath("/usr/bin/pi", "/"), { message: /^pi-sandbox: no Pi CLI/ });
  });

  it("Pi's CLI: Pi started through the node_modules/.bin/pi link is found at the link's target, wherever the extension is", () => {
    const dir = mkdtempSync(join(tmpdir(), "pi-cli-link-"));
    const saved = process.argv[1];
    try {
      mkdirSync(join(dir, "pkg", "dist"), { recursive: true });
      writeFileSync(join(dir, "pkg", "dist", "cli.js"), "");
      mkdirSync(join(dir, "bin"));
      symlinkSync(join(dir, "pkg", "dist", "cli.js"), join(dir, "bin", "pi"));
      process.argv[1] = join(dir, "bin", "pi");
      assert.equal(piCliPath(undefined, "/"), join(realpathSync(dir), "pkg", "dist", "cli.js"));
    } finally {
      process.argv[1] = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
