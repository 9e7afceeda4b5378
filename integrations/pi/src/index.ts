// The Pi extension of pi-sandbox: Pi's `bash` tool and its `!` commands (`user_bash`) run
// through one long-lived `pi-sandbox serve` per Pi session (docs/protocol.md), and the
// approvals serve asks for go to the pi-auto-review broker or to the human in Pi's UI.
//
// What it keeps of pi-sandbox 0.4.0: docs/compatibility.md, C57, C58, C79 and C81, and
// integrations/pi/README.md. Where serve cannot run, Bash fails closed: a command is never run
// outside the sandbox by this extension.

import { resolve } from "node:path";
import type {
  BashOperations,
  ExtensionAPI,
  ExtensionContext,
} from "@earendil-works/pi-coding-agent";
import { createBashToolDefinition, SettingsManager } from "@earendil-works/pi-coding-agent";
import {
  approvalTarget,
  brokerPublishedButUnusable,
  decideApproval,
  getBoundaryBroker,
  type ApprovalDecision,
  type BoundaryBroker,
  type SelectPrompt,
} from "./approval.ts";
import { findBinary } from "./binary.ts";
import { DialogQueue } from "./dialog.ts";
import { fileToolsNotice, registerFileTools, type FileSandbox, type FileToolsMode, type PolicyView, type SandboxRun } from "./file-tools.ts";
import { messageOf, stringEnv, unavailable } from "./common.ts";
import {
  checkConfig,
  externalWorkerIsolationOf,
  fileToolsOf,
  providerOf,
  runJson,
  workerExtensionsOf,
  type SubagentProvider,
} from "./config-view.ts";
import {
  hostLaunchRefusal,
  importExternalRuns,
  isolationUnavailableWarning,
  LAUNCHER,
  PI_BINARY_ENV,
  SEAM_ENV,
  seamProblem,
  workerAgentName,
  WorkerSupervisor,
  type ExternalRuns,
  type WorkerLaunch,
} from "./external-workers.ts";
import { DenialNotices, enabledNotice } from "./notices.ts";
import { registerOverrideCommands } from "./overrides.ts";
import type { ApprovalRequestEvent, DeniedEvent } from "./protocol.ts";
import { ServeClient, type ExecOutcome } from "./serve-client.ts";
import { depthFromEnv, SubagentManager, type WorkerLauncher } from "./subagent.ts";
import { piCliPath, realArgv1, SUBAGENT_TOOL, subagentTool } from "./subagent-tool.ts";
import { registerStatusCommand, unavailableNotice, type SandboxStatus } from "./status.ts";
import {
  launchWorker,
  providerCredentialNames,
  WORKER_AGENT_DIR,
  type CommandApprovals,
  type WorkerHost,
} from "./worker-launcher.ts";

export { providerCredentialNames, WORKER_AGENT_DIR, workerDenialLine } from "./worker-launcher.ts";

/** A trusted configuration file passed to serve as `--config FILE`. */
export const CONFIG_ENV = "PI_SANDBOX_CONFIG";
export const TOOL_LABEL = "bash (pi-sandbox)";

export type PiSandboxExtensionOptions = {
  /** Environment read for PI_SANDBOX_BIN, PI_SANDBOX_CONFIG and PATH (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** Test override of process.platform. */
  platform?: NodeJS.Platform;
  /** Test override of the published pi-auto-review broker. */
  broker?: () => BoundaryBroker | undefined;
  /** Test override of whether pi-auto-review published an unusable broker. */
  brokerFailed?: () => boolean;
  /** Test override of FILE_OPERATION_TIMEOUT_S (seconds). */
  fileOperationTimeoutS?: number;
  /** Test override of the external worker launcher (default: LAUNCHER). */
  externalWorkerLauncher?: string;
  /** Test override of FleetView (`pi-subagents/external-runs`). */
  externalRuns?: () => Promise<ExternalRuns | undefined>;
};

const PLATFORM_NOTICES: Partial<Record<NodeJS.Platform, string>> = {
  linux: "pi-sandbox enabled: Linux Sandbox Runtime with static filesystem policy and per-connection network review",
  darwin: "pi-sandbox enabled: macOS Sandbox Runtime with static filesystem policy and per-connection network review",
};

