/** JSON-lines logger. Never pass it a key, secret or token: callers log ids and prefixes only. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** whether a line at this level would be written (to skip building fields on hot paths) */
  enabled(level: Exclude<LogLevel, 'silent'>): boolean;
  /** logs at most once per interval per key (e.g. "redis down") */
  throttled(key: string, intervalMs: number, level: Exclude<LogLevel, 'silent'>, msg: string, fields?: Record<string, unknown>): void;
}

/**
 * Caller-supplied text that is logged (the path of a request that matched no route), cut at the
 * first thing shaped like a secret of this API: a key or webhook secret pasted into a URL by
 * mistake must not reach the logs (a webhook secret's base64 may hold "/", so the rest goes too).
 */
export const redactSecrets = (text: string) => text.replace(/\b(sk_(?:test|live)_|whsec_).*$/s, '$1[redacted]');

export function createLogger(level: LogLevel, write: (line: string) => void = (l) => process.stdout.write(l + '\n')): Logger {
  const min = ORDER[level];
  const last = new Map<string, number>();
  const emit = (lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < min) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }));
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    enabled: (lvl) => ORDER[lvl] >= min,
    throttled(key, intervalMs, lvl, msg, fields) {
      const now = Date.now();
      if ((last.get(key) ?? 0) + intervalMs > now) return;
      last.set(key, now);
      emit(lvl, msg, fields);
    },
  };
}
