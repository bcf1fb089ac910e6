// Worker thread of the invoice QR reader (decode-pool.ts): decodes an image, or renders a PDF's
// pages, and reads the QR codes in it, off the service's event loop. One job at a time: the pool
// sends the next when this one has answered. The file's bytes arrive transferred, not copied.
import { ApiError, type ErrorCode } from '../../lib/errors';
import { findAtQr } from './extract';

export type DecodeRequest = { id: number; kind: 'image' | 'pdf'; bytes: Uint8Array };
export type DecodeReply =
  /** sent once, when this module has loaded (the pool counts a worker that never says it as a failed start) */
  | { type: 'ready' }
  | { type: 'found'; id: number; payload: string; page: number | null }
  /** an answer of the file (image_unreadable, qr_not_found, not_at_qr), as the in-process reader throws it */
  | { type: 'refused'; id: number; code: ErrorCode; message: string; extra: ApiError['extra'] }
  /** anything else (a bug): the request answers 500, as it would in process */
  | { type: 'failed'; id: number; message: string };

declare const self: Worker;
const reply = (m: DecodeReply) => postMessage(m);

self.onmessage = async (e: MessageEvent<DecodeRequest>) => {
  const { id, kind, bytes } = e.data;
  try {
    const { payload, page } = await findAtQr(bytes, kind);
    reply({ type: 'found', id, payload, page });
  } catch (err) {
    if (err instanceof ApiError) reply({ type: 'refused', id, code: err.code, message: err.message, extra: err.extra });
    else reply({ type: 'failed', id, message: err instanceof Error ? err.message : String(err) });
  }
};

reply({ type: 'ready' });