/** Validates Pi's timeout as Pi's own bash does, in seconds. */
function timeoutSeconds(timeout: number | undefined): number | undefined {
  if (timeout === undefined) return undefined;
  if (!Number.isFinite(timeout) || timeout <= 0) throw new Error("Invalid timeout: must be a finite number of seconds");
  return timeout;
}








/** How long one operation of Pi's file tools may take inside its sandbox (seconds). */
export const FILE_OPERATION_TIMEOUT_S = 120;

/** How many denials `/sandbox` shows. */
const RECENT_DENIALS = 10;

/** The state of one Pi session runtime: its serve, its turn, its notices. */
class SessionSandbox implements FileSandbox {
  private readonly pi: ExtensionAPI;
  private readonly env: NodeJS.ProcessEnv;
  private readonly platform: NodeJS.Platform;
  private readonly broker: () => BoundaryBroker | undefined;
  private readonly brokerFailed: () => boolean;
  private client: ServeClient | undefined;
  private starting: Promise<ServeClient> | undefined;

  /** The session's serve while it runs, for `/auto-review-approve` and `/auto-review-break-glass`. */
  serveClient(): ServeClient | undefined {
    return this.client?.alive ? this.client : undefined;
  }
  private shutDown = false;
  /** Counts serves started and stopped: a serve that finishes starting for an older one is stopped. */
  private generation = 0;
  private readonly dialogs = new DialogQueue();
  turnIndex = 0;
  /** `pi.fileTools` of this session's configuration; undefined until it was checked. */
  private fileTools: FileToolsMode | undefined;
  /** Why the sandbox is unavailable (session start), for the file tools and `/sandbox`. */
  private unavailableReason = "the Pi session has not started";
  private readonly policies = new Map<string, Promise<PolicyView>>();
  private readonly denials: string[] = [];
  /** The last session start found the sandbox unusable: Bash fails with its reason. */
  private startFailed = false;

  /** Whether the `subagent` tool is registered (the builtin notice says so only then). */
  subagentTool = false;
  /** `subagents.workerExtensions` of the configuration read at registration. */
  workerExtensions: string[] = [];
  /** The workers of the current Pi session (builtin provider). */
  private subagents: SubagentManager | undefined;

  constructor(pi: ExtensionAPI, options: PiSandboxExtensionOptions) {
    this.pi = pi;
    this.env = options.env ?? process.env;
    this.platform = options.platform ?? process.platform;
    this.broker = options.broker ?? getBoundaryBroker;
    this.brokerFailed = options.brokerFailed ?? brokerPublishedButUnusable;
    this.fileTimeoutS = options.fileOperationTimeoutS ?? FILE_OPERATION_TIMEOUT_S;
  }

  /** How long one file operation may take (seconds). */
  private readonly fileTimeoutS: number;

  /**
   * session_start: checks the configuration, starts serve, shows the notices (items 7-9).
   * A serve still running from an earlier Pi session is stopped first: its session answers
   * (`allow-session`) belong to that session only (docs/approvals.md, "The question and its
   * answers").
   */
  async start(ctx: ExtensionContext): Promise<void> {
    await this.stopSubagents();
    await this.stopExternalWorkers();
    await this.stopServe();
    this.ctx = ctx;
    this.shutDown = false;
    this.fileTools = undefined;
    this.startFailed = true;
    this.policies.clear();
    if (!PLATFORM_NOTICES[this.platform]) {
      this.unavailableReason = `pi-sandbox does not support ${this.platform}`;
      if (ctx.hasUI) {
        ctx.ui.notify(`pi-sandbox is unavailable on ${this.platform}; Bash commands will fail closed`, "warning");
      }
      return;
    }
    let provider: SubagentProvider;
    let fileTools: FileToolsMode;
    let sandbox: string;
    try {
      const config = await this.effectiveConfig(resolve(ctx.cwd));
      provider = providerOf(config);
      fileTools = fileToolsOf(config);
      sandbox = (await this.serve()).sandbox;
    } catch (error) {
      this.unavailableReason = messageOf(error);
      // No sandbox, no isolated worker: the orchestrator's calls are refused as well.
      if (this.externalIsolation) this.isolationFailure = messageOf(error);
      const text = unavailableNotice(messageOf(error));
      if (ctx.hasUI) ctx.ui.notify(text, "error");
      else process.stderr.write(`${text}\n`);
      return;
    }
    this.fileTools = fileTools;
    this.startFailed = false;
    await this.startExternalWorkers();
    if (this.isolationFailure !== undefined) {
      const text = isolationUnavailableWarning(this.isolationFailure);
      if (ctx.hasUI) ctx.ui.notify(text, "warning");
      else process.stderr.write(`${text}\n`);
    }
    if (!ctx.hasUI) return;
    // Pi's TUI shows consecutive info notices in one line, the last one: the line that says
    // the sandbox is on comes last.
    this.providerNotice(ctx, provider);
    ctx.ui.notify(fileToolsNotice(fileTools), "info");
    ctx.ui.notify(enabledNotice(sandbox), "info");
  }

