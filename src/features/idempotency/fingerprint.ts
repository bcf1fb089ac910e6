import { canonicalJson } from '../../lib/canonical-json';
import { sha256Hex } from '../../lib/crypto';

/**
 * What an Idempotency-Key is compared on besides method and path: the request's body. A JSON body
 * by its canonical form; a file held in memory by its bytes' SHA-256 (walking a typed array as an
 * object cost ~2 s a MiB on the event loop); a streamed upload (SAF-T, up to 600 MiB) by what its
 * route read of it, hashed as it passes, since it cannot be read twice: `stream:<full|prefix>:<bytes>:<sha-256>`.
 * A later request with the key is compared by reading as much of its own stream (a whole file, or
 * the prefix after which the first one's route stopped, having failed on it).
 */
export type StreamBodyLike = { stream: ReadableStream<Uint8Array> } & Record<string, unknown>;

export const isStreamBody = (body: unknown): body is StreamBodyLike => !!body && typeof body === 'object' && (body as { stream?: unknown }).stream instanceof ReadableStream;

/**
 * The request headers a route reads as input (the SAF-T producer's public key, which a multipart
 * upload sends as a field): part of what is compared, when sent.
 */
const INPUT_HEADERS = ['x-public-key'] as const;
export const inputHeaders = (headers: Record<string, string | undefined>) => {
  const sent = INPUT_HEADERS.filter((h) => headers[h] !== undefined);
  return sent.length ? Object.fromEntries(sent.map((h) => [h, headers[h]!])) : null;
};

/** the hash of everything but a streamed body's bytes (and of the input headers, when sent) */
export function bodyDigest(body: unknown, headers: Record<string, string> | null = null): string {
  if (headers) return sha256Hex(canonicalJson({ body: bodyDigest(body), headers }));
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const o = body as Record<string, unknown>;
    // not its declared length: a multipart upload's counts its boundary and filename, which a retry
    // from most clients changes; the bytes read are in the stream's own digest
    if (isStreamBody(o)) return sha256Hex(canonicalJson({ ...o, stream: undefined, length: undefined }));
    if (o.binary instanceof Uint8Array) return sha256Hex(canonicalJson({ ...o, binary: new Bun.CryptoHasher('sha256').update(o.binary).digest('hex') }));
  }
  return sha256Hex(canonicalJson(body ?? {}));
}

/** Hashes a streamed body as its route reads it. */
export class StreamDigest {
  private readonly hasher = new Bun.CryptoHasher('sha256');
  private bytes = 0;
  private ended = false;
  private lastSignMs: number;

  /** `alive`: called as bytes arrive, at most once every `everyMs` by `nowMs` (the claim's keep-alive) */
  constructor(private readonly alive: (() => void) | null = null, private readonly nowMs: () => number = Date.now, private readonly everyMs = 30_000) {
    this.lastSignMs = nowMs();
  }

  /** the stream the route reads instead of the body's own */
  wrap(stream: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
    return stream.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform: (chunk, controller) => {
          this.hasher.update(chunk);
          this.bytes += chunk.byteLength;
          if (this.alive && this.nowMs() - this.lastSignMs >= this.everyMs) {
            this.lastSignMs = this.nowMs();
            this.alive();
          }
          controller.enqueue(chunk);
        },
        flush: () => {
          this.ended = true;
        },
      }),
    );
  }

  seal(): string {
    return `stream:${this.ended ? 'full' : 'prefix'}:${this.bytes}:${this.hasher.digest('hex')}`;
  }
}

/** Does this stream hold what `sealed` (StreamDigest.seal) describes? Reads it as far as needed. */
export async function streamMatches(sealed: string, stream: ReadableStream<Uint8Array>): Promise<boolean> {
  const [, kind, count, hex] = sealed.split(':');
  const want = Number(count);
  const hasher = new Bun.CryptoHasher('sha256');
  let read = 0;
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const take = Math.min(value.byteLength, want - read);
      if (take > 0) hasher.update(take === value.byteLength ? value : value.subarray(0, take));
      read += value.byteLength;
      // a full body longer than the first differs; a prefix needs no more than its own length
      if (read > want) {
        if (kind === 'full') return false;
        break;
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return read >= want && hasher.digest('hex') === hex;
}

/** The path and its query, parameters in one order of names (`?b=2&a=1` is `?a=1&b=2`): what an Idempotency-Key's request is. */
export function requestTarget(path: string, url: string): string {
  const at = url.indexOf('?');
  if (at < 0 || at === url.length - 1) return path;
  // by name only, and stably: a repeated parameter's values keep their order (the last one counts)
  const params = [...new URLSearchParams(url.slice(at + 1))].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return params.length ? `${path}?${new URLSearchParams(params).toString()}` : path;
}
