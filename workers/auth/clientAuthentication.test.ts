/**
 * The client credentials a token request presents (RFC 6749 §2.3.1): client_secret_basic with form-urlencoded id and
 * secret, client_secret_post, never both, and every way a presentation is unusable.
 */
import { describe, expect, it } from 'vitest';
import { presentedCredentials } from './clientAuthentication.js';

const form = (fields: Record<string, string> = {}) => new URLSearchParams(fields);
const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const basic = (text: string) => `Basic ${b64(new TextEncoder().encode(text))}`;

describe('presented client credentials', () => {
  it('reads client_secret_post from the form, a value-less parameter counting as omitted', () => {
    expect(presentedCredentials(undefined, form({ client_id: 'client-a', client_secret: 's3cret' }))).toEqual({
      method: 'client_secret_post',
      clientId: 'client-a',
      clientSecret: 's3cret',
    });
    expect(presentedCredentials(undefined, form())).toEqual({ method: 'none' });
    expect(presentedCredentials(undefined, form({ client_id: '', client_secret: '' }))).toEqual({ method: 'none' });
    expect(presentedCredentials(undefined, form({ client_id: 'client-a' }))).toEqual({
      method: 'invalid',
      reason: 'incomplete',
      basic: false,
    });
    expect(presentedCredentials(undefined, form({ client_secret: 's3cret' }))).toEqual({
      method: 'invalid',
      reason: 'incomplete',
      basic: false,
    });
    expect(presentedCredentials(undefined, form({ client_id: 'client-a', client_secret: '' }))).toEqual({
      method: 'invalid',
      reason: 'incomplete',
      basic: false,
    });
  });

  it('reads client_secret_basic with form-decoded id and secret, the secret keeping later colons', () => {
    expect(presentedCredentials(basic('client-a:s3cret'), form())).toEqual({
      method: 'client_secret_basic',
      clientId: 'client-a',
      clientSecret: 's3cret',
    });
    expect(presentedCredentials(basic('my+client%3Aid:p%40ss+w%2Brd:more'), form())).toEqual({
      method: 'client_secret_basic',
      clientId: 'my client:id',
      clientSecret: 'p@ss w+rd:more',
    });
    expect(presentedCredentials(`  bAsIc   ${b64(new TextEncoder().encode('client-a:s'))}  `, form())).toEqual({
      method: 'client_secret_basic',
      clientId: 'client-a',
      clientSecret: 's',
    });
    // UTF-8 credentials; a byte order mark in front is not part of the id.
    expect(presentedCredentials(basic('clïent:sécret'), form())).toEqual({
      method: 'client_secret_basic',
      clientId: 'clïent',
      clientSecret: 'sécret',
    });
    expect(presentedCredentials(basic('\uFEFFclient-a:s'), form())).toEqual({
      method: 'client_secret_basic',
      clientId: 'client-a',
      clientSecret: 's',
    });
  });

  it("tolerates the Basic client's own id in the body, not another id nor a secret there", () => {
    expect(presentedCredentials(basic('client-a:s'), form({ client_id: 'client-a' }))).toEqual({
      method: 'client_secret_basic',
      clientId: 'client-a',
      clientSecret: 's',
    });
    expect(presentedCredentials(basic('client-a:s'), form({ client_id: 'client-b' }))).toEqual({
      method: 'invalid',
      reason: 'multiple',
      basic: true,
    });
    expect(presentedCredentials(basic('client-a:s'), form({ client_secret: 's' }))).toEqual({
      method: 'invalid',
      reason: 'multiple',
      basic: true,
    });
    expect(presentedCredentials(basic('client-a:s'), form({ client_id: 'client-a', client_secret: 's' }))).toEqual({
      method: 'invalid',
      reason: 'multiple',
      basic: true,
    });
  });

  it('calls another scheme malformed without a Basic challenge', () => {
    expect(presentedCredentials('Bearer abc', form())).toEqual({
      method: 'invalid',
      reason: 'malformed',
      basic: false,
    });
    expect(presentedCredentials('', form({ client_id: 'a', client_secret: 'b' }))).toEqual({
      method: 'invalid',
      reason: 'malformed',
      basic: false,
    });
    expect(presentedCredentials('Basically abc', form())).toEqual({
      method: 'invalid',
      reason: 'malformed',
      basic: false,
    });
  });

  it('calls a broken Basic credential malformed, with a Basic challenge', () => {
    const malformed = { method: 'invalid', reason: 'malformed', basic: true };
    const bytes = (...b: number[]) => `Basic ${b64(Uint8Array.from(b))}`;
    for (const authorization of [
      'Basic',
      'Basic   ',
      `${basic('a:b')} extra`,
      'Basic ***',
      'Basic YTpi!',
      'Basic !YTpi',
      'Basic YT=pi',
      'Basic Y',
      basic('no-colon'),
      basic(':secret'),
      basic('client:'),
      basic(':'),
      basic('client:%zz'),
      basic('%E0%A4%A:secret'),
      bytes(0x63, 0x3a, 0xff, 0xfe), // not UTF-8
    ]) {
      expect(presentedCredentials(authorization, form()), authorization).toEqual(malformed);
    }
    // Padding is allowed at the end only.
    expect(presentedCredentials(`Basic ${b64(new TextEncoder().encode('ab:c'))}`, form())).toMatchObject({
      method: 'client_secret_basic',
      clientId: 'ab',
    });
    expect(b64(new TextEncoder().encode('ab:c')).endsWith('=')).toBe(true);
  });
});
