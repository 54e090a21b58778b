import { dbInvalid } from './errors.ts';
import type { EngineName } from './types.ts';

/*
 * The check of a user's `query` before it reaches a database: one statement, starting with
 * SELECT or WITH, with no INTO and no locking clause.
 *
 * Why two layers: this check is not the security boundary. SQL dialects are large and a
 * tokenizer can disagree with a server (a comment form, an escape mode), so what keeps a
 * connector from changing a database is the session: read-only on every engine (PostgreSQL's
 * default_transaction_read_only plus BEGIN READ ONLY, MariaDB's START TRANSACTION READ ONLY,
 * SQLite opened read-only), one statement per call on every driver (PostgreSQL's extended
 * protocol, mysql2 without multipleStatements, better-sqlite3's prepare), and a statement
 * timeout. This check exists for what the session does not cover and for clear answers:
 * - `SELECT … INTO OUTFILE` writes a file on a MariaDB server inside a read-only transaction
 *   (tried on this machine), and MySQL's executable comments `/*! … *\/` hide code in comments;
 * - `FOR UPDATE` / `LOCK IN SHARE MODE` would hold locks in the user's database;
 * - a write refused here is a 422 naming `query` before any connection is opened.
 */

type Token = { kind: 'word'; upper: string } | { kind: 'semicolon' } | { kind: 'open' } | { kind: 'other' };

const refuse = (message: string) => dbInvalid('query', message);

const isWordStart = (c: string) => /[A-Za-z_\u0080-\uffff]/.test(c);
const isWordChar = (c: string) => /[A-Za-z0-9_$\u0080-\uffff]/.test(c);

/** The end (exclusive) of a quoted run starting at `i` with `quote`, doubling as the escape; backslashes escape too when `backslash`. */
function skipQuoted(sql: string, i: number, quote: string, backslash: boolean, what: string): number {
  let j = i + 1;
  while (j < sql.length) {
    const c = sql[j]!;
    if (backslash && c === '\\') j += 2;
    else if (c === quote) {
      if (sql[j + 1] === quote) j += 2;
      else return j + 1;
    } else j++;
  }
  throw refuse(`The query has an unterminated ${what}.`);
}

/** The end (exclusive) of a block comment; PostgreSQL nests them. */
function skipBlockComment(sql: string, i: number, nested: boolean): number {
  let depth = 1;
  let j = i + 2;
  while (j < sql.length) {
    if (nested && sql.startsWith('/*', j)) {
      depth++;
      j += 2;
    } else if (sql.startsWith('*/', j)) {
      depth--;
      j += 2;
      if (depth === 0) return j;
    } else j++;
  }
  throw refuse('The query has an unterminated /* comment.');
}

