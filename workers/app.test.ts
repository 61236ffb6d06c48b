/**
 * Reading out a refused request body (workers/app.ts `drainBody`): all of it up to the bound, nothing kept, the rest
 * left unread past the bound; a request without a body, or one whose body is already taken, is left as it is.
 */
import { describe, expect, it, vi } from 'vitest';
import { DRAIN_BODY_BYTES, drainBody } from './app.js';

// The app reaches the gateway's Durable Object classes; their base class is all that Node lacks.
vi.mock('cloudflare:workers', () => ({ DurableObject: class {} }));

/** A request whose body is `chunks` chunks of `size` bytes, counting what was pulled and whether it was cancelled. */
function streamed(chunks: number, size: number) {
  const seen = { pulled: 0, cancelled: false };
  let sent = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (sent === chunks) {
          controller.close();
          return;
        }
        sent++;
        seen.pulled += size;
        controller.enqueue(new Uint8Array(size));
      },
      cancel() {
        seen.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  const request = new Request('http://edge/x', { method: 'POST', body, duplex: 'half' } as RequestInit);
  return { request, seen };
}

describe('drainBody', () => {
  it('reads a body up to its bound to the end', async () => {
    const { request, seen } = streamed(8, 1000);
    await drainBody(request, 8000);
    expect(seen).toStrictEqual({ pulled: 8000, cancelled: false });
  });

  it('stops at the first chunk past the bound and cancels the rest', async () => {
    const { request, seen } = streamed(100, 1000);
    await drainBody(request, 4500);
    expect(seen).toStrictEqual({ pulled: 5000, cancelled: true });
  });

  it('reads 16 MiB at most by default', () => {
    expect(DRAIN_BODY_BYTES).toBe(16 * 1024 * 1024);
  });

  it('leaves a request without a body, and a body already taken, as they are', async () => {
    await expect(drainBody(new Request('http://edge/x'))).resolves.toBeUndefined();
    const { request, seen } = streamed(3, 10);
    const reader = request.body!.getReader();
    await expect(drainBody(request)).resolves.toBeUndefined();
    expect(seen.cancelled).toBe(false);
    reader.releaseLock();
  });
});
