// bench/pi_tools.ts: what Pi's file tools and subagent workers cost through pi-sandbox
// (issues 15 and 16), next to the same work on the host, measured in one invocation.
//
//   node bench/pi_tools.ts PI_SANDBOX SCRATCH RUNS WORKER_RUNS > pi-tools.json
//
// - One file operation, each call after a pause of 0.1-0.25 s, the four paths interleaved: the
//   `read` tool's operation is one `exec` of serve with an argv
//   (`/bin/sh -c 'exec cat -- "$1"'`, integrations/pi/src/file-tools.ts); `write` the same with
//   the bytes on stdin. Timed from the request to the exit event, through one long-lived
//   `pi-sandbox serve` (as the extension keeps it), against the same argv spawned on the host
//   and against an in-process fs.readFile.
// - One worker start: `pi --mode rpc --no-session` through serve (stdin piped, as the
//   extension's worker launcher starts it) until it answers `get_state`, against the same Pi
//   spawned on the host.
// Prints one JSON object: {read: {...}, write: {...}, host_spawn, host_fs, worker, worker_host},
// each sample's median and p90 in milliseconds and its count.
import { spawn, execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { ServeClient, type ExecHandlers } from "../integrations/pi/src/serve-client.ts";
import { piCliPath } from "../integrations/pi/src/subagent-tool.ts";

const [binary, scratch, runsText, workerRunsText] = process.argv.slice(2);
if (!binary || !scratch || !runsText || !workerRunsText) {
  process.stderr.write("usage: node bench/pi_tools.ts PI_SANDBOX SCRATCH RUNS WORKER_RUNS\n");
  process.exit(2);
}
const runs = Number(runsText);
const workerRuns = Number(workerRunsText);

type Sample = { median_ms: number; p90_ms: number; n: number };

function summary(times: number[]): Sample {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const middle = sorted.length % 2 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
  return { median_ms: Number(middle.toFixed(2)), p90_ms: Number(at(0.9).toFixed(2)), n: sorted.length };
}

const pause = () => new Promise<void>((resolve) => setTimeout(resolve, 100 + Math.random() * 150));

// The paths of `each`, interleaved, each call after a pause of 0.1-0.25 s as an agent spaces its
// tool calls (a sandbox made ahead is ready by then), in a random order per round.
async function spaced(n: number, each: Record<string, () => Promise<void>>): Promise<Record<string, Sample>> {
  const names = Object.keys(each);
  for (const name of names) await each[name]!(); // warm-up
  const times: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
  for (let i = 0; i < n; i++) {
    for (const name of [...names].sort(() => Math.random() - 0.5)) {
      await pause();
      const start = process.hrtime.bigint();
      await each[name]!();
      times[name]!.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  }
  return Object.fromEntries(names.map((name) => [name, summary(times[name]!)]));
}

async function timed(n: number, once: () => Promise<void>): Promise<Sample> {
  await once(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = process.hrtime.bigint();
    await once();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return summary(times);
}

const ws = join(scratch, "pi-tools-ws");
mkdirSync(ws, { recursive: true });
const file = join(ws, "notes.txt");
const content = Buffer.from("a line of text for the read tool\n".repeat(300)); // about 10 KiB
writeFileSync(file, content);
const READ = ["/bin/sh", "-c", 'exec cat -- "$1"', "pi-sandbox-file", file];
const WRITE = ["/bin/sh", "-c", 'exec cat > "$1"', "pi-sandbox-file", join(ws, "written.txt")];

const handlers = (stdout: Buffer[]): ExecHandlers => ({
  onOutput: (stream, data) => {
    if (stream === "stdout") stdout.push(data);
  },
  onApprovalRequest: () => {
    throw new Error("a file operation asked for an approval");
  },
});

const client = await ServeClient.start({ binary, env: process.env });
try {
  const readOnce = async () => {
    const out: Buffer[] = [];
    const outcome = await client.exec({ argv: READ, cwd: ws, stdin: "closed", scope_key: "bench" }, handlers(out));
    if (outcome.exit_code !== 0 || !Buffer.concat(out).equals(content)) throw new Error(`read failed: ${JSON.stringify(outcome)}`);
  };
  const writeOnce = async () => {
    const outcome = await client.exec({ argv: WRITE, cwd: ws, stdin: "pipe", scope_key: "bench" }, handlers([]), undefined, content);
    if (outcome.exit_code !== 0) throw new Error(`write failed: ${JSON.stringify(outcome)}`);
  };
  const hostSpawn = () =>
    new Promise<void>((resolve, reject) =>
      execFile(READ[0]!, READ.slice(1), { encoding: "buffer" }, (error, stdout) =>
        error || !stdout.equals(content) ? reject(error ?? new Error("host read differs")) : resolve(),
      ),
    );
  const hostFs = async () => {
    if (!(await readFile(file)).equals(content)) throw new Error("fs read differs");
  };

  // A worker: `pi --mode rpc` until its answer to get_state.
  const cli = piCliPath(undefined, join(import.meta.dirname, "..", "integrations", "pi", "src"));
  const agentDir = mkdtempSync(join(scratch, "pi-agent-"));
  const workerArgv = [process.execPath, cli, "--mode", "rpc", "--no-session"];
  const request = `${JSON.stringify({ id: "1", type: "get_state" })}\n`;
  const answered = (text: string) => text.split("\n").some((line) => line.includes('"id":"1"'));
  const workerOnce = async () => {
    let text = "";
    const ended = new AbortController();
    const done = new Promise<void>((resolve) => {
      const running = client.start(
        {
          argv: workerArgv,
          cwd: ws,
          env: { ...(process.env as Record<string, string>), PI_CODING_AGENT_DIR: "/tmp/pi-sandbox-subagent/agent", NODE_NO_WARNINGS: "1" },
          stdin: "pipe",
          scope_key: "bench-worker",
        },
        {
          onOutput: (stream, data) => {
            if (stream !== "stdout") return;
            text += data.toString("utf8");
            if (answered(text)) resolve();
          },
          onApprovalRequest: () => undefined,
        },
        ended.signal,
      );
      running.write(request);
      void running.outcome.then(() => resolve());
    });
    await done;
    ended.abort();
    if (!answered(text)) throw new Error(`the sandboxed worker did not answer get_state: ${text.slice(0, 400)}`);
  };
  const workerHostOnce = () =>
    new Promise<void>((resolve, reject) => {
      const child = spawn(workerArgv[0]!, workerArgv.slice(1), {
        cwd: ws,
        env: { ...process.env, PI_CODING_AGENT_DIR: agentDir, NODE_NO_WARNINGS: "1" },
        stdio: ["pipe", "pipe", "ignore"],
      });
      let text = "";
      child.stdout.on("data", (data: Buffer) => {
        text += data.toString("utf8");
        if (answered(text)) {
          child.kill("SIGKILL");
          resolve();
        }
      });
      child.on("exit", () => (answered(text) ? resolve() : reject(new Error(`the host worker did not answer: ${text.slice(0, 400)}`))));
      child.stdin.write(request);
    });

  const files = await spaced(runs, { read: readOnce, write: writeOnce, host_spawn: hostSpawn, host_fs: hostFs });
  const result = {
    ...files,
    worker: await timed(workerRuns, workerOnce),
    worker_host: await timed(workerRuns, workerHostOnce),
    file_bytes: content.length,
  };
  if (!readFileSync(join(ws, "written.txt")).equals(content)) throw new Error("the write did not reach the workspace");
  process.stdout.write(`${JSON.stringify(result)}\n`);
  rmSync(agentDir, { recursive: true, force: true });
} finally {
  await client.shutdown();
}
