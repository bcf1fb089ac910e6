// MuPDF (WebAssembly), loaded once on first use with its wasm handed over from the embedded file:
// the module would look for the wasm beside itself, which a compiled binary does not have.
import mupdfWasm from '../../node_modules/mupdf/dist/mupdf-wasm.wasm' with { type: 'file' };

let mupdfModule: Promise<typeof import('mupdf')> | null = null;
export function mupdfLib() {
  mupdfModule ??= (async () => {
    (globalThis as Record<string, unknown>).$libmupdf_wasm_Module = { wasmBinary: await Bun.file(mupdfWasm as unknown as string).arrayBuffer() };
    return import('mupdf');
  })();
  return mupdfModule;
}
