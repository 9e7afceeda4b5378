// The denial notices of one command: `Domain proxy denied: <reason>`, `Host-IPC denied:
// <reason>` (reference item 58), each denial once, with the denial's true reason.

import { denialNotice } from "./approval.ts";
import type { ApprovalSource, DeniedEvent } from "./protocol.ts";

/**
 * The denial notices of one command (reference item 58): each denial once. A denial this
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
    this.show(event.surface, event.target ?? "", event.source ?? "", event.reason);
  }

  private show(surface: string, target: string, source: string, reason: string): void {
    const key = `${placeKey(surface, target)}\0${source}\0${reason}`;
    if (this.shown.has(key)) return;
    this.shown.add(key);
    this.notify(denialNotice(surface, reason));
  }
}

function placeKey(surface: string, target: string): string {
  return `${surface}\0${target}`;
}
