import type { ContentStore } from '../content/contentStore.ts';
import type { MetadataStore } from '../db/metadata/metadataStore.ts';
import type { ChangeBus } from '../events/changeBus.ts';
import type { ContentAccess } from '../policies/contentAccess.ts';
import { PublicReader } from './publicReader.ts';
import { PublicResolver } from './publicTarget.ts';
import { Publishes } from './publishes.ts';
import { PublishStore } from './publishStore.ts';

/** Publishing (spec 4.10): the records, the authorized operations on them, and what public addresses answer. */
export interface PublishingService {
  store: PublishStore;
  publishes: Publishes;
  /** What a public address names (cached per address). */
  resolver: PublicResolver;
  reader: PublicReader;
}

export function createPublishing(d: { metadata: MetadataStore; content: ContentStore; access: ContentAccess; bus: Pick<ChangeBus, 'subscribe' | 'signal' | 'onSignal'> }): PublishingService {
  const store = new PublishStore(d.metadata);
  // Every process caches what public addresses serve: a publish disabled here stops being served everywhere at once.
  store.onChanged((project) => d.bus.signal({ kind: 'publish-changed', project }));
  return {
    store,
    publishes: new Publishes({ store, content: d.content, access: d.access }),
    resolver: new PublicResolver(store, d.content, d.bus),
    reader: new PublicReader(d.content),
  };
}
