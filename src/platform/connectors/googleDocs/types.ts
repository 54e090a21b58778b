/**
 * The parts of the Google Docs API's wire format (documents.get, v1) the connector reads. Every
 * field is optional as on the wire: proto3 JSON leaves out defaults (a first element's
 * `startIndex` 0, a bullet's `nestingLevel` 0, `false` booleans).
 */
export interface DocsDocument {
  documentId: string;
  title?: string;
  /** Only given to callers who may edit the document. */
  revisionId?: string;
  body?: { content?: StructuralElement[] };
  lists?: Record<string, { listProperties?: { nestingLevels?: NestingLevel[] } }>;
  inlineObjects?: Record<string, InlineObject>;
  positionedObjects?: Record<string, { positionedObjectProperties?: { embeddedObject?: EmbeddedObject } }>;
  footnotes?: Record<string, { footnoteId?: string; content?: StructuralElement[] }>;
}

export interface StructuralElement {
  startIndex?: number;
  endIndex?: number;
  paragraph?: Paragraph;
  table?: Table;
  sectionBreak?: Record<string, unknown>;
  tableOfContents?: { content?: StructuralElement[] };
}

export interface Paragraph {
  elements?: ParagraphElement[];
  paragraphStyle?: { namedStyleType?: NamedStyleType; headingId?: string };
  bullet?: { listId?: string; nestingLevel?: number };
  positionedObjectIds?: string[];
}

export type NamedStyleType = 'NORMAL_TEXT' | 'TITLE' | 'SUBTITLE' | 'HEADING_1' | 'HEADING_2' | 'HEADING_3' | 'HEADING_4' | 'HEADING_5' | 'HEADING_6';

export interface ParagraphElement {
  startIndex?: number;
  endIndex?: number;
  textRun?: { content?: string; textStyle?: TextStyle; suggestedInsertionIds?: string[]; suggestedDeletionIds?: string[] };
  inlineObjectElement?: { inlineObjectId?: string; textStyle?: TextStyle };
  horizontalRule?: Record<string, unknown>;
  pageBreak?: Record<string, unknown>;
  columnBreak?: Record<string, unknown>;
  footnoteReference?: { footnoteId?: string; footnoteNumber?: string };
  autoText?: Record<string, unknown>;
  equation?: Record<string, unknown>;
  person?: { personProperties?: { name?: string; email?: string } };
  richLink?: { richLinkProperties?: { title?: string; uri?: string } };
  dateElement?: { dateElementProperties?: { displayText?: string } };
}

export interface TextStyle {
  bold?: boolean;
  italic?: boolean;
  underline?: boolean;
  strikethrough?: boolean;
  link?: { url?: string; bookmarkId?: string; headingId?: string };
}

export interface NestingLevel {
  glyphType?: string;
  glyphSymbol?: string;
  glyphFormat?: string;
  startNumber?: number;
}

export interface InlineObject {
  objectId?: string;
  inlineObjectProperties?: { embeddedObject?: EmbeddedObject };
}

export interface EmbeddedObject {
  title?: string;
  description?: string;
  /** `contentUri` lives 30 minutes and is tied to the account that read it. */
  imageProperties?: { contentUri?: string; sourceUri?: string };
  embeddedDrawingProperties?: Record<string, unknown>;
}

export interface Table {
  rows?: number;
  columns?: number;
  tableRows?: { startIndex?: number; endIndex?: number; tableCells?: { startIndex?: number; endIndex?: number; content?: StructuralElement[] }[] }[];
}

/** Drive's file record (files.get with `fields=id,name,mimeType,version,modifiedTime,trashed`). */
export interface DriveFile {
  id: string;
  name?: string;
  mimeType?: string;
  /** An int64 as a string: it grows with every change of the file, its name included. */
  version?: string;
  modifiedTime?: string;
  trashed?: boolean;
}

export const DOCS_MIME_TYPE = 'application/vnd.google-apps.document';
