/**
 * Seeded pseudo-random numbers for the simulated worlds. Everything the simulator invents (accounts, trades, the
 * quote walk) draws from one of these, so the same seed always builds the same world.
 */

/** mulberry32: tiny, fast and good enough for demo data; not for anything security-related. */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [min, max], both ends included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** Float in [min, max). */
  range(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  /** Approximately normal(0, 1), from the sum of uniforms; the walk only needs a bell shape. */
  gauss(): number {
    return this.next() + this.next() + this.next() + this.next() - 2;
  }
}

/** Derives an independent stream for one purpose from the server seed, so adding draws to one purpose (say the
 * feed) does not shift the accounts another purpose generates. */
export function deriveSeed(seed: number, purpose: string): number {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  for (let i = 0; i < purpose.length; i++) {
    h = Math.imul(h ^ purpose.charCodeAt(i), 0x01000193) >>> 0;
  }
  return h;
}