  private providerNotice(ctx: ExtensionContext, provider: SubagentProvider): void {
    if (provider === "builtin" && this.subagentTool) {
      ctx.ui.notify(
        "pi-sandbox subagent provider: builtin; worker process trees use the outer Sandbox Runtime sandbox",
        "info",
      );
    } else if (provider === "off") {
      ctx.ui.notify("pi-sandbox subagent provider: off; pi-sandbox protects Bash execution only", "info");
    } else {
      // Who owns the active `subagent` tool (docs/compatibility.md, C79).
      const active = new Set(this.pi.getActiveTools());
      const tool = this.pi.getAllTools().find((t) => t.name === "subagent" && active.has(t.name));
      const segment = /(^|[\\/:@])pi-subagents([\\/@]|$)/;
      if (!tool) {
        ctx.ui.notify("pi-sandbox provider pi-subagents selected, but no external subagent tool is active", "warning");
      } else if (![tool.sourceInfo?.source, tool.sourceInfo?.path, tool.sourceInfo?.baseDir].some((s) => s && segment.test(s))) {
        ctx.ui.notify(
          `pi-sandbox provider pi-subagents selected, but the active subagent tool is owned by unexpected source ${tool.sourceInfo?.source} (${tool.sourceInfo?.path})`,
          "warning",
        );
      } else if (this.externalIsolation && this.isolationFailure === undefined) {
        ctx.ui.notify(
          "pi-subagents orchestration active; pi-sandbox protects Bash execution and runs each external worker in a sandbox of its own",
          "info",
        );
      } else if (!this.externalIsolation) {
        ctx.ui.notify(
          "pi-subagents orchestration active; pi-sandbox protects Bash execution. External workers are not yet wrapped in an outer Sandbox Runtime sandbox.",
          "info",
        );
      }
    }
  }

  /**
   * The configuration check the registration made (`pi-sandbox config check`), once, when the
   * first session starts in the same workspace with the same file: Pi does not wait for it twice.
   */
  private registrationCheck: { cwd: string; configFile: string | undefined; config: Promise<unknown> } | undefined;

  /** Checks the configuration for `cwd` (registerSubagentTool() and the first start() share one check). */
  effectiveConfig(cwd: string): Promise<unknown> {
    const check = this.registrationCheck;
    this.registrationCheck = undefined;
    const configFile = this.configFile();
    if (check && check.cwd === cwd && check.configFile === configFile) return check.config;
    return checkConfig(findBinary(this.env), configFile, cwd, this.env);
  }

  /** Checks the configuration at registration and keeps the check for the first session start. */
  checkAtRegistration(cwd: string): Promise<unknown> {
    const config = (async () => checkConfig(findBinary(this.env), this.configFile(), cwd, this.env))();
    config.catch(() => undefined);
    this.registrationCheck = { cwd, configFile: this.configFile(), config };
    return config;
  }

  /** $PI_SANDBOX_CONFIG as an absolute path (relative: to Pi's working directory). */
  private configFile(): string | undefined {
    const file = this.env[CONFIG_ENV];
    return file ? resolve(file) : undefined;
  }

  /** session_shutdown: stops serve (which kills and removes every sandbox). */
  async stop(): Promise<void> {
    this.shutDown = true;
    this.unavailableReason = "the Pi session has ended";
    await this.stopSubagents();
    await this.stopExternalWorkers();
    await this.stopServe();
  }

  // ---- external workers (external-workers.ts) ----

  /** `subagents.externalWorkerIsolation: "enforce"` with provider `pi-subagents`, read at registration. */
  externalIsolation = false;
  /** Why isolation is unavailable (launches fail closed, `subagent` calls are blocked), or undefined. */
  isolationFailure: string | undefined;
  /** The context of the running session: whom a worker's approvals are asked of. */
  private ctx: ExtensionContext | undefined;
  private supervisor: WorkerSupervisor | undefined;
  /** The approvals of each registered worker: ended when it unregisters or the session ends. */
  private readonly workerApprovals = new Map<string, CommandApprovals & { end: AbortController }>();

