/**
 * The supervisor of the stack's child processes (launcher/supervisor.ts) on stand-in children: a process that exits
 * is started again after a doubling delay, each exit and restart logged; a crash loop is given up with a message;
 * a closed supervisor restarts nothing; a drill's own restart goes ahead of the backoff; a drill waiting for the next
 * start is told of it. `signalBroker` (launcher/brokerSignal.ts) on a stack of stand-in brokers.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { Supervisor, type ChildLike } from './supervisor.js';
import { signalBroker } from './brokerSignal.js';
import type { Service, Stack } from './stack.js';

class FakeChild extends EventEmitter implements ChildLike {
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  constructor(readonly pid: number) {
    super();
  }
  kill(signal: NodeJS.Signals = 'SIGKILL') {
    this.signalCode = signal;
    this.emit('exit', null, signal);
  }
  crash(code = 1) {
    this.exitCode = code;
    this.emit('exit', code, null);
  }
}

interface FakeService {
  port: number;
  child: FakeChild;
}

function harness(options: ConstructorParameters<typeof Supervisor>[5] = {}, failStarts = 0) {
  const lines: string[] = [];
  let pid = 100;
  let failures = failStarts;
  const started: FakeService[] = [];
  const named: FakeService[] = [];
  const first: FakeService = { port: 4000, child: new FakeChild(pid++) };
  const supervisor = new Supervisor<FakeService>(
    'broker',
    first,
    () => {
      if (failures > 0) {
        failures--;
        return Promise.reject(new Error('broker: port 4000 is in use'));
      }
      const service = { port: 4000, child: new FakeChild(pid++) };
      started.push(service);
      return Promise.resolve(service);
    },
    (line) => lines.push(line),
    (s) => named.push(s),
    { initialDelayMs: 1, maxDelayMs: 8, windowMs: 60_000, ...options },
  );
  return { supervisor, first, started, named, lines };
}

const until = async (condition: () => boolean) => {
  for (let i = 0; i < 2000 && !condition(); i++) await new Promise((r) => setTimeout(r, 1));
  expect(condition()).toBe(true);
};

describe('Supervisor', () => {
  it('starts a killed process again on its port, doubling the delay with each exit in the window, one line each', async () => {
    const h = harness({ maxRestarts: 10 });
    h.first.child.kill();
    await until(() => h.started.length === 1);
    expect(h.supervisor.service).toBe(h.started[0]);
    expect(h.named).toEqual([h.started[0]]);
    for (let i = 0; i < 4; i++) {
      h.supervisor.service.child.crash(1);
      await until(() => h.started.length === i + 2);
    }
    const exits = h.lines.filter((l) => l.includes('restarting it in'));
    expect(exits.map((l) => l.match(/restarting it in (\d+ ms)/)![1])).toEqual([
      '1 ms',
      '2 ms',
      '4 ms',
      '8 ms',
      '8 ms',
    ]);
    expect(exits[0]).toContain('broker exited (signal SIGKILL)');
    expect(exits[1]).toContain('broker exited (code 1)');
    expect(h.lines.filter((l) => l.includes('restarted on port 4000'))).toHaveLength(5);
    expect(h.lines.at(-1)).toBe(`stack: broker restarted on port 4000 (pid ${h.supervisor.service.child.pid})`);
    expect(h.supervisor.restarts).toBe(5);
  });

  it('gives up on a crash loop with a message naming the process and the count, and restarts it no more', async () => {
    const gaveUp: string[] = [];
    // On a fake clock, so that "no more" is every timer it set having run, not a wait.
    vi.useFakeTimers();
    try {
      const h = harness({ maxRestarts: 3, onGiveUp: (m) => gaveUp.push(m) });
      h.first.child.crash(1);
      for (let i = 0; i < 3; i++) {
        await vi.runAllTimersAsync();
        expect(h.started).toHaveLength(i + 1);
        h.supervisor.service.child.crash(1);
      }
      expect(gaveUp).toHaveLength(1);
      expect(gaveUp[0]).toMatch(
        /^broker exited \(code 1\): it ended 4 times within 60 s, a crash loop; not restarting it again/,
      );
      expect(h.lines.at(-1)).toBe(`stack: ${gaveUp[0]}`);
      expect(vi.getTimerCount()).toBe(0);
      await vi.runAllTimersAsync();
      expect(h.started).toHaveLength(3);
    } finally {
      vi.useRealTimers();
    }
  });

  it('counts a failed start as an exit and tries again after a longer delay', async () => {
    const h = harness({ maxRestarts: 5 }, 2);
    h.first.child.kill();
    await until(() => h.started.length === 1);
    const failed = h.lines.filter((l) => l.includes('failed to start again'));
    expect(failed).toHaveLength(2);
    expect(failed[0]).toContain('broker failed to start again (broker: port 4000 is in use); restarting it in 2 ms');
    expect(failed[1]).toContain('restarting it in 4 ms');
  });

  it('restarts nothing once closed', async () => {
    vi.useFakeTimers();
    try {
      const h = harness();
      await h.supervisor.close();
      h.first.child.kill();
      expect(vi.getTimerCount()).toBe(0);
      await vi.runAllTimersAsync();
      expect(h.started).toHaveLength(0);
      expect(h.lines).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('restarts at once when asked (a drill that killed the process), once, without waiting for the backoff', async () => {
    const h = harness({ initialDelayMs: 60_000, maxDelayMs: 60_000 });
    h.first.child.kill();
    const [a, b] = await Promise.all([h.supervisor.restartNow(), h.supervisor.restartNow()]);
    expect(a).toBe(b);
    expect(h.started).toEqual([a]);
    expect(h.supervisor.service).toBe(a);
    await h.supervisor.close();
  });

  it('tells whoever waits of the next process it starts, after the backoff or at once', async () => {
    const h = harness();
    const next = h.supervisor.nextStart();
    h.first.child.crash(1);
    expect(await next).toBe(h.started[0]);
    const again = h.supervisor.nextStart();
    h.supervisor.service.child.kill();
    const now = await h.supervisor.restartNow();
    expect(await again).toBe(now);
    expect(h.started).toEqual([h.started[0], now]);
    await h.supervisor.close();
  });
});

describe('signalBroker', () => {
  /** A stand-in stack of two brokers, the second supervised by `h`. */
  function fleet() {
    const h = harness();
    const first = { name: 'broker', port: 3999, child: new FakeChild(7) };
    const brokers = [first, h.first] as unknown as Service[];
    const restartBroker = (i: number) => {
      brokers[i] = { ...brokers[i], child: new FakeChild(99) } as unknown as Service;
      return Promise.resolve(brokers[i]);
    };
    const stack = { brokers, restartBroker, supervisors: { brokers: [undefined, h.supervisor] } } as unknown as Pick<
      Stack,
      'brokers' | 'supervisors' | 'restartBroker'
    >;
    return { h, stack, brokers };
  }

  it('waits for a killed supervised broker to exit and to be started again by its supervisor', async () => {
    const { h, stack } = fleet();
    const outcome = await signalBroker(stack, 1, 'SIGKILL');
    expect(outcome).toMatchObject({ signal: 'SIGKILL', exited: 'signal SIGKILL', restarted: h.started[0] });
    expect(outcome.restartMs).toBeGreaterThanOrEqual(outcome.exitMs!);
    await h.supervisor.close();
  });

  it('leaves a broker down when asked, restarts it at once when asked, and only sends a stop or a resume', async () => {
    const { h, stack, brokers } = fleet();
    const down = await signalBroker(stack, 1, 'SIGTERM', { restart: 'none' });
    expect(down).toMatchObject({ exited: 'signal SIGTERM', restarted: null, restartMs: null });
    const first = brokers[0].child as unknown as FakeChild;
    const now = await signalBroker(stack, 0, 'SIGKILL', { restart: 'now' });
    expect(first.signalCode).toBe('SIGKILL');
    expect(now.restarted?.child.pid).toBe(99);
    const stopped = await signalBroker(stack, 0, 'SIGSTOP');
    expect(stopped).toEqual({ signal: 'SIGSTOP', exited: null, exitMs: null, restarted: null, restartMs: null });
    await expect(signalBroker(stack, 2, 'SIGKILL')).rejects.toThrow('no broker 2: the stack runs 2');
    await expect(signalBroker(stack, 0, 'SIGKILL', { restart: 'supervisor' })).rejects.toThrow('does not supervise');
    await h.supervisor.close();
  });
});
