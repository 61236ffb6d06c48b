/**
 * The committed records are the contract's: shared/records/contract.ts and contractOperations.ts are regenerated in
 * memory from shared/records/v2-contract.json and must equal the committed files byte for byte, so a contract edited
 * without `npm run gen:records` (or a generated file edited by hand) fails here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GENERATED_FILES, generateRecords, type Contract } from './generateRecords.js';

const dir = new URL('./', import.meta.url);
const read = (name: string) => readFileSync(new URL(name, dir), 'utf8');
const contract = () => JSON.parse(read('v2-contract.json')) as Contract;

describe('records generated from the v2 contract', () => {
  it('are the committed files, byte for byte', () => {
    const generated = generateRecords(contract());
    expect(
      generated.records === read(GENERATED_FILES.records),
      `${GENERATED_FILES.records} differs from the contract: run npm run gen:records`,
    ).toBe(true);
    expect(
      generated.operations === read(GENERATED_FILES.operations),
      `${GENERATED_FILES.operations} differs from the contract: run npm run gen:records`,
    ).toBe(true);
  });

  it('follow a change of the contract, so a stale file would be caught', () => {
    const changed = contract();
    const [name] = Object.keys(changed.schemas).filter((n) => Array.isArray(changed.schemas[n].enum));
    changed.schemas[name].enum = [...changed.schemas[name].enum, 'AddedMember'];
    changed.operations = changed.operations.slice(1);
    const generated = generateRecords(changed);
    expect(generated.records).not.toBe(read(GENERATED_FILES.records));
    expect(generated.records).toContain(`export const ${name}Members = [`);
    expect(generated.records).toContain('"AddedMember"]');
    expect(generated.operations).not.toBe(read(GENERATED_FILES.operations));
  });
});
