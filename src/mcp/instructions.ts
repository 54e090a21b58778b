import { mayWrite, toolsOf } from './catalog.ts';
import { projectOf, type CallContext } from './context.ts';

/**
 * The server's `instructions` (given to the model at initialization): what the content is, how
 * paths work, which tools to reach for, and that every change is a version.
 */
export async function instructionsFor(c: CallContext): Promise<string> {
  const { project } = await c.env.authorizer.requireProject(c.principal, projectOf(c), 'project:read');
  const names = (await toolsOf(c)).map((t) => t.name);
  const write = await mayWrite(c);
  const lines = [
    `This server gives access to the folder "${c.root}" of the project "${project.name}" in a Content Node Service: ` +
      'a versioned tree of folders, JSON documents, Markdown documents and files.',
    `Paths are project paths: "${c.root}" is the top of what you can reach, so every path you pass is "${c.root}" or begins with "${c.root}/". Paths outside it are refused.`,
    'Explore with `ls` and `tree`, read with `cat` (JSON comes back as a value, Markdown as text), inspect metadata with `stat`.',
  ];
  if (names.includes('grep')) lines.push('`grep` finds the lines matching a pattern (path, line number, context); page through a large file with `cat` and `lines`.');
  if (names.includes('search')) lines.push('`search` finds text across the folder (ranked chunks with snippets); read a hit with `cat`.');
  lines.push('`versions` lists a node\'s history (or, without a path, the recent commits in the folder); `diff` compares versions; `blame` tells which version, by a person or an agent, last changed each line of a file.');
  if (write) {
    lines.push(
      '`write` creates or updates a node (the type follows the name: .md Markdown, .json JSON, otherwise a file; JSON content is a value, not a string), ' +
        '`mkdir` creates folders, `mv` moves or renames, `rm` moves to the trash, `rollback` returns a node or folder to an earlier version.',
      `Every change is recorded as a new version attributed to this endpoint ("${c.endpoint.connection.name}"); pass a short \`message\` saying why. ` +
        'Pass `base_version` (the version you read) to `write` so that a change someone else made meanwhile is not overwritten.',
    );
  } else {
    lines.push('This endpoint is read-only: it cannot change content.');
  }
  const extra = names.filter((n) => !['ls', 'cat', 'stat', 'tree', 'search', 'grep', 'versions', 'diff', 'blame', 'write', 'mkdir', 'mv', 'rm', 'rollback'].includes(n));
  if (extra.length) lines.push(`Also available: ${extra.map((n) => `\`${n}\``).join(', ')} (their paths are relative to their own folder; see each description).`);
  lines.push(`Each node is also a resource, cns://${projectOf(c)}/<path> (a version: <path>@<version>).`);
  return lines.join('\n');
}
