import { uploadFile } from '../api/upload.ts';
import type { Entry } from '../api/types.ts';

export interface Upload {
  key: number;
  name: string;
  /** The folder it goes into ('' for the project root). */
  folder: string;
  loaded: number;
  total: number;
  state: 'uploading' | 'done' | 'failed';
  error: string | null;
}

/**
 * The uploads started in this page, each with its progress or its error, so the progress
 * bars outlive the control that started them (a drop on a row, the Upload button).
 */
export class UploadList {
  items: Upload[] = [];
  private count = 0;
  private listeners = new Set<() => void>();

  constructor(
    private readonly projectId: string,
    private readonly onUploaded: (entry: Entry) => void,
  ) {}

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts every file at once; each one succeeds or fails on its own. */
  start(folder: { path: string; id: string | null }, files: Iterable<File>): void {
    for (const file of files) void this.one(folder, file);
  }

  /** Forgets the finished ones (done or failed). */
  clearFinished(): void {
    this.items = this.items.filter((u) => u.state === 'uploading');
    this.emit();
  }

  private async one(folder: { path: string; id: string | null }, file: File): Promise<void> {
    const key = ++this.count;
    this.items = [...this.items, { key, name: file.name, folder: folder.path, loaded: 0, total: file.size, state: 'uploading', error: null }];
    this.emit();
    try {
      const entry = await uploadFile(this.projectId, folder.id, file, (loaded, total) => this.update(key, { loaded, total }));
      this.update(key, { state: 'done', loaded: file.size });
      this.onUploaded(entry);
    } catch (err) {
      this.update(key, { state: 'failed', error: (err as Error).message });
    }
  }

  private update(key: number, change: Partial<Upload>): void {
    this.items = this.items.map((u) => (u.key === key ? { ...u, ...change } : u));
    this.emit();
  }

  private emit(): void {
    for (const l of this.listeners) l();
  }
}
