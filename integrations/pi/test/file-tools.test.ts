// The file tools (src/file-tools.ts) against a fake Pi and the scripted serve
// (test/fake-pi-sandbox), whose `argv` execs run on the host in place of the sandbox: the
// operations' bytes and stdin, the refusal messages named from the policy, host mode,
// failing closed. The kernel's part is proven by tests/e2e with the real binary.
import { execFileSync } from "node:child_process";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { createEditToolDefinition, createReadToolDefinition, createWriteToolDefinition } from "@earendil-works/pi-coding-agent";
import { errnoOf, privateLayer, readReason, writeReason } from "../src/file-tools.ts";
import { registerPiSandbox } from "../src/index.ts";
import { statusText, unavailableNotice } from "../src/status.ts";

const FAKE = fileURLToPath(new URL("./fake-pi-sandbox", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "pi-sandbox-files-test-"));
after(() => rmSync(scratch, { recursive: true, force: true }));
let counter = 0;

/** A fake Pi with the extension registered and its session started in a fresh workspace. */
async function session(env: NodeJS.ProcessEnv = {}, start = true, fileOperationTimeoutS?: number) {
  const ws = join(scratch, `ws-${counter++}`);
  mkdirSync(ws);
  const log = join(ws, "..", `log-${counter}.jsonl`);
  writeFileSync(log, "");
  const tools = new Map<string, any>();
  const commands = new Map<string, any>();
  const handlers = new Map<string, Array<(e: unknown, c: unknown) => unknown>>();
  const notices: Array<[string | undefined, string]> = [];
  const pi = {
    registerTool: (tool: any) => tools.set(tool.name, tool),
    registerCommand: (name: string, command: unknown) => commands.set(name, command),
    on: (event: string, handler: (e: unknown, c: unknown) => unknown) => handlers.set(event, [...(handlers.get(event) ?? []), handler]),
    getActiveTools: () => ["bash"],
    getAllTools: () => [],
  };
  const ctx = {
    hasUI: true,
    cwd: ws,
    ui: { notify: (message: string, type?: string) => notices.push([type, message]) },
    sessionManager: { getSessionId: () => "sess-f", getSessionFile: () => undefined },
  };
  await registerPiSandbox(pi as any, {
    env: { ...process.env, PI_SANDBOX_BIN: FAKE, FAKE_SERVE_LOG: log, ...env },
    platform: "linux",
    ...(fileOperationTimeoutS !== undefined ? { fileOperationTimeoutS } : {}),
  });
  const emit = async (event: string) => {
    for (const handler of handlers.get(event) ?? []) await handler({ type: event }, ctx);
  };
  if (start) await emit("session_start");
  const run = (name: string, params: object) => tools.get(name).execute("call", params, undefined, undefined, ctx);
  const requests = () =>
    readFileSync(log, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  return { ws, tools, commands, notices, ctx, run, emit, requests, stop: () => emit("session_shutdown") };
}

const own = (ws: string) => ({
  read: createReadToolDefinition(ws),
  write: createWriteToolDefinition(ws),
  edit: createEditToolDefinition(ws),
});

describe("sandboxed file tools", () => {
  it("read, write and edit give Pi's own results, with the I/O in argv execs of serve", async () => {
    const s = await session();
    const text = `${Array.from({ length: 2100 }, (_, i) => `l${i}`).join("\n")}\n`;
    writeFileSync(join(s.ws, "a.txt"), text);
    const mine = await s.run("read", { path: "a.txt", offset: 5, limit: 3 });
    const theirs = await own(s.ws).read.execute("x", { path: "a.txt", offset: 5, limit: 3 }, undefined, undefined, s.ctx as any);
    assert.deepEqual(mine.content, theirs.content);
    const whole = await s.run("read", { path: "a.txt" });
    assert.deepEqual(whole.content, (await own(s.ws).read.execute("x", { path: "a.txt" }, undefined, undefined, s.ctx as any)).content);

    const written = await s.run("write", { path: "d/e/new.txt", content: "x\ny\n" });
    assert.deepEqual(written.content, [{ type: "text", text: "Successfully wrote to d/e/new.txt" }]);
    assert.equal(readFileSync(join(s.ws, "d/e/new.txt"), "utf8"), "x\ny\n");

    const edited = await s.run("edit", { path: "d/e/new.txt", edits: [{ oldText: "y", newText: "z" }] });
    assert.deepEqual(edited.content, [{ type: "text", text: "Successfully replaced 1 block(s) in d/e/new.txt." }]);
    assert.equal(readFileSync(join(s.ws, "d/e/new.txt"), "utf8"), "x\nz\n");

    const execs = s.requests().filter((r) => r.type === "exec");
    assert.ok(execs.length >= 4);
    for (const exec of execs) {
      assert.equal(exec.argv[0], "/bin/sh");
      assert.equal(exec.cwd, s.ws);
      assert.equal(exec.command, undefined);
    }
    const stdin = s.requests().filter((r) => r.type === "stdin");
    assert.deepEqual(
      stdin.map((r) => Buffer.from(r.data, "base64").toString("utf8")),
      ["x\ny\n", "x\nz\n"],
    );
    assert.equal(s.requests().filter((r) => r.type === "stdin_close").length, 2);
    await s.stop();
  });

  it("a read the sandbox cannot see, of a file the host has: refused, named from the policy", async () => {
    const home = join(scratch, "home-r");
    mkdirSync(join(home, ".ssh"), { recursive: true });
    writeFileSync(join(home, ".ssh/id_rsa"), "KEY");
    const s = await session({
      FAKE_FILE_REFUSE: "No such file or directory",
      FAKE_POLICY: JSON.stringify({ home, home_hidden: true, home_read_allowed: [] }),
    });
    const key = join(home, ".ssh/id_rsa");
    await assert.rejects(s.run("read", { path: key }), {
      message: `pi-sandbox: read refused: ${key} is outside what the sandbox may read (hidden home)`,
    });
    // An edit of it: the same refusal, not wrapped in Pi's `Could not edit file` text.
    await assert.rejects(s.run("edit", { path: key, edits: [{ oldText: "K", newText: "L" }] }), {
      message: `pi-sandbox: edit refused: ${key} is outside what the sandbox may read (hidden home)`,
    });
    // A hidden path missing on the host reads the same (the refusal tells nothing of it); a
    // missing path the policy shows gets Pi's own not-found error.
    await assert.rejects(s.run("read", { path: join(home, ".ssh/missing") }), {
      message: `pi-sandbox: read refused: ${join(home, ".ssh/missing")} is outside what the sandbox may read (hidden home)`,
    });
    await assert.rejects(s.run("read", { path: "nope.txt" }), (error: any) => error.code === "ENOENT");
    assert.deepEqual(s.requests().filter((r) => r.argv?.[0] === "policy").length, 1);
    await s.stop();
  });

  it("a write the kernel refuses: a protected path with its reason, else outside the writable places", async () => {
    const s = await session({
      FAKE_FILE_REFUSE: "Read-only file system",
            // session() makes the workspace ws-<counter>.
      FAKE_POLICY: JSON.stringify({ protected: [{ path: join(scratch, `ws-${counter}`, ".bashrc"), reason: "shell startup file" }] }),
    });
    writeFileSync(join(s.ws, ".bashrc"), "# mine\n");
    await assert.rejects(s.run("write", { path: ".bashrc", content: "evil" }), {
      message: `pi-sandbox: write refused: ${join(s.ws, ".bashrc")} is a protected path (shell startup file)`,
    });
    await assert.rejects(s.run("write", { path: "/etc/x", content: "no" }), {
      message: "pi-sandbox: write refused: /etc/x is outside what the sandbox may write",
    });
    assert.equal(readFileSync(join(s.ws, ".bashrc"), "utf8"), "# mine\n");
    await s.stop();
  });

  it("a read that never ends (a FIFO nobody writes) is stopped at the operation's timeout", async () => {
    const s = await session({}, true, 1);
    execFileSync("mkfifo", [join(s.ws, "pipe")]);
    await assert.rejects(s.run("read", { path: "pipe" }), {
      message: "pi-sandbox stopped the file operation after 1 s (a FIFO, a device or a hung mount?); use bash with a timeout to read it",
    });
    const execs = s.requests().filter((r) => r.type === "exec");
    assert.ok(execs.length >= 1);
    for (const exec of execs) assert.equal(exec.timeout_s, 1);
    await s.stop();
  });

  it("grep and find refuse in sandboxed mode and say to use bash", async () => {
    const s = await session();
    await assert.rejects(s.run("grep", { pattern: "x" }), /^Error: pi-sandbox: grep refused: Pi's grep runs outside the sandbox/);
    await assert.rejects(s.run("find", { pattern: "*" }), /pi-sandbox: find refused/);
    await s.stop();
  });

  it("pi.fileTools host: Pi's own tools, no exec, and the notice says so", async () => {
    const s = await session({ FAKE_FILE_TOOLS: "host" });
    assert.deepEqual(s.notices[1], ["info", 'pi-sandbox file tools: host (pi.fileTools: "host"); read, write and edit are not confined']);
    writeFileSync(join(s.ws, "h.txt"), "host\n");
    const result = await s.run("read", { path: "h.txt" });
    assert.deepEqual(result.content, [{ type: "text", text: "host\n" }]);
    assert.equal(s.requests().filter((r) => r.type === "exec").length, 0);
    await s.stop();
  });

  it("fails closed before the session has started and after it ended", async () => {
    const s = await session({}, false);
    await assert.rejects(s.run("read", { path: "x" }), {
      message: "pi-sandbox unavailable: the Pi session has not started; the read tool was not run",
    });
    await s.emit("session_start");
    await s.stop();
    await assert.rejects(s.run("write", { path: "x", content: "" }), {
      message: "pi-sandbox unavailable: the Pi session has ended; the write tool was not run",
    });
  });

  it("ls lists through the sandbox with Pi's format", async () => {
    const s = await session();
    mkdirSync(join(s.ws, "dir"));
    writeFileSync(join(s.ws, "b.txt"), "");
    writeFileSync(join(s.ws, ".hidden"), "");
    const result = await s.run("ls", {});
    assert.deepEqual(result.content, [{ type: "text", text: ".hidden\nb.txt\ndir/" }]);
    await s.stop();
  });
});

describe("messages", () => {
  it("names errnos and reasons", () => {
    assert.equal(errnoOf("sh: 1: cannot create /etc/x: Read-only file system"), "EROFS");
    assert.equal(errnoOf("cat: x: Permission denied"), "EACCES");
    // A path the policy shows: the file's own permissions refused (a chmod 000 file, /etc/shadow).
    assert.equal(
      readReason({ home: "/h", home_hidden: true, home_read_allowed: [{ path: "/h/.local/bin" }] }, "/h/.local/bin/x"),
      "is outside what the sandbox may read, or its own permissions do not allow it",
    );
    assert.equal(readReason({ home: "/h", home_hidden: true }, "/etc/shadow"), "is outside what the sandbox may read, or its own permissions do not allow it");
    assert.equal(readReason({ home: "/h", home_hidden: true }, "/h/.ssh/id_rsa"), "is outside what the sandbox may read (hidden home)");
    assert.equal(writeReason({ protected: [{ path: "/w/.git/hooks", reason: "git hooks" }] }, "/w/.git/hooks/pre-commit"), "is a protected path (git hooks)");
    assert.equal(writeReason({ home: "/h", home_hidden: true }, "/h/.bashrc"), "is outside what the sandbox may write (hidden home)");
    // The workspace under the hidden home: a refused write there is the file's permissions.
    const underHome = { home: "/h", home_hidden: true, writable: [{ path: "/h/proj/sub" }], home_read_allowed: [{ path: "/h/proj" }] };
    assert.equal(writeReason(underHome, "/h/proj/sub/noperm.txt", "EACCES"), "cannot be written (permission denied by the file's own permissions)");
    // EROFS there: the write met a read-only place (a link swapped to outside meanwhile).
    assert.equal(writeReason(underHome, "/h/proj/sub/f", "EROFS"), "is outside what the sandbox may write");
    // The enclosing repository, shown read-only: outside what may be written, not hidden.
    assert.equal(writeReason(underHome, "/h/proj/a.txt"), "is outside what the sandbox may write");
    assert.equal(privateLayer("/tmp/x"), "the sandbox's private /tmp, discarded after the command");
    assert.equal(privateLayer("/var/tmp/a/b"), "the sandbox's private /var/tmp, discarded after the command");
    assert.equal(privateLayer("/tmpfoo"), "hidden home");
    assert.equal(privateLayer("/home/u/.bashrc"), "hidden home");
    assert.equal(privateLayer("copy"), "a private copy, discarded after the command");
  });

  it("the unavailable notice: one prefix, the hint on its own line", () => {
    assert.equal(
      unavailableNotice("pi-sandbox: invalid pi-sandbox configuration: root must be an object\nhint: fix it"),
      "pi-sandbox unavailable: invalid pi-sandbox configuration: root must be an object; Bash commands and file tools will fail closed\nhint: fix it",
    );
  });

  it("/sandbox: status, policy and the last denials", async () => {
    const s = await session({ FAKE_POLICY: JSON.stringify({ home: "/h", home_hidden: true, protected: [{ path: "/w/.env" }] }) });
    const shown: string[] = [];
    await s.commands.get("sandbox").handler("", { ...s.ctx, ui: { notify: (t: string) => shown.push(t) } });
    assert.equal(
      shown[0],
      [
        "pi-sandbox: enabled (fake-pi-sandbox 0); Bash runs in the sandbox",
        "file tools: sandboxed",
        "configuration: none (the defaults)",
        `workspace: ${s.ws} (read-write)`,
        "home: /h hidden",
        `protected paths: 1 (pi-sandbox policy --cwd ${s.ws} lists them)`,
        "no denials in this session",
      ].join("\n"),
    );
    await s.stop();
    // A file tool's refusal is among the last denials.
    const refused = await session({ FAKE_FILE_REFUSE: "Read-only file system" });
    await assert.rejects(refused.run("write", { path: "x.txt", content: "x" }));
    const after: string[] = [];
    await refused.commands.get("sandbox").handler("", { ...refused.ctx, ui: { notify: (t: string) => after.push(t) } });
    assert.ok(after[0]!.endsWith(`\nlast denials:\n  file write refused: ${join(refused.ws, "x.txt")} is outside what the sandbox may write`), after[0]);
    await refused.stop();
    assert.equal(
      statusText({ enabled: false, unavailable: "no binary", server: undefined, configFile: undefined, fileTools: undefined, workspace: "/w", policy: undefined, policyError: undefined, denials: [] }),
      "pi-sandbox: unavailable: no binary; Bash commands and file tools fail closed",
    );
  });
});
