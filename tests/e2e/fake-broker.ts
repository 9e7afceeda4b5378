// A Pi extension for the end-to-end tests: publishes a stand-in for the pi-auto-review
// boundary broker where pi-auto-review publishes its own (compatibility C68), for the
// session's lifetime. It allows a request whose command contains `broker-allows` (with a
// one-shot grant that must be consumed), denies every other one, and appends each call to
// $E2E_BROKER_LOG (JSON lines) for the test to read.
import { appendFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

const KEY = Symbol.for("pi-auto-review:boundary-approval-broker");
export const DENY_RATIONALE = "e2e broker: this command is not allowed";

type Request = { id: string; command?: string; surface: string; agentName?: string };

function record(entry: object): void {
  const log = process.env.E2E_BROKER_LOG;
  if (log) appendFileSync(log, `${JSON.stringify(entry)}\n`);
}

export default function (pi: ExtensionAPI) {
  const grants = new Map<string, string>(); // token -> request id
  const service = {
    async review(request: Request, context: { sessionId: string; scopeKey: string; issueGrant?: boolean }) {
      record({ call: "review", requestId: request.id, surface: request.surface, command: request.command, agentName: request.agentName, context });
      const review = { outcome: "allow", riskLevel: "low", userAuthorization: "high", rationale: "e2e broker: allowed" };
      if (request.command?.includes("broker-allows")) {
        const token = randomUUID();
        grants.set(token, request.id);
        return { kind: "allow", review, grant: { token } };
      }
      return { kind: "deny", review: { ...review, outcome: "deny", rationale: DENY_RATIONALE }, circuitBreakerTripped: false };
    },
    consumeGrant(request: Request, sessionId: string, token: string): boolean {
      const ok = grants.get(token) === request.id;
      grants.delete(token);
      record({ call: "consumeGrant", requestId: request.id, sessionId, token, ok });
      return ok;
    },
  };
  const global = globalThis as Record<symbol, unknown>;
  pi.on("session_start", () => {
    global[KEY] = service;
  });
  pi.on("session_shutdown", () => {
    if (global[KEY] === service) delete global[KEY];
  });
}
