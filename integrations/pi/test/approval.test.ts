// Who answers an approval request, and with which texts (reference items 50-58).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  decideApproval,
  denialNotice,
  questionTitle,
  type ApprovalContext,
  type BoundaryBroker,
  type BoundaryDecision,
} from "../src/approval.ts";
import type { ApprovalRequestEvent } from "../src/protocol.ts";

const network: ApprovalRequestEvent = {
  type: "approval_request",
  id: "c1",
  request_id: "r1",
  request: {
    id: "sandbox-runtime-network-1",
    source: "sandbox-runtime",
    surface: "network",
    operation: "connect",
    cwd: "/ws",
    command: "curl https://example.com",
    destination: "example.com:443",
  },
  title: "Sandbox approval required: connect example.com:443",
  choices: [
    { choice: "allow-once", label: "Allow this exact operation once" },
    { choice: "allow-command", label: "Allow example.com:443 for the rest of this command" },
    { choice: "deny", label: "Deny" },
  ],
};

const hostIpc: ApprovalRequestEvent = {
  type: "approval_request",
  id: "c2",
  request_id: "r2",
  request: {
    id: "sandbox-runtime-host-ipc-1",
    source: "sandbox-runtime",
    surface: "host-ipc",
    operation: "execute-host",
    cwd: "/ws",
    command: "tmux ls",
    matchedPolicy: { decision: "ask", rule: "unix-socket-eperm" },
  },
};

type Asked = { title: string; labels: string[] };

function context(answer: string | undefined, broker?: BoundaryBroker): ApprovalContext & { asked: Asked[] } {
  const asked: Asked[] = [];
  return {
    asked,
    broker,
    sessionId: "s1",
    scopeKey: "s1:turn:2",
    select: async (title, labels) => {
      asked.push({ title, labels });
      return answer;
    },
    signal: new AbortController().signal,
  };
}

function fakeBroker(decision: BoundaryDecision | Error, consumes = true) {
  const calls: unknown[][] = [];
  const broker: BoundaryBroker = {
    async review(request, ctx) {
      calls.push(["review", request.id, ctx]);
      if (decision instanceof Error) throw decision;
      return decision;
    },
    consumeGrant(request, sessionId, token) {
      calls.push(["consumeGrant", request.id, sessionId, token]);
      return consumes;
    },
  };
  return { broker, calls };
}

describe("questionTitle", () => {
  it("adds serve's warning and the reason as lines (items 56-57)", () => {
    assert.equal(
      questionTitle({ ...network, warning: "Warning: w" }, "why"),
      "Sandbox approval required: connect example.com:443\nWarning: w\nwhy",
    );
  });
  it("composes the title and the host-IPC retry warning when serve sends none", () => {
    assert.equal(
      questionTitle(hostIpc, undefined),
      "Sandbox approval required: execute-host tmux ls\nWarning: the first sandboxed attempt may already have had partial side effects. The retry runs on the host outside the OS sandbox.",
    );
  });
});

describe("decideApproval without a broker", () => {
  it("asks the human with serve's labels and maps the label back to a choice", async () => {
    const ctx = context("Allow example.com:443 for the rest of this command");
    assert.deepEqual(await decideApproval(network, ctx), {
      choice: "allow-command",
      source: "human",
      reason: "pi-auto-review broker is unavailable",
    });
    assert.deepEqual(ctx.asked, [
      {
        title: "Sandbox approval required: connect example.com:443\npi-auto-review broker is unavailable",
        labels: [
          "Allow this exact operation once",
          "Allow example.com:443 for the rest of this command",
          "Deny",
        ],
      },
    ]);
  });
  it("shows serve's reason instead when serve gives one", async () => {
    const ctx = context("Deny");
    const decision = await decideApproval({ ...network, reason: "reviewer deferred" }, ctx);
    assert.deepEqual(decision, { choice: "deny", source: "human", reason: "reviewer deferred" });
    assert.equal(ctx.asked[0].title, "Sandbox approval required: connect example.com:443\nreviewer deferred");
  });
  it("denies a dismissed dialog, and denies without UI", async () => {
    assert.equal((await decideApproval(network, context(undefined))).choice, "deny");
    const noUi = { ...context("Allow this exact operation once"), select: undefined };
    assert.deepEqual(await decideApproval(hostIpc, noUi), {
      choice: "deny",
      source: "unavailable",
      reason: "pi-auto-review broker is unavailable",
    });
  });
  it("offers allow once and deny when serve names no choices", async () => {
    const ctx = context("Allow this exact operation once");
    assert.equal((await decideApproval(hostIpc, ctx)).choice, "allow-once");
    assert.deepEqual(ctx.asked[0].labels, ["Allow this exact operation once", "Deny"]);
  });
});

