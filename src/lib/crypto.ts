import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

// Bun's one-shot hasher: the same SHA-256, without node:crypto's Hash object per call (hot path: key lookup)
export const sha256Hex = (s: string) => Bun.SHA256.hash(s, 'hex') as string;

export const randomHex = (bytes: number) => randomBytes(bytes).toString('hex');

/** Constant-time comparison of two strings (for secrets): the time depends on the length only. */
export function safeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** AES-256-GCM for secrets at rest (OAuth tokens, webhook secrets): "v1.<iv>.<tag>.<ciphertext>" base64url. */
export class SecretBox {
  private readonly key: Buffer;
  constructor(key: string) {
    this.key = /^[0-9a-fA-F]{64}$/.test(key) ? Buffer.from(key, 'hex') : Buffer.from(key, 'base64');
    if (this.key.length !== 32) throw new Error('encryption key must be 32 bytes');
  }
  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    const ct = Buffer.concat([c.update(plaintext, 'utf8'), c.final()]);
    return ['v1', iv.toString('base64url'), c.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
  }
  /**
   * HMAC-SHA256 (base64url) of `data` under a key derived from this box's key for `purpose`, so
   * every process of a deployment computes the same value and no two purposes share a key.
   */
  mac(purpose: string, data: string): string {
    const sub = createHmac('sha256', this.key).update(`mac:${purpose}`).digest();
    return createHmac('sha256', sub).update(data).digest('base64url');
  }
  open(sealed: string): string {
    const [v, iv, tag, ct] = sealed.split('.');
    if (v !== 'v1' || !iv || !tag || ct === undefined) throw new Error('unrecognised sealed value');
    const d = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    d.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
  }
}
