// Loads the launcher's TypeScript modules (bin/pi-sandbox-external-worker, `--import`): Node.js
// strips types itself only outside node_modules, and an installed extension lives inside one
// (Node.js documentation, "Modules: TypeScript", type stripping). So each `.ts` file is read and
// stripped here with node:module's stripTypeScriptTypes() (Node.js >= 22.13) as an ES module;
// every other file loads as usual.
import { readFileSync } from "node:fs";
import { registerHooks, stripTypeScriptTypes } from "node:module";
import { fileURLToPath } from "node:url";

registerHooks({
  load(url, context, nextLoad) {
    if (!url.startsWith("file:") || !url.endsWith(".ts")) return nextLoad(url, context);
    const source = stripTypeScriptTypes(readFileSync(fileURLToPath(url), "utf8"));
    return { format: "module", source, shortCircuit: true };
  },
});
