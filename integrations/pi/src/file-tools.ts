// Pi's own file tools (`read`, `write`, `edit`, `ls`) with their file I/O done inside a
// sandbox of the workspace (integrations/pi/README.md, "File tools"): each operation is one
// `exec` of serve with an `argv` (`/bin/sh -c` and coreutils) and, for writes, the bytes on
// stdin. So the kernel decides (the mount view, Landlock, the read-only protected paths)
// exactly as for a command of the agent, symlinks resolve as they do inside, and there is no
// check on the host before a use.
// Pi's own tool definitions format what succeeds (line numbers, truncation, images).
//
// The refusal's reason (hidden home, outside the writable places, protected path) is named
// afterwards from `pi-sandbox policy --json` (docs/policy-json.md); it never decides anything.
// `grep` and `find` always run Pi's local ripgrep/fd, which no operations can confine: in
// sandboxed mode they refuse and point to bash.

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, sep } from "node:path";
import type { EditOperations, ExtensionAPI, LsOperations, ReadOperations, ToolDefinition, WriteOperations } from "@earendil-works/pi-coding-agent";
import {
  createEditToolDefinition,
  createFindToolDefinition,
  createGrepToolDefinition,
  createLsToolDefinition,
  createReadToolDefinition,
  createWriteToolDefinition,
  detectSupportedImageMimeTypeFromFile,
} from "@earendil-works/pi-coding-agent";

/** `pi.fileTools` of the trusted configuration (docs/configuration.md). */
export type FileToolsMode = "sandboxed" | "host";

/** What one file operation inside the sandbox returned. */
export type SandboxRun = {
  /** The exit status of the operation's shell; undefined when it ended otherwise. */
  exitCode: number | undefined;
  stdout: Buffer;
  /** The command's stderr and pi-sandbox's own lines (the guard's), as text. */
  stderr: string;
};

/** The sandbox the tools use: set up by the extension (index.ts). */
export interface FileSandbox {
  /**
   * The mode in effect for this session, or throws why the sandbox is unavailable (the
   * tools then fail closed, as Bash does).
   */
  fileToolsMode(): FileToolsMode;
  /** Runs `argv` inside a sandbox of `cwd` (the workspace) with `input` on stdin. */
  run(argv: string[], cwd: string, input: Buffer | undefined, signal?: AbortSignal): Promise<SandboxRun>;
  /** `pi-sandbox policy --json` for the workspace `cwd` (docs/policy-json.md). */
  policy(cwd: string): Promise<PolicyView>;
  /** Told of each refusal a file tool reports (its message), for `/sandbox`'s last denials. */
  refused?(message: string): void;
}

/** The fields of `pi-sandbox policy --json` that name a refusal's reason. */
export type PolicyView = {
  home?: string;
  home_hidden?: boolean;
  home_read_allowed?: Array<{ path: string }>;
  concealed?: string[];
  protected?: Array<{ path: string; reason?: string }>;
  /** The paths that stay writable (the workspace first). */
  writable?: Array<{ path: string }>;
};

/** The tools this module replaces, and the operation word of their refusals. */
type FileTool = "read" | "write" | "edit" | "ls";

// The scripts run by /bin/sh inside the sandbox; "$1" is the path. They print nothing of
// their own except the `pi-sandbox-file:` line of a write that would land in a private layer.
const READ_SCRIPT = 'exec cat -- "$1"';
const LIST_SCRIPT = [
  'cd -- "$1" || exit 1',
  // One NUL-terminated record per entry: `d <name>` for a directory, else `f <name>`; symlinks
  // followed and dangling ones left out, as Pi's ls does with stat.
  'for e in .[!.]* ..?* *; do [ -e "$e" ] || continue; if [ -d "$e" ]; then printf "d %s\\0" "$e"; else printf "f %s\\0" "$e"; fi; done',
].join("\n");
const STAT_SCRIPT = '[ -e "$1" ] || { cat -- "$1"; exit 1; }; if [ -d "$1" ]; then echo d; else echo f; fi';
/**
 * Opens the file without truncating it (creating it when missing), then, through that very
 * descriptor, refuses a file on a private layer of the sandbox (the hidden home, /tmp,
 * /var/tmp, /dev, a copy-on-write view): what is written there is discarded with the sandbox.
 * Only then is it truncated and written, again through the descriptor (/proc/self/fd/3 is
 * the same open file, never the path again).
 */