  /**
   * Points the orchestrator's seam at the launcher from now on (registration), so that no worker
   * starts on the host even before the first session: until the supervisor runs, the launcher
   * refuses. Refuses to replace a seam someone else set, and a launcher that is missing.
   */
  enforceExternalIsolation(launcher: string, runs: () => Promise<ExternalRuns | undefined>): void {
    this.externalIsolation = true;
    this.launcher = launcher;
    this.externalRuns = runs;
    this.isolationFailure = seamProblem(this.env, launcher);
    // The seam set by another wins over nothing: `subagent` calls are blocked instead.
    // (pi-subagents ignores a blank one.)
    if (!this.env[PI_BINARY_ENV]?.trim()) this.env[PI_BINARY_ENV] = launcher;
    this.ownsSeam = this.env[PI_BINARY_ENV] === launcher;
  }
  private launcher = LAUNCHER;
  private ownsSeam = false;
  private externalRuns: () => Promise<ExternalRuns | undefined> = importExternalRuns;

  /** Starts the session's supervisor and gives the launcher its address (enforce only). */
  private async startExternalWorkers(): Promise<void> {
    if (!this.externalIsolation || !this.ownsSeam) return;
    this.isolationFailure = seamProblem({}, this.launcher);
    if (this.isolationFailure !== undefined) return;
    try {
      const supervisor = await WorkerSupervisor.start({
        launch: (workerId, cwd, args) => this.externalLaunch(workerId, cwd, args),
        approve: (workerId, event) => this.externalApprove(workerId, event),
        settled: (workerId, requestId) => this.workerApprovals.get(workerId)?.open.get(requestId)?.abort(),
        ended: (workerId) => {
          this.workerApprovals.get(workerId)?.end.abort();
          this.workerApprovals.delete(workerId);
        },
        sessionId: () => this.ctx?.sessionManager.getSessionId() ?? "",
        runs: () => this.externalRuns(),
      });
      this.supervisor = supervisor;
      Object.assign(this.env, supervisor.env(process.execPath), { [PI_BINARY_ENV]: this.launcher });
    } catch (error) {
      this.isolationFailure = `the supervisor could not start: ${messageOf(error)}`;
    }
  }

  /** Stops the supervisor: running launchers lose it (their questions are denied), new ones refuse. */
  private async stopExternalWorkers(): Promise<void> {
    const supervisor = this.supervisor;
    this.supervisor = undefined;
    if (!supervisor) return;
    for (const name of SEAM_ENV) if (name !== PI_BINARY_ENV) delete this.env[name];
    for (const approvals of this.workerApprovals.values()) approvals.end.abort();
    this.workerApprovals.clear();
    await supervisor.close();
  }

  /** What a registered launcher runs: the real Pi through serve, named `pi-subagents-worker:<id>`. */
  private async externalLaunch(workerId: string, _cwd: string, args: string[]): Promise<WorkerLaunch> {
    const ctx = this.ctx;
    if (!ctx || this.shutDown || this.startFailed) throw new Error(this.unavailableReason);
    const sessionId = ctx.sessionManager.getSessionId();
    const scopeKey = `${sessionId}:pi-subagents-worker:${workerId}`;
    const binary = findBinary(this.env);
    const pi = [process.execPath, piCliPath(realArgv1()), ...this.workerExtensions.flatMap((path) => ["-e", path])];
    const end = new AbortController();
    this.workerApprovals.set(workerId, {
      scopeKey,
      ended: end.signal,
      end,
      open: new Map(),
      notices: new DenialNotices((text) => {
        if (this.ctx?.hasUI) this.ctx.ui.notify(text, "warning");
      }),
    });
    // The worker's model: `--model provider/id` of its arguments, else the parent's provider.
    const model = args[args.indexOf("--model") + 1];
    const provider = args.includes("--model") && model?.includes("/") ? model.split("/")[0] : ctx.model?.provider;
    const configFile = this.configFile();
    return {
      binary,
      serveArgs: configFile ? ["--config", configFile] : [],
      pi,
      scopeKey,
      agentName: workerAgentName(workerId),
      envKeep: provider ? providerCredentialNames(this.env, ctx.modelRegistry?.getProviderAuthStatus?.(provider)) : [],
      env: { PI_CODING_AGENT_DIR: WORKER_AGENT_DIR, NODE_NO_WARNINGS: "1" },
    };
  }

