// The way out after a wrong automatic denial (docs/approvals.md, "After a wrong denial";
// docs/compatibility.md C85, C86): `/auto-review-approve` authorises one retry of a denied
// request, reviewed again with the user's word as evidence; `/auto-review-break-glass`, after a
// typed confirmation phrase, one allow without review of a request the reviewer rated critical.
// serve keeps the denials and the authorisations; this file only asks the user which one.

import { writeSync } from "node:fs";
import type { ExtensionAPI, ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import type { OverrideKind, RecentDenial } from "./protocol.ts";

/** What the commands need of the session's serve. */
export type OverrideClient = {
  recentDenials(): Promise<RecentDenial[]>;
  override(requestHash: string, kind: OverrideKind): Promise<number>;
};

/** The phrase the user types to break the glass for `denial`. */
export function breakGlassPhrase(denial: RecentDenial): string {
  return `break glass ${denial.request_hash.slice(0, 8)}`;
}

function say(ctx: ExtensionCommandContext, text: string, level: "info" | "warning"): void {
  if (ctx.hasUI) ctx.ui.notify(text, level);
  else writeSync(ctx.mode === "json" ? 2 : 1, `${text}\n`);
}

/**
 * What the user picks among: surface, target and reason, then the command (two commands may be
 * denied the same destination for the same reason); a label that is still not unique gets the
 * start of its request hash, so that each pick names exactly one denial.
 */
export function denialLabels(denials: RecentDenial[]): string[] {
  const plain = denials.map((d) => {
    const command = d.command && d.command !== d.target ? ` (command: ${d.command})` : "";
    return `${d.surface} ${d.target}: ${d.reason}${command}`;
  });
  return plain.map((text, i) => (plain.indexOf(text) === plain.lastIndexOf(text) ? text : `${text} [request ${denials[i]!.request_hash.slice(0, 8)}]`));
}

/** The denial to override: the only one, else the user's pick (undefined: cancelled). */
async function choose(ctx: ExtensionCommandContext, denials: RecentDenial[], title: string): Promise<RecentDenial | undefined> {
  if (denials.length === 1 || !ctx.hasUI) return denials[0];
  const labels = denialLabels(denials);
  const picked = await ctx.ui.select(title, labels);
  return picked === undefined ? undefined : denials[labels.indexOf(picked)];
}

/** `/auto-review-approve`: one retry of a denial that was not critical. */
export async function approveRetry(client: OverrideClient | undefined, ctx: ExtensionCommandContext): Promise<void> {
  if (!client) return say(ctx, "pi-sandbox: no sandbox runs in this session: nothing to retry", "warning");
  const denials = (await client.recentDenials()).filter((d) => d.recovery === "retry");
  if (denials.length === 0)
    return say(ctx, "pi-sandbox: no automatic denial to retry in this session (hard denies cannot be overridden; critical ones need /auto-review-break-glass)", "warning");
  const denial = await choose(ctx, denials, "Retry which automatic denial once?");
  if (!denial) return;
  try {
    const seconds = await client.override(denial.request_hash, "retry");
    say(
      ctx,
      `pi-sandbox: one retry of ${denial.target} authorised for ${seconds} s: the reviewer decides again, knowing you asked for it. Ask the agent to run the same command again.`,
      "info",
    );
  } catch (error) {
    say(ctx, `pi-sandbox: ${(error as Error).message}`, "warning");
  }
}

/** `/auto-review-break-glass`: one allow without review of a critical denial, after a typed phrase. */
export async function breakGlass(client: OverrideClient | undefined, ctx: ExtensionCommandContext): Promise<void> {
  if (!client) return say(ctx, "pi-sandbox: no sandbox runs in this session: nothing to override", "warning");
  if (!ctx.hasUI) return say(ctx, "pi-sandbox: break-glass needs an interactive session to type its confirmation", "warning");
  const denials = (await client.recentDenials()).filter((d) => d.recovery === "break-glass");
  if (denials.length === 0)
    return say(ctx, "pi-sandbox: no critical automatic denial in the last 5 minutes (others: /auto-review-approve)", "warning");
  const denial = await choose(ctx, denials, "Break the glass for which critical denial?");
  if (!denial) return;
  const phrase = breakGlassPhrase(denial);
  const typed = await ctx.ui.input(`Allow ${denial.target} once WITHOUT review? It was denied as critical: ${denial.reason} Type "${phrase}" to confirm.`, phrase);
  if (typed?.trim() !== phrase) return say(ctx, "pi-sandbox: break-glass cancelled: the phrase did not match", "warning");
  try {
    const seconds = await client.override(denial.request_hash, "break-glass");
    say(ctx, `pi-sandbox: ${denial.target} may be reached once without review in the next ${seconds} s (break-glass; hard denies still apply). Ask the agent to run the same command again.`, "info");
  } catch (error) {
    say(ctx, `pi-sandbox: ${(error as Error).message}`, "warning");
  }
}

/** Registers both commands over the session's serve (`client()`: undefined while none runs). */
export function registerOverrideCommands(pi: ExtensionAPI, client: () => OverrideClient | undefined): void {
  pi.registerCommand?.("auto-review-approve", {
    description: "pi-sandbox: one exact retry of an automatic denial (the reviewer decides again)",
    handler: (_args, ctx) => approveRetry(client(), ctx),
  });
  pi.registerCommand?.("auto-review-break-glass", {
    description: "pi-sandbox: allow one critical automatic denial once without review, after a typed confirmation",
    handler: (_args, ctx) => breakGlass(client(), ctx),
  });
}
