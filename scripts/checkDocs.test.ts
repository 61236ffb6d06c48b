import { describe, expect, it } from 'vitest';
import {
  anchorsOf,
  checkDocs,
  checkFigures,
  checkLinks,
  checkNpmRuns,
  checkPaths,
  checkVariables,
  formatProblems,
  headingSlug,
  loadTree,
  ROOT,
  type DocsTree,
  type Figure,
} from './checkDocs.js';

/** A tree of fixture docs over a few fixture files: nothing of the real repository. */
function tree(markdown: Record<string, string>, extra: Partial<DocsTree> = {}): DocsTree {
  return {
    markdown: new Map(Object.entries(markdown)),
    files: new Set([
      ...Object.keys(markdown),
      'workers/app.ts',
      'workers/api/trace.ts',
      'bridge/conformance/broken/world.ts',
      'package.json',
    ]),
    scripts: new Set(['start', 'test', 'drill:failover']),
    declared: new Map<string, unknown>([
      ['BROKER_DRAIN_SECONDS', 130],
      ['PORT', 8787],
      ['BROKER_URL', ['http://127.0.0.1:8790']],
    ]),
    toolVariables: new Set(['DRILL_WRITERS']),
    identifiers: new Set(['REGISTRY_MIGRATIONS']),
    ...extra,
  };
}

const TABLE = [
  '# Operating',
  '',
  '## Configuration',
  '',
  '| variable | default | used by | meaning |',
  '|---|---|---|---|',
  '| `PORT` | `8787` | edge | port |',
  '| `BROKER_DRAIN_SECONDS` | `130` | broker | drain bound |',
  '| `BROKER_URL` | the brokers | edge | brokers |',
  '',
  '## Next',
  '',
].join('\n');

describe('headingSlug and anchorsOf', () => {
  it('make the anchors GitHub makes of headings', () => {
    expect(headingSlug('Stopping a broker: the drain')).toBe('stopping-a-broker-the-drain');
    expect(headingSlug('`wrangler dev` beside `npm start`')).toBe('wrangler-dev-beside-npm-start');
    expect(headingSlug("A platform's brokers")).toBe('a-platforms-brokers');
    expect(headingSlug('Destructive calls: `confirm`')).toBe('destructive-calls-confirm');
    expect(headingSlug('Idempotency-Key and X-Request-Outcome')).toBe('idempotency-key-and-x-request-outcome');
    expect(headingSlug('The manager account: rights and allowed addresses')).toBe(
      'the-manager-account-rights-and-allowed-addresses',
    );
    expect(headingSlug('[docs](x.md) and more')).toBe('docs-and-more');
  });

  it('numbers repeated headings and skips headings inside fenced code', () => {
    const anchors = anchorsOf(
      '# Title\n\n## Notes\n\n```sh\n# not a heading\n```\n\n## Notes\n\n<a name="kept"></a>\n',
    );
    expect([...anchors].sort()).toEqual(['kept', 'notes', 'notes-1', 'title']);
  });
});

describe('checkLinks', () => {
  it('names every relative link and anchor that does not resolve, with its file and line', () => {
    const problems = checkLinks(
      tree({
        'README.md':
          '# Top\n\nSee [ops](docs/ops.md#configuration), [the app](workers/app.ts) and [the api folder](workers/api/).\n' +
          'Broken: [gone](docs/gone.md), [no anchor](docs/ops.md#batch-reads)\nand [self](#top), [bad self](#nowhere), [web](https://example.com/x#y).\n',
        'docs/ops.md':
          '# Ops\n\n## Configuration\n\nBack to [the top](../README.md#top); [a line](../workers/app.ts#L3-L9), [no such anchor](../workers/app.ts#setup).\n',
      }),
    );
    expect(formatProblems(problems)).toBe(
      [
        'README.md:4: link docs/gone.md: docs/gone.md does not exist',
        'README.md:4: link docs/ops.md#batch-reads: docs/ops.md has no heading whose anchor is #batch-reads',
        'README.md:5: link #nowhere: README.md has no heading whose anchor is #nowhere',
        'docs/ops.md:5: link ../workers/app.ts#setup: workers/app.ts is not a Markdown file, so it has no anchor #setup',
      ].join('\n'),
    );
  });

  it('reads no link inside inline code or a fenced block, and links whose text spans lines', () => {
    const problems = checkLinks(
      tree({
        'a.md': '# A\n\n`[x](nowhere.md)` and\n\n```md\n[y](nowhere.md)\n```\n\n[two\nlines](missing.md)\n',
      }),
    );
    expect(formatProblems(problems)).toBe('a.md:9: link missing.md: missing.md does not exist');
  });
});

describe('checkNpmRuns', () => {
  it('names every npm run X that package.json has no script for', () => {
    const problems = checkNpmRuns(
      tree({
        'a.md':
          'Run `npm start`, then `npm run drill:failover`.\n\n```sh\nnpm run drill:failover -- --x\nnpm run failover\n```\n',
      }),
    );
    expect(formatProblems(problems)).toBe('a.md:5: npm run failover: package.json has no script "failover"');
  });
});

