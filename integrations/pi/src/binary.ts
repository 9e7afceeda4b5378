// Where the pi-sandbox binary is: $PI_SANDBOX_BIN (an explicit path), else the first
// executable `pi-sandbox` on $PATH.

import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";

export const BINARY_ENV = "PI_SANDBOX_BIN";
export const BINARY_NAME = "pi-sandbox";

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds the binary. Returns its absolute path, or throws an Error that says what to do.
 * `env` defaults to this process's environment.
 */
export function findBinary(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env[BINARY_ENV];
  if (configured !== undefined && configured !== "") {
    const path = resolve(configured);
    if (!isExecutableFile(path)) throw new Error(`${BINARY_ENV}=${configured} is not an executable file`);
    return path;
  }
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    // An empty or relative PATH entry would name a file in the (agent-writable) working
    // directory: never take the sandbox from there.
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, BINARY_NAME);
    if (isExecutableFile(candidate)) return candidate;
  }
  throw new Error(`no ${BINARY_NAME} binary: set ${BINARY_ENV} to its path or put ${BINARY_NAME} on PATH`);
}