  /** Decides one approval of a worker's sandbox as a built-in worker's (approve()). */
  private externalApprove(workerId: string, event: ApprovalRequestEvent): Promise<ApprovalDecision | undefined> {
    const ctx = this.ctx;
    const approvals = this.workerApprovals.get(workerId);
    if (!ctx || !approvals) return Promise.resolve(undefined);
    return new Promise((resolvePromise) => {
      approvals.ended.addEventListener("abort", () => resolvePromise(undefined), { once: true });
      this.approve(ctx, { respond: (_id, _requestId, decision) => resolvePromise(decision) }, event, approvals);
    });
  }

  fileToolsMode(): FileToolsMode {
    if (this.shutDown || this.fileTools === undefined) throw new Error(this.unavailableReason);
    return this.fileTools;
  }

  /** One file operation in a sandbox of `cwd`: never asks anyone (it crosses no boundary). */
  async run(argv: string[], cwd: string, input: Buffer | undefined, signal?: AbortSignal): Promise<SandboxRun> {
    let client: ServeClient;
    try {
      client = await this.serve();
    } catch (error) {
      throw new Error(`pi-sandbox unavailable: ${messageOf(error)}`);
    }
    const stdout: Buffer[] = [];
    let stderr = "";
    const outcome = await client.exec(
      {
        argv,
        cwd: resolve(cwd),
        stdin: input === undefined ? "closed" : "pipe",
        scope_key: `file-tools:${this.turnIndex}`,
        // A read of a FIFO, a file on a hung network mount: the tool call ends instead of Pi.
        timeout_s: this.fileTimeoutS,
      },
      {
        onOutput: (stream, data) => (stream === "stdout" ? stdout.push(data) : (stderr += data.toString("utf8"))),
        onApprovalRequest: (event) =>
          client.respond(event.id, event.request_id, { choice: "deny", source: "unavailable", reason: "A file operation of Pi's tools crosses no boundary." }),
      },
      signal,
      input,
    );
    if (signal?.aborted || outcome.error === "aborted") throw new Error("Operation aborted");
    if (outcome.error === "timeout") {
      throw new Error(
        `pi-sandbox stopped the file operation after ${this.fileTimeoutS} s (a FIFO, a device or a hung mount?); use bash with a timeout to read it`,
      );
    }
    if (outcome.error) throw new Error(`pi-sandbox could not do the file operation: ${outcome.message ?? outcome.error}`);
    return { exitCode: outcome.exit_code, stdout: Buffer.concat(stdout), stderr };
  }

  policy(cwd: string): Promise<PolicyView> {
    const workspace = resolve(cwd);
    let policy = this.policies.get(workspace);
    if (!policy) {
      const configFile = this.configFile();
      const args = ["policy", "--json", "--cwd", workspace, ...(configFile ? ["--config", configFile] : [])];
      policy = (async () => (await runJson(findBinary(this.env), args, this.env)) as PolicyView)();
      policy.catch(() => this.policies.delete(workspace));
      this.policies.set(workspace, policy);
    }
    return policy;
  }

  /** Remembers a denial for `/sandbox` (the last RECENT_DENIALS). */
  private remember(event: DeniedEvent): void {
    this.keep(`${event.surface} ${event.target ?? ""}: ${event.reason ?? ""}${event.source ? ` (${event.source})` : ""}`);
  }

  /** A file tool's refusal (`pi-sandbox: read refused: <path> <why>`), for `/sandbox`. */
  refused(message: string): void {
    this.keep(`file ${message.replace(/^pi-sandbox: /, "")}`);
  }

  private keep(line: string): void {
    this.denials.push(line);
    if (this.denials.length > RECENT_DENIALS) this.denials.shift();
  }

  /** What `/sandbox` shows. */
  async status(cwd: string): Promise<SandboxStatus> {
    let policy: PolicyView | undefined;
    let policyError: string | undefined;
    if (this.fileTools !== undefined && !this.shutDown) {
      try {
        policy = await this.policy(cwd);
      } catch (error) {
        policyError = messageOf(error);
      }
    }
    return {
      enabled: this.fileTools !== undefined && !this.shutDown,
      unavailable: this.unavailableReason,
      server: this.client?.server,
      configFile: this.configFile(),
      fileTools: this.fileTools,
      workspace: resolve(cwd),
      policy,
      policyError,
      denials: [...this.denials],
    };
  }

