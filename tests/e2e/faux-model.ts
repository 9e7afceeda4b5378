// A Pi extension for the end-to-end tests: registers Pi's scripted (faux) model provider
// as `e2e-faux/scripted`. Each user prompt is a JSON object of `bash` tool arguments
// (`{"command": "...", "timeout": 5}`), or `{"tool": NAME, "args": {...}}` for another tool;
// the model calls that tool with them once, then, when the tool result is back, answers
// `done`. No network, no API key.
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

export default function (pi: ExtensionAPI) {
  const faux = fauxProvider({ provider: "e2e-faux", models: [{ id: "scripted", name: "Scripted e2e model" }] });
  const step = (context: { messages: Message[] }) => {
    faux.appendResponses([step]); // an endless script: one step per model request
    const last = context.messages.at(-1);
    if (!last || last.role !== "user") return fauxAssistantMessage(fauxText("done"));
    const prompt = JSON.parse(textOf(last));
    const [tool, args] = typeof prompt.tool === "string" ? [prompt.tool, prompt.args] : ["bash", prompt];
    return fauxAssistantMessage([fauxToolCall(tool, args)], { stopReason: "toolUse" });
  };
  faux.setResponses([step]);
  pi.registerProvider(faux.provider);
}
