import { createGzip, deflateRawSync, crc32 } from 'node:zlib';
import { pack } from 'tar-stream';
import type { TestServer } from './server.ts';

/** One entry of a zip made by hand: what it declares may differ from what it holds (a zip bomb, a link). */
export interface ZipPart {
  name: string;
  data?: Buffer;
  /** The inflated size the zip claims (default: the real one). */
  declaredSize?: number;
  /** Unix mode in the external attributes (e.g. 0o120777 for a symbolic link). */
  unixMode?: number;
}

/** A zip with deflated entries, written by hand so that tests can make it lie. */
export function makeZip(parts: ZipPart[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const p of parts) {
    const data = p.data ?? Buffer.alloc(0);
    const name = Buffer.from(p.name);
    const packed = data.length ? deflateRawSync(data) : Buffer.alloc(0);
    const crc = crc32(data);
    const size = p.declaredSize ?? data.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x800, 6);
    local.writeUInt16LE(data.length ? 8 : 0, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, packed);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE((3 << 8) | 20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(0x800, 8);
    c.writeUInt16LE(data.length ? 8 : 0, 10);
    c.writeUInt32LE(crc, 16);
    c.writeUInt32LE(packed.length, 20);
    c.writeUInt32LE(size, 24);
    c.writeUInt16LE(name.length, 28);
    c.writeUInt32LE(((p.unixMode ?? (p.name.endsWith('/') ? 0o40755 : 0o100644)) << 16) >>> 0, 38);
    c.writeUInt32LE(offset, 42);
    central.push(c, name);
    offset += 30 + name.length + packed.length;
  }
  const cd = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(parts.length, 8);
  end.writeUInt16LE(parts.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

/** A tar.gz of the entries (tar-stream's writer), links included when asked. */
export async function makeTarGz(entries: { name: string; data?: string; type?: 'file' | 'directory' | 'symlink'; linkname?: string }[]): Promise<Buffer> {
  const p = pack();
  for (const e of entries) p.entry({ name: e.name, type: e.type ?? 'file', linkname: e.linkname }, e.type === 'file' || !e.type ? (e.data ?? '') : undefined);
  p.finalize();
  const chunks: Buffer[] = [];
  for await (const c of p.pipe(createGzip())) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** POSTs an archive to /import as multipart/form-data. */
export async function importArchiveVia(server: TestServer, token: string, projectId: string, archive: Buffer, fields: Record<string, string> = {}, filename = 'a.zip') {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  form.set('file', new Blob([archive]), filename);
  const res = await fetch(`${server.url}/api/v1/content/${projectId}/import`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  return { status: res.status, body: (await res.json()) as { success: boolean; code: string; data: any; message: string } };
}

/** GETs an archive's bytes. */
export async function fetchArchive(server: TestServer, token: string, projectId: string, query: string) {
  const res = await fetch(`${server.url}/api/v1/content/${projectId}/archive?${query}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}
