// The dialogs in Pi's UI: the countdown of a question with a deadline, a timeout that is not
// a dismissal, closing, and the queue (docs/approvals.md, "The question and its answers").
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DialogQueue, showDialog, type PiSelect } from "../src/dialog.ts";

type Shown = { title: string; options: string[]; signal?: AbortSignal; timeout?: number };

/**
 * Pi's select as Pi implements it: resolves `answer` when given, else stays open until its
 * signal aborts or its `timeout` (milliseconds) passes, then resolves undefined.
 */
function piSelect(answer?: string): PiSelect & { shown: Shown[]; answer(label: string | undefined): void } {
  const shown: Shown[] = [];
  let resolveOpen: ((label: string | undefined) => void) | undefined;
  const select = ((title, options, dialog) => {
    shown.push({ title, options, signal: dialog.signal, timeout: dialog.timeout });
    if (answer !== undefined) return Promise.resolve(answer);
    return new Promise<string | undefined>((resolve) => {
      const timer = dialog.timeout ? setTimeout(() => resolve(undefined), dialog.timeout) : undefined;
      resolveOpen = (label) => {
        clearTimeout(timer);
        resolve(label);
      };
      dialog.signal?.addEventListener("abort", () => resolveOpen?.(undefined), { once: true });
    });
  }) as PiSelect & { shown: Shown[]; answer(label: string | undefined): void };
  select.shown = shown;
  select.answer = (label) => resolveOpen?.(label);
  return select;
}

const open = () => new AbortController().signal;

describe("showDialog", () => {
  it("returns the chosen label; without a deadline there is no timeout", async () => {
    const select = piSelect("Deny");
    assert.deepEqual(await showDialog(select, "t", ["Deny", "Allow"], { signal: open() }), { kind: "selected", label: "Deny" });
    assert.deepEqual(select.shown.map((s) => [s.title, s.options, s.timeout]), [["t", ["Deny", "Allow"], undefined]]);
  });

  it("dismissed (Esc) is a dismissal", async () => {
    const select = piSelect();
    const shown = showDialog(select, "t", ["Deny"], { signal: open() });
    select.answer(undefined);
    assert.deepEqual(await shown, { kind: "dismissed" });
  });

  it("with a deadline: Pi's countdown gets the milliseconds left, and its end is a timeout, not a dismissal", async () => {
    const select = piSelect();
    const outcome = await showDialog(select, "t", ["Deny"], { signal: open(), deadline: Date.now() + 150 });
    assert.deepEqual(outcome, { kind: "timed-out" });
    const timeout = select.shown[0].timeout!;
    assert.ok(timeout > 0 && timeout <= 150, `timeout ${timeout}`);
    assert.equal(select.shown[0].signal?.aborted, true);
  });

  it("an answer before the deadline counts", async () => {
    const select = piSelect();
    const shown = showDialog(select, "t", ["Deny", "Allow"], { signal: open(), deadline: Date.now() + 60_000 });
    select.answer("Allow");
    assert.deepEqual(await shown, { kind: "selected", label: "Allow" });
  });

  it("a question already past its deadline is not shown: timed out", async () => {
    const select = piSelect("Allow");
    assert.deepEqual(await showDialog(select, "t", ["Allow"], { signal: open(), deadline: Date.now() - 1 }), {
      kind: "timed-out",
    });
    assert.equal(select.shown.length, 0);
  });

  it("closing the question closes the dialog; a closed question is never shown", async () => {
    const select = piSelect();
    const question = new AbortController();
    const shown = showDialog(select, "t", ["Deny"], { signal: question.signal, deadline: Date.now() + 60_000 });
    question.abort();
    assert.deepEqual(await shown, { kind: "dismissed" });
    assert.equal(select.shown[0].signal?.aborted, true);
    assert.deepEqual(await showDialog(select, "again", ["Deny"], { signal: question.signal }), { kind: "dismissed" });
    assert.equal(select.shown.length, 1);
  });
});

describe("DialogQueue", () => {
  it("shows one dialog at a time; a question closed while it waits is never shown", async () => {
    const queue = new DialogQueue();
    const select = piSelect();
    const first = queue.ask(select, "first", ["Deny"], { signal: open() });
    const waiting = new AbortController();
    const second = queue.ask(select, "second", ["Deny"], { signal: waiting.signal });
    const third = queue.ask(select, "third", ["Deny", "Allow"], { signal: open() });
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(select.shown.map((s) => s.title), ["first"]);
    waiting.abort();
    select.answer("Deny");
    assert.deepEqual(await first, { kind: "selected", label: "Deny" });
    assert.deepEqual(await second, { kind: "dismissed" });
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(select.shown.map((s) => s.title), ["first", "third"]);
    select.answer("Allow");
    assert.deepEqual(await third, { kind: "selected", label: "Allow" });
  });
});
