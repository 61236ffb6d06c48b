/**
 * A set of listeners of one kind, for a source that hands each of its events to whoever listens: each listener is
 * added once and removed by the function `listen` returns, and is called in the order it was added.
 */
export class ListenerSet<L> {
  private readonly listeners = new Set<L>();

  /** Adds a listener; returns the function that removes it. */
  listen(listener: L): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  get size(): number {
    return this.listeners.size;
  }

  /** Calls `call` with each listener, in the order they were added; one removed meanwhile is not called. */
  each(call: (listener: L) => void): void {
    for (const listener of this.listeners) call(listener);
  }

  /** Removes every listener and returns them, in the order they were added. */
  clear(): L[] {
    const all = [...this.listeners];
    this.listeners.clear();
    return all;
  }
}
