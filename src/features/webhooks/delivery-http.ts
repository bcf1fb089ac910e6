import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';

/** DNS as the webhook code sees it (tests replace it to play a rebinding server). */
export const webhookDns = {
  lookupAll: (host: string): Promise<{ address: string; family: number }[]> => lookup(host, { all: true }),
};

/** The error a delivery ends with when the target resolves to a refused address at connect time. */
export class RefusedAddressError extends Error {}

/**
 * POSTs one webhook and returns the response status. With `allowedAddress`, the connection goes
 * only to an address that passed it, resolved once for this very connection: a name that
 * answered with a public address when it was checked cannot answer with a private one when the
 * client connects (DNS rebinding). No redirects are followed; the response body is discarded.
 */
export function postWebhook(
  url: string,
  o: { headers: Record<string, string>; body: string; timeoutMs: number; allowedAddress?: (ip: string) => boolean },
): Promise<number> {
  const u = new URL(url);
  const allowed = o.allowedAddress;
  const pinned: LookupFunction = (hostname, options, callback) => {
    webhookDns.lookupAll(hostname).then(
      (addresses) => {
        if (!addresses.length) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
        if (allowed && !addresses.every((a) => allowed(a.address)))
          return callback(new RefusedAddressError('must resolve to a public address (private, loopback and link-local targets are refused)'), '', 0);
        if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: typeof addresses) => void)(null, addresses);
        callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (err: Error) => callback(err as NodeJS.ErrnoException, '', 0),
    );
  };
  // an IP literal is never looked up: check it here
  const literal = u.hostname.replace(/^\[|\]$/g, '');
  if (allowed && isIP(literal) && !allowed(literal)) return Promise.reject(new RefusedAddressError('must resolve to a public address (private, loopback and link-local targets are refused)'));

  return new Promise((resolve, reject) => {
    const client = u.protocol === 'https:' ? https : http;
    const req = client.request(
      u,
      { method: 'POST', headers: { ...o.headers, 'content-length': String(Buffer.byteLength(o.body)) }, lookup: pinned },
      (res) => {
        resolve(res.statusCode ?? 0);
        res.resume(); // the body is not read: only the status counts
        res.on('error', () => {});
      },
    );
    // one budget for the whole exchange (connect, send, response), not per socket read
    const timer = setTimeout(() => {
      const err = new Error('timeout');
      err.name = 'TimeoutError';
      req.destroy(err);
    }, o.timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(o.body);
  });
}
