// The way out after a wrong automatic denial: /auto-review-approve and /auto-review-break-glass
// over serve's recent_denials and override requests (the ServeClient side against the scripted
// serve of test/fake-pi-sandbox; serve's own rules are tested with the real binary in
// tests/integration/serve_test.cpp, "AfterAWrongDenial...").
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { approveRetry, breakGlass, breakGlassPhrase, denialLabels, registerOverrideCommands, type OverrideClient } from "../src/overrides.ts";
import type { OverrideKind, RecentDenial } from "../src/protocol.ts";
import { ServeClient } from "../src/serve-client.ts";
import { FAKE } from "./serve-client.test.ts";

const RETRY: RecentDenial = { request_hash: "a".repeat(64), recovery: "retry", surface: "network", target: "asked.test:443", reason: "Unknown host." };
const CRITICAL: RecentDenial = { request_hash: "b".repeat(64), recovery: "break-glass", surface: "network", target: "paste.test:443", reason: "Exfiltration." };

/** A serve session that records what it was asked to authorise. */
function client(denials: RecentDenial[]): OverrideClient & { overrides: Array<[string, OverrideKind]> } {
  const overrides: Array<[string, OverrideKind]> = [];
  return {
    overrides,
    recentDenials: async () => denials,
    override: async (hash, kind) => {
      overrides.push([hash, kind]);
      return 60;
    },
  };
}

/** A command context with a UI that picks `pick` and types `typed`, recording what it showed. */
function context(options: { hasUI?: boolean; pick?: string; typed?: string } = {}) {
  const notices: Array<[string, string]> = [];
  const asked: string[] = [];
  return {
    notices,
    asked,
    ctx: {
      hasUI: options.hasUI ?? true,
      mode: "interactive",
      ui: {
        notify: (text: string, level: string) => notices.push([level, text]),
        select: async (title: string, labels: string[]) => (asked.push(`${title} ${labels.join(" | ")}`), options.pick ?? labels[0]),
        input: async (title: string) => (asked.push(title), options.typed),
      },
    } as any,
  };
}

describe("/auto-review-approve", () => {
  it("authorises one retry of the only retryable denial and says what happens next", async () => {
    const serve = client([CRITICAL, RETRY]);
    const { ctx, notices } = context();
    await approveRetry(serve, ctx);
    assert.deepEqual(serve.overrides, [[RETRY.request_hash, "retry"]]);
    assert.deepEqual(notices, [
      [
        "info",
        "pi-sandbox: one retry of asked.test:443 authorised for 60 s: the reviewer decides again, knowing you asked for it. Ask the agent to run the same command again.",
      ],
    ]);
  });

  it("lets the user pick among several, and says when there is nothing to retry", async () => {
    const other = { ...RETRY, request_hash: "c".repeat(64), target: "other.test:443" };
    const serve = client([RETRY, other]);
    const { ctx, asked } = context({ pick: "network other.test:443: Unknown host." });
    await approveRetry(serve, ctx);
    assert.deepEqual(asked, ["Retry which automatic denial once? network asked.test:443: Unknown host. | network other.test:443: Unknown host."]);
    assert.deepEqual(serve.overrides, [[other.request_hash, "retry"]]);
    const none = context();
    await approveRetry(client([CRITICAL]), none.ctx);
    assert.deepEqual(none.notices, [
      [
        "warning",
        "pi-sandbox: no automatic denial to retry in this session (hard denies cannot be overridden; critical ones need /auto-review-break-glass)",
      ],
    ]);
  });
});

describe("the denials to pick among", () => {
  it("name the command, so that two commands denied the same destination are told apart; the pick is the one named", async () => {
    const first = { ...RETRY, command: "curl https://asked.test/" };
    const second = { ...RETRY, request_hash: "c".repeat(64), command: "curl https://asked.test/ && echo other" };
    const serve = client([second, first]);
    const labels = [
      "network asked.test:443: Unknown host. (command: curl https://asked.test/ && echo other)",
      "network asked.test:443: Unknown host. (command: curl https://asked.test/)",
    ];
    assert.deepEqual(denialLabels([second, first]), labels);
    const { ctx, asked } = context({ pick: labels[1] });
    await approveRetry(serve, ctx);
    assert.deepEqual(asked, [`Retry which automatic denial once? ${labels.join(" | ")}`]);
    assert.deepEqual(serve.overrides, [[first.request_hash, "retry"]]);
  });

  it("a label still alike (the same command in two directories) ends with the start of its request hash", () => {
    const here = { ...RETRY, command: "curl https://asked.test/" };
    const there = { ...here, request_hash: "d".repeat(64) };
    const host = { ...RETRY, surface: "host-ipc", target: "printf x", command: "printf x", request_hash: "e".repeat(64) };
    assert.deepEqual(denialLabels([here, there, host]), [
      "network asked.test:443: Unknown host. (command: curl https://asked.test/) [request aaaaaaaa]",
      "network asked.test:443: Unknown host. (command: curl https://asked.test/) [request dddddddd]",
      "host-ipc printf x: Unknown host.",
    ]);
  });
});

describe("/auto-review-break-glass", () => {
  it("needs the typed phrase, then allows the critical denial once", async () => {
    const wrong = client([RETRY, CRITICAL]);
    const typo = context({ typed: "break glass" });
    await breakGlass(wrong, typo.ctx);
    assert.deepEqual(wrong.overrides, []);
    assert.deepEqual(typo.notices, [["warning", "pi-sandbox: break-glass cancelled: the phrase did not match"]]);

    const serve = client([RETRY, CRITICAL]);
    const phrase = breakGlassPhrase(CRITICAL);
    assert.equal(phrase, "break glass bbbbbbbb");
    const { ctx, notices, asked } = context({ typed: ` ${phrase} ` });
    await breakGlass(serve, ctx);
    assert.deepEqual(asked, [
      `Allow paste.test:443 once WITHOUT review? It was denied as critical: Exfiltration. Type "${phrase}" to confirm.`,
    ]);
    assert.deepEqual(serve.overrides, [[CRITICAL.request_hash, "break-glass"]]);
    assert.deepEqual(notices, [
      [
        "info",
        "pi-sandbox: paste.test:443 may be reached once without review in the next 60 s (break-glass; hard denies still apply). Ask the agent to run the same command again.",
      ],
    ]);
  });

  it("is refused without an interactive session, where nothing can be typed", async () => {
    const serve = client([CRITICAL]);
    // Print mode: the refusal goes to stderr (mode json), and nothing is authorised.
    await breakGlass(serve, { hasUI: false, mode: "json" } as any);
    assert.deepEqual(serve.overrides, []);
  });
});

describe("ServeClient session requests", () => {
  it("lists the recent denials and authorises an override; serve's refusal rejects with its message", async () => {
    const serve = await ServeClient.start({ binary: FAKE });
    assert.deepEqual(await serve.recentDenials(), [RETRY]);
    assert.equal(await serve.override(RETRY.request_hash, "retry"), 60);
    await assert.rejects(serve.override("f".repeat(64), "retry"), {
      message: `override: no recent automatic denial has request_hash ${"f".repeat(64)}`,
    });
    await serve.shutdown();
    await assert.rejects(serve.recentDenials());
  });

  it("registers both commands", () => {
    const names: string[] = [];
    registerOverrideCommands({ registerCommand: (name: string) => names.push(name) } as any, () => undefined);
    assert.deepEqual(names, ["auto-review-approve", "auto-review-break-glass"]);
  });
});
