// Compiles wend's JSON Schemas with ajv in strict mode, as a strict consumer (a SchemaStore
// check, a JavaScript tool) would, and validates instances with them. Reads
//   {"schemas": [schema, ...], "instances": [{"schema": "$id", "name": "...", "value": ...}]}
// on stdin; writes {"compile": {"$id": "error" | ""}, "results": [{"name", "valid", "errors"}]}.
// ajv-errors is the errorMessage keyword's vocabulary (yaml-language-server reads the same
// keyword); ajv-formats is the standard formats. Nothing else is declared: any other keyword
// a schema uses fails compilation.
import Ajv2020 from "ajv/dist/2020.js";
import ajvErrors from "ajv-errors";
import ajvFormats from "ajv-formats";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const { schemas, instances } = JSON.parse(input);

// Every strict check as an error, except two that refuse plain JSON Schema: union types
// ("type": ["string", "array"]) and `required` naming a key its own subschema does not define
// (the idiom {"not": {"required": ["at"]}}).
const ajv = new Ajv2020({
  strict: true,
  allowUnionTypes: true,
  strictRequired: false,
  allErrors: true,
});
ajvFormats(ajv);
ajvErrors(ajv);

const compile = {};
const validators = {};
for (const s of schemas) {
  try {
    validators[s.$id] = ajv.compile(s);
    compile[s.$id] = "";
  } catch (e) {
    compile[s.$id] = String(e.message);
  }
}
const results = [];
for (const inst of instances || []) {
  const v = validators[inst.schema];
  if (!v) {
    results.push({ name: inst.name, valid: false, errors: ["schema did not compile"] });
    continue;
  }
  const valid = v(inst.value);
  results.push({
    name: inst.name,
    valid,
    errors: (v.errors || []).map((e) => `${e.instancePath || "/"}: ${e.message}`),
  });
}
process.stdout.write(JSON.stringify({ compile, results }));
