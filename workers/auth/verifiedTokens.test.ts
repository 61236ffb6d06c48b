/**
 * Verified tokens remembered per isolate: a repeat presentation skips the signature check, so the memory itself must
 * refuse a token outside its lifetime (exp and nbf, with the clock tolerance). The clock is faked.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { rememberedPayload, rememberPayload } from './verifiedTokens.js';

const T0 = Date.UTC(2026, 0, 5, 12, 0, 0);
const seconds = (ms: number) => Math.floor(ms / 1000);
const TOLERANCE = 60;
let serial = 0;
/** A token string no other test uses (the memory is module-wide). */
const freshToken = () => `header.payload-${++serial}.signature`;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

describe('remembered verified tokens', () => {
  it('answer a remembered token until its exp plus the tolerance, and never after', () => {
    const token = freshToken();
    const payload = { sub: 'client-a', exp: seconds(T0) + 300 };
    rememberPayload('scope', token, payload);
    expect(rememberedPayload('scope', token, TOLERANCE)).toEqual(payload);
    vi.setSystemTime(T0 + 359_000); // exp + 59 s: still inside the tolerance
    expect(rememberedPayload('scope', token, TOLERANCE)).toEqual(payload);
    vi.setSystemTime(T0 + 360_000); // exp + 60 s: expired
    expect(rememberedPayload('scope', token, TOLERANCE)).toBeUndefined();
    // Forgotten, not just hidden: a clock that steps back does not bring it back.
    vi.setSystemTime(T0);
    expect(rememberedPayload('scope', token, TOLERANCE)).toBeUndefined();
  });

  it("expire by the token's own exp with no tolerance given", () => {
    const token = freshToken();
    rememberPayload('scope', token, { exp: seconds(T0) + 10 });
    vi.setSystemTime(T0 + 9_999);
    expect(rememberedPayload('scope', token, 0)).toBeDefined();
    vi.setSystemTime(T0 + 10_000);
    expect(rememberedPayload('scope', token, 0)).toBeUndefined();
  });

  it('refuse a token not yet valid, and one without exp', () => {
    const early = freshToken();
    rememberPayload('scope', early, { exp: seconds(T0) + 600, nbf: seconds(T0) + 120 });
    expect(rememberedPayload('scope', early, TOLERANCE)).toBeUndefined();
    vi.setSystemTime(T0 + 61_000); // nbf - 59 s: inside the tolerance
    expect(rememberedPayload('scope', early, TOLERANCE)).toMatchObject({ nbf: seconds(T0) + 120 });

    // nbf minus the tolerance exactly now: valid from this second on.
    const edge = freshToken();
    rememberPayload('scope', edge, { exp: seconds(T0) + 600, nbf: seconds(T0) + 60 });
    vi.setSystemTime(T0);
    expect(rememberedPayload('scope', edge, TOLERANCE)).toMatchObject({ nbf: seconds(T0) + 60 });
    vi.setSystemTime(T0 - 1);
    expect(rememberedPayload('scope', edge, TOLERANCE)).toBeUndefined();

    const endless = freshToken();
    rememberPayload('scope', endless, { sub: 'no exp' });
    expect(rememberedPayload('scope', endless, TOLERANCE)).toBeUndefined();
  });

  it('are kept apart by issuer and audience scope', () => {
    const token = freshToken();
    rememberPayload('local issuer webapi', token, { exp: seconds(T0) + 300 });
    expect(rememberedPayload('local issuer other-audience', token, TOLERANCE)).toBeUndefined();
    expect(rememberedPayload('local issuer webapi', token, TOLERANCE)).toBeDefined();
  });

  it('keep at most 10 000 tokens, forgetting the oldest first', () => {
    // 10 000 fresh tokens push out whatever earlier tests left, so the memory then holds exactly these.
    const fillers = Array.from({ length: 10_000 }, () => freshToken());
    for (const token of fillers) rememberPayload('bounded', token, { exp: seconds(T0) + 300 });
    expect(rememberedPayload('bounded', fillers[0], TOLERANCE)).toBeDefined();
    const newest = freshToken();
    rememberPayload('bounded', newest, { exp: seconds(T0) + 300 });
    expect(rememberedPayload('bounded', fillers[0], TOLERANCE)).toBeUndefined();
    expect(rememberedPayload('bounded', fillers[1], TOLERANCE)).toBeDefined();
    expect(rememberedPayload('bounded', newest, TOLERANCE)).toBeDefined();
  });
});
