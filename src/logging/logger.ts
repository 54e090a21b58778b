import { pino, type Logger } from 'pino';

export type { Logger };

/** One structured JSON line per event on stdout (or `destination`); the level comes from CNS_LOG_LEVEL. */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const options = { level, base: { service: 'cns' }, timestamp: pino.stdTimeFunctions.isoTime };
  return destination ? pino(options, destination) : pino(options);
}
