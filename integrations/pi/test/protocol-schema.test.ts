// The extension's protocol types (src/protocol.ts) against the one description of the protocol,
// docs/protocol.schema.json of the repository: every request and event type has exactly the
// fields the schema lists, the unions hold exactly the schema's requests and events, and the
// choices and sources are the schema's. The C++ side is checked against the same file
// (tests/unit/rpc_schema_test.cpp), so a field added on one side only fails one of them. The
// scripted serve the other tests use (test/fake-pi-sandbox) writes only events the schema
// describes.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { JsonSchema } from "./json-schema.ts";

type Definition = { properties?: Record<string, unknown>; oneOf?: { $ref: string }[]; enum?: string[] };
type Schema = { $defs: Record<string, Definition> };

const schema = JSON.parse(
  readFileSync(fileURLToPath(new URL("../../../docs/protocol.schema.json", import.meta.url)), "utf8"),
) as Schema;

const FAKE = fileURLToPath(new URL("./fake-pi-sandbox", import.meta.url));
const protocolFile = fileURLToPath(new URL("../src/protocol.ts", import.meta.url));
const program = ts.createProgram([protocolFile], { strict: true, noEmit: true });
const checker = program.getTypeChecker();
const source = program.getSourceFile(protocolFile)!;

/** The type alias `name` of src/protocol.ts. */
function alias(name: string): ts.Type {
  const declaration = source.statements.find(
    (s): s is ts.TypeAliasDeclaration => ts.isTypeAliasDeclaration(s) && s.name.text === name,
  );
  assert.ok(declaration, `src/protocol.ts has no type ${name}`);
  return checker.getTypeAtLocation(declaration.name);
}

/** The property names of a type (of each member, for a union in an intersection). */
function fields(type: ts.Type): string[] {
  return checker
    .getPropertiesOfType(type)
    .map((p) => p.name)
    .sort();
}

/** The string literals of a union of literals. */
function literals(type: ts.Type): string[] {
  const members = type.isUnion() ? type.types : [type];
  return members.map((t) => (t.isStringLiteral() ? t.value : checker.typeToString(t))).sort();
}

function schemaFields(def: string): string[] {
  const properties = schema.$defs[def]?.properties;
  assert.ok(properties, `the schema has no $defs/${def} with properties`);
  return Object.keys(properties).sort();
}

function schemaUnion(def: string): string[] {
  return (schema.$defs[def].oneOf ?? []).map((o) => o.$ref.replace("#/$defs/", "")).sort();
}

const REQUESTS: Record<string, string> = {
  HelloRequest: "hello_request",
  ExecRequest: "exec_request",
  StdinRequest: "stdin_request",
  StdinCloseRequest: "stdin_close_request",
  AbortRequest: "abort_request",
  ApprovalResponse: "approval_response",
  ShutdownRequest: "shutdown_request",
  RecentDenialsRequest: "recent_denials_request",
  OverrideRequest: "override_request",
};
const EVENTS: Record<string, string> = {
  HelloEvent: "hello_event",
  StartedEvent: "started_event",
  OutputEvent: "output_event",
  ApprovalRequestEvent: "approval_request_event",
  ApprovalSettledEvent: "approval_settled_event",
  DeniedEvent: "denied_event",
  ExitEvent: "exit_event",
  ErrorEvent: "error_event",
  RecentDenialsEvent: "recent_denials_event",
  OverrideEvent: "override_event",
};