describe('checkVariables', () => {
  it("names a variable no process declares, and leaves alone tools', constants' and other programs' names", () => {
    const problems = checkVariables(
      tree({
        'docs/operating.md': TABLE,
        'a.md':
          'Set `BROKER_URL` and `BROKER_TIMEOUT_SECONDS`; `DRILL_WRITERS` (8) shapes the drill;\n' +
          '`REGISTRY_MIGRATIONS` is a constant, `NODE_OPTIONS` and `RET_ERR_NOTMAIN` are not ours.\n\n```sh\nBROKER_WAIT=1 npm start\n```\n',
      }),
    );
    expect(formatProblems(problems)).toBe(
      [
        'a.md:1: BROKER_TIMEOUT_SECONDS is not declared in shared/environment.ts (nor read by a bench, drill or test, nor a constant of the code)',
        'a.md:5: BROKER_WAIT is not declared in shared/environment.ts (nor read by a bench, drill or test, nor a constant of the code)',
      ].join('\n'),
    );
  });

  it('names a declared variable missing from the configuration table, and a row no process declares', () => {
    const table = TABLE.replace('| `PORT` | `8787` | edge | port |', '| `PORTS` | `1` | edge | ports |');
    const problems = checkVariables(tree({ 'docs/operating.md': table }));
    expect(formatProblems(problems)).toBe(
      [
        'docs/operating.md:1: PORT is declared in shared/environment.ts but is no row of the configuration table',
        'docs/operating.md:7: PORTS is a row of the configuration table but is not declared in shared/environment.ts',
      ].join('\n'),
    );
  });

  it('names a default stated otherwise than the code has it, in prose or in the table', () => {
    const table = TABLE.replace('| `BROKER_DRAIN_SECONDS` | `130` |', '| `BROKER_DRAIN_SECONDS` | `120` |');
    const problems = checkVariables(
      tree({
        'docs/operating.md': table,
        'a.md':
          'Drains end within `BROKER_DRAIN_SECONDS` (120 s), `BROKER_DRAIN_SECONDS` (130) or `BROKER_DRAIN_SECONDS` (1 to 3600).\n',
      }),
    );
    expect(formatProblems(problems)).toBe(
      [
        'a.md:1: BROKER_DRAIN_SECONDS (120 s): its default is 130 (shared/environment.ts)',
        "docs/operating.md:8: BROKER_DRAIN_SECONDS's default is given as 120; shared/environment.ts has 130",
      ].join('\n'),
    );
  });
});

describe('checkPaths', () => {
  it('names every backticked repository path that does not exist', () => {
    const problems = checkPaths(
      tree({
        'docs/a.md':
          'The app is `workers/app.ts` (and `workers/api/`, `workers/*.ts`, `workers/<folder>/trace.ts`), tested in `app.test.ts`;\n' +
          'its trace in `trace.ts`; the broken world in `broken/world.ts`; `workers/gone.ts` and `lost.ts` are not;\n' +
          'nor are `ctx.storage.sql`, `/api/v2/x.json`, `$DATA_DIR/edge/`, `.data/signing-key.json` or `https://x/y.ts` paths here; `../README.md` is not there either.\n',
      }),
      new Set(['.data']),
    );
    expect(formatProblems(problems)).toBe(
      [
        'docs/a.md:1: app.test.ts: no file of the repository has this name',
        'docs/a.md:2: workers/gone.ts does not exist (from the root or from docs/)',
        'docs/a.md:2: lost.ts: no file of the repository has this name',
        'docs/a.md:3: ../README.md does not exist (from the root or from docs/)',
      ].join('\n'),
    );
  });
});

describe('checkFigures', () => {
  const figures: Figure[] = [
    {
      name: "a scale-sized platform's heap",
      value: '313',
      phrases: [{ phrase: '{} MB per scale-sized platform', files: ['docs/capacity.md', 'README.md'] }],
    },
  ];

  it('names a doc stating a figure otherwise, and a doc that should state it and does not', () => {
    const problems = checkFigures(
      tree({
        'docs/capacity.md': 'A broker holds 313 MB per scale-sized platform.\n',
        'README.md': 'About\n315 MB per\nscale-sized platform.\n',
        'docs/deploying.md': 'Size it: 300 MB per scale-sized platform.\n',
        'docs/perf/2026-11-27-old.md': 'Then: 595 MB per scale-sized platform.\n',
      }),
      figures,
    );
    expect(formatProblems(problems)).toBe(
      [
        `README.md:1: figure "a scale-sized platform's heap": "313 MB per scale-sized platform" is not stated here`,
        `README.md:2: figure "a scale-sized platform's heap" is 313, stated here as 315`,
        `docs/deploying.md:1: figure "a scale-sized platform's heap" is 313, stated here as 300`,
      ].join('\n'),
    );
  });

  it('passes when every statement agrees', () => {
    const problems = checkFigures(
      tree({
        'docs/capacity.md': '313 MB per scale-sized platform',
        'README.md': 'about 313 MB per scale-sized platform',
      }),
      figures,
    );
    expect(problems).toEqual([]);
  });
});

describe('the repository', () => {
  it('has docs that agree with the code', () => {
    const { tree: real, ignored } = loadTree(ROOT);
    const problems = checkDocs(real, ignored);
    expect(formatProblems(problems)).toBe('');
    expect(real.markdown.has('docs/operating.md')).toBe(true);
    expect(real.declared.get('TERMINAL_PORT')).toBe(8788);
  });
});