  /** Stops every worker of the session: each one's whole sandbox is killed and removed. */
  private async stopSubagents(): Promise<void> {
    const subagents = this.subagents;
    this.subagents = undefined;
    await subagents?.stopAll();
  }

  /**
   * The session's subagent manager (created on first use): workers launched through serve,
   * with the parent's active tools minus `subagent` (README, "Subagents"), the configured
   * worker extensions, and the model's credentials.
   */
  subagentManager(ctx: ExtensionContext): SubagentManager {
    this.subagents ??= new SubagentManager({
      launcher: this.workerLauncher(ctx),
      depth: depthFromEnv(this.env),
      workerArgs: () => {
        const tools = this.pi.getActiveTools().filter((name) => name !== SUBAGENT_TOOL);
        return [...this.workerExtensions.flatMap((path) => ["-e", path]), ...(tools.length > 0 ? ["--tools", tools.join(",")] : [])];
      },
    });
    return this.subagents;
  }

  /** Launches workers as direct invocations through serve: `stdin: "pipe"`, no timeout. */
  private workerLauncher(ctx: ExtensionContext): WorkerLauncher {
    return { launch: (spec, events) => launchWorker(this.workerHost, ctx, spec, events) };
  }

  /** What launchWorker() uses of this session. */
  private readonly workerHost: WorkerHost = {
    env: () => this.env,
    ended: () => this.shutDown,
    serve: () => this.serve(),
    approve: (ctx, client, event, approvals) => this.approve(ctx, client, event, approvals),
  };

  /** Stops the running (or starting) serve, if any, and waits for it to exit. */
  private async stopServe(): Promise<void> {
    this.generation++;
    const client = this.client ?? (await this.starting?.catch(() => undefined));
    this.client = undefined;
    this.starting = undefined;
    await client?.shutdown();
  }

  /** The running serve; starts one when there is none (e.g. after it died). */
  private serve(): Promise<ServeClient> {
    if (this.client?.alive) return Promise.resolve(this.client);
    if (!this.starting) {
      const configFile = this.configFile();
      const generation = this.generation;
      const starting = (async () => {
        const binary = findBinary(this.env);
        return ServeClient.start({
          binary,
          args: configFile ? ["--config", configFile] : [],
          env: withoutSeam(this.env),
        });
      })();
      this.starting = starting;
      starting.then(
        (client) => {
          if (this.starting === starting) this.starting = undefined;
          if (this.shutDown || generation !== this.generation) void client.shutdown();
          else this.client = client;
        },
        () => {
          if (this.starting === starting) this.starting = undefined;
        },
      );
    }
    return this.starting;
  }

  /** BashOperations over serve for the tool call or `!` command of `ctx`. */
  operations(ctx: ExtensionContext): BashOperations {
    return {
      exec: async (command, cwd, options) => {
        if (!PLATFORM_NOTICES[this.platform]) throw new Error(`pi-sandbox does not support ${this.platform}`);
        const timeout = timeoutSeconds(options.timeout);
        if (options.signal?.aborted) throw new Error("aborted");
        if (this.shutDown) throw unavailable("the Pi session has ended");
        // A configuration the session start refused (e.g. inside the workspace) is refused
        // by every serve: say why, as the notice did.
        if (this.startFailed) throw unavailable(this.unavailableReason);
        let client: ServeClient;
        try {
          client = await this.serve();
        } catch (error) {
          throw unavailable(messageOf(error));
        }
        if (options.signal?.aborted) throw new Error("aborted");
        const scopeKey = `${ctx.sessionManager.getSessionId()}:turn:${this.turnIndex}`;
        // Ends the command's pending dialogs when it exits or the tool call is aborted.
        const commandEnded = new AbortController();
        const onToolAbort = () => commandEnded.abort();
        options.signal?.addEventListener("abort", onToolAbort, { once: true });
        const approvals: CommandApprovals = {
          scopeKey,
          ended: commandEnded.signal,
          open: new Map(),
          notices: new DenialNotices((text) => {
            if (ctx.hasUI) ctx.ui.notify(text, "warning");
          }),
        };
        try {
          const outcome = await client.exec(
            {
              command,
              cwd: resolve(cwd),
              env: stringEnv(withoutSeam(options.env)),
              ...(timeout !== undefined ? { timeout_s: timeout } : {}),
              scope_key: scopeKey,
              stdin: "closed",
              // One pipe for stdout and stderr: Pi's bash shows them as one text, in the
              // order the command wrote them.
              stderr: "stdout",
            },
            {
              onOutput: (_stream, data) => options.onData(data),
              onApprovalRequest: (event) => this.approve(ctx, client, event, approvals),
              onDenied: (event) => {
                this.remember(event);
                approvals.notices.denied(event);
              },
              onApprovalSettled: (event) => approvals.open.get(event.request_id)?.abort(),
            },
            options.signal,
          );
          if (options.signal?.aborted) throw new Error("aborted");
          return { exitCode: exitCodeOf(outcome, timeout) };
        } catch (error) {
          if (options.signal?.aborted) throw new Error("aborted");
          throw error;
        } finally {
          commandEnded.abort();
          options.signal?.removeEventListener("abort", onToolAbort);
        }
      },
    };
  }

