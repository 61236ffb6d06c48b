// @ts-check
/**
 * The lint gate (`npm run lint`, part of `npm test`): ESLint's recommended rules everywhere, and typescript-eslint's
 * recommended type-checked set on every TypeScript file of the two TypeScript projects (tsconfig.json, and
 * workers/tsconfig.json for the worker and the bench's worker code). How to fix or justify a finding: docs/testing.md.
 */
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Written by generators and compared with what they write by tests (npm run gen:records, gen:client): their text is
 * the generator's, so they are neither linted nor formatted (biome.jsonc leaves them out too).
 */
const GENERATED = ['shared/records/contract.ts', 'shared/records/contractOperations.ts', 'clients/typescript/api.d.ts'];

/** Tests, their harnesses and the benches and drills. */
const TEST_CODE = ['**/*.test.ts', 'test/**', 'bench/**', '**/testing/**', '**/testSupport.ts'];

const UNUSED = {
  argsIgnorePattern: '^_',
  varsIgnorePattern: '^_',
  caughtErrorsIgnorePattern: '^_',
  ignoreRestSiblings: true,
};

/** Globals of the plain JavaScript files (the TypeScript files get theirs from the compiler). */
const NODE_GLOBALS = {
  process: 'readonly',
  Buffer: 'readonly',
  console: 'readonly',
  URL: 'readonly',
  setTimeout: 'readonly',
  clearTimeout: 'readonly',
};
const BROWSER_GLOBALS = {
  window: 'readonly',
  document: 'readonly',
  location: 'readonly',
  console: 'readonly',
  alert: 'readonly',
  crypto: 'readonly',
  fetch: 'readonly',
  Request: 'readonly',
  URL: 'readonly',
  URLSearchParams: 'readonly',
  EventSource: 'readonly',
  AbortController: 'readonly',
  AbortSignal: 'readonly',
  TextDecoderStream: 'readonly',
  Option: 'readonly',
  setTimeout: 'readonly',
  clearTimeout: 'readonly',
  signalR: 'readonly', // @microsoft/signalr's browser bundle, loaded by index.html before the terminal's modules
};

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/',
      'dist/',
      '.wrangler/',
      '.data/',
      'test-artifacts/',
      'reports/',
      '.stryker-tmp*/',
      'scratch-cf/',
      ...GENERATED,
    ],
  },
  { files: ['**/*.{js,mjs,ts,mts}'], extends: [js.configs.recommended] },
  {
    files: ['**/*.{ts,mts}'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { project: ['./tsconfig.json', './workers/tsconfig.json'], tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    // Not in either TypeScript project (it is vitest's configuration for mutation runs only): linted without types.
    files: ['vitest.mutation.config.ts'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { parserOptions: { project: false } },
  },
  {
    // Tests read the gateway's answers as untyped JSON and assert values on them: reading fields of `any` is how a
    // test looks at an answer, so the rules against using `any` are off here; every other rule holds.
    files: TEST_CODE,
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // An unused name starting with an underscore is one left out on purpose (a destructured field dropped from a
    // copy, a parameter a signature needs); a field destructured beside a rest element is there to leave the rest.
    files: ['**/*.{ts,mts}'],
    rules: { '@typescript-eslint/no-unused-vars': ['error', UNUSED] },
  },
  { files: ['**/*.{js,mjs}'], rules: { 'no-unused-vars': ['error', UNUSED] } },
  { files: ['examples/web-terminal/**/*.js'], languageOptions: { globals: BROWSER_GLOBALS } },
  { files: ['**/*.mjs'], languageOptions: { globals: NODE_GLOBALS } },
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
);
