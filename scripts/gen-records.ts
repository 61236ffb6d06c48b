/**
 * Writes shared/records/contract.ts and contractOperations.ts from the v2 contract (shared/records/v2-contract.json,
 * or the file named): shared/records/generateRecords.ts makes their text. Run after the contract changes:
 *   npm run gen:records [-- path/to/v2-contract.json]
 * The output is committed, so nothing at run time reads the contract; a unit test regenerates it to catch drift.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GENERATED_FILES, generateRecords, type Contract } from '../shared/records/generateRecords.js';

const records = resolve(dirname(fileURLToPath(import.meta.url)), '../shared/records');
const contractPath = resolve(process.argv[2] ?? resolve(records, 'v2-contract.json'));
const contract = JSON.parse(readFileSync(contractPath, 'utf8')) as Contract;
const generated = generateRecords(contract);

const recordsPath = resolve(records, GENERATED_FILES.records);
writeFileSync(recordsPath, generated.records);
console.log(`wrote ${generated.schemaCount} schemas to ${recordsPath}`);
const operationsPath = resolve(records, GENERATED_FILES.operations);
writeFileSync(operationsPath, generated.operations);
console.log(`wrote ${contract.operations.length} operations to ${operationsPath}`);
