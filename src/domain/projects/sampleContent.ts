import type { BulkFile } from '../../content/contentStore.ts';

/** The sample content `POST /projects/{id}/seed` adds: a few Markdown guides and a JSON example. */
export const sampleContent: BulkFile[] = [
  {
    path: 'guides/getting-started.md',
    type: 'markdown',
    content: `# Getting started

This project is a tree of content nodes: folders, JSON, Markdown and files.
Every change creates a new version that records who made it, when and why.

- List a folder: \`GET /api/v1/content/{project_id}/ls?path=guides\`
- Read a node: \`GET /api/v1/content/{project_id}/cat?path=guides/getting-started.md\`
- See its history: \`GET /api/v1/content/{project_id}/versions?path=guides/getting-started.md\`
`,
  },
  {
    path: 'guides/versioning.md',
    type: 'markdown',
    content: `# Versions, diffs and rollbacks

Versions only grow: a rollback writes the old content as a new version, and nothing is deleted.
Deleted nodes wait in the trash until you restore them.
`,
  },
  {
    path: 'guides/agents.md',
    type: 'markdown',
    content: `# Working with agents

Give each integration or agent its own access key, limited to the folder it needs and to
read-only when it only reads. Its writes are recorded as versions by \`agent:<name>\`.
`,
  },
  {
    path: 'examples/product.json',
    type: 'json',
    content: {
      name: 'Example product',
      sku: 'EX-001',
      price: { amount: 19.9, currency: 'EUR' },
      tags: ['sample', 'json'],
      in_stock: true,
    },
  },
];
