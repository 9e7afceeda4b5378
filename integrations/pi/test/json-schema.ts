// A JSON Schema (draft 2020-12) validator for the keywords docs/protocol.schema.json uses, the
// twin of tests/unit/json_schema.hpp: a keyword it does not know is an error, never ignored.
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = { [keyword: string]: Json };

const IGNORED = new Set(["$schema", "$id", "$defs", "title", "description"]);

function hasType(value: Json, type: string): boolean {
  switch (type) {
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    case "array":
      return Array.isArray(value);
    case "integer":
      return Number.isInteger(value);
    case "null":
      return value === null;
    default:
      return typeof value === type;
  }
}

export class JsonSchema {
  private readonly root: Schema;

  constructor(root: object) {
    this.root = root as Schema;
  }

  /** Why `value` does not validate against `$defs/<def>` (the whole schema without one), or "". */
  check(value: unknown, def?: string): string {
    return this.at(value as Json, def ? this.definition(def) : this.root, "$");
  }

  private definition(def: string): Schema {
    return (this.root.$defs as Record<string, Schema>)[def];
  }

  private at(value: Json, schema: Schema, path: string): string {
    for (const [keyword, arg] of Object.entries(schema)) {
      const why = this.keyword(value, schema, keyword, arg, path);
      if (why) return why;
    }
    return "";
  }

  private keyword(value: Json, schema: Schema, keyword: string, arg: Json, path: string): string {
    const fail = (what: string) => `${path}: ${keyword} ${what}`;
    const object = hasType(value, "object") ? (value as Record<string, Json>) : undefined;
    if (IGNORED.has(keyword)) return "";
    switch (keyword) {
      case "$ref":
        return this.at(value, this.definition(String(arg).replace("#/$defs/", "")), path);
      case "type":
        return hasType(value, String(arg)) ? "" : fail(String(arg));
      case "const":
        return JSON.stringify(value) === JSON.stringify(arg) ? "" : fail(JSON.stringify(arg));
      case "enum":
        return (arg as Json[]).some((o) => JSON.stringify(o) === JSON.stringify(value)) ? "" : fail(JSON.stringify(arg));
      case "oneOf": {
        const whys = (arg as Schema[]).map((option) => this.at(value, option, path));
        const matched = whys.filter((w) => !w).length;
        return matched === 1 ? "" : fail(`matched ${matched}: ${whys.join(" | ")}`);
      }
      case "pattern":
        return typeof value !== "string" || new RegExp(String(arg), "u").test(value) ? "" : fail(String(arg));
      case "minLength":
        return typeof value !== "string" || value.length >= Number(arg) ? "" : fail(String(arg));
      case "minimum":
        return typeof value !== "number" || value >= Number(arg) ? "" : fail(String(arg));
      case "maximum":
        return typeof value !== "number" || value <= Number(arg) ? "" : fail(String(arg));
      case "exclusiveMinimum":
        return typeof value !== "number" || value > Number(arg) ? "" : fail(String(arg));
      case "minItems":
        return !Array.isArray(value) || value.length >= Number(arg) ? "" : fail(String(arg));
      case "items":
        if (!Array.isArray(value)) return "";
        return value.map((item, i) => this.at(item, arg as Schema, `${path}[${i}]`)).find((w) => w) ?? "";
      case "required": {
        const missing = object ? (arg as string[]).find((name) => !(name in object)) : undefined;
        return missing === undefined ? "" : fail(missing);
      }
      case "properties":
        if (!object) return "";
        return (
          Object.entries(arg as Record<string, Schema>)
            .filter(([name]) => name in object)
            .map(([name, sub]) => this.at(object[name], sub, `${path}.${name}`))
            .find((w) => w) ?? ""
        );
      case "additionalProperties": {
        if (!object) return "";
        const listed = (schema.properties ?? {}) as Record<string, Json>;
        for (const [name, sub] of Object.entries(object)) {
          if (name in listed) continue;
          if (arg === false) return fail(`forbids ${name}`);
          if (typeof arg === "object" && arg !== null) {
            const why = this.at(sub, arg as Schema, `${path}.${name}`);
            if (why) return why;
          }
        }
        return "";
      }
      default:
        return `${path}: the keyword ${keyword} is not known to test/json-schema.ts`;
    }
  }
}