describe("decideApproval with the pi-auto-review broker", () => {
  const review = { outcome: "allow", riskLevel: "low", userAuthorization: "high", rationale: "fine" };

  it("allow: consumes the exact grant at once, asks nobody", async () => {
    const { broker, calls } = fakeBroker({ kind: "allow", review, grant: { token: "t1" } });
    const ctx = context("Deny", broker);
    assert.deepEqual(await decideApproval(network, ctx), { choice: "allow-once", source: "reviewer", reason: "fine" });
    assert.deepEqual(calls, [
      ["review", "sandbox-runtime-network-1", { sessionId: "s1", scopeKey: "s1:turn:2", issueGrant: true }],
      ["consumeGrant", "sandbox-runtime-network-1", "s1", "t1"],
    ]);
    assert.equal(ctx.asked.length, 0);
  });
  it("allow without a grant, or a grant that does not consume: deny", async () => {
    const invalid = {
      choice: "deny",
      source: "invalid-grant",
      reason: "The exact one-shot grant is missing, invalid, or expired.",
    };
    assert.deepEqual(await decideApproval(network, context("Deny", fakeBroker({ kind: "allow", review }).broker)), invalid);
    assert.deepEqual(
      await decideApproval(network, context("Deny", fakeBroker({ kind: "allow", review, grant: { token: "t" } }, false).broker)),
      invalid,
    );
  });
  it("deny is final, with the rationale (and a later broker's recovery hint)", async () => {
    const ctx = context("Allow this exact operation once", fakeBroker({ kind: "deny", review: { ...review, rationale: "exfiltration" } }).broker);
    assert.deepEqual(await decideApproval(network, ctx), { choice: "deny", source: "reviewer", reason: "exfiltration" });
    assert.equal(ctx.asked.length, 0);
    const hinted = fakeBroker({ kind: "deny", review: { ...review, rationale: "no." }, recoveryCommand: "/auto-review-approve" });
    assert.equal((await decideApproval(network, context("Deny", hinted.broker))).reason, "no. Use /auto-review-approve for one exact retry.");
  });
  it("defer asks the human with the rationale", async () => {
    const ctx = context("Allow this exact operation once", fakeBroker({ kind: "defer", review: { ...review, rationale: "ask the user" } }).broker);
    assert.deepEqual(await decideApproval(hostIpc, ctx), { choice: "allow-once", source: "human", reason: "ask the user" });
    assert.match(ctx.asked[0].title, /\nask the user$/);
  });
  it("a broker that throws denies and never asks", async () => {
    const ctx = context("Allow this exact operation once", fakeBroker(new Error("model down")).broker);
    assert.deepEqual(await decideApproval(network, ctx), { choice: "deny", source: "unavailable", reason: "Broker failed: model down" });
    assert.equal(ctx.asked.length, 0);
  });
});

describe("denialNotice", () => {
  it("names the surface as the reference does (item 58)", () => {
    assert.equal(denialNotice("network", "r"), "Domain proxy denied: r");
    assert.equal(denialNotice("host-ipc", "r"), "Host-IPC denied: r");
    assert.equal(denialNotice("filesystem-write", "r"), "Sandbox denied: r");
  });
});
