import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { attachment } from '../../../lib/authoring/attachment.js';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { parseRunInput } from '../../../lib/authoring/run-input.js';
import { attachmentCandidates, attachmentRefs, labelProblem, sniffAttachment } from '../../../lib/core/attachments.js';
import { ConfigError, ValidationError } from '../../../lib/core/errors.js';
import type { JsonValue } from '../../../lib/core/json.js';
import { attachmentProblem } from '../../../lib/models/model-capabilities.js';
import { docxBytes, jpegBytes, pdfBytes, pngBytes, textBytes } from './fixtures.js';

const ref = (sha: string, mediaType = 'image/png') => ({ kind: 'blob', sha256: sha.repeat(64), mediaType, bytes: 10 });

describe('sniffAttachment', () => {
  it('reads each allowed type from its signature', () => {
    const ascii = (s: string) => new TextEncoder().encode(s);
    expect(sniffAttachment(pngBytes())).toBe('image/png');
    expect(sniffAttachment(jpegBytes())).toBe('image/jpeg');
    expect(sniffAttachment(ascii('GIF89a....'))).toBe('image/gif');
    expect(sniffAttachment(ascii('GIF87a....'))).toBe('image/gif');
    expect(sniffAttachment(ascii('RIFF\x10\x00\x00\x00WEBPVP8 '))).toBe('image/webp');
    expect(sniffAttachment(ascii('RIFF\x10\x00\x00\x00WAVEfmt '))).toBeUndefined();
    expect(sniffAttachment(pdfBytes())).toBe('application/pdf');
    expect(sniffAttachment(docxBytes())).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    expect(sniffAttachment(new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0, 0]))).toBeUndefined();
    expect(sniffAttachment(textBytes('naïve, café'))).toBe('text');
    expect(sniffAttachment(new Uint8Array([0x68, 0x69, 0x00]))).toBeUndefined();
    expect(sniffAttachment(new Uint8Array([0xc3, 0x28]))).toBeUndefined();
  });

  it('lets text of one kind carry any text label, and nothing else cross over', () => {
    expect(labelProblem('text/markdown', textBytes('# hi'))).toBeUndefined();
    expect(labelProblem('text/html', textBytes('# hi'))).toBeUndefined();
    expect(labelProblem('image/webp', textBytes('# hi'))).toBe('the bytes are text, not image/webp');
    expect(labelProblem('image/gif', pngBytes())).toBe('the bytes are image/png, not image/gif');
  });
});

describe('attachment references in a value', () => {
  it('finds every attachment-shaped object with its path, and keeps the valid ones once each', () => {
    const input: JsonValue = {
      task: 'x',
      photo: ref('a'),
      more: [ref('b'), { deep: ref('a') }, { kind: 'blob', mediaType: 'image/png' }],
      other: { kind: 'blob' },
    };
    expect(attachmentCandidates(input, 'input').map((c) => c.path)).toEqual(['input.photo', 'input.more.0', 'input.more.1.deep', 'input.more.2']);
    expect(attachmentRefs(input).map((r) => r.sha256[0])).toEqual(['a', 'b']);
    expect(attachmentRefs('a string input')).toEqual([]);
  });
});

describe('attachment() in an input schema', () => {
  it('takes a reference of an accepted type and names the path of anything else', () => {
    const agent = defineAgent({
      name: 'looker',
      version: '1',
      model: { id: 'scripted:test', maxOutputTokens: 100 },
      system: { version: '1', text: 'Look.' },
      tools: [],
      input: z.object({
        question: z.string(),
        photo: attachment({ accept: ['image'] }),
        docs: z.array(attachment({ accept: ['application/pdf'] })).optional(),
      }),
    });
    expect(parseRunInput(agent, { question: 'q', photo: ref('a') })).toEqual({ question: 'q', photo: ref('a') });
    const refused = (() => {
      try {
        parseRunInput(agent, { question: 'q', photo: ref('a', 'application/pdf'), docs: [ref('b', 'text/plain')] });
      } catch (error) {
        return error;
      }
    })() as ValidationError;
    expect(refused).toBeInstanceOf(ValidationError);
    expect(refused.issues.map((i) => i.path)).toEqual(['input.photo.mediaType', 'input.docs.0.mediaType']);
    // The published JSON Schema names the accepted types.
    const schema = agent.inputSchema?.jsonSchema as { properties: { photo: { properties: { mediaType: { enum: string[] } } } } };
    expect(schema.properties.photo.properties.mediaType.enum).toEqual(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
  });

  it('refuses an accept list that names no attachment type', () => {
    expect(() => attachment({ accept: ['image/svg+xml' as 'image/png'] })).toThrow(ConfigError);
  });
});

describe('attachmentProblem', () => {
  it('says which models cannot take which attachments', () => {
    expect(attachmentProblem('scripted:test', 'image/png')).toBeUndefined();
    expect(attachmentProblem('aisdk:openai.chat/gpt-4o', 'application/pdf')).toBeUndefined();
    expect(attachmentProblem('bedrock:us.anthropic.claude-sonnet-4-20250514-v1:0', 'image/png')).toBeUndefined();
    expect(attachmentProblem('bedrock:anthropic.claude-3-5-haiku-20241022-v1:0', 'application/pdf')).toBeUndefined();
    expect(attachmentProblem('bedrock:amazon.nova-lite-v1:0', 'image/webp')).toBeUndefined();
    expect(attachmentProblem('bedrock:amazon.nova-micro-v1:0', 'image/png')).toBe(
      'model bedrock:amazon.nova-micro-v1:0 does not take images (image/png) on Bedrock Converse',
    );
    expect(attachmentProblem('openai:gpt-4.1-mini', 'image/png')).toBeUndefined();
    expect(attachmentProblem('openai:gpt-3.5-turbo', 'image/png')).toBe(
      'model openai:gpt-3.5-turbo does not take images (image/png) (not a known vision model)',
    );
    expect(attachmentProblem('openai:gpt-3.5-turbo', 'text/csv')).toBeUndefined();
    expect(attachmentProblem('openai:gpt-4o', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document')).toContain('takes no docx');
    expect(attachmentProblem('openai:o3-mini', 'application/pdf')).toContain('does not take application/pdf documents');
  });
});