  /**
   * Decides one approval request of a running command and answers serve with the decision's
   * true source and reason; a deny raises its notice. A question that closes first (serve
   * settled it, the command ended) gets no answer, and its dialog closes or is never shown.
   */
  private approve(
    ctx: ExtensionContext,
    client: Pick<ServeClient, "respond">,
    event: ApprovalRequestEvent,
    command: CommandApprovals,
  ): void {
    const settled = new AbortController();
    command.open.set(event.request_id, settled);
    const signal = AbortSignal.any([command.ended, settled.signal]);
    const expires = event.expires_in_s;
    const deadline =
      typeof expires === "number" && Number.isFinite(expires) && expires >= 0 ? Date.now() + expires * 1000 : undefined;
    const select: SelectPrompt | undefined = ctx.hasUI
      ? (title, labels, options) =>
          this.dialogs.ask((t, o, dialog) => ctx.ui.select(t, o, dialog), title, labels, options)
      : undefined;
    const answer = (decision: ApprovalDecision | undefined) => {
      command.open.delete(event.request_id);
      if (!decision || signal.aborted) return;
      if (decision.choice === "deny" && decision.reason) {
        command.notices.announce(event.request.surface, approvalTarget(event.request), decision.source, decision.reason);
      }
      client.respond(event.id, event.request_id, decision);
    };
    decideApproval(event, {
      broker: this.broker(),
      brokerFailed: this.brokerFailed(),
      sessionId: ctx.sessionManager.getSessionId(),
      scopeKey: command.scopeKey,
      select,
      signal,
      ...(deadline !== undefined ? { deadline } : {}),
    }).then(answer, (error: unknown) =>
      // Never leave a question open: a failure here is nobody's answer.
      answer({ choice: "deny", source: "unavailable", reason: `Approval failed: ${messageOf(error)}` }),
    );
  }
}


/** `env` without the launcher seam's variables: a sandboxed command never sees the supervisor. */
function withoutSeam<T extends NodeJS.ProcessEnv | undefined>(env: T): T {
  if (!env) return env;
  const out = { ...env };
  for (const name of SEAM_ENV) delete out[name];
  return out;
}

/** The exit code Pi's bash expects; throws `aborted`, `timeout:<s>` or a launch failure. */
function exitCodeOf(outcome: ExecOutcome, timeout: number | undefined): number {
  if (outcome.error === "aborted") throw new Error("aborted");
  if (outcome.error === "timeout") throw new Error(`timeout:${timeout}`);
  if (outcome.error === "launch_failed") {
    throw new Error(`pi-sandbox could not start the command: ${outcome.message ?? "launch failed"}`);
  }
  if (outcome.error === "guard_failed") {
    throw new Error(`pi-sandbox stopped the command: ${outcome.message ?? "the guard failed"}`);
  }
  if (typeof outcome.exit_code === "number") return outcome.exit_code;
  // A signal-killed command: 128 + the signal, as Pi's own bash reports it.
  if (typeof outcome.signal === "number") return 128 + outcome.signal;
  throw new Error(`pi-sandbox serve sent an exit without a status: ${JSON.stringify(outcome)}`);
}




