// ServeClient against a scripted stand-in for `pi-sandbox serve` (test/fake-pi-sandbox).
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { clipUtf8, LineSplitter, ServeClient, type ExecHandlers } from "../src/serve-client.ts";

export const FAKE = fileURLToPath(new URL("./fake-pi-sandbox", import.meta.url));

const scratch = mkdtempSync(join(tmpdir(), "pi-sandbox-ext-test-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

function collect(): ExecHandlers & { out: Buffer[]; err: Buffer[] } {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  return {
    out,
    err,
    onOutput: (stream, data) => (stream === "stdout" ? out : err).push(data),
    onApprovalRequest: () => assert.fail("no approval expected"),
  };
}

describe("LineSplitter", () => {
  it("splits on LF only, strips CR, joins lines across chunks and keeps U+2028", () => {
    const lines: string[] = [];
    const splitter = new LineSplitter((line) => lines.push(line));
    splitter.push(Buffer.from('{"a":1}\r\n{"b":"x\u2028'));
    splitter.push(Buffer.from('y"}\n'));
    const euro = Buffer.from("€\n");
    splitter.push(euro.subarray(0, 1));
    splitter.push(euro.subarray(1));
    assert.deepEqual(lines, ['{"a":1}', '{"b":"x\u2028y"}', "€"]);
  });
});

describe("clipUtf8", () => {
  it("cuts to a number of UTF-8 bytes, never inside a character", () => {
    assert.equal(clipUtf8("abc", 3), "abc");
    assert.equal(clipUtf8("abcd", 3), "abc");
    assert.equal(clipUtf8("aé", 2), "a"); // é is two bytes
    assert.equal(clipUtf8("a😀", 4), "a"); // a surrogate pair stays whole
    assert.equal(clipUtf8("a😀", 5), "a😀");
  });
});

describe("ServeClient", () => {
  it("exchanges hello and streams a command's output to its exit", async () => {
    const client = await ServeClient.start({ binary: FAKE });
    assert.equal(client.server, "fake-pi-sandbox 0");
    const handlers = collect();
    const outcome = await client.exec({ command: "echo hello there", cwd: "/" }, handlers);
    assert.deepEqual(outcome, { type: "exit", id: "c1", exit_code: 0 });
    assert.equal(Buffer.concat(handlers.out).toString(), "hello there\n");
    await client.shutdown();
    assert.equal(client.alive, false);
  });

  it("decodes base64 output and reports a signal", async () => {
    const client = await ServeClient.start({ binary: FAKE });
    const handlers = collect();
    const outcome = await client.exec({ command: "bytes", cwd: "/" }, handlers);
    assert.equal(outcome.exit_code, 3);
    assert.deepEqual(Buffer.concat(handlers.out), Buffer.from([0xff, 0xfe, 0x0a]));
    assert.equal(Buffer.concat(handlers.err).toString(), "é\n");
    assert.equal((await client.exec({ command: "signal", cwd: "/" }, collect())).signal, 9);
    await client.shutdown();
  });

  it("sends timeout_s and abort, and runs commands side by side", async () => {
    const log = join(scratch, "requests.jsonl");
    const client = await ServeClient.start({ binary: FAKE, env: { ...process.env, FAKE_SERVE_LOG: log } });
    const controller = new AbortController();
    const aborted = client.exec({ command: "sleep", cwd: "/" }, collect(), controller.signal);
    const timedOut = client.exec({ command: "sleep", cwd: "/", timeout_s: 0.2 }, collect());
    const quick = client.exec({ command: "echo quick", cwd: "/" }, collect());
    assert.equal((await quick).exit_code, 0);
    assert.equal((await timedOut).error, "timeout");
    controller.abort();
    assert.equal((await aborted).error, "aborted");
    await client.shutdown();
    const requests = readFileSync(log, "utf8").trim().split("\n").map((line) => JSON.parse(line));
    assert.deepEqual(
      requests.filter((r) => r.type !== undefined).map((r) => [r.type, r.id ?? null]),
      [["hello", null], ["exec", "c1"], ["exec", "c2"], ["exec", "c3"], ["abort", "c1"], ["shutdown", null]],
    );
    assert.equal(requests.find((r) => r.id === "c2").timeout_s, 0.2);
  });

  it("rejects a command serve refuses, and carries on", async () => {
    const client = await ServeClient.start({ binary: FAKE });
    await assert.rejects(client.exec({ command: "refuse", cwd: "/" }, collect()), {
      message: 'pi-sandbox serve refused the command: exec "c1": refused for the test',
    });
    assert.equal((await client.exec({ command: "echo still here", cwd: "/" }, collect())).exit_code, 0);
    await client.shutdown();
  });

  it("fails the running commands when serve dies, with its stderr", async () => {
    const client = await ServeClient.start({ binary: FAKE });
    const sleeping = client.exec({ command: "sleep", cwd: "/" }, collect());
    await assert.rejects(client.exec({ command: "die", cwd: "/" }, collect()), /serve exited \(status 7\): fake serve: dying/);
    await assert.rejects(sleeping, /serve exited \(status 7\)/);
    assert.equal(client.alive, false);
    await assert.rejects(client.exec({ command: "echo late", cwd: "/" }, collect()), /serve exited/);
  });

  it("fails to start: missing binary, early exit, wrong version, no hello", async () => {
    await assert.rejects(ServeClient.start({ binary: join(scratch, "missing") }), /could not be started: spawn .* ENOENT/);
    await assert.rejects(
      ServeClient.start({ binary: FAKE, env: { ...process.env, FAKE_SERVE_BROKEN: "exit" } }),
      /serve exited \(status 125\): fake serve: cannot start/,
    );
    await assert.rejects(
      ServeClient.start({ binary: FAKE, env: { ...process.env, FAKE_SERVE_BROKEN: "version" } }),
      /speaks protocol version 2, not 1/,
    );
    await assert.rejects(
      ServeClient.start({ binary: FAKE, env: { ...process.env, FAKE_SERVE_BROKEN: "silent" }, helloTimeoutMs: 300 }),
      /did not answer hello within 300 ms/,
    );
  });

  it("answers with the source and the reason (cut to 4096 bytes), and passes approval_settled on", async () => {
    const log = join(scratch, "answers.jsonl");
    const client = await ServeClient.start({ binary: FAKE, env: { ...process.env, FAKE_SERVE_LOG: log } });
    const settled: unknown[] = [];
    const handlers = (answer: (requestId: string) => void): ExecHandlers => ({
      onOutput: () => {},
      onApprovalRequest: (event) => answer(event.request_id),
      onApprovalSettled: (event) => settled.push(event),
    });
    const long = "é".repeat(3000);
    const denied = client.exec({ command: "approve network", cwd: "/" }, handlers((r) => client.respond("c1", r, { choice: "deny", source: "reviewer", reason: long })));
    assert.equal((await denied).exit_code, 1);
    let open = "";
    const waiting = client.exec({ command: "approve network", cwd: "/" }, handlers((r) => (open = r)));
    for (let i = 0; i < 1000 && !open; i++) await new Promise((r) => setTimeout(r, 10));
    assert.notEqual(open, "", "no approval_request");
    await client.exec({ command: "settle c2", cwd: "/" }, collect());
    await client.exec({ command: "release c2", cwd: "/" }, collect());
    assert.equal((await waiting).exit_code, 0);
    assert.deepEqual(settled, [{ type: "approval_settled", id: "c2", request_id: open, choice: "allow-session", source: "human" }]);
    await client.shutdown();
    const response = readFileSync(log, "utf8").trim().split("\n").map((line) => JSON.parse(line)).find((r) => r.type === "approval_response");
    assert.deepEqual(response, { type: "approval_response", id: "c1", request_id: "r1", choice: "deny", source: "reviewer", reason: "é".repeat(2048) });
  });
});
