import { api, ApiError } from './client.ts';
import type { Entry } from './types.ts';

/** What `POST /nodes/upload` answers: where to PUT the bytes, and the node they will become. */
interface UploadAddress {
  upload_url: string;
  node_id: string;
  path: string;
}

/**
 * Uploads one file as a new `file` node in a folder (`parentId` null for the project root):
 * asks for a presigned address, then PUTs the bytes there. The PUT goes through
 * XMLHttpRequest because fetch reports no upload progress; it needs no session cookie or CSRF
 * header, since the address carries its own signed, single-use grant.
 */
export async function uploadFile(
  projectId: string,
  parentId: string | null,
  file: File,
  onProgress: (loaded: number, total: number) => void,
): Promise<Entry> {
  const address = await api<UploadAddress>('POST', '/nodes/upload', {
    project_id: projectId,
    parent_id: parentId,
    name: file.name,
    size: file.size,
    // The browser's guess; left out when it has none (or one the API would refuse).
    mime_type: /^[\w.+-]+\/[\w.+-]+$/.test(file.type) ? file.type : undefined,
  });
  // Same origin as the dashboard: the configured base URL may name another host (a proxy).
  const url = new URL(address.upload_url, location.origin);
  return put(url.pathname + url.search, file, onProgress);
}

function put(url: string, file: File, onProgress: (loaded: number, total: number) => void): Promise<Entry> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', url);
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onload = () => {
      const envelope = parse(xhr.responseText);
      if (xhr.status >= 200 && xhr.status < 300 && envelope?.success) return resolve(envelope.data as Entry);
      reject(new ApiError(xhr.status, envelope?.code ?? `HTTP_${xhr.status}`, envelope?.message ?? (xhr.statusText || 'Upload failed'), null));
    };
    xhr.onerror = () => reject(new Error('The upload was interrupted (network error).'));
    xhr.send(file);
  });
}

function parse(text: string): { success?: boolean; code?: string; message?: string; data?: unknown } | null {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
