// Who answers an approval request, and with which texts, sources and reasons
// (integrations/pi/README.md, "How approvals reach you"; docs/compatibility.md, C52-C58).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  BROKER_SERVICE_KEY,
  brokerPublishedButUnusable,
  commandLine,
  decideApproval,
  denialNotice,
  serveDenialHint,
  printable,
  questionTitle,
  type ApprovalContext,
  type BoundaryBroker,
  type BoundaryDecision,
  type SelectOutcome,
} from "../src/approval.ts";
import type { ApprovalRequestEvent } from "../src/protocol.ts";

const NO_UI =
  "Approval needs a human, and none could be asked (Pi has no interactive UI in this mode).";

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
    { choice: "deny", label: "Deny" },
    { choice: "allow-once", label: "Allow this exact operation once" },
    { choice: "allow-command", label: "Allow example.com:443 for the rest of this command" },
    { choice: "allow-session", label: "Allow example.com:443 for this session" },
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

type Asked = { title: string; labels: string[]; deadline?: number };

/** A context whose human answers `outcome` (a label: selected; undefined: dismissed). */
function context(
  outcome: string | undefined | SelectOutcome,
  broker?: BoundaryBroker,
): ApprovalContext & { asked: Asked[] } {
  const asked: Asked[] = [];
  return {
    asked,
    broker,
    sessionId: "s1",
    scopeKey: "s1:turn:2",
    select: async (title, labels, options) => {
      asked.push({ title, labels, ...(options.deadline !== undefined ? { deadline: options.deadline } : {}) });
      if (typeof outcome === "object") return outcome;
      return outcome === undefined ? { kind: "dismissed" } : { kind: "selected", label: outcome };
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
  it("is the title, the Command: line, serve's warning and the reason line", () => {
    assert.equal(
      questionTitle({ ...network, warning: "Warning: w" }, "why"),
      "Sandbox approval required: connect example.com:443\nCommand: curl https://example.com\nWarning: w\nwhy",
    );
  });
  it("composes the title and the host-IPC retry warning when serve sends none", () => {
    assert.equal(
      questionTitle(hostIpc, undefined),
      "Sandbox approval required: execute-host tmux ls\nWarning: the first sandboxed attempt may already have had partial side effects. The retry runs on the host outside the OS sandbox.",
    );
  });
  it("names a host socket's path, with the Command: line and no host-run warning", () => {
    const request = {
      ...hostIpc.request,
      operation: "connect-unix",
      path: "/run/user/1000/gnupg/S.gpg-agent",
      matchedPolicy: { decision: "ask" as const, rule: "host-socket" },
    };
    assert.equal(
      questionTitle({ ...hostIpc, request }, undefined),
      "Sandbox approval required: connect-unix /run/user/1000/gnupg/S.gpg-agent\nCommand: tmux ls",
    );
  });
  it("has no Command: line when the request names no command", () => {
    const { command: _command, ...request } = network.request;
    assert.equal(questionTitle({ ...network, request }, undefined), "Sandbox approval required: connect example.com:443");
  });
});

describe("commandLine", () => {
  it("cuts the command to 200 characters and adds …", () => {
    assert.equal(commandLine("x".repeat(200)), `Command: ${"x".repeat(200)}`);
    assert.equal(commandLine(`${"é".repeat(200)}tail`), `Command: ${"é".repeat(200)}…`);
  });
  it("shows controls, newlines and bidirectional controls escaped, as pi-sandbox's printable()", () => {
    assert.equal(printable("a\nb\tc\x7f\u0085d\u202ee\u2067"), "a\\nb\\x09c\\x7f\\u0085d\\u202ee\\u2067");
    assert.equal(commandLine("echo 1\necho 2"), "Command: echo 1\\necho 2");
  });
});

describe("decideApproval without a broker", () => {
  it("asks with serve's choices in serve's order (Deny first) and maps the label back to a choice", async () => {
    const ctx = context("Allow example.com:443 for the rest of this command");
    assert.deepEqual(await decideApproval(network, ctx), { choice: "allow-command", source: "human" });
    assert.deepEqual(ctx.asked, [
      {
        title:
          "Sandbox approval required: connect example.com:443\nCommand: curl https://example.com",
        labels: [
          "Deny",
          "Allow this exact operation once",
          "Allow example.com:443 for the rest of this command",
          "Allow example.com:443 for this session",
        ],
      },
    ]);
  });
  it("says `pi-auto-review broker is unavailable` only when a published broker cannot be used", async () => {
    const failed = { ...context("Deny"), brokerFailed: true };
    await decideApproval(network, failed);
    assert.equal(
      failed.asked[0].title,
      "Sandbox approval required: connect example.com:443\nCommand: curl https://example.com\npi-auto-review broker is unavailable",
    );
    const absent = { ...context("Deny"), brokerFailed: false };
    await decideApproval(network, absent);
    assert.equal(absent.asked[0].title, "Sandbox approval required: connect example.com:443\nCommand: curl https://example.com");
  });
  it("brokerPublishedButUnusable: nothing published is no fault; a published object without review() is", () => {
    const key = BROKER_SERVICE_KEY;
    const global = globalThis as Record<symbol, unknown>;
    const before = global[key];
    try {
      delete global[key];
      assert.equal(brokerPublishedButUnusable(), false);
      global[key] = { review: "not a function" };
      assert.equal(brokerPublishedButUnusable(), true);
      global[key] = { review: async () => ({}), consumeGrant: () => true };
      assert.equal(brokerPublishedButUnusable(), false);
    } finally {
      if (before === undefined) delete global[key];
      else global[key] = before;
    }
  });
  it("answers allow-session", async () => {
    assert.deepEqual(await decideApproval(network, context("Allow example.com:443 for this session")), {
      choice: "allow-session",
      source: "human",
    });
  });
  it("Deny: the human's deny, `Denied by the user.`, not the question's reason line", async () => {
    assert.deepEqual(await decideApproval(network, context("Deny")), {
      choice: "deny",
      source: "human",
      reason: "Denied by the user.",
    });
    const ctx = context("Deny");
    const decision = await decideApproval({ ...network, reason: "reviewer deferred" }, ctx);
    assert.deepEqual(decision, { choice: "deny", source: "human", reason: "Denied by the user." });
    assert.equal(
      ctx.asked[0].title,
      "Sandbox approval required: connect example.com:443\nCommand: curl https://example.com\nreviewer deferred",
    );
  });
  it("a dismissed dialog (Esc) is the human's deny", async () => {
    assert.deepEqual(await decideApproval(network, context(undefined)), {
      choice: "deny",
      source: "human",
      reason: "Denied by the user.",
    });
  });
  it("a dialog closed by its countdown is nobody's answer: unavailable, `Not answered in time.`", async () => {
    const ctx = { ...context({ kind: "timed-out" }), deadline: 1_900_000_000_000 };
    assert.deepEqual(await decideApproval(network, ctx), {
      choice: "deny",
      source: "unavailable",
      reason: "Not answered in time.",
    });
    assert.equal(ctx.asked[0].deadline, 1_900_000_000_000);
  });
  it("without UI: unavailable, with the reason that nobody could be asked", async () => {
    const noUi = { ...context("Allow this exact operation once"), select: undefined };
    assert.deepEqual(await decideApproval(hostIpc, noUi), { choice: "deny", source: "unavailable", reason: NO_UI });
  });
  it("a UI that fails to show the question: unavailable, with why", async () => {
    const ctx: ApprovalContext = {
      ...context("Deny"),
      select: async () => {
        throw new Error("no terminal");
      },
    };
    assert.deepEqual(await decideApproval(network, ctx), {
      choice: "deny",
      source: "unavailable",
      reason: "The question could not be shown: no terminal",
    });
  });
  it("offers Deny, then allow once, when serve names no choices (or none this extension knows)", async () => {
    const ctx = context("Allow this exact operation once");
    assert.deepEqual(await decideApproval(hostIpc, ctx), { choice: "allow-once", source: "human" });
    assert.deepEqual(ctx.asked[0].labels, ["Deny", "Allow this exact operation once"]);
    const odd = context("Deny");
    await decideApproval({ ...hostIpc, choices: [{ choice: "allow-forever" as never, label: "Forever" }] }, odd);
    assert.deepEqual(odd.asked[0].labels, ["Deny", "Allow this exact operation once"]);
  });
  it("a question closed while its dialog is open gets no answer", async () => {
    const closed = new AbortController();
    const ctx: ApprovalContext = {
      ...context("Deny"),
      signal: closed.signal,
      select: async (_title, _labels, options) => {
        closed.abort();
        assert.equal(options.signal.aborted, true);
        return { kind: "dismissed" };
      },
    };
    assert.equal(await decideApproval(network, ctx), undefined);
  });
});

describe("decideApproval with the pi-auto-review broker", () => {
  const review = { outcome: "allow", riskLevel: "low", userAuthorization: "high", rationale: "fine" };

  it("allow: consumes the exact grant at once, asks nobody; the reviewer's allow with its rationale", async () => {
    const { broker, calls } = fakeBroker({ kind: "allow", review, grant: { token: "t1" } });
    const ctx = context("Deny", broker);
    assert.deepEqual(await decideApproval(network, ctx), { choice: "allow-once", source: "reviewer", reason: "fine" });
    assert.deepEqual(calls, [
      ["review", "sandbox-runtime-network-1", { sessionId: "s1", scopeKey: "s1:turn:2", issueGrant: true }],
      ["consumeGrant", "sandbox-runtime-network-1", "s1", "t1"],
    ]);
    assert.equal(ctx.asked.length, 0);
  });
  it("allow without a grant, or a grant that does not consume: deny (invalid-grant)", async () => {
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
  it("deny is final, with the rationale (and a later broker's recovery hint); a hard deny says so", async () => {
    const ctx = context("Allow this exact operation once", fakeBroker({ kind: "deny", review: { ...review, rationale: "exfiltration" } }).broker);
    assert.deepEqual(await decideApproval(network, ctx), { choice: "deny", source: "reviewer", reason: "exfiltration" });
    assert.equal(ctx.asked.length, 0);
    const hinted = fakeBroker({ kind: "deny", review: { ...review, rationale: "no." }, recoveryCommand: "/auto-review-approve" });
    assert.equal((await decideApproval(network, context("Deny", hinted.broker)))?.reason, "no. Use /auto-review-approve for one exact retry.");
    const hard = fakeBroker({ kind: "deny", review: { ...review, rationale: "rm -rf /" }, denialSource: "hard-deny", recoveryCommand: false });
    assert.deepEqual(await decideApproval(network, context("Deny", hard.broker)), {
      choice: "deny",
      source: "hard-deny",
      reason: "rm -rf / This local safety denial cannot be overridden.",
    });
  });
  it("defer asks the human with the rationale as the reason line; the human's deny is theirs", async () => {
    const broker = fakeBroker({ kind: "defer", review: { ...review, rationale: "ask the user" } }).broker;
    const ctx = context("Allow this exact operation once", broker);
    assert.deepEqual(await decideApproval(hostIpc, ctx), { choice: "allow-once", source: "human" });
    assert.match(ctx.asked[0].title, /\nask the user$/);
    assert.deepEqual(await decideApproval(hostIpc, context("Deny", broker)), {
      choice: "deny",
      source: "human",
      reason: "Denied by the user.",
    });
  });
  it("a broker that throws denies (unavailable, `Broker failed: …`) and never asks", async () => {
    const ctx = context("Allow this exact operation once", fakeBroker(new Error("model down")).broker);
    assert.deepEqual(await decideApproval(network, ctx), { choice: "deny", source: "unavailable", reason: "Broker failed: model down" });
    assert.equal(ctx.asked.length, 0);
  });
  it("a question closed during the review gets no answer, and the grant is not consumed", async () => {
    const closed = new AbortController();
    const { broker, calls } = fakeBroker({ kind: "allow", review, grant: { token: "t1" } });
    const reviewing = broker.review.bind(broker);
    broker.review = async (request, ctx) => {
      const decision = await reviewing(request, ctx);
      closed.abort();
      return decision;
    };
    assert.equal(await decideApproval(network, { ...context("Deny", broker), signal: closed.signal }), undefined);
    assert.deepEqual(calls.map((c) => c[0]), ["review"]);
  });
});

describe("denialNotice", () => {
  it("names the surface as pi-sandbox 0.4.0 does", () => {
    assert.equal(denialNotice("network", "r"), "Domain proxy denied: r");
    assert.equal(denialNotice("host-ipc", "r"), "Host-IPC denied: r");
    assert.equal(denialNotice("credential", "r"), "Credential denied: r");
    assert.equal(denialNotice("filesystem-write", "r"), "Sandbox denied: r");
  });

  it("ends serve's own denials with the way out: a retry after the reviewer, none after a hard deny", () => {
    assert.equal(denialNotice("network", "No.", serveDenialHint("reviewer")), "Domain proxy denied: No. Use /auto-review-approve for one exact retry.");
    assert.equal(
      denialNotice("host-ipc", "Hard deny (x): y.", serveDenialHint("hard-deny")),
      "Host-IPC denied: Hard deny (x): y. This local safety denial cannot be overridden.",
    );
    assert.equal(denialNotice("network", "Denied by the user.", serveDenialHint("human")), "Domain proxy denied: Denied by the user.");
  });

  it("names the command serve's `denied` event names: break-glass after a critical denial, a retry otherwise", () => {
    assert.equal(
      denialNotice("network", "Exfiltration.", serveDenialHint("reviewer", "break-glass")),
      "Domain proxy denied: Exfiltration. Use /auto-review-break-glass for one exact retry.",
    );
    assert.equal(
      denialNotice("network", "Automatic review stopped after repeated denials in this turn.", serveDenialHint("reviewer", "retry")),
      "Domain proxy denied: Automatic review stopped after repeated denials in this turn. Use /auto-review-approve for one exact retry.",
    );
  });
});