const WRITE_SCRIPT = [
  'mkdir -p -- "$(dirname -- "$1")" || exit 1',
  'exec 3>>"$1" || exit 1',
  "dev=$(stat -L -c %d /proc/self/fd/3) || exit 1",
  'if [ "$dev" != "$(stat -c %d .)" ]; then',
  // The layers may share one tmpfs (one budget): the file's own path inside names which.
  '  for layer in "$HOME" /tmp /var/tmp /dev/shm /dev; do',
  '    if [ "$(stat -c %d -- "$layer" 2>/dev/null)" = "$dev" ]; then printf "pi-sandbox-file: private %s\\n" "$(readlink /proc/self/fd/3)" >&2; exit 11; fi',
  "  done",
  '  case "$(stat -f -c %T /proc/self/fd/3)" in tmpfs|overlay*) printf "pi-sandbox-file: private copy\\n" >&2; exit 11;; esac',
  "fi",
  "exec cat >/proc/self/fd/3",
].join("\n");

const PRIVATE_LAYER = /^pi-sandbox-file: private (.*)$/m;
const QUARANTINED = /^pi-sandbox: moved .* to the quarantine \(([^)]*)\)/m;
const UNDONE = /^pi-sandbox: undid a change to [^:]*: (.*)$/m;

/** A refusal of the sandbox, as the model sees it: `pi-sandbox: <tool> refused: <path> is …`. */
export class FileRefusal extends Error {
  readonly code: string;
  constructor(tool: FileTool, path: string, why: string, code: string) {
    super(`pi-sandbox: ${tool} refused: ${path} ${why}`);
    this.code = code;
  }
}

function isWithin(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/** The host's real path of `path`, or of its longest existing ancestor (for messages only). */
function hostRealPath(path: string): string {
  let rest = "";
  for (let current = path; ; current = dirname(current)) {
    try {
      return join(realpathSync(current), rest);
    } catch {
      if (dirname(current) === current) return path;
      rest = join(current.slice(dirname(current).length + 1), rest);
    }
  }
}

/** The errno name in a coreutils or shell message (`…: Permission denied`), if any. */
export function errnoOf(stderr: string): string | undefined {
  if (/No such file or directory/.test(stderr)) return "ENOENT";
  if (/Read-only file system/.test(stderr)) return "EROFS";
  if (/Permission denied|Operation not permitted/.test(stderr)) return "EACCES";
  if (/Is a directory/.test(stderr)) return "EISDIR";
  if (/Not a directory/.test(stderr)) return "ENOTDIR";
  return undefined;
}

/** An error as Node's fs gives it, so Pi's own messages stay as they are. */
function fsError(code: string, syscall: string, path: string, detail: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`${code}: ${detail.trim() || code}, ${syscall} '${path}'`);
  error.code = code;
  error.path = path;
  error.syscall = syscall;
  return error;
}

/**
 * Why the sandbox cannot see `realPath`, when the policy hides it (the hidden home minus what
 * it re-exposes, a concealed credential); undefined when the policy shows it. Never asks the
 * host whether the file exists: a refusal and a missing file inside read the same way there.
 */
export function hiddenReason(policy: PolicyView, realPath: string): string | undefined {
  if (policy.concealed?.some((dir) => isWithin(realPath, dir))) return "is outside what the sandbox may read (a credential hidden inside a re-exposed path)";
  if (policy.home_hidden && policy.home && isWithin(realPath, policy.home)) {
    if (!policy.home_read_allowed?.some((entry) => isWithin(realPath, entry.path))) {
      return "is outside what the sandbox may read (hidden home)";
    }
  }
  return undefined;
}

