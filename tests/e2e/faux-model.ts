// A Pi extension for the end-to-end tests: registers Pi's scripted (faux) model provider
// as `e2e-faux/scripted`. Each user prompt is a JSON object of `bash` tool arguments
// (`{"command": "...", "timeout": 5}`); the model calls `bash` with them once, then, when
// the tool result is back, answers `done`. A prompt `{"tool": NAME, "args": {...}}` calls
// tool NAME instead (the `subagent` tool), and `"reply": "result"` in either form makes the
// answer `done: <the tool result's text>`. No network, no API key.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { fauxAssistantMessage, fauxProvider, fauxText, fauxToolCall } from "@earendil-works/pi-ai";

type Message = { role: string; content: unknown };

function textOf(message: Message): string {
  if (typeof message.content === "string") return message.content;
  if (!Array.isArray(message.content)) return "";
  return message.content
    .filter((block: { type?: string }) => block?.type === "text")
    .map((block: { text?: string }) => block.text ?? "")
    .join("");
}

/**
 * The prompt's JSON object (a handoff's text ends with the task's JSON after `Next task:\n`; a
 * pi-subagents worker's starts `Task: `).
 */
function parsed(text: string): Record<string, any> | undefined {
  const task = (text.includes("\nNext task:\n") ? text.slice(text.lastIndexOf("\nNext task:\n") + 12) : text).replace(/^Task: /, "");
  try {
    const value = JSON.parse(task);
    return typeof value === "object" && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

export default function (pi: ExtensionAPI) {
  const faux = fauxProvider({ provider: "e2e-faux", models: [{ id: "scripted", name: "Scripted e2e model" }] });
  const step = (context: { messages: Message[] }) => {
    faux.appendResponses([step]); // an endless script: one step per model request
    const last = context.messages.at(-1);
    if (!last || last.role !== "user") {
      const prompt = [...context.messages].reverse().find((m) => m.role === "user");
      const asked = prompt ? parsed(textOf(prompt)) : undefined;
      if (asked?.reply === "result" && last) return fauxAssistantMessage(fauxText(`done: ${textOf(last)}`));
      return fauxAssistantMessage(fauxText("done"));
    }
    const request = parsed(textOf(last));
    if (!request) return fauxAssistantMessage(fauxText("done"));
    if (typeof request.tool === "string") {
      return fauxAssistantMessage([fauxToolCall(request.tool, request.args ?? {})], { stopReason: "toolUse" });
    }
    const { reply: _reply, ...args } = request;
    return fauxAssistantMessage([fauxToolCall("bash", args)], { stopReason: "toolUse" });
  };
  faux.setResponses([step]);
  pi.registerProvider(faux.provider);
}
