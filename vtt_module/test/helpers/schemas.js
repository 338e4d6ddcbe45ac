// Every message the module sends is checked against ../schemas/*.schema.json (Draft 2020-12).
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";
import Ajv2020 from "ajv/dist/2020.js";

const SCHEMAS = fileURLToPath(new URL("../../../schemas/", import.meta.url));

function load() {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  const files = [];
  const walk = (dir) => {
    for (const f of readdirSync(dir, { withFileTypes: true })) {
      if (f.isDirectory()) walk(path.join(dir, f.name));
      else if (f.name.endsWith(".schema.json")) files.push(path.join(dir, f.name));
    }
  };
  walk(SCHEMAS);
  for (const f of files) ajv.addSchema(JSON.parse(readFileSync(f, "utf8")));
  return ajv;
}

const ajv = load();
const BASE = "https://initiative-sidecar.invalid/schemas/v1/";

/**
 * Validate data against a schema by name (`hook`, `intent`, `auth`, `plan`, ...).
 * @returns {string|null} the errors, or null when valid
 */
export function invalid(name, data) {
  const validate = ajv.getSchema(`${BASE}${name}.schema.json`);
  if (!validate) throw new Error(`no schema ${name}`);
  return validate(data) ? null : ajv.errorsText(validate.errors, { dataVar: name });
}

/** Throw when data does not fit its schema. */
export function assertValid(name, data) {
  const errors = invalid(name, data);
  if (errors) throw new Error(`${name} does not fit its schema: ${errors}\n${JSON.stringify(data).slice(0, 2000)}`);
}