/**
 * Why a read the kernel refused (EACCES), or of a hidden path, was refused: from the policy. A
 * path the policy shows was refused by the file's own permissions (or was a link to a hidden
 * place when it was read: the host's path now may differ), and the reason says both.
 */
export function readReason(policy: PolicyView, realPath: string): string {
  return hiddenReason(policy, realPath) ?? "is outside what the sandbox may read, or its own permissions do not allow it";
}

/**
 * The private layer a write would have landed on, from the `pi-sandbox-file: private <what>`
 * line: `copy` (a copy-on-write view), or the file's path inside the sandbox.
 */
export function privateLayer(what: string): string {
  if (what === "copy") return "a private copy, discarded after the command";
  const dir = ["/tmp", "/var/tmp", "/dev/shm", "/dev"].find((d) => isWithin(what, d));
  return dir ? `the sandbox's private ${dir}, discarded after the command` : "hidden home";
}

/** Why a write was refused by the kernel (read-only or not permitted): from the policy. */
export function writeReason(policy: PolicyView, realPath: string, code?: string): string {
  const entry = policy.protected?.find((p) => isWithin(realPath, p.path));
  if (entry) return `is a protected path${entry.reason ? ` (${entry.reason})` : ""}`;
  // EACCES inside a writable place: the sandbox allows writes there, so the file's own
  // permissions refused (a read-only mount, a link swapped to outside, gives EROFS).
  if (code === "EACCES" && policy.writable?.some((w) => isWithin(realPath, w.path))) {
    return "cannot be written (permission denied by the file's own permissions)";
  }
  if (hiddenReason(policy, realPath)) return "is outside what the sandbox may write (hidden home)";
  return "is outside what the sandbox may write";
}

/** The file operations of one tool call, done inside the sandbox. */
class SandboxFileOps {
  /** The refusal raised by an operation of this call: what the tool reports. */
  refusal: FileRefusal | undefined;
  private readonly cache = new Map<string, Promise<Buffer>>();
  private readonly sandbox: FileSandbox;
  private readonly cwd: string;
  private readonly tool: FileTool;
  private readonly signal: AbortSignal | undefined;

  constructor(sandbox: FileSandbox, cwd: string, tool: FileTool, signal: AbortSignal | undefined) {
    this.sandbox = sandbox;
    this.cwd = cwd;
    this.tool = tool;
    this.signal = signal;
  }

  private run(script: string, path: string, input?: Buffer): Promise<SandboxRun> {
    return this.sandbox.run(["/bin/sh", "-c", script, "pi-sandbox-file", path], this.cwd, input, this.signal);
  }

  private async policy(): Promise<PolicyView> {
    try {
      return await this.sandbox.policy(this.cwd);
    } catch {
      return {};
    }
  }

  private async refuse(path: string, reason: (policy: PolicyView, real: string) => string, code: string): Promise<never> {
    this.refusal = new FileRefusal(this.tool, path, reason(await this.policy(), hostRealPath(path)), code);
    this.sandbox.refused?.(this.refusal.message);
    throw this.refusal;
  }

  /**
   * A failed look inside: EACCES is the kernel's refusal; ENOENT of a path the policy hides
   * is one too (the sandbox cannot tell it from a missing file, and neither does the tool);
   * any other error is Pi's own.
   */
  private async failed(path: string, code: string, syscall: string, stderr: string): Promise<never> {
    if (code === "EACCES" || (code === "ENOENT" && hiddenReason(await this.policy(), hostRealPath(path)))) {
      return this.refuse(path, readReason, "EACCES");
    }
    throw fsError(code, syscall, path, stderr.replace(/^cat: [^\n]*: /, ""));
  }

