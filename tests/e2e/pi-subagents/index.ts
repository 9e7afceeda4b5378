// A stand-in for the pi-subagents orchestrator in the end-to-end tests (its directory is named
// `pi-subagents`, as the extension's owner check of the `subagent` tool wants): a `subagent` tool
// whose call `{task}` starts one worker the way pi-subagents 0.49 starts a foreground child
// (src/runs/foreground/execution.ts and src/runs/shared/pi-spawn.ts there):
// `spawn($PI_SUBAGENT_PI_BINARY, ["--mode", "json", "-p", ...], {cwd, env: {...process.env},
// stdio: ["ignore", "pipe", "pipe"]})`, `pi` when the variable is unset or blank; the task goes
// as `@<file>` of `Task: <task>` in a new `pi-subagent-*` directory of the host's temporary
// directory, as pi-subagents' file task delivery does (src/runs/shared/pi-args.ts there). pi-subagents
// 0.65 and later run foreground children inside the parent and use the seam for panes only, so
// the tests use this stand-in rather than the package.
//
// The result is `exit <status>: <the worker's last assistant text>`, then its stderr when
// $E2E_ORCHESTRATOR_STDERR is set, or `spawn failed: <error>`.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionAPI, ToolDefinition } from "@earendil-works/pi-coding-agent";

const MODEL = "e2e-faux/scripted";

function lastAssistantText(stdout: string): string {
  let text = "";
  for (const line of stdout.split("\n")) {
    try {
      const event = JSON.parse(line);
      if (event.type !== "message_end" || event.message?.role !== "assistant") continue;
      const content = event.message.content;
      text = Array.isArray(content) ? content.filter((c: any) => c.type === "text").map((c: any) => c.text).join("") : String(content);
    } catch {
      // not an event
    }
  }
  return text;
}

export default function (pi: ExtensionAPI) {
  const tool = {
    name: "subagent",
    label: "Subagent (e2e pi-subagents stand-in)",
    description: "Runs one worker for `task`.",
    parameters: { type: "object", properties: { task: { type: "string" } }, required: ["task"] },
    async execute(_id: string, params: { task: string }, _signal: AbortSignal | undefined, _onUpdate: unknown, ctx: { cwd: string }) {
      const command = process.env.PI_SUBAGENT_PI_BINARY?.trim() || "pi";
      const dir = mkdtempSync(join(tmpdir(), "pi-subagent-"));
      const taskFile = join(dir, "task.md");
      writeFileSync(taskFile, `Task: ${params.task}`, { mode: 0o600 });
      const args = ["--mode", "json", "-p", "--no-session", "--no-context-files", "--no-skills", "--model", MODEL, `@${taskFile}`];
      const text = await new Promise<string>((resolve) => {
        const child = spawn(command, args, { cwd: ctx.cwd, env: { ...process.env }, stdio: ["ignore", "pipe", "pipe"] });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d) => (stdout += d));
        child.stderr.on("data", (d) => (stderr += d));
        child.on("error", (error) => resolve(`spawn failed: ${error.message}`));
        child.on("close", (code, signal) => {
          rmSync(dir, { recursive: true, force: true });
          const status = code ?? `signal ${signal}`;
          resolve(`exit ${status}: ${lastAssistantText(stdout)}${process.env.E2E_ORCHESTRATOR_STDERR ? `\nstderr: ${stderr.trim()}` : ""}`);
        });
      });
      return { content: [{ type: "text", text }], details: {} };
    },
  };
  pi.registerTool(tool as unknown as ToolDefinition);
}
