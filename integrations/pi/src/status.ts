// What the extension says about itself: the `pi-sandbox unavailable` notice, and the
// `/sandbox` command, which prints the status, the policy and the last denials in every mode
// (the session-start notices are not shown in `-p` and `--mode json`).

import { writeSync } from "node:fs";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import type { FileToolsMode, PolicyView } from "./file-tools.ts";

/** `text` without the `pi-sandbox: ` that the binary puts before its own messages. */
export function stripPrefix(text: string): string {
  return text.replace(/^pi-sandbox: /, "");
}

/**
 * The session-start notice of a sandbox that cannot run: its first line says why and that
 * Bash and the file tools fail closed; the message's further lines (a `hint:`) follow on
 * lines of their own.
 */
export function unavailableNotice(message: string): string {
  const [first, ...rest] = stripPrefix(message).split("\n");
  return [`pi-sandbox unavailable: ${first}; Bash commands and file tools will fail closed`, ...rest].join("\n");
}

/** What `/sandbox` reports, gathered by the extension. */
export type SandboxStatus = {
  enabled: boolean;
  /** Why not, when not enabled. */
  unavailable: string;
  /** serve's `hello` (`pi-sandbox 0.2.0`). */
  server: string | undefined;
  configFile: string | undefined;
  fileTools: FileToolsMode | undefined;
  workspace: string;
  policy: (PolicyView & { writable?: Array<{ path: string }>; configuration?: { file?: string | null } }) | undefined;
  policyError: string | undefined;
  /** The last denials of this session, oldest first. */
  denials: string[];
};

/** The text `/sandbox` prints. */
export function statusText(status: SandboxStatus): string {
  if (!status.enabled) return `pi-sandbox: unavailable: ${status.unavailable}; Bash commands and file tools fail closed`;
  const lines = [
    `pi-sandbox: enabled (${status.server || "pi-sandbox serve"}); Bash runs in the sandbox`,
    `file tools: ${status.fileTools === "host" ? 'host (pi.fileTools: "host"): not confined' : "sandboxed"}`,
    `configuration: ${status.policy?.configuration?.file ?? status.configFile ?? "none (the defaults)"}`,
    `workspace: ${status.workspace} (read-write)`,
  ];
  const policy = status.policy;
  if (policy) {
    lines.push(`home: ${policy.home ?? "?"} ${policy.home_hidden ? "hidden" : "visible"}${policy.home_read_allowed?.length ? `, re-exposed: ${policy.home_read_allowed.map((e) => e.path).join(", ")}` : ""}`);
    if (policy.writable?.length) lines.push(`also writable: ${policy.writable.map((e) => e.path).join(", ")}`);
    lines.push(`protected paths: ${policy.protected?.length ?? 0} (pi-sandbox policy --cwd ${status.workspace} lists them)`);
  } else if (status.policyError) {
    lines.push(`policy: ${status.policyError}`);
  }
  lines.push(status.denials.length ? "last denials:" : "no denials in this session", ...status.denials.map((d) => `  ${d}`));
  return lines.join("\n");
}

/**
 * Registers `/sandbox`: the status as an info notice (in every mode Pi can show one), else on
 * stdout in print mode, and on stderr in json mode, whose stdout is JSON lines only.
 */
export function registerStatusCommand(pi: ExtensionAPI, status: (cwd: string) => Promise<SandboxStatus>): void {
  pi.registerCommand?.("sandbox", {
    description: "pi-sandbox: status, policy and the last denials",
    handler: async (_args, ctx) => {
      const text = statusText(await status(ctx.cwd));
      if (ctx.hasUI) ctx.ui.notify(text, "info");
      // Print mode may exit right after the command: written at once, not queued.
      else writeSync(ctx.mode === "json" ? 2 : 1, `${text}\n`);
    },
  });
}
