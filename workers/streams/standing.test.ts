import type { ClientStanding } from '../registry/records.js';
import { describe, expect, it } from 'vitest';
import { recheckMs, streamEnd, type RegistryView, type StreamCaller } from './standing.js';

const ORG = '0a000000-0000-4000-8000-00000000000a';
const OTHER = '0b000000-0000-4000-8000-00000000000b';
const NOW = 1_800_000_000_000;
const caller: StreamCaller = { clientId: 'terminal', organizationId: ORG, expiresAt: NOW + 60_000 };
const standing: ClientStanding = {
  clientId: 'terminal',
  organizationId: ORG,
  disabled: false,
  scopes: ['webapi'],
  allowedNetworks: [],
};
const view = (over: Partial<RegistryView> = {}): RegistryView => ({
  standing,
  platformOrganization: ORG,
  externalClients: false,
  ...over,
});

describe('streamEnd', () => {
  it('lets a stream of a standing client on its own platform go on until the token expires', () => {
    expect(streamEnd(caller, NOW, view())).toBeNull();
    expect(streamEnd(caller, caller.expiresAt - 1, view())).toBeNull();
    expect(streamEnd(caller, caller.expiresAt, view())).toEqual({
      code: 'TokenExpired',
      message: 'the access token expired: reconnect with a new token',
      reconnect: true,
    });
  });

  it('ends the stream of a disabled, removed or moved client, with no reconnect', () => {
    const revoked = {
      code: 'ClientRevoked',
      message: 'the client is disabled or no longer registered',
      reconnect: false,
    };
    expect(streamEnd(caller, NOW, view({ standing: { ...standing, disabled: true } }))).toEqual(revoked);
    expect(streamEnd(caller, NOW, view({ standing: null }))).toEqual(revoked);
    expect(streamEnd(caller, NOW, view({ standing: { ...standing, organizationId: OTHER } }))).toEqual(revoked);
  });

  it("keeps an external provider's unregistered client, but not a registered one that is disabled", () => {
    expect(streamEnd(caller, NOW, view({ standing: null, externalClients: true }))).toBeNull();
    expect(
      streamEnd(caller, NOW, view({ standing: { ...standing, disabled: true }, externalClients: true }))?.code,
    ).toBe('ClientRevoked');
  });

  it('ends the stream of a client that no longer holds the read scope', () => {
    expect(streamEnd(caller, NOW, view({ standing: { ...standing, scopes: [] } }))).toEqual({
      code: 'ScopeRemoved',
      message: 'the client no longer holds the webapi scope the streams need',
      reconnect: false,
    });
  });

  it('ends the stream of a client whose allowed networks no longer hold the address it connected from', () => {
    const from = { ...caller, address: '203.0.113.7' };
    const networks = (...allowedNetworks: string[]) => view({ standing: { ...standing, allowedNetworks } });
    expect(streamEnd(from, NOW, networks('203.0.113.0/24'))).toBeNull();
    expect(streamEnd(from, NOW, networks('2001:db8::/32', '203.0.113.7/32'))).toBeNull();
    expect(streamEnd(from, NOW, networks())).toBeNull();
    expect(streamEnd(from, NOW, networks('198.51.100.0/24'))).toEqual({
      code: 'SourceNotAllowed',
      message: 'client terminal may be used only from its allowed networks, and this request comes from 203.0.113.7',
      reconnect: false,
    });
    // A stream whose source was not known (opened on the local edge's socket) is outside every list.
    expect(streamEnd(caller, NOW, networks('203.0.113.0/24'))?.code).toBe('SourceNotAllowed');
  });

  it('ends every stream of a platform removed or moved to another organization, whatever the case of the ids', () => {
    const gone = {
      code: 'PlatformRemoved',
      message: 'the trade platform is no longer registered to this organization',
      reconnect: false,
    };
    expect(streamEnd(caller, NOW, view({ platformOrganization: null }))).toEqual(gone);
    expect(streamEnd(caller, NOW, view({ platformOrganization: OTHER }))).toEqual(gone);
    expect(streamEnd({ ...caller, organizationId: ORG.toUpperCase() }, NOW, view())).toBeNull();
  });

  it('checks an expired token before anything else: its client may reconnect with a new one', () => {
    expect(streamEnd(caller, caller.expiresAt + 1, view({ standing: null, platformOrganization: null }))?.code).toBe(
      'TokenExpired',
    );
  });
});

describe('recheckMs', () => {
  it('is the registry cache time, at least a second', () => {
    expect(recheckMs(5)).toBe(5000);
    expect(recheckMs(1.5)).toBe(1500);
    expect(recheckMs(0)).toBe(1000);
    expect(recheckMs(0.2)).toBe(1000);
  });
});
