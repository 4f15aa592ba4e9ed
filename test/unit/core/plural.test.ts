// "at most 1 repairs" and its kind: every count Logbook writes into a message, a CLI line or an
// inspector label goes through plural() (lib/core/plural.ts, and the inspector's copy). The scan
// below finds a count written straight before a plural noun in the sources of lib/ and dev/.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { plural } from '../../../lib/core/plural.js';
import { runText } from '../../../dev/cli/run-text.js';
import type { RunView } from '../../../lib/api/schemas.js';
import { plural as inspectorPlural } from '../../../dev/ui/client/format.js';
import { checkSchema } from '../../../dev/ui/client/json-schema.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Nouns Logbook counts in what it writes. A count before one of them must say 1 in the singular. */
const NOUNS = ['repair', 'attempt', 'point', 'part', 'chunk', 'event', 'line', 'step', 'turn', 'item', 'character', 'char', 'wait', 'call', 'token', 'run', 'file'];
/**
 * `${n} repairs`, `${n} output tokens`; not a verb (`${name} waits for`, `${chunk} runs past`) or a
 * unit (`runs/s`).
 */
const BARE_COUNT = new RegExp(`\\$\\{[^}]*\\} (?:(?:model|tool|output|input|more|unfinished|failed) )?(?:${NOUNS.join('|')})s\\b(?!/| (?:for|it|a|past|into)\\b)`);
/** A line that chooses the form itself (`n === 1 ? ... : ...`) is handled. */
const CHOOSES = /=== 1 \?/;

describe('plural', () => {
  it('says 1 in the singular, anything else in the plural, here and in the inspector', () => {
    for (const n of [0, 1, 2, 11]) {
      expect(plural(n, 'repair')).toBe(n === 1 ? '1 repair' : `${n} repairs`);
      expect(inspectorPlural(n, 'model call')).toBe(plural(n, 'model call'));
    }
    expect(plural(1, 'entry', 'entries')).toBe('1 entry');
    expect(plural(3, 'entry', 'entries')).toBe('3 entries');
  });

  it('is what `runs show` writes for an output schema with one repair, and the inspector for a one-character limit', () => {
    const run = {
      runId: 'r',
      status: 'completed',
      agent: { name: 'a', version: '1' },
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      lastSeq: 3,
      usage: { steps: 1, inputTokens: 1, outputTokens: 1, costUsd: 0 },
      attention: [],
      pinned: { model: 'scripted:x', prompt: { version: '1', sha256: 'a'.repeat(64) }, tools: [], output: { schema: {}, schemaHash: 'b'.repeat(64), maxRepairs: 1 } },
    } as unknown as RunView;
    expect(runText(run, Date.parse('2026-01-01T00:00:01Z'))).toContain('(at most 1 repair)');
    expect(checkSchema({ type: 'string', maxLength: 1 }, 'ab').map((i) => i.message)).toEqual([expect.stringContaining('at most 1 character')]);
    expect(checkSchema({ type: 'array', minItems: 1 }, []).map((i) => i.message)).toEqual([expect.stringContaining('at least 1 item')]);
  });

  it('is used wherever lib/ and dev/ write a count before a plural noun', () => {
    const bare = ['lib', 'dev'].flatMap(sources).flatMap((file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (BARE_COUNT.test(line) && !CHOOSES.test(line) ? [`${relative(ROOT, join(ROOT, file))}:${i + 1}: ${line.trim().slice(0, 140)}`] : [])),
    );
    expect(bare).toEqual([]);
  });
});
