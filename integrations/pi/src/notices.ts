// The denial notices of one command: `Domain proxy denied: <reason>`, `Host-IPC denied:
// <reason>` (integrations/pi/README.md, "How approvals reach you"), each denial once, with the
// denial's true reason.

import { denialNotice, serveDenialHint } from "./approval.ts";
import type { ApprovalSource, DeniedEvent } from "./protocol.ts";

/**
 * The denial notices of one command (README, "How approvals reach you"): each denial once. A denial this
 * extension answered is announced here, and serve's `denied` echo of it (same surface,
 * target and source; an older serve sends no source) is not shown again; a notice identical
 * to one already shown for the command (the same refusal of many connections) is not
 * repeated.
 */
export class DenialNotices {
  private readonly notify: (text: string) => void;
  private readonly shown = new Set<string>();
  private readonly announced: Array<{ place: string; source: string }> = [];

  /** `notify` shows one warning notice (nothing without a UI). */
  constructor(notify: (text: string) => void) {
    this.notify = notify;
  }

  /** A denial this extension answered: shown now, its echo from serve expected. */
  announce(surface: string, target: string, source: ApprovalSource, reason: string): void {
    this.announced.push({ place: placeKey(surface, target), source });
    this.show(surface, target, source, reason);
  }

  /** serve's `denied` event. */
  denied(event: DeniedEvent): void {
    if (!event.reason) return;
    const place = placeKey(event.surface, event.target ?? "");
    const echo = this.announced.findIndex(
      (a) => a.place === place && (event.source === undefined || a.source === event.source),
    );
    if (echo !== -1) {
      this.announced.splice(echo, 1);
      return;
    }
    // serve decided this one itself: the way out (or that there is none) follows its reason.
    this.show(event.surface, event.target ?? "", event.source ?? "", event.reason, serveDenialHint(event.source, event.recovery));
  }

  private show(surface: string, target: string, source: string, reason: string, hint = ""): void {
    const key = `${placeKey(surface, target)}\0${source}\0${reason}`;
    if (this.shown.has(key)) return;
    this.shown.add(key);
    this.notify(denialNotice(surface, reason, hint));
  }
}

function placeKey(surface: string, target: string): string {
  return `${surface}\0${target}`;
}

const ENABLED_NOTICES: Record<string, string> = {
  linux: "pi-sandbox enabled: Linux Sandbox Runtime with static filesystem policy and per-connection network review",
  macos: "pi-sandbox enabled: macOS Sandbox Runtime with static filesystem policy and per-connection network review",
};

/**
 * The notice that the sandbox is on (README, "Session notices") for the sandbox serve's hello names
 * (ServeClient.sandbox), not for the platform Pi runs on: the macOS notice appears only when the
 * macOS backend is what runs (docs/macos.md).
 */
export function enabledNotice(sandbox: string): string {
  return (
    ENABLED_NOTICES[sandbox] ??
    `pi-sandbox enabled: the ${sandbox} sandbox with static filesystem policy and per-connection network review`
  );
}
