/** The server could not listen (port in use, no permission, unknown address): one clear sentence. */
export class ListenError extends Error {
  constructor(
    readonly host: string,
    readonly port: number,
    readonly cause: NodeJS.ErrnoException,
  ) {
    const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    const why =
      cause.code === 'EADDRINUSE'
        ? `port ${port} is already in use on ${host}: stop the other process or choose another port (PORT or --port)`
        : cause.code === 'EACCES'
          ? `no permission to listen on ${where} (ports below 1024 need privileges): choose another port (PORT or --port)`
          : cause.code === 'EADDRNOTAVAIL' || cause.code === 'ENOTFOUND'
            ? `cannot listen on ${where}: ${host} is not an address of this machine (HOST or --host)`
            : `cannot listen on ${where}: ${cause.message}`;
    super(why);
    this.name = 'ListenError';
  }
}
