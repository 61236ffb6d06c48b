/** The listener set: order of calls, removal (also during a call), and clearing. */
import { describe, expect, it } from 'vitest';
import { ListenerSet } from './listenerSet.js';

describe('a listener set', () => {
  it('calls its listeners in the order they were added, each once', () => {
    const set = new ListenerSet<(n: number) => void>();
    const seen: string[] = [];
    const a = (n: number) => seen.push(`a${n}`);
    set.listen(a);
    set.listen((n) => seen.push(`b${n}`));
    set.listen(a);
    expect(set.size).toBe(2);
    set.each((l) => l(1));
    expect(seen).toEqual(['a1', 'b1']);
  });

  it('stops calling a listener once the function listen returned is called', () => {
    const set = new ListenerSet<() => void>();
    const seen: string[] = [];
    const stop = set.listen(() => seen.push('a'));
    set.listen(() => seen.push('b'));
    stop();
    stop();
    expect(set.size).toBe(1);
    set.each((l) => l());
    expect(seen).toEqual(['b']);
  });

  it('does not call a listener removed by an earlier one during the same round', () => {
    const set = new ListenerSet<() => void>();
    const seen: string[] = [];
    let stopB = () => {};
    set.listen(() => {
      seen.push('a');
      stopB();
    });
    stopB = set.listen(() => seen.push('b'));
    set.each((l) => l());
    expect(seen).toEqual(['a']);
  });

  it('clears itself and hands back every listener it had, in order', () => {
    const set = new ListenerSet<string>();
    set.listen('x');
    set.listen('y');
    expect(set.clear()).toEqual(['x', 'y']);
    expect(set.size).toBe(0);
    const seen: string[] = [];
    set.each((l) => seen.push(l));
    expect(seen).toEqual([]);
  });
});
