// SPDX-License-Identifier: GPL-2.0-or-later
// Validates SARIF logs against the SARIF 2.1.0 JSON schema with ajv:
//   node sarif_validate.js MODULES_DIR FILE...
// MODULES_DIR is an npm prefix holding ajv@6 and @microsoft/jest-sarif,
// which ships the OASIS 2.1.0 schema (installed by the tests from the npm
// registry; nothing of either is in this repository). Prints one line
// per file, `ok FILE` or `invalid FILE: ERRORS`; exits 1 if any file is
// invalid.
'use strict';
const path = require('path');
const fs = require('fs');
const [modules, ...files] = process.argv.slice(2);
const nm = path.join(modules, 'node_modules');
const Ajv = require(path.join(nm, 'ajv'));
const draft4 = require(path.join(nm, 'ajv', 'lib', 'refs', 'json-schema-draft-04.json'));
const schema = require(path.join(nm, '@microsoft', 'jest-sarif', 'lib', 'schemas', 'sarif-2.1.0-rtm.5.json'));
const ajv = new Ajv({ schemaId: 'auto', allErrors: true, format: 'full' });
ajv.addMetaSchema(draft4);
const validate = ajv.compile(schema);
let bad = 0;
for (const f of files) {
  const log = JSON.parse(fs.readFileSync(f, 'utf8'));
  if (validate(log)) {
    console.log(`ok ${f}`);
  } else {
    bad += 1;
    console.log(`invalid ${f}: ${ajv.errorsText(validate.errors)}`);
  }
}
process.exit(bad ? 1 : 0);