/** Pi's `shellCommandPrefix` setting, which Pi's own bash tool puts before each command. */
function shellCommandPrefix(cwd: string): string | undefined {
  try {
    return SettingsManager.create(cwd).getShellCommandPrefix();
  } catch {
    return undefined;
  }
}

/** The `bash` tool: Pi's own definition, executed through serve (integrations/pi/README.md). */
function sandboxedBashTool(sandbox: SessionSandbox): ReturnType<typeof createBashToolDefinition> {
  const base = createBashToolDefinition(process.cwd());
  return {
    ...base,
    label: TOOL_LABEL,
    async execute(toolCallId, params, signal, onUpdate, ctx) {
      if (!ctx) throw new Error("pi-sandbox: missing extension context");
      const definition = createBashToolDefinition(ctx.cwd, {
        operations: sandbox.operations(ctx),
        commandPrefix: shellCommandPrefix(ctx.cwd),
      });
      return definition.execute(toolCallId, params, signal, onUpdate, ctx);
    },
  };
}

/**
 * Registers the `subagent` tool when the trusted configuration's provider is `builtin`
 * (docs/compatibility.md, C5, C81): read once, at registration, so that the session's notice is true.
 * No readable configuration (no binary, an invalid file), an unsupported platform: no tool (Bash
 * fails closed and says why at session start).
 */
async function registerSubagentTool(pi: ExtensionAPI, sandbox: SessionSandbox, options: PiSandboxExtensionOptions): Promise<void> {
  if (!PLATFORM_NOTICES[options.platform ?? process.platform]) return;
  let config: unknown;
  try {
    config = await sandbox.checkAtRegistration(resolve(process.cwd()));
  } catch {
    return;
  }
  if (providerOf(config) === "pi-subagents" && externalWorkerIsolationOf(config) === "enforce") {
    sandbox.workerExtensions = workerExtensionsOf(config);
    sandbox.enforceExternalIsolation(options.externalWorkerLauncher ?? LAUNCHER, options.externalRuns ?? importExternalRuns);
    // Where isolation is unavailable, the orchestrator's tool is refused before it launches anything.
    pi.on("tool_call", (event) =>
      event.toolName === SUBAGENT_TOOL && sandbox.isolationFailure !== undefined
        ? { block: true, reason: hostLaunchRefusal(sandbox.isolationFailure) }
        : undefined,
    );
    return;
  }
  if (providerOf(config) !== "builtin") return;
  sandbox.workerExtensions = workerExtensionsOf(config);
  const tool = subagentTool((ctx) => sandbox.subagentManager(ctx));
  pi.registerTool(tool);
  sandbox.subagentTool = true;
}

const REGISTRATIONS = Symbol.for("pi-sandbox:registrations");

function registrations(): WeakMap<ExtensionAPI, Promise<void>> {
  const global = globalThis as Record<symbol, unknown>;
  global[REGISTRATIONS] ??= new WeakMap<ExtensionAPI, Promise<void>>();
  return global[REGISTRATIONS] as WeakMap<ExtensionAPI, Promise<void>>;
}

/**
 * Registers the sandboxed `bash` tool and the `user_bash`, `turn_start`, `session_start`
 * and `session_shutdown` handlers. Idempotent per Pi instance, so that Pi's tools are replaced once: a second
 * call with the same `pi` registers nothing more.
 */
export function registerPiSandbox(pi: ExtensionAPI, options: PiSandboxExtensionOptions = {}): Promise<void> {
  const existing = registrations().get(pi);
  if (existing) return existing;
  const registration = (async () => {
    const sandbox = new SessionSandbox(pi, options);
    pi.registerTool(sandboxedBashTool(sandbox));
    registerFileTools(pi, sandbox);
    await registerSubagentTool(pi, sandbox, options);
    registerStatusCommand(pi, (cwd) => sandbox.status(cwd));
    registerOverrideCommands(pi, () => sandbox.serveClient());
    pi.on("user_bash", (_event, ctx) => ({ operations: sandbox.operations(ctx) }));
    pi.on("turn_start", (event) => {
      sandbox.turnIndex = event.turnIndex;
    });
    pi.on("session_start", (_event, ctx) => sandbox.start(ctx));
    pi.on("session_shutdown", () => sandbox.stop());
  })();
  registrations().set(pi, registration);
  return registration;
}

export default function piSandbox(pi: ExtensionAPI): Promise<void> {
  return registerPiSandbox(pi);
}