/** The tokens that matter to the check: words, semicolons, opening parentheses; strings, identifiers and comments skipped. */
function tokenize(sql: string, dialect: EngineName): { tokens: Token[]; ends: number[] } {
  const tokens: Token[] = [];
  /** Where each token ends in `sql` (to cut a trailing semicolon). */
  const ends: number[] = [];
  const push = (t: Token, end: number) => {
    tokens.push(t);
    ends.push(end);
  };
  const mysql = dialect === 'mysql';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    const next = sql[i + 1] ?? '';
    if (/\s/.test(c)) i++;
    else if (c === '-' && next === '-' && (!mysql || /[\s]/.test(sql[i + 2] ?? ' '))) {
      // MySQL starts a comment only at "-- " (with a space); "1--1" is arithmetic there.
      const eol = sql.indexOf('\n', i);
      i = eol === -1 ? sql.length : eol + 1;
    } else if (c === '#' && mysql) {
      const eol = sql.indexOf('\n', i);
      i = eol === -1 ? sql.length : eol + 1;
    } else if (c === '/' && next === '*') {
      if (mysql && /^\/\*M?!/.test(sql.slice(i, i + 4))) throw refuse('MySQL executable comments (/*! … */) are not accepted: their content runs as SQL.');
      i = skipBlockComment(sql, i, dialect === 'postgres');
    } else if (c === "'") {
      // PostgreSQL E'…' strings take backslash escapes (the E was read as a word just before).
      const last = tokens.at(-1);
      const escapeString = dialect === 'postgres' && last?.kind === 'word' && last.upper === 'E' && ends.at(-1) === i;
      if (escapeString) {
        tokens.pop();
        ends.pop();
      }
      i = skipQuoted(sql, i, "'", mysql || escapeString, 'string');
      push({ kind: 'other' }, i);
    } else if (c === '"') {
      i = skipQuoted(sql, i, '"', mysql, mysql ? 'string' : 'quoted identifier');
      push({ kind: 'other' }, i);
    } else if (c === '`' && dialect !== 'postgres') {
      i = skipQuoted(sql, i, '`', false, 'quoted identifier');
      push({ kind: 'other' }, i);
    } else if (c === '[' && dialect === 'sqlite') {
      const close = sql.indexOf(']', i + 1);
      if (close === -1) throw refuse('The query has an unterminated [identifier].');
      i = close + 1;
      push({ kind: 'other' }, i);
    } else if (c === '$' && dialect === 'postgres' && !isWordChar(sql[i - 1] ?? ' ')) {
      const tag = /^\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/.exec(sql.slice(i));
      if (tag) {
        const close = sql.indexOf(tag[0], i + tag[0].length);
        if (close === -1) throw refuse('The query has an unterminated dollar-quoted string.');
        i = close + tag[0].length;
      } else i++;
      push({ kind: 'other' }, i);
    } else if (isWordStart(c)) {
      let j = i + 1;
      while (j < sql.length && isWordChar(sql[j]!)) j++;
      push({ kind: 'word', upper: sql.slice(i, j).toUpperCase() }, j);
      i = j;
    } else if (c === ';') push({ kind: 'semicolon' }, ++i);
    else if (c === '(') push({ kind: 'open' }, ++i);
    else push({ kind: 'other' }, ++i);
  }
  return { tokens, ends };
}

const LOCKING = [['FOR', 'UPDATE'], ['FOR', 'SHARE'], ['FOR', 'NO', 'KEY'], ['FOR', 'KEY', 'SHARE'], ['LOCK', 'IN', 'SHARE']];

/**
 * Checks that `sql` is one read-only SELECT (or WITH … SELECT) statement in `dialect` and
 * returns it without its trailing semicolons; anything else is a 422 naming `query`.
 */
export function checkReadOnlyStatement(sql: string, dialect: EngineName): string {
  if (sql.includes('\0')) throw refuse('The query contains a NUL character.');
  const { tokens, ends } = tokenize(sql, dialect);
  const firstSemicolon = tokens.findIndex((t) => t.kind === 'semicolon');
  let statement = tokens;
  let text = sql;
  if (firstSemicolon !== -1) {
    if (tokens.slice(firstSemicolon).some((t) => t.kind !== 'semicolon')) {
      throw refuse('Only one statement is accepted: the query goes on after a semicolon.');
    }
    statement = tokens.slice(0, firstSemicolon);
    text = sql.slice(0, ends[firstSemicolon]! - 1);
  }
  const first = statement.find((t) => t.kind !== 'open');
  if (!first) throw refuse('The query is empty.');
  if (first.kind !== 'word' || (first.upper !== 'SELECT' && first.upper !== 'WITH')) {
    const word = first.kind === 'word' ? first.upper : 'something else';
    throw refuse(`Only a read-only SELECT (or WITH … SELECT) statement is accepted; this one starts with ${word}.`);
  }
  const words = statement.map((t) => (t.kind === 'word' ? t.upper : ''));
  if (words.includes('INTO')) {
    throw refuse('SELECT … INTO is not accepted: it writes (a table in PostgreSQL, a file or variables in MySQL).');
  }
  for (const lock of LOCKING) {
    if (words.some((_w, i) => lock.every((k, j) => words[i + j] === k))) {
      throw refuse(`Locking reads (${lock.join(' ')} …) are not accepted: they would hold locks in your database.`);
    }
  }
  return text;
}
