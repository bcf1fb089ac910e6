/**
 * multipart/form-data uploads, streamed: the text fields sent before the file part, and the file
 * part itself as a stream the route reads at its own pace (backpressure reaches the socket), so a
 * file of hundreds of MB is never held whole. Parts after the file are not read (fields go first,
 * as in S3's POST uploads): the upload's `afterFile` names them once the body is read, and
 * `partsAfterFileError` refuses them, rather than leave them unread unsaid. A file part of another
 * name before the file is refused on its name (it had made the file itself the one too many: "a
 * file part is required").
 */
import { Busboy } from '@fastify/busboy';
import { Readable } from 'node:stream';
import { ApiError, validationError } from './errors';

export interface MultipartFile {
  stream: ReadableStream<Uint8Array>;
  /** the part's Content-Type, lower-cased, without parameters ('' when the part gave none) */
  contentType: string;
  filename: string | null;
  /** the text fields that came before the file part */
  fields: Record<string, string>;
  /** the parts sent after the file part, once the body has been read to its end (await it after reading the file) */
  afterFile: Promise<PartAfterFile[]>;
}

/** a part sent after the file part: drained, unread */
export interface PartAfterFile {
  name: string;
  file: boolean;
}
/** a form part's name as a field path (a NUL shown escaped) */
export const fieldPath = (name: string) => name.replaceAll('\0', '\\0');

/**
 * The 422 for parts sent after the file part (null: none), on each part's name; `fields`: the
 * route's form fields, named in the message (they go before the file).
 */
export function partsAfterFileError(late: PartAfterFile[], fileField = 'file', fields: readonly string[] = []): ApiError | null {
  if (!late.length) return null;
  const before = fields.length ? `form fields (${fields.join(', ')})` : 'form fields';
  return validationError(
    late.map((p) => ({
      path: fieldPath(p.name),
      message: p.file ? `a file part after the file part is not read (one file, in the part named ${fileField})` : `sent after the file part, so not read: ${before} go before the part named ${fileField}`,
    })),
  );
}

export const isMultipart = (contentType: string | null | undefined) => /^multipart\/form-data\b/i.test(contentType ?? '');

/** the 422 of a multipart body that cannot be read (no boundary, damaged, cut short) */
const unreadableBody = (why: string) => new ApiError('validation_failed', 'The multipart body could not be read.', { fields: [{ path: '(body)', message: why.slice(0, 200) }] });

const FIELD_LIMIT_BYTES = 16 * 1024;
const FIELDS_MAX = 20;

/**
 * The file part named `fileField` of a multipart request, with the fields before it. `maxBytes`:
 * the whole body's limit (a chunked body declares no length): past it the upload fails 413, the
 * file's stream or, once it has been read, `afterFile`.
 */
export function readMultipartFile(request: Request, fileField = 'file', maxBytes = Infinity): Promise<MultipartFile> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      reject(err);
    };
    let busboy: InstanceType<typeof Busboy>;
    try {
      busboy = new Busboy({
        headers: { 'content-type': request.headers.get('content-type') ?? '' },
        // two files: the file, and one more to name (a part after it, or an unknown one before it)
        limits: { fieldSize: FIELD_LIMIT_BYTES, fields: FIELDS_MAX, files: 2, parts: FIELDS_MAX + 1 },
      });
    } catch (err) {
      // a multipart Content-Type without a boundary
      return fail(unreadableBody((err as Error).message));
    }
    const fields: Record<string, string> = {};
    // (bounded by the parts limit)
    const after: PartAfterFile[] = [];
    let fileTaken = false;
    /** a file part of another name before the file */
    let unknownFile: string | null = null;
    const unknownFileError = (name: string) => validationError([{ path: name, message: `unknown file part: the file goes in the part named "${fileField}"` }]);
    // settled once the body has been read to its end, or failed (a damaged or too long tail)
    let bodyRead!: (err?: unknown) => void;
    const afterFile = new Promise<PartAfterFile[]>((resolve, reject) => (bodyRead = (err?: unknown) => (err === undefined ? resolve(after) : reject(err))));
    afterFile.catch(() => {}); // (a route that fails before awaiting it leaves no unhandled rejection)
    busboy.on('field', (name: string, value: string, _nameTruncated: boolean, valueTruncated: boolean) => {
      // after the file: not read (the file was handed over with the fields before it), named
      if (fileTaken) return void after.push({ name, file: false });
      if (valueTruncated) return fail(validationError([{ path: name, message: `a form field may hold at most ${FIELD_LIMIT_BYTES} bytes` }]));
      fields[name] = value;
    });
    busboy.on('file', (name: string, file: Readable, filename: string | undefined, _encoding: string, mimeType: string | undefined) => {
      if (name !== fileField || settled || unknownFile !== null) {
        file.resume(); // drained, and named
        if (fileTaken) after.push({ name, file: true });
        else if (unknownFile !== null) fail(unknownFileError(unknownFile));
        else if (name !== fileField) unknownFile = name;
        return;
      }
      settled = fileTaken = true;
      resolve({
        stream: Readable.toWeb(file) as unknown as ReadableStream<Uint8Array>,
        contentType: (mimeType ?? '').split(';')[0]!.trim().toLowerCase(),
        filename: filename ?? null,
        fields,
        afterFile,
      });
    });
    busboy.on('partsLimit', () => fail(validationError([{ path: '(body)', message: `at most ${FIELDS_MAX} fields and one file` }])));
    busboy.on('fieldsLimit', () => fail(validationError([{ path: '(body)', message: `at most ${FIELDS_MAX} fields and one file` }])));
    busboy.on('error', (err: Error) => {
      const unreadable = unreadableBody(err.message);
      bodyRead(unreadable);
      fail(unreadable);
    });
    busboy.on('finish', () => (bodyRead(), fail(unknownFile !== null ? unknownFileError(unknownFile) : validationError([{ path: fileField, message: `a file part named "${fileField}" is required` }]))));
    const source = request.body ? Readable.fromWeb(request.body as never) : Readable.from([]);
    source.on('error', (err) => {
      // the body cut short (the client went away): the upload's error, not the service's
      bodyRead(unreadableBody(`cut short: ${String((err as Error)?.message ?? err)}`));
      fail(err);
      busboy.destroy(err);
    });
    let received = 0;
    source.on('data', (chunk: Uint8Array) => {
      received += chunk.byteLength;
      if (received <= maxBytes) return;
      const tooLarge = new ApiError('payload_too_large', `The request body exceeds ${maxBytes} bytes.`);
      bodyRead(tooLarge);
      fail(tooLarge);
      source.unpipe(busboy);
      source.destroy();
      busboy.destroy(tooLarge);
    });
    source.pipe(busboy);
  });
}

/** The type of an uploaded file from its first bytes (clients often label parts octet-stream). */
export function sniffType(head: Uint8Array): 'image/png' | 'image/jpeg' | 'application/pdf' | 'application/xml' | null {
  if (head[0] === 0x89 && head[1] === 0x50 && head[2] === 0x4e && head[3] === 0x47) return 'image/png';
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head[0] === 0x25 && head[1] === 0x50 && head[2] === 0x44 && head[3] === 0x46) return 'application/pdf';
  let i = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0; // UTF-8 BOM
  while (i < head.length && (head[i] === 0x20 || head[i] === 0x0a || head[i] === 0x0d || head[i] === 0x09)) i++;
  if (head[i] === 0x3c) return 'application/xml';
  if (head[0] === 0x1f && head[1] === 0x8b) return null; // gzip: the caller says so with the part's type
  return null;
}