describe("src/protocol.ts against docs/protocol.schema.json", () => {
  for (const [type, def] of Object.entries({ ...REQUESTS, ...EVENTS })) {
    it(`${type} has the fields of $defs/${def}`, () => {
      assert.deepEqual(fields(alias(type)), schemaFields(def));
    });
  }

  it("BoundaryRequest names only fields of $defs/boundary_request (the rest travels untouched)", () => {
    const listed = new Set(schemaFields("boundary_request"));
    assert.deepEqual(fields(alias("BoundaryRequest")).filter((f) => !listed.has(f)), []);
  });

  it("Request and Event hold exactly the schema's requests and events", () => {
    // The members as written: ExecRequest's intersection is distributed in the checker's type.
    const members = (name: string, names: Record<string, string>) => {
      const declaration = source.statements.find(
        (s): s is ts.TypeAliasDeclaration => ts.isTypeAliasDeclaration(s) && s.name.text === name,
      )!;
      assert.ok(ts.isUnionTypeNode(declaration.type));
      return declaration.type.types.map((t) => names[t.getText(source)] ?? t.getText(source)).sort();
    };
    assert.deepEqual(members("Request", REQUESTS), schemaUnion("request"));
    assert.deepEqual(members("Event", EVENTS), schemaUnion("event"));
  });

  it("the choices and sources are the schema's", () => {
    assert.deepEqual(literals(alias("ApprovalChoice")), [...schema.$defs.choice.enum!].sort());
    assert.deepEqual(literals(alias("ApprovalSource")), [...schema.$defs.source.enum!].sort());
  });
});

/** Runs the scripted serve through every behaviour it has and returns every line it wrote. */
async function scriptedServeLines(): Promise<string[]> {
  const child = spawn(FAKE, ["serve"], { env: { ...process.env, FAKE_SERVE_SANDBOX: "linux" } });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString("utf8")));
  const closed = new Promise((resolve) => child.on("close", resolve));
  const send = (request: object) => child.stdin.write(`${JSON.stringify(request)}\n`);
  const until = async (text: string) => {
    for (let i = 0; i < 400 && !output.includes(text); i++) await new Promise((r) => setTimeout(r, 25));
    assert.ok(output.includes(text), `the scripted serve never wrote ${text}`);
  };
  const exec = (id: string, command: string, extra: object = {}) =>
    send({ type: "exec", id, command, cwd: "/tmp", ...extra });
  send({ type: "hello", version: 1 });
  for (const [id, command] of Object.entries({ e1: "echo hi", e2: "bytes", e3: "signal", e4: "launch-fail", e5: "serve-denies 2", e6: "refuse", e7: "nothing" }))
    exec(id, command);
  exec("a1", "approve network with-reason expires=30 echo-denied");
  await until('"request_id":"r1"');
  send({ type: "approval_response", id: "a1", request_id: "r1", choice: "deny", source: "reviewer", reason: "no" });
  exec("a2", "approve host-ipc");
  await until('"request_id":"r2"');
  exec("s1", "settle a2");
  await until('"approval_settled"');
  exec("r1", "release a2");
  exec("t1", "sleep", { timeout_s: 0.05 });
  await until('"error":"timeout"');
  exec("z", "sleep");
  send({ type: "abort", id: "z" });
  send({ type: "abort", id: "nobody" });
  send({ type: "launch" });
  send({ type: "recent_denials" });
  await until('"type":"recent_denials"');
  send({ type: "override", request_hash: "a".repeat(64), kind: "retry" });
  await until('"type":"override"');
  send({ type: "exec", id: "h1", argv: ["/bin/echo", "x"], cwd: "/tmp" });
  await until('"id":"h1","exit_code"');
  send({ type: "shutdown" });
  await closed;
  return output.split("\n").filter((line) => line !== "");
}

describe("test/fake-pi-sandbox against docs/protocol.schema.json", () => {
  it("every event of every behaviour of the scripted serve is one the schema describes", async () => {
    const validator = new JsonSchema(schema);
    const lines = await scriptedServeLines();
    const types = new Set<string>();
    for (const line of lines) {
      const event = JSON.parse(line);
      types.add(event.type);
      assert.equal(validator.check(event, "event"), "", line);
    }
    assert.deepEqual([...types].sort(), schemaUnion("event").map((def) => def.replace(/_event$/, "")).sort());
  });
});
