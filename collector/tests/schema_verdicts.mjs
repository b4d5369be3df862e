// The schema's side of collector/tests/contract.rs: reads JSON values, one per line, on stdin, and
// writes for each, one per line, 1 when schema/beacon.v1.json accepts it and 0 when it does not, as
// ajv judges (JSON Schema 2020-12, from the repository's node_modules: `npm ci`).
import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';

const schema = JSON.parse(readFileSync(new URL('../../schema/beacon.v1.json', import.meta.url), 'utf8'));
// Strict, so a keyword ajv does not know fails here instead of being ignored; `["number", "null"]`
// is how the schema says nullable.
const validate = new Ajv2020({ strict: true, allowUnionTypes: true }).compile(schema);
const lines = readFileSync(0, 'utf8').split('\n').filter((line) => line !== '');
process.stdout.write(lines.map((line) => (validate(JSON.parse(line)) ? '1\n' : '0\n')).join(''));