  /** The file's bytes as the sandbox sees them (read once per call). */
  read(path: string): Promise<Buffer> {
    let bytes = this.cache.get(path);
    if (!bytes) {
      bytes = this.readOnce(path);
      this.cache.set(path, bytes);
    }
    return bytes;
  }

  private async readOnce(path: string): Promise<Buffer> {
    const result = await this.run(READ_SCRIPT, path);
    if (result.exitCode === 0) return result.stdout;
    return this.failed(path, errnoOf(result.stderr) ?? "EIO", "open", result.stderr);
  }

  async write(path: string, content: string): Promise<void> {
    const result = await this.run(WRITE_SCRIPT, path, Buffer.from(content, "utf8"));
    const layer = PRIVATE_LAYER.exec(result.stderr)?.[1];
    if (layer) return this.refuse(path, () => `is outside what the sandbox may write (${privateLayer(layer)})`, "EACCES");
    const guarded = QUARANTINED.exec(result.stderr) ?? UNDONE.exec(result.stderr);
    if (guarded) return this.refuse(path, () => `is a protected path (${guarded[1]})`, "EACCES");
    if (result.exitCode === 0) return;
    const code = errnoOf(result.stderr) ?? "EIO";
    if (code === "EROFS" || code === "EACCES") return this.refuse(path, (policy, real) => writeReason(policy, real, code), code);
    throw fsError(code, "open", path, result.stderr);
  }

  async kind(path: string): Promise<"d" | "f"> {
    const result = await this.run(STAT_SCRIPT, path);
    if (result.exitCode === 0) return result.stdout.toString("utf8").trim() === "d" ? "d" : "f";
    return this.failed(path, errnoOf(result.stderr) ?? "ENOENT", "stat", result.stderr);
  }

  async list(path: string): Promise<Map<string, "d" | "f">> {
    const result = await this.run(LIST_SCRIPT, path);
    if (result.exitCode !== 0) return this.failed(path, errnoOf(result.stderr) ?? "ENOENT", "scandir", result.stderr);
    const entries = new Map<string, "d" | "f">();
    for (const record of result.stdout.toString("utf8").split("\0")) {
      if (record.length > 2) entries.set(record.slice(2), record[0] === "d" ? "d" : "f");
    }
    return entries;
  }

  readOperations(): ReadOperations {
    return {
      access: async (path) => void (await this.read(path)),
      readFile: (path) => this.read(path),
      detectImageMimeType: (path) => this.imageType(path),
    };
  }

