/**
 * Stubs where they belong (workers/regions/objects.ts): the jurisdiction's namespace (one per binding and
 * jurisdiction), the region as the location hint, and ids kept by name per namespace.
 */
import { describe, expect, it } from 'vitest';
import { LOCAL_NO_JURISDICTIONS, MAX_IDS, namespaceIn, objectId, placedStub } from './objects.js';

/** A namespace double recording what it was asked: ids, restrictions and gets with their options. */
function fakeNamespace(label = 'root') {
  const hashed: string[] = [];
  const restrictedTo: string[] = [];
  const gets: Array<{ id: string; options: unknown }> = [];
  const ns = {
    label,
    idFromName(name: string) {
      hashed.push(name);
      return { name: `${label}:${name}` };
    },
    jurisdiction(j: string) {
      restrictedTo.push(j);
      return Object.assign(fakeNamespace(`${label}/${j}`).ns, { parentGets: gets });
    },
    get(id: { name: string }, options: unknown) {
      gets.push({ id: id.name, options });
      return { id: id.name, options };
    },
  };
  return { ns: ns as unknown as DurableObjectNamespace, hashed, restrictedTo, gets };
}

describe('namespaceIn', () => {
  it('is the namespace itself without a jurisdiction, and one restricted namespace per jurisdiction', () => {
    const root = fakeNamespace();
    expect(namespaceIn(root.ns, null)).toBe(root.ns);
    const eu = namespaceIn(root.ns, 'eu');
    expect(namespaceIn(root.ns, 'eu')).toBe(eu);
    expect(namespaceIn(root.ns, 'us')).not.toBe(eu);
    expect(root.restrictedTo).toEqual(['eu', 'us']);
  });
});

describe('namespaceIn on a local workerd', () => {
  it("names a jurisdiction's objects apart when the runtime cannot restrict, and passes any other refusal on", () => {
    const root = fakeNamespace('local');
    const local = Object.assign(root.ns, {
      jurisdiction: () => {
        throw new Error(LOCAL_NO_JURISDICTIONS);
      },
    });
    expect(placedStub(local, 'p@weur#0', { region: 'weur', jurisdiction: 'eu' })).toEqual({
      id: 'local:eu:p@weur#0',
      options: { locationHint: 'weur' },
    });
    const refusing = Object.assign(fakeNamespace('other').ns, {
      jurisdiction: () => {
        throw new Error('unknown jurisdiction');
      },
    });
    expect(() => namespaceIn(refusing, 'us')).toThrow('unknown jurisdiction');
  });
});

describe('placedStub', () => {
  it("gets the object by name in the placement's jurisdiction, with its region as the location hint", () => {
    const root = fakeNamespace();
    expect(placedStub(root.ns, 'p@apac#0', { region: 'apac', jurisdiction: null })).toEqual({
      id: 'root:p@apac#0',
      options: { locationHint: 'apac' },
    });
    expect(placedStub(root.ns, 'p@weur#1', { region: 'weur', jurisdiction: 'eu' })).toEqual({
      id: 'root/eu:p@weur#1',
      options: { locationHint: 'weur' },
    });
  });
});

describe('objectId', () => {
  it('hashes a name once per namespace', () => {
    const a = fakeNamespace('a');
    const b = fakeNamespace('b');
    const first = objectId(a.ns, 'platform-1');
    expect(objectId(a.ns, 'platform-1')).toBe(first);
    expect(a.hashed).toEqual(['platform-1']);
    expect(objectId(b.ns, 'platform-1')).not.toBe(first);
  });

  it(`keeps at most ${MAX_IDS} names, dropping the oldest first`, () => {
    const { ns, hashed } = fakeNamespace();
    for (let i = 0; i < MAX_IDS; i++) objectId(ns, `n${i}`);
    objectId(ns, 'n0');
    expect(hashed).toHaveLength(MAX_IDS);
    objectId(ns, 'one more');
    objectId(ns, 'n1');
    objectId(ns, `n${MAX_IDS - 1}`);
    expect(hashed).toHaveLength(MAX_IDS + 1);
    objectId(ns, 'n0');
    expect(hashed.slice(MAX_IDS)).toStrictEqual(['one more', 'n0']);
  });
});
