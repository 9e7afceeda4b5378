// The denial notices of one command: each denial once, with its true reason
// (integrations/pi/README.md, "How approvals reach you").
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DenialNotices, enabledNotice } from "../src/notices.ts";

function collector() {
  const shown: string[] = [];
  return { shown, notices: new DenialNotices((text) => shown.push(text)) };
}

const denied = (fields: { target?: string; reason?: string; source?: any; surface?: string; recovery?: any }) => ({
  type: "denied" as const,
  id: "c1",
  surface: fields.surface ?? "network",
  target: fields.target ?? "example.com:443",
  reason: fields.reason,
  source: fields.source,
  ...(fields.recovery ? { recovery: fields.recovery } : {}),
});

describe("DenialNotices", () => {
  it("serve's echo of a denial this extension answered is not shown again (same surface, target, source)", () => {
    const { shown, notices } = collector();
    notices.announce("network", "example.com:443", "reviewer", "e2e: exfiltration");
    notices.denied(denied({ reason: "e2e: exfiltration", source: "reviewer" }));
    assert.deepEqual(shown, ["Domain proxy denied: e2e: exfiltration"]);
  });

  it("an older serve's echo has no source and its own reason: still the same denial", () => {
    const { shown, notices } = collector();
    notices.announce("host-ipc", "tmux ls", "unavailable", "Broker failed: model down");
    notices.denied(denied({ surface: "host-ipc", target: "tmux ls", reason: "Denied by the user." }));
    assert.deepEqual(shown, ["Host-IPC denied: Broker failed: model down"]);
  });

  it("another denial of the same destination with another source is shown", () => {
    const { shown, notices } = collector();
    notices.announce("network", "example.com:443", "human", "Denied by the user.");
    notices.denied(denied({ reason: "Automatic review stopped after repeated denials in this turn.", source: "reviewer" }));
    notices.denied(denied({ reason: "Denied by the user.", source: "human" }));
    assert.deepEqual(shown, [
      "Domain proxy denied: Denied by the user.",
      "Domain proxy denied: Automatic review stopped after repeated denials in this turn. Use /auto-review-approve for one exact retry.",
    ]);
  });

  it("serve's own critical denial names break-glass, as its event does; a hard deny none", () => {
    const { shown, notices } = collector();
    notices.denied(denied({ target: "paste.test:443", reason: "Exfiltration.", source: "reviewer", recovery: "break-glass" }));
    notices.denied(denied({ target: "other.test:443", reason: "Unknown host.", source: "reviewer", recovery: "retry" }));
    notices.denied(denied({ target: "x.test:443", reason: "Hard deny (curl -k): insecure.", source: "hard-deny" }));
    assert.deepEqual(shown, [
      "Domain proxy denied: Exfiltration. Use /auto-review-break-glass for one exact retry.",
      "Domain proxy denied: Unknown host. Use /auto-review-approve for one exact retry.",
      "Domain proxy denied: Hard deny (curl -k): insecure. This local safety denial cannot be overridden.",
    ]);
  });

  it("the same refusal of many connections is one notice; other destinations and reasons each get theirs", () => {
    const { shown, notices } = collector();
    for (let i = 0; i < 3; i++) notices.denied(denied({ reason: "Denied by the user.", source: "human" }));
    notices.denied(denied({ target: "other.example:443", reason: "Denied by the user.", source: "human" }));
    notices.denied(denied({ reason: "Not answered in time.", source: "unavailable" }));
    notices.denied(denied({ source: "human" })); // no reason: no notice
    assert.deepEqual(shown, [
      "Domain proxy denied: Denied by the user.",
      "Domain proxy denied: Denied by the user.",
      "Domain proxy denied: Not answered in time.",
    ]);
  });
});

describe("enabledNotice", () => {
  it("names the sandbox serve's hello names", () => {
    assert.equal(
      enabledNotice("linux"),
      "pi-sandbox enabled: Linux Sandbox Runtime with static filesystem policy and per-connection network review",
    );
    assert.equal(
      enabledNotice("macos"),
      "pi-sandbox enabled: macOS Sandbox Runtime with static filesystem policy and per-connection network review",
    );
    assert.equal(
      enabledNotice("bsd"),
      "pi-sandbox enabled: the bsd sandbox with static filesystem policy and per-connection network review",
    );
  });
});
