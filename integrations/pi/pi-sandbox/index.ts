// The entry Pi loads (package.json `pi.extensions`): Pi names an extension by the directory of
// its `index.ts`, so this directory makes it `pi-sandbox` in Pi's extension list, not `src`.
export { default } from "../src/index.ts";
