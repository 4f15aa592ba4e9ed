import { describe, expect, it } from 'vitest';
import { attachmentRefsIn, downloadName } from '../../../dev/ui/client/attachment-refs.js';

const sha = (c: string) => c.repeat(64);

describe('the inspector: attachment references in a logged input', () => {
  it('lists each reference once, in order, and ignores look-alikes', () => {
    const input = {
      task: 'look',
      photo: { kind: 'blob', sha256: sha('a'), mediaType: 'image/png', bytes: 10, name: 'mug.png' },
      more: [
        { kind: 'blob', sha256: sha('b'), mediaType: 'application/pdf', bytes: 20 },
        { kind: 'blob', sha256: sha('a'), mediaType: 'image/png', bytes: 10 },
        { kind: 'blob', key: 'blobs/t/r/x.json', sha256: sha('c'), size: 5, summary: 'an offloaded body, not an attachment' },
        { kind: 'blob', sha256: 'not-hex', mediaType: 'image/png', bytes: 1 },
      ],
    };
    expect(attachmentRefsIn(input)).toEqual([
      { sha256: sha('a'), mediaType: 'image/png', bytes: 10, name: 'mug.png' },
      { sha256: sha('b'), mediaType: 'application/pdf', bytes: 20 },
    ]);
    expect(attachmentRefsIn('plain text')).toEqual([]);
  });

  it('saves under a name without path characters', () => {
    expect(downloadName({ sha256: sha('a'), mediaType: 'image/png', bytes: 1, name: '../../etc/passwd' })).toBe('.._.._etc_passwd');
    expect(downloadName({ sha256: sha('a'), mediaType: 'image/png', bytes: 1 })).toBe('attachment-aaaaaaaaaaaa');
  });
});
