/**
 * A configuration list kept in server order, as the manager interface exposes it: entries are addressed by position
 * for update, delete and shift (CfgUpdate*, CfgDelete*, CfgShift*), and optionally by a key (a feeder's name, a
 * manager's login) for the updates that carry no position. Every PF4 configuration section that is a list uses this
 * one class. Entries are replaced, never mutated, so a list handed out earlier stays as it was.
 */
import { CommandError } from './commandError.js';

export class OrderedList<T> {
  private items: T[];
  /** Position by key, rebuilt after a change: lookups by key are hot (a group per tick per account). */
  private positions: Map<string | number, number> | null = null;

  constructor(
    /** Names the list in error messages ("holiday", "feeder"). */
    readonly what: string,
    private readonly badCode: number,
    private readonly keyOf?: (item: T) => string | number,
    initial: readonly T[] = [],
  ) {
    this.items = [...initial];
  }

  get size(): number {
    return this.items.length;
  }

  /** The entries in order; a fresh array. */
  list(): T[] {
    return [...this.items];
  }

  at(pos: number): T {
    this.checkPos(pos);
    return this.items[pos];
  }

  find(key: string | number): T | undefined {
    const pos = this.indexOf(key);
    return pos < 0 ? undefined : this.items[pos];
  }

  indexOf(key: string | number): number {
    if (!this.keyOf) return -1;
    if (!this.positions) this.positions = new Map(this.items.map((item, pos) => [this.keyOf!(item), pos]));
    return this.positions.get(key) ?? -1;
  }

  /**
   * Writes an entry. With a position inside the list the entry there is replaced; a position equal to the size, or
   * -1, appends. Without a position a keyed list replaces the entry with the same key, else appends. A keyed list
   * refuses an entry whose key another position already holds.
   */
  upsert(item: T, pos?: number): { pos: number; added: boolean } {
    const keyPos = this.keyOf ? this.indexOf(this.keyOf(item)) : -1;
    let at = pos ?? keyPos;
    if (at === -1 || at === this.items.length) at = this.items.length;
    else this.checkPos(at);
    if (keyPos >= 0 && keyPos !== at) {
      throw new CommandError(
        this.badCode,
        `${this.what} ${String(this.keyOf!(item))} already exists at position ${keyPos}`,
      );
    }
    const added = at === this.items.length;
    const next = [...this.items];
    next[at] = item;
    this.items = next;
    this.positions = null;
    return { pos: at, added };
  }

  delete(pos: number): T {
    this.checkPos(pos);
    const next = [...this.items];
    const [removed] = next.splice(pos, 1);
    this.items = next;
    this.positions = null;
    return removed;
  }

  /** Moves the entry at `pos` by `shift` places (negative: towards the start); answers its new position. */
  shift(pos: number, shift: number): number {
    this.checkPos(pos);
    const to = pos + shift;
    if (!Number.isInteger(shift) || to < 0 || to >= this.items.length) {
      throw new CommandError(
        this.badCode,
        `cannot shift ${this.what} at position ${pos} by ${shift}: the list has ${this.items.length} entries`,
      );
    }
    const next = [...this.items];
    const [moved] = next.splice(pos, 1);
    next.splice(to, 0, moved);
    this.items = next;
    this.positions = null;
    return to;
  }

  private checkPos(pos: number): void {
    if (!Number.isInteger(pos) || pos < 0 || pos >= this.items.length) {
      throw new CommandError(
        this.badCode,
        `${this.what} position ${pos} is out of range (0..${this.items.length - 1})`,
      );
    }
  }
}
