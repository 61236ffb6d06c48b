/**
 * The operator views (deploy/grafana/gateway.json, deploy/prometheus/gateway-rules.yml) against a running stack: every
 * metric an expression names is on the /metrics of a broker or of the edge, and every expression parses. With
 * `promtool` on the PATH (Debian's `prometheus` package) the rules and the dashboard's expressions are also checked
 * by Prometheus's own parser; without it, by the structural check below. The edge's /metrics answers only a bearer of
 * METRICS_TOKEN, and its counts follow what was sent: a keyed write and its retry, a token refused 429, an SSE client.
 */
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import yaml from 'js-yaml';
import { brokerMetric, stackForFile } from './support.js';

const ROOT = resolve(import.meta.dirname, '../..');
const METRICS_TOKEN = 'operator-views-test-token';
const setup = stackForFile({ edgeVars: { METRICS_TOKEN, TOKEN_RATE_LIMIT: '3' } });

interface Panel {
  title: string;
  type: string;
  id: number;
  targets?: Array<{ expr: string; refId: string }>;
  gridPos: object;
}
const dashboard = JSON.parse(readFileSync(join(ROOT, 'deploy/grafana/gateway.json'), 'utf8')) as {
  uid: string;
  panels: Panel[];
};
const rules = yaml.load(readFileSync(join(ROOT, 'deploy/prometheus/gateway-rules.yml'), 'utf8')) as {
  groups: Array<{
    name: string;
    rules: Array<{ alert: string; expr: string; for?: string; labels: { severity: string } }>;
  }>;
};
/** Grafana's interval variable, as Prometheus would get it. */
const resolved = (expr: string) => expr.replaceAll('$__rate_interval', '5m');
const panelExprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => resolved(t.expr)));
const ruleExprs = rules.groups.flatMap((g) => g.rules.map((r) => r.expr));

const FUNCTIONS = new Set([
  'sum',
  'max',
  'min',
  'avg',
  'count',
  'topk',
  'rate',
  'increase',
  'histogram_quantile',
  'predict_linear',
  'deriv',
]);
const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
]);
/** Series Prometheus makes itself for every target (not on any /metrics). */
const SYNTHETIC = new Set(['up']);

/**
 * The metric names of a PromQL expression, after checking its structure: brackets balanced, every `{}` a list of
 * label matchers, every `[]` a duration, every call a known function, nothing else but names, numbers and operators.
 */
