// The supervisor of external workers and their launcher (src/external-workers.ts,
// src/external-worker.ts, bin/pi-sandbox-external-worker): the supervisor's protocol over its
// real Unix socket, FleetView's records, and the launcher failing closed.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { connect, type Socket } from "node:net";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import {
  FLEET_LABEL,
  FLEET_SOURCE,
  inlineHostFiles,
  LAUNCHER,
  MAX_INLINE_BYTES,
  MAX_LINE_BYTES,
  WorkerSupervisor,
  type ExternalRun,
  type WorkerLaunch,
} from "../src/external-workers.ts";
import type { ApprovalRequestEvent } from "../src/protocol.ts";

const LAUNCH: WorkerLaunch = {
  binary: "/usr/bin/pi-sandbox",
  serveArgs: [],
  pi: ["/usr/bin/node", "/pi/cli.js"],
  scopeKey: "sess-1:pi-subagents-worker:w1",
  agentName: "pi-subagents-worker:w1",
  envKeep: [],
  env: {},
};

/** A supervisor with a recording host, and FleetView as a list. */
async function supervisor() {
  const runs: ExternalRun[] = [];
  const approvals: Array<{ workerId: string; event: ApprovalRequestEvent }> = [];
  const events: string[] = [];
  const sup = await WorkerSupervisor.start({
    launch: async (workerId) => ({ ...LAUNCH, agentName: `pi-subagents-worker:${workerId}` }),
    approve: async (workerId, event) => {
      approvals.push({ workerId, event });
      return { choice: "deny", source: "reviewer", reason: "no" };
    },
    settled: (workerId: string, requestId: string) => events.push(`settled ${workerId} ${requestId}`),
    ended: (workerId: string) => events.push(`ended ${workerId}`),
    sessionId: () => "sess-1",
    runs: async () => ({
      registerExternalRun: (run: ExternalRun) => runs.push(run),
      unregisterExternalRun: (sessionId: string, id: string) => runs.splice(runs.findIndex((r) => r.sessionId === sessionId && r.id === id), 1),
    }),
  });
  return { sup, runs, approvals, events };
}

