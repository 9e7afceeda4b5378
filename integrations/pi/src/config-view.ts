// What the Pi extension reads of pi-sandbox's effective configuration (`pi-sandbox config check
// --cwd`, docs/configuration.md): the subagent provider, `pi.fileTools`,
// `subagents.workerExtensions` and `subagents.externalWorkerIsolation`; and `pi-sandbox <command> --json` as a promise.

import { execFile } from "node:child_process";
import type { FileToolsMode } from "./file-tools.ts";
import { stripPrefix } from "./status.ts";

/** `subagents.provider` (docs/compatibility.md, C5). */
export type SubagentProvider = "builtin" | "pi-subagents" | "off";

/**
 * Runs `pi-sandbox <args>` and parses its JSON stdout; rejects with its message (without its
 * `pi-sandbox: ` prefix; a hint stays on its own line).
 */
export function runJson(binary: string, args: string[], env: NodeJS.ProcessEnv): Promise<unknown> {
  return new Promise((resolvePromise, reject) => {
    execFile(
      binary,
      args,
      { env, timeout: 15_000, maxBuffer: 16 << 20 },
      (error, stdout, stderr) => {
        if (error) {
          reject(new Error(stripPrefix(String(stderr).trim()) || error.message));
          return;
        }
        try {
          resolvePromise(JSON.parse(String(stdout)));
        } catch {
          reject(new Error(`${binary} ${args.slice(0, 2).join(" ")} printed no JSON`));
        }
      },
    );
  });
}

/**
 * `pi-sandbox config check [FILE] --cwd WORKSPACE`: the effective configuration, or why it is
 * invalid or refused (a FILE inside the workspace, which serve would refuse on every command).
 */
export function checkConfig(binary: string, configFile: string | undefined, cwd: string, env: NodeJS.ProcessEnv): Promise<unknown> {
  return runJson(binary, ["config", "check", ...(configFile ? [configFile] : []), "--cwd", cwd], env);
}

/** `pi.fileTools`: `host` only when the configuration says so. */
export function fileToolsOf(config: unknown): FileToolsMode {
  return (config as { pi?: { fileTools?: unknown } } | undefined)?.pi?.fileTools === "host" ? "host" : "sandboxed";
}

/** `subagents.workerExtensions` of the effective configuration. */
export function workerExtensionsOf(config: unknown): string[] {
  const paths = (config as { subagents?: { workerExtensions?: unknown } } | undefined)?.subagents?.workerExtensions;
  return Array.isArray(paths) ? paths.filter((p): p is string => typeof p === "string") : [];
}

/** `subagents.externalWorkerIsolation` (docs/configuration.md), `off` when absent. */
export type ExternalWorkerIsolation = "off" | "enforce";

/** `subagents.externalWorkerIsolation` of the effective configuration. */
export function externalWorkerIsolationOf(config: unknown): ExternalWorkerIsolation {
  const isolation = (config as { subagents?: { externalWorkerIsolation?: unknown } } | undefined)?.subagents?.externalWorkerIsolation;
  return isolation === "enforce" ? "enforce" : "off";
}

/** `subagents.provider`, `builtin` when absent. */
export function providerOf(config: unknown): SubagentProvider {
  const provider = (config as { subagents?: { provider?: unknown } } | undefined)?.subagents?.provider;
  return provider === "off" || provider === "pi-subagents" ? provider : "builtin";
}
