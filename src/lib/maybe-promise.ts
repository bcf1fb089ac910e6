/**
 * A value now, or later. Hot-path steps return their answer directly when it is already in
 * memory, and a promise only when they need I/O: every `await` costs a microtask, and the cached
 * score path has several steps. Callers that do not care simply `await` it.
 */
export type MaybePromise<T> = T | Promise<T>;