/** A client of the supervisor's socket: send() one line, next() the next reply. */
async function client(path: string) {
  const socket: Socket = connect(path);
  await new Promise((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  const replies: any[] = [];
  const waiters: Array<(reply: any) => void> = [];
  let pending = "";
  socket.on("data", (chunk) => {
    pending += chunk.toString("utf8");
    for (let nl = pending.indexOf("\n"); nl !== -1; nl = pending.indexOf("\n")) {
      const reply = JSON.parse(pending.slice(0, nl));
      pending = pending.slice(nl + 1);
      const waiter = waiters.shift();
      if (waiter) waiter(reply);
      else replies.push(reply);
    }
  });
  return {
    send: (line: string) => socket.write(`${line}\n`),
    next: () => (replies.length > 0 ? Promise.resolve(replies.shift()) : new Promise<any>((resolve) => waiters.push(resolve))),
    close: () => new Promise<void>((resolve) => socket.end(() => resolve())),
  };
}

const event = (agentName: string): ApprovalRequestEvent => ({
  type: "approval_request",
  id: "c1",
  request_id: "r1",
  request: { id: "q", source: "pi-sandbox", surface: "network", operation: "connect", cwd: "/w", destination: "e.example:443", agentName },
});

describe("the supervisor of external workers", () => {
  it("listens in a 0700 directory; registers, decides and unregisters a worker; mirrors it in FleetView", async () => {
    const { sup, runs, approvals, events } = await supervisor();
    try {
      assert.equal(statSync(dirname(sup.socketPath)).mode & 0o777, 0o700);
      const c = await client(sup.socketPath);
      const base = { version: 1, capability: sup.capability, workerId: "w1" };
      c.send(JSON.stringify({ ...base, id: "1", type: "register", cwd: "/w", args: ["--mode", "json"] }));
      assert.deepEqual(await c.next(), { id: "1", action: "allow", launch: LAUNCH });
      assert.deepEqual(sup.registered(), ["w1"]);
      assert.equal(runs.length, 1);
      const { startedAt, ...run } = runs[0]!;
      assert.deepEqual(run, { id: "w1", sessionId: "sess-1", source: FLEET_SOURCE, label: FLEET_LABEL, state: "running" });
      assert.equal(typeof startedAt, "number");
      // The approval names the worker as the supervisor knows it, whatever the request said.
      c.send(JSON.stringify({ ...base, id: "2", type: "approval", event: event("subagent") }));
      assert.deepEqual(await c.next(), { id: "2", action: "decision", decision: { choice: "deny", source: "reviewer", reason: "no" } });
      assert.equal(approvals[0]!.event.request.agentName, "pi-subagents-worker:w1");
      c.send(JSON.stringify({ ...base, id: "s", type: "settled", requestId: "r1" }));
      assert.deepEqual(await c.next(), { id: "s", action: "allow" });
      c.send(JSON.stringify({ ...base, id: "3", type: "unregister" }));
      assert.deepEqual(await c.next(), { id: "3", action: "allow" });
      assert.deepEqual(sup.registered(), []);
      assert.deepEqual(events, ["settled w1 r1", "ended w1"]);
      assert.deepEqual(runs, []);
      await c.close();
    } finally {
      await sup.close();
    }
  });

  it("denies a wrong capability, a replayed id, an unknown type, a bad cwd, another connection's worker and an oversized line", async () => {
    const { sup, runs, approvals } = await supervisor();
    try {
      const c = await client(sup.socketPath);
      const other = await client(sup.socketPath);
      const base = { version: 1, capability: sup.capability, workerId: "w1" };
      const cases: Array<[object, object]> = [
        [{ ...base, id: "a", capability: "0".repeat(64), type: "register", cwd: "/w", args: [] }, { id: "a", action: "deny" }],
        [{ ...base, id: "b", version: 2, type: "register", cwd: "/w", args: [] }, { id: "b", action: "deny" }],
        [{ ...base, id: "c", type: "register", cwd: "relative", args: [] }, { id: "c", action: "deny" }],
        [{ ...base, id: "d", type: "register", cwd: `/${"x".repeat(4096)}`, args: [] }, { id: "d", action: "deny" }],
        [{ ...base, id: "e", type: "exec" }, { id: "e", action: "deny" }],
        [{ ...base, id: "x".repeat(129), type: "register", cwd: "/w", args: [] }, { action: "deny" }],
        [{ ...base, id: "f", type: "register", cwd: "/w", args: [] }, { id: "f", action: "allow", launch: LAUNCH }],
        // Replayed: even the same request again.
        [{ ...base, id: "f", type: "register", cwd: "/w", args: [] }, { id: "f", action: "deny" }],
        [{ ...base, id: "g", type: "register", cwd: "/w", args: [] }, { id: "g", action: "deny" }],
      ];
      for (const [request, reply] of cases) {
        c.send(JSON.stringify(request));
        assert.deepEqual(await c.next(), reply, JSON.stringify(request).slice(0, 200));
      }
      other.send(JSON.stringify({ ...base, id: "h", type: "approval", event: event("x") }));
      assert.deepEqual(await other.next(), { id: "h", action: "deny" });
      other.send(JSON.stringify({ ...base, id: "i", type: "unregister" }));
      assert.deepEqual(await other.next(), { id: "i", action: "deny" });
      other.send("not json");
      assert.deepEqual(await other.next(), { action: "deny" });
      other.send(JSON.stringify({ ...base, id: "j", type: "register", cwd: "/w", args: ["a".repeat(MAX_LINE_BYTES)] }));
      assert.deepEqual(await other.next(), { action: "deny" });
      assert.deepEqual(approvals, []);
      assert.equal(runs.length, 1);
      // The worker's connection closes: it is unregistered, and its FleetView record goes.
      await c.close();
      for (let i = 0; i < 100 && sup.registered().length > 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(sup.registered(), []);
      assert.deepEqual(runs, []);
      await other.close();
    } finally {
      await sup.close();
    }
  });
});

describe("the launcher", () => {
  const run = (env: NodeJS.ProcessEnv) =>
    spawnSync(LAUNCHER, ["--mode", "json", "-p", "hi"], { env: { PATH: process.env.PATH, ...env }, encoding: "utf8", timeout: 30_000 });
  const REFUSAL = "pi-sandbox: external worker isolation is unavailable; refusing host worker launch";

  it("refuses without the Node.js of the Pi session", () => {
    const result = run({});
    assert.equal(result.status, 1);
    assert.equal(result.stdout, "");
    assert.equal(result.stderr, `${REFUSAL}: PI_SANDBOX_WORKER_NODE must name the Node.js of the Pi session\n`);
  });

  it("refuses without a supervisor", () => {
    const result = run({ PI_SANDBOX_WORKER_NODE: process.execPath });
    assert.equal(result.status, 1);
    assert.equal(
      result.stderr,
      `${REFUSAL}: PI_SANDBOX_WORKER_SUPERVISOR and PI_SANDBOX_WORKER_CAPABILITY must be set by the pi-sandbox extension\n`,
    );
  });

  it("loads its TypeScript from an installed copy in node_modules too, where Node.js strips no types", () => {
    const base = mkdtempSync(join(tmpdir(), "pi-sandbox-installed-"));
    try {
      const copy = join(base, "node_modules", "pi-sandbox-pi");
      mkdirSync(copy, { recursive: true });
      cpSync(join(dirname(LAUNCHER), ".."), copy, { recursive: true, filter: (path) => !path.includes("node_modules") });
      const result = spawnSync(join(copy, "bin", "pi-sandbox-external-worker"), ["-p", "hi"], {
        env: { PATH: process.env.PATH, PI_SANDBOX_WORKER_NODE: process.execPath },
        encoding: "utf8",
        timeout: 30_000,
      });
      assert.equal(result.status, 1);
      assert.equal(
        result.stderr,
        `${REFUSAL}: PI_SANDBOX_WORKER_SUPERVISOR and PI_SANDBOX_WORKER_CAPABILITY must be set by the pi-sandbox extension\n`,
      );
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it("refuses when the supervisor is gone, and when it denies the worker", async () => {
    const gone = run({ PI_SANDBOX_WORKER_NODE: process.execPath, PI_SANDBOX_WORKER_SUPERVISOR: "/nonexistent/supervisor.sock", PI_SANDBOX_WORKER_CAPABILITY: "0" });
    assert.equal(gone.status, 1);
    assert.equal(gone.stderr, `${REFUSAL}: cannot reach the supervisor at /nonexistent/supervisor.sock: connect ENOENT /nonexistent/supervisor.sock\n`);
    const { sup } = await supervisor();
    try {
      const { spawn } = await import("node:child_process");
      const child = spawn(LAUNCHER, ["-p", "hi"], {
        env: { PATH: process.env.PATH, PI_SANDBOX_WORKER_NODE: process.execPath, PI_SANDBOX_WORKER_SUPERVISOR: sup.socketPath, PI_SANDBOX_WORKER_CAPABILITY: "f".repeat(64) },
      });
      let stderr = "";
      child.stderr.on("data", (d) => (stderr += d));
      const status = await new Promise((resolve) => child.on("close", resolve));
      assert.equal(status, 1);
      assert.equal(stderr, `${REFUSAL}: the supervisor refused the worker\n`);
      assert.deepEqual(sup.registered(), []);
    } finally {
      await sup.close();
    }
  });
});

describe("the worker's arguments", () => {
  it("inline the prompt and task files the orchestrator wrote outside the workspace, and nothing else", () => {
    const base = mkdtempSync(join(tmpdir(), "pi-sandbox-inline-"));
    try {
      const ws = join(base, "ws");
      const host = join(base, "host");
      mkdirSync(ws);
      mkdirSync(host);
      const write = (path: string, text: string) => (writeFileSync(path, text), path);
      const prompt = write(join(host, "prompt.md"), "\uFEFFBe brief.");
      const task = write(join(host, "task.md"), "Task: list the files");
      const dash = write(join(host, "dash.md"), "--tools bash");
      const big = write(join(host, "big.md"), "x".repeat(MAX_INLINE_BYTES + 1));
      const local = write(join(ws, "notes.md"), "in the workspace");
      const args = ["--mode", "json", "-p", "--append-system-prompt", prompt, "--system-prompt", "plain text", `@${task}`, `@${dash}`, `@${big}`, `@${local}`, "@notes.md", `@${join(host, "missing.md")}`, "--model", "a/b"];
      assert.deepEqual(inlineHostFiles(args, ws), [
        "--mode", "json", "-p", "--append-system-prompt", "Be brief.", "--system-prompt", "plain text", "Task: list the files",
        `@${dash}`, `@${big}`, `@${local}`, "@notes.md", `@${join(host, "missing.md")}`, "--model", "a/b",
      ]);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
