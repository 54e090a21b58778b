/** tar-stream 2.2.0 ships no types: the parts used (extract). */
declare module 'tar-stream' {
  import type { PassThrough, Writable } from 'node:stream';
  export interface Headers {
    name: string;
    size?: number;
    mode?: number;
    mtime?: Date;
    type?: 'file' | 'link' | 'symlink' | 'directory' | 'block-device' | 'character-device' | 'fifo' | 'contiguous-file' | 'pax-header' | 'pax-global-header' | 'gnu-long-link-path' | 'gnu-long-path' | null;
    linkname?: string | null;
  }
  export interface Extract extends Writable {
    on(event: 'entry', listener: (headers: Headers, stream: PassThrough, next: (err?: unknown) => void) => void): this;
    on(event: string, listener: (...args: any[]) => void): this;
  }
  export function extract(): Extract;
}

declare module 'tar-stream' {
  import type { Readable } from 'node:stream';
  export interface Pack extends Readable {
    entry(headers: Headers, buffer?: Buffer | string, callback?: (err?: unknown) => void): unknown;
    finalize(): void;
  }
  export function pack(): Pack;
}
