// Small helpers the extension's modules share.

/** An error of the sandbox itself (not of the command): the command was not run. */
export function unavailable(reason: string): Error {
  // A hint stays on its own line, after the sentence.
  const [first, ...rest] = reason.split("\n");
  return new Error([`pi-sandbox unavailable: ${first}; the command was not run`, ...rest].join("\n"));
}

/** The message of a thrown value. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The environment as serve's `env` wants it: strings only. */
export function stringEnv(env: NodeJS.ProcessEnv | undefined): Record<string, string> | undefined {
  if (!env) return undefined;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (typeof value === "string") out[key] = value;
  return out;
}
