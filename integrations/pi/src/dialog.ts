// The human's approval dialogs in Pi's UI: one at a time, closed when their question is
// settled elsewhere, and with a countdown when the question has a deadline.

import type { SelectOutcome } from "./approval.ts";

/** Pi's `ctx.ui.select`: resolves the chosen label, or undefined when dismissed or timed out. */
export type PiSelect = (
  title: string,
  options: string[],
  dialog: { signal?: AbortSignal; timeout?: number },
) => Promise<string | undefined>;

export type DialogOptions = {
  /** Closes the dialog, or keeps a queued one from being shown (the question closed). */
  signal: AbortSignal;
  /** When the question expires unanswered, in milliseconds since the epoch. */
  deadline?: number;
};

/**
 * Shows one dialog through Pi's select. With a deadline, Pi's `timeout` option (milliseconds
 * left, shown as a countdown) closes it; such a close is `timed-out`, not a dismissal: a
 * timer of the same length started first closes the dialog and marks it, and an undefined
 * answer at or after the deadline counts as timed out too (Pi's own timer). A question
 * already closed is not shown (`dismissed`); one already past its deadline is `timed-out`.
 */
export async function showDialog(
  select: PiSelect,
  title: string,
  labels: string[],
  options: DialogOptions,
): Promise<SelectOutcome> {
  const { signal, deadline } = options;
  if (signal.aborted) return { kind: "dismissed" };
  let timeout: number | undefined;
  if (deadline !== undefined) {
    timeout = Math.ceil(deadline - Date.now());
    if (timeout <= 0) return { kind: "timed-out" };
  }
  const dialog = new AbortController();
  const close = () => dialog.abort();
  signal.addEventListener("abort", close, { once: true });
  let timedOut = false;
  const timer =
    timeout === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          dialog.abort();
        }, timeout);
  try {
    const label = await select(title, labels, {
      signal: dialog.signal,
      ...(timeout !== undefined ? { timeout } : {}),
    });
    if (typeof label === "string") return { kind: "selected", label };
    if (!signal.aborted && (timedOut || (deadline !== undefined && Date.now() >= deadline))) {
      return { kind: "timed-out" };
    }
    return { kind: "dismissed" };
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", close);
  }
}

/**
 * A queue of dialogs: two questions are never shown at once; each waits for the one before
 * it to close. A question that closes while it waits (settled by serve, its command ended)
 * is never shown; its deadline keeps running while it waits.
 */
export class DialogQueue {
  private tail: Promise<unknown> = Promise.resolve();

  ask(select: PiSelect, title: string, labels: string[], options: DialogOptions): Promise<SelectOutcome> {
    const turn = this.tail.then(() => showDialog(select, title, labels, options));
    this.tail = turn.catch(() => undefined);
    return turn;
  }
}