  /** Pi's own image detection, on the first bytes read inside (in a private temp file). */
  private async imageType(path: string): Promise<string | null | undefined> {
    const head = (await this.read(path)).subarray(0, 4100);
    const dir = await mkdtemp(join(tmpdir(), "pi-sandbox-mime-"));
    try {
      const file = join(dir, "head");
      await writeFile(file, head, { mode: 0o600 });
      return await detectSupportedImageMimeTypeFromFile(file);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  writeOperations(): WriteOperations {
    return {
      // The write makes the parents itself, inside the sandbox, in the same run.
      mkdir: async () => {},
      writeFile: (path, content) => this.write(path, content),
    };
  }

  editOperations(): EditOperations {
    return {
      access: async (path) => void (await this.read(path)),
      readFile: (path) => this.read(path),
      writeFile: (path, content) => this.write(path, content),
    };
  }

  lsOperations(): LsOperations {
    let listed: { dir: string; entries: Map<string, "d" | "f"> } | undefined;
    const entryKind = (path: string) => (listed && dirname(path) === listed.dir ? listed.entries.get(path.slice(listed.dir.length + 1)) : undefined);
    return {
      exists: async (path) => {
        try {
          await this.kind(path);
          return true;
        } catch (error) {
          if (error instanceof FileRefusal) throw error;
          return false;
        }
      },
      stat: async (path) => {
        const kind = entryKind(path) ?? (await this.kind(path));
        return { isDirectory: () => kind === "d" };
      },
      readdir: async (path) => {
        const entries = await this.list(path);
        listed = { dir: path, entries };
        return [...entries.keys()];
      },
    };
  }
}

type AnyDefinition = ToolDefinition<any, any, any>;

/**
 * Pi's definition of `tool`, its execute running with operations inside the sandbox (or
 * Pi's own, unconfined, with `pi.fileTools: "host"`). A refusal raised by an operation is
 * the tool's error as it is, not wrapped in Pi's message around it.
 */
function sandboxedTool<D extends AnyDefinition>(
  sandbox: FileSandbox,
  tool: FileTool,
  define: (cwd: string, ops: SandboxFileOps | undefined) => D,
): D {
  const base = define(process.cwd(), undefined);
  return {
    ...base,
    async execute(toolCallId, params, signal, onUpdate, ctx) {
      const cwd = ctx?.cwd ?? process.cwd();
      let mode: FileToolsMode;
      try {
        mode = sandbox.fileToolsMode();
      } catch (error) {
        const [first, ...rest] = (error instanceof Error ? error.message : String(error)).split("\n");
        throw new Error([`pi-sandbox unavailable: ${first}; the ${tool} tool was not run`, ...rest].join("\n"));
      }
      if (mode === "host") return define(cwd, undefined).execute(toolCallId, params, signal, onUpdate, ctx);
      const ops = new SandboxFileOps(sandbox, cwd, tool, signal);
      try {
        return await define(cwd, ops).execute(toolCallId, params, signal, onUpdate, ctx);
      } catch (error) {
        throw ops.refusal ?? error;
      }
    },
  };
}

/** `grep` or `find` in sandboxed mode: Pi runs them with local binaries, which cannot be confined. */
function refusingTool<D extends AnyDefinition>(sandbox: FileSandbox, base: D): D {
  return {
    ...base,
    async execute(toolCallId, params, signal, onUpdate, ctx) {
      if (sandbox.fileToolsMode() === "host") return base.execute(toolCallId, params, signal, onUpdate, ctx);
      throw new Error(
        `pi-sandbox: ${base.name} refused: Pi's ${base.name} runs outside the sandbox (pi.fileTools is "sandboxed"); use bash (rg, grep, find), which runs inside it`,
      );
    },
  };
}

/**
 * Registers `read`, `write`, `edit` and `ls` over the sandbox, and `grep` and `find` that
 * refuse in sandboxed mode. `ls`, `grep` and `find` keep Pi's default of being inactive
 * unless the user turns them on.
 */
export function registerFileTools(pi: ExtensionAPI, sandbox: FileSandbox): void {
  pi.registerTool(sandboxedTool(sandbox, "read", (cwd, ops) => createReadToolDefinition(cwd, ops ? { operations: ops.readOperations() } : {})));
  pi.registerTool(sandboxedTool(sandbox, "write", (cwd, ops) => createWriteToolDefinition(cwd, ops ? { operations: ops.writeOperations() } : {})));
  pi.registerTool(sandboxedTool(sandbox, "edit", (cwd, ops) => createEditToolDefinition(cwd, ops ? { operations: ops.editOperations() } : {})));
  pi.registerTool({
    ...sandboxedTool(sandbox, "ls", (cwd, ops) => createLsToolDefinition(cwd, ops ? { operations: ops.lsOperations() } : {})),
    defaultActive: false,
  });
  pi.registerTool({ ...refusingTool(sandbox, createGrepToolDefinition(process.cwd())), defaultActive: false });
  pi.registerTool({ ...refusingTool(sandbox, createFindToolDefinition(process.cwd())), defaultActive: false });
}

/** The session-start notice that says where the file tools do their I/O. */
export function fileToolsNotice(mode: FileToolsMode): string {
  return mode === "sandboxed"
    ? "pi-sandbox file tools: sandboxed; read, write, edit and ls obey the sandbox's policy"
    : 'pi-sandbox file tools: host (pi.fileTools: "host"); read, write and edit are not confined';
}