function metricNames(expr: string): string[] {
  let depth = 0;
  for (const ch of expr.replace(/"(?:[^"\\]|\\.)*"/g, '""')) {
    if ('([{'.includes(ch)) depth++;
    if (')]}'.includes(ch)) depth--;
    expect(depth, expr).toBeGreaterThanOrEqual(0);
  }
  expect(depth, expr).toBe(0);
  for (const [, matchers] of expr.matchAll(/\{([^}]*)\}/g)) {
    for (const matcher of matchers.split(/,(?=(?:[^"]*"[^"]*")*[^"]*$)/)) {
      expect(matcher, expr).toMatch(/^\s*[a-zA-Z_]\w*\s*(=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"\s*$/);
    }
  }
  for (const [, range] of expr.matchAll(/\[([^\]]*)\]/g)) expect(range, expr).toMatch(/^\d+[smhdwy]$/);
  const bare = expr
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, ' ');
  const names: string[] = [];
  for (const [token, name, call] of bare.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    if (call) {
      expect(FUNCTIONS.has(name), `${name} in ${expr}`).toBe(true);
    } else if (!KEYWORDS.has(name)) {
      names.push(name);
    }
    void token;
  }
  expect(bare.replace(/([a-zA-Z_:][a-zA-Z0-9_:]*|\d+(\.\d+)?(e\d+)?|[-+*/^()<>=!,\s]|""|)/g, ''), expr).toBe('');
  return names;
}

/** The names a /metrics text declares (a histogram's `_bucket`, `_sum` and `_count` series included). */
function declared(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name);
    if (type === 'histogram' || type === 'summary')
      for (const s of ['_bucket', '_sum', '_count']) names.add(`${name}${s}`);
  }
  return names;
}

const edgeMetrics = (token = METRICS_TOKEN) =>
  fetch(`${setup.client.stack.edgeUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } });
/** A sample's value in an exposition text; null when absent. */
const sample = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : null;
};

describe('the operator views', () => {
  it('name only metrics that the brokers and the edge expose', async () => {
    const c = setup.client;
    const broker = await (await fetch(`${c.stack.brokerUrl}/metrics`)).text();
    const edge = await (await edgeMetrics()).text();
    const exposed = new Set([...declared(broker), ...declared(edge)]);
    const named = new Set([...panelExprs, ...ruleExprs].flatMap(metricNames));
    expect([...named].filter((n) => !exposed.has(n) && !SYNTHETIC.has(n))).toEqual([]);
    // Both processes are read: the views are not of one alone.
    expect([...named].filter((n) => n.startsWith('edge_')).length).toBeGreaterThanOrEqual(5);
    expect([...named].filter((n) => n.startsWith('broker_')).length).toBeGreaterThanOrEqual(10);
    expect(await brokerMetric(c.stack.brokerUrl, 'broker_session_up', { platform: c.stack.platforms.pf4 })).toBe(1);
  });

  it('parse: the dashboard as Grafana JSON, the rules as Prometheus rule groups (promtool when installed)', () => {
    expect(dashboard.uid).toBe('trade-platform-gateway');
    expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
    expect(dashboard.panels.filter((p) => p.type !== 'row').every((p) => (p.targets ?? []).length > 0)).toBe(true);
    expect(rules.groups.flatMap((g) => g.rules.map((r) => r.alert)).sort()).toEqual([
      'BrokerDown',
      'BrokerErrorRatioHigh',
      'BrokerMemoryClimbing',
      'EdgeErrorRatioHigh',
      'ManagerSessionFlapping',
      'ResyncsRepeating',
      'TradePlatformDown',
      'WritesWithUnknownOutcome',
    ]);
    expect(rules.groups.flatMap((g) => g.rules).every((r) => ['warning', 'critical'].includes(r.labels.severity))).toBe(
      true,
    );

    let promtool: string | null = null;
    try {
      promtool = execFileSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' }).trim() || null;
    } catch {
      /* not installed */
    }
    if (!promtool) return;
    const dir = mkdtempSync(join(tmpdir(), 'operator-views-'));
    try {
      // The dashboard's expressions as recording rules: promtool parses each with Prometheus's own parser.
      const recording = {
        groups: [{ name: 'dashboard', rules: panelExprs.map((expr, i) => ({ record: `dashboard:expr${i}`, expr })) }],
      };
      writeFileSync(join(dir, 'dashboard.yml'), yaml.dump(recording));
      const out = execFileSync(
        promtool,
        ['check', 'rules', join(ROOT, 'deploy/prometheus/gateway-rules.yml'), join(dir, 'dashboard.yml')],
        { encoding: 'utf8' },
      );
      expect(out).toContain(`SUCCESS: ${ruleExprs.length} rules found`);
      expect(out).toContain(`SUCCESS: ${panelExprs.length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the edge's /metrics answers only METRICS_TOKEN, and counts keyed writes, 429 refusals and stream clients", async () => {
    const c = setup.client;
    expect((await edgeMetrics('wrong')).status).toBe(401);
    expect(
      (await fetch(`${c.stack.edgeUrl}/metrics`, { headers: { authorization: `Bearer ${c.token}` } })).status,
    ).toBe(401);

    const key = `operator-views-${Date.now()}`;
    const body = { login: 0, group: 'demo\\forex', name: 'Operator Views' };
    const first = await c.post(`${c.v2pf4}/UserRecordNew`, body, { 'idempotency-key': key });
    const again = await c.post(`${c.v2pf4}/UserRecordNew`, body, { 'idempotency-key': key });
    expect(again.body).toEqual(first.body);
    // TOKEN_RATE_LIMIT is 3 and the stack took one: the fourth token of the window is refused.
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push(
        (
          await fetch(`${c.stack.edgeUrl}/connect/token`, {
            method: 'POST',
            body: new URLSearchParams({
              grant_type: 'client_credentials',
              client_id: c.stack.clientId,
              client_secret: c.stack.clientSecret,
            }),
          })
        ).status,
      );
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(1);

    const abort = new AbortController();
    const sse = await fetch(`${c.stack.edgeUrl}${c.v2pf4}/Stream?ticks=EURUSD`, {
      headers: { authorization: `Bearer ${c.token}` },
      signal: abort.signal,
    });
    await sse.body!.getReader().read();
    try {
      const text = await (await edgeMetrics()).text();
      expect(sample(text, 'edge_idempotent_writes_total{result="first"}')).toBe(1);
      expect(sample(text, 'edge_idempotent_writes_total{result="replayed"}')).toBe(1);
      expect(sample(text, 'edge_idempotent_writes_total{result="unknown"}')).toBe(0);
      expect(sample(text, 'edge_rate_limited_total{operation="POST /connect/token"}')).toBe(
        statuses.filter((s) => s === 429).length,
      );
      expect(sample(text, `edge_stream_clients{platform="${c.stack.platforms.pf4}",region="weur",kind="sse"}`)).toBe(1);
      expect(sample(text, `edge_stream_clients{platform="${c.stack.platforms.pf5}",region="weur",kind="hub"}`)).toBe(0);
      expect(sample(text, 'edge_requests_total{operation="v2.PF4.UserRecordNew",outcome="ok"}')).toBe(2);
      expect(sample(text, 'edge_request_duration_seconds_count{operation="v2.PF4.UserRecordNew"}')).toBe(2);
    } finally {
      abort.abort();
    }
  });
});
