import { describe, expect, it } from 'vitest';
import { isBlockedAddress, targetProblem, type TargetRules } from './webhookTargets.js';

const deployed = (addresses: Record<string, string[]>): TargetRules => ({
  allowPrivate: false,
  resolve: (host) => {
    const found = addresses[host];
    return found ? Promise.resolve(found) : Promise.reject(new Error('no such host'));
  },
});

describe('webhook targets', () => {
  it('refuse loopback, private, link-local, metadata, unique-local and mapped private addresses', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.20.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fd00:ec2::254',
      'fe80::1',
      '::ffff:10.0.0.1',
      '::7f00:1',
      '64:ff9b:1::a00:1',
      '2002:7f00:1::1',
      '224.0.0.1',
    ]) {
      expect(isBlockedAddress(address), address).toBe(true);
    }
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) expect(isBlockedAddress(address)).toBe(false);
  });

  it('on a deployed edge take only https to a public host, naming the rule otherwise', async () => {
    const rules = deployed({
      'hooks.example.com': ['93.184.215.14'],
      'rebind.example.com': ['93.184.215.14', '10.0.0.7'],
      'empty.example.com': [],
    });
    expect(await targetProblem('https://hooks.example.com/in?x=1', rules)).toBeNull();
    expect(await targetProblem('https://8.8.8.8/in', rules)).toBeNull();
    expect(await targetProblem('http://hooks.example.com/in', rules)).toBe('url must be https');
    expect(await targetProblem('https://user:pw@hooks.example.com/', rules)).toBe('url must not carry credentials');
    expect(await targetProblem('https://hooks.example.com/#x', rules)).toBe('url must not have a fragment');
    expect(await targetProblem('not a url', rules)).toBe('url must be an absolute URL');
    expect(await targetProblem(`https://hooks.example.com/${'a'.repeat(2048)}`, rules)).toBe(
      'url must be at most 2048 characters',
    );
    expect(await targetProblem('https://127.0.0.1/', rules)).toBe("url's host 127.0.0.1 is not a public address");
    expect(await targetProblem('https://[::1]/', rules)).toBe("url's host ::1 is not a public address");
    expect(await targetProblem('https://169.254.169.254/latest/meta-data', rules)).toBe(
      "url's host 169.254.169.254 is not a public address",
    );
    expect(await targetProblem('https://localhost/', rules)).toBe("url's host localhost is not a public name");
    expect(await targetProblem('https://metadata.google.internal/', rules)).toBe(
      "url's host metadata.google.internal is not a public name",
    );
    expect(await targetProblem('https://rebind.example.com/', rules)).toBe(
      "url's host rebind.example.com resolves to 10.0.0.7, which is not a public address",
    );
    expect(await targetProblem('https://empty.example.com/', rules)).toBe(
      "url's host empty.example.com does not resolve",
    );
    expect(await targetProblem('https://unknown.example.com/', rules)).toBe(
      "url's host unknown.example.com could not be resolved",
    );
  });

  it('locally, with private targets allowed, take http and loopback but still only http(s)', async () => {
    const local: TargetRules = { allowPrivate: true, resolve: () => Promise.reject(new Error('not asked')) };
    expect(await targetProblem('http://127.0.0.1:9999/hook', local)).toBeNull();
    expect(await targetProblem('ftp://127.0.0.1/hook', local)).toBe('url must be http or https');
  });
});
