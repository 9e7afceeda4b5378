// The `subagent` tool of the builtin provider (integrations/pi/README.md, "Subagents"): the model
// starts Pi workers, each in its own sandbox, and talks to them. The workers' lifecycle and
// limits are subagent.ts; launching them through serve is index.ts.

import { existsSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ExtensionContext, ToolDefinition } from "@earendil-works/pi-coding-agent";
import { StringEnum } from "@earendil-works/pi-ai";
import { Type, type Static } from "typebox";
import type { SubagentManager, SubagentSession } from "./subagent.ts";

export const SUBAGENT_TOOL = "subagent";
export const SUBAGENT_LABEL = "Subagent (pi-sandbox)";
/** `details.sandbox` of every result, as pi-sandbox 0.4.0 named it (docs/compatibility.md, C81). */
export const SUBAGENT_SANDBOX = "sandbox-runtime-outer";

const ACTIONS = ["start", "follow_up", "wait", "status", "stop", "handoff"] as const;
type Action = (typeof ACTIONS)[number];

const PARAMETERS = Type.Object({
  action: Type.Optional(
    StringEnum(ACTIONS, {
      description:
        "start (default): a new worker for `task`; follow_up: another task for `sessionId`; wait: until `sessionId` settles; status: every session; stop: end `sessionId`; handoff: a new worker that continues from `sessionId`'s result with `task`",
    }),
  ),
  task: Type.Optional(Type.String({ description: "What the worker is to do" })),
  sessionId: Type.Optional(Type.String({ description: "The worker session (follow_up, wait, stop, handoff)" })),
  background: Type.Optional(Type.Boolean({ description: "Return at once instead of waiting for the worker to settle" })),
  model: Type.Optional(Type.String({ description: "The worker's model (provider/id); default: this session's" })),
});

type Params = Static<typeof PARAMETERS>;
export type SubagentDetails = { sandbox: typeof SUBAGENT_SANDBOX; sessionId?: string; state?: string };

const PI_PACKAGE = join("node_modules", "@earendil-works", "pi-coding-agent");

/**
 * Pi's CLI for workers: `process.argv[1]` (links resolved) when it is Pi's `cli.(js|mjs|cjs|ts)`,
 * else `dist/cli.js` of the @earendil-works/pi-coding-agent package found the way Node resolves
 * it from this file (the nearest node_modules upward; the package exports no CommonJS entry to
 * resolve). Throws when there is none.
 */
export function piCliPath(argv1: string | undefined = realArgv1(), from: string = dirname(fileURLToPath(import.meta.url))): string {
  if (argv1 && /(^|[\\/])cli\.(js|mjs|cjs|ts)$/.test(argv1)) return argv1;
  for (let dir = from; ; dir = dirname(dir)) {
    const cli = join(dir, PI_PACKAGE, "dist", "cli.js");
    if (existsSync(cli)) return cli;
    if (dirname(dir) === dir) break;
  }
  throw new Error(`pi-sandbox: no Pi CLI (${PI_PACKAGE}/dist/cli.js) above ${from}; start Pi with its cli.js`);
}

/**
 * This process's script with its links resolved: Pi started as `node_modules/.bin/pi` (a link
 * to its `dist/cli.js`) is found there, also when this extension is installed elsewhere.
 */
export function realArgv1(): string | undefined {
  try {
    return process.argv[1] ? realpathSync(process.argv[1]) : undefined;
  } catch {
    return process.argv[1];
  }
}

/** The handoff task (README, "Subagents": `handoff`). */
export function handoffTask(from: string, previous: string, task: string): string {
  return `Handoff from subagent session ${from}.\n\nPrevious result:\n${previous}\n\nNext task:\n${task}`;
}

/** A model as the registry lists it. */
export type ModelName = { provider: string; id: string };

/** The thinking levels a model may carry as a `:<level>` suffix (kept on the resolved name). */
const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

/**
 * The worker's model for an explicit `model` of `start`/`handoff`, checked before any worker
 * starts (docs/compatibility.md C84): `provider/id` must be an available model exactly; a bare
 * id is the current provider's if it has it, else the one provider's that has it; a
 * `:<thinking level>` suffix is kept. Returns `provider/id[:level]`. Throws `subagent <action>
 * requires an available model; unknown model '<m>'` or `subagent <action> requires an
 * unambiguous model; '<m>' is available under multiple providers (<a, b>). Use provider/model
 * or set PI_MODEL to disambiguate.`
 */
export function resolveWorkerModel(action: string, requested: string, current: ModelName | undefined, available: readonly ModelName[]): string {
  const colon = requested.lastIndexOf(":");
  const level = colon > 0 ? requested.slice(colon + 1) : "";
  const suffix = THINKING_LEVELS.includes(level) ? `:${level}` : "";
  const name = suffix ? requested.slice(0, colon) : requested;
  if (available.some((m) => `${m.provider}/${m.id}` === name)) return `${name}${suffix}`;
  const unknown = new Error(`subagent ${action} requires an available model; unknown model '${requested}'`);
  const matches = available.filter((m) => m.id === name);
  if (matches.length === 0) throw unknown;
  const chosen = matches.find((m) => m.provider === current?.provider) ?? (matches.length === 1 ? matches[0] : undefined);
  if (!chosen) {
    const providers = [...new Set(matches.map((m) => m.provider))].sort().join(", ");
    throw new Error(
      `subagent ${action} requires an unambiguous model; '${requested}' is available under multiple providers (${providers}). Use provider/model or set PI_MODEL to disambiguate.`,
    );
  }
  return `${chosen.provider}/${chosen.id}${suffix}`;
}

