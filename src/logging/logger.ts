import { pino, type Logger } from 'pino';

export type { Logger };

/** One structured JSON line per event on stdout; the level comes from CNS_LOG_LEVEL. */
export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'cns' }, timestamp: pino.stdTimeFunctions.isoTime });
}