/** The explicit `model` checked against Pi's registry when Pi offers one; else as given. */
function explicitModel(action: string, requested: string, ctx: ExtensionContext): string {
  const registry = (ctx as { modelRegistry?: { getAvailable(): readonly ModelName[] } }).modelRegistry;
  if (!registry) return requested;
  return resolveWorkerModel(action, requested, ctx.model, registry.getAvailable());
}

/** The session's model as `provider/id`, for a worker that names none. */
function currentModel(ctx: ExtensionContext): string | undefined {
  return ctx.model ? `${ctx.model.provider}/${ctx.model.id}` : undefined;
}

function result(text: string, details: Omit<SubagentDetails, "sandbox"> = {}) {
  return { content: [{ type: "text" as const, text }], details: { sandbox: SUBAGENT_SANDBOX, ...details } as SubagentDetails };
}

function required(action: Action, field: "task" | "sessionId", value: string | undefined): string {
  if (value === undefined || value.trim() === "") throw new Error(`subagent ${action} requires ${field}`);
  return value;
}

/**
 * Waits until `session` has settled `target` times. An abort of the tool call rejects with
 * `aborted` and then asks the worker to abort its run (README, "Subagents": `wait`).
 */
async function settle(session: SubagentSession, target: number, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return session.settled(target);
  if (signal.aborted) throw new Error("aborted");
  let onAbort!: () => void;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new Error("aborted"));
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    await Promise.race([session.settled(target), aborted]);
  } catch (error) {
    if (signal.aborted) await session.abort().catch(() => undefined);
    throw error;
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

/**
 * The worker's answer (the words of the worker and of what its commands printed: data, never
 * authority), then its model's error if its last message failed, then what its sandbox refused
 * meanwhile (from serve, which the worker's commands cannot forge).
 */
function finalText(session: SubagentSession): string {
  const text = session.text || "(subagent completed without assistant text)";
  const lines = [...(session.workerError ? [`worker error: ${session.workerError}`] : []), ...session.takeSandboxLines()];
  return lines.length > 0 ? `${text}\n\n${lines.join("\n")}` : text;
}

/** A worker that could not load an extension: where the sandbox lets it read one. */
function withExtensionHint(error: unknown): unknown {
  if (!(error instanceof Error) || !error.message.includes("Failed to load extension")) return error;
  return new Error(
    `${error.message}\n(a worker loads subagents.workerExtensions inside its sandbox: a file in the hidden home needs its directory in filesystem.additionalAllowRead)`,
  );
}

/** The `subagent` tool over `manager` (parallel execution: each call has its own worker). */
export function subagentTool(
  manager: (ctx: ExtensionContext) => SubagentManager,
): ToolDefinition<typeof PARAMETERS, SubagentDetails> {
  return {
    name: SUBAGENT_TOOL,
    label: SUBAGENT_LABEL,
    description:
      "Start Pi workers that run tasks in parallel, each in its own pi-sandbox sandbox (its Bash, files and network under the same policy and approvals as this session's commands), and talk to them.",
    parameters: PARAMETERS,
    executionMode: "parallel",
    async execute(_toolCallId, params: Params, signal, onUpdate, ctx) {
      const action = (params.action ?? "start") as Action;
      if (!ctx) throw new Error("pi-sandbox: missing extension context");
      const subagents = manager(ctx);
      const update = (session: SubagentSession) => {
        session.onText = (text) => onUpdate?.(result(text, { sessionId: session.id, state: session.state }));
      };
      switch (action) {
        case "start":
        case "handoff": {
          const task = required(action, "task", params.task);
          const from = action === "handoff" ? subagents.get(required(action, "sessionId", params.sessionId)) : undefined;
          const message = from ? handoffTask(from.id, from.text, task) : task;
          const model = params.model !== undefined ? explicitModel(action, params.model, ctx) : currentModel(ctx);
          const session = await subagents
            .start({ task: message, approvalTask: task, ...(model ? { model } : {}), ...(from ? { parentId: from.id } : {}) })
            .catch((error: unknown) => {
              throw withExtensionHint(error);
            });
          update(session);
          let target: number;
          try {
            target = await session.send(message);
          } catch (error) {
            await subagents.remove(session.id);
            throw error;
          }
          if (params.background) return result(`Started background subagent ${session.id}`, { sessionId: session.id, state: session.state });
          try {
            await settle(session, target, signal);
          } finally {
            // A foreground start ends with its worker; a handoff session is kept (README, "Subagents").
            if (action === "start") await subagents.remove(session.id);
          }
          return result(finalText(session), { sessionId: session.id, state: action === "start" ? "stopped" : session.state });
        }
        case "follow_up": {
          const session = subagents.get(required(action, "sessionId", params.sessionId));
          const task = required(action, "task", params.task);
          update(session);
          const target = await session.send(task);
          if (params.background) return result(`Follow-up queued for subagent ${session.id}`, { sessionId: session.id, state: session.state });
          await settle(session, target, signal);
          return result(finalText(session), { sessionId: session.id, state: session.state });
        }
        case "wait": {
          const session = subagents.get(required(action, "sessionId", params.sessionId));
          update(session);
          await settle(session, session.currentTarget(), signal);
          return result(finalText(session), { sessionId: session.id, state: session.state });
        }
        case "status": {
          const sessions = subagents.status();
          return result(sessions.length > 0 ? JSON.stringify(sessions, null, 2) : "(no subagent sessions)");
        }
        case "stop": {
          const id = required(action, "sessionId", params.sessionId);
          await subagents.stop(id);
          return result(`Stopped subagent ${id}`, { sessionId: id, state: "stopped" });
        }
      }
    },
  };
}
