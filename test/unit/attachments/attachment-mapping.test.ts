import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { ModelError } from '../../../lib/core/errors.js';
import type { ModelAttachment, ModelRequest } from '../../../lib/core/messages.js';
import { toAiSdkCallOptions } from '../../../lib/models/ai-sdk-mapping.js';
import { BedrockConverseClient } from '../../../lib/models/bedrock-converse.js';
import { toConverseInput } from '../../../lib/models/bedrock-mapping.js';
import { OpenAiCompatibleClient } from '../../../lib/models/openai-compatible.js';
import { toChatCompletionsBody } from '../../../lib/models/openai-wire.js';
import { InstantClock, loadFixture, startFixtureServer, type FixtureServer } from '../models/fixture-server.js';
import { pdfBytes, pngBytes, textBytes } from './fixtures.js';

/**
 * Each adapter's wire for a user message with attachments: the exact shape, and for Bedrock and
 * OpenAI the bytes as the real clients put them on the wire (recorded by the fixture server).
 */

const png = pngBytes(96);
const pdf = pdfBytes();
const csv = textBytes('order,amount\n1001,45.00\n');
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const image: ModelAttachment = { kind: 'image', mediaType: 'image/png', sha256: 'a'.repeat(64), name: 'mug.png', data: b64(png) };
const pdfDoc: ModelAttachment = { kind: 'document', mediaType: 'application/pdf', sha256: 'b'.repeat(64), name: 'invoice #42.pdf', data: b64(pdf) };
const csvDoc: ModelAttachment = { kind: 'document', mediaType: 'text/csv', sha256: 'c'.repeat(64), data: b64(csv) };

const request: ModelRequest = {
  modelId: 'ignored-by-adapters',
  system: 'You look at things.',
  messages: [{ role: 'user', content: '{"task":"Is it broken?"}', attachments: [image, pdfDoc, csvDoc] }],
  tools: [],
  maxOutputTokens: 256,
};

let server: FixtureServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('Bedrock Converse', () => {
  it('maps images to image blocks and documents to document blocks with a cleaned, unique name', () => {
    const input = toConverseInput('anthropic.claude-3-5-sonnet-20241022-v2:0', request, { toolResultStatus: true });
    expect(input.messages).toEqual([
      {
        role: 'user',
        content: [
          { text: '{"task":"Is it broken?"}' },
          { image: { format: 'png', source: { bytes: Buffer.from(png) } } },
          { document: { format: 'pdf', name: 'invoice 42 (bbbbbbbb)', source: { bytes: Buffer.from(pdf) } } },
          { document: { format: 'csv', name: 'document (cccccccc)', source: { bytes: Buffer.from(csv) } } },
        ],
      },
    ]);
  });

  it('sends the bytes base64 in the signed request the SDK makes', async () => {
    server = await startFixtureServer([loadFixture('bedrock/text-answer.json')], 'h2c');
    const sdk = new BedrockRuntimeClient({
      endpoint: server.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIDLOGBOOKTEST', secretAccessKey: 'logbook-test-secret' },
      maxAttempts: 1,
    });
    const client = new BedrockConverseClient({
      client: sdk,
      modelId: 'anthropic.claude-3-5-haiku-20241022-v1:0',
      clock: new InstantClock(),
      random: () => 0.5,
    });
    await client.complete(request, { signal: new AbortController().signal });
    const sent = JSON.parse(server.requests[0]!.body) as { messages: { content: unknown[] }[] };
    expect(sent.messages[0]!.content).toEqual([
      { text: '{"task":"Is it broken?"}' },
      { image: { format: 'png', source: { bytes: b64(png) } } },
      { document: { format: 'pdf', name: 'invoice 42 (bbbbbbbb)', source: { bytes: b64(pdf) } } },
      { document: { format: 'csv', name: 'document (cccccccc)', source: { bytes: b64(csv) } } },
    ]);
  });
});

describe('OpenAI-compatible chat completions', () => {
  it('maps an image to an image_url data URL, a PDF to a file part, a text document to a text part', () => {
    const body = toChatCompletionsBody('gpt-4.1-mini', request, 'max_tokens');
    expect(body.messages).toEqual([
      { role: 'system', content: 'You look at things.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: '{"task":"Is it broken?"}' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${b64(png)}` } },
          { type: 'file', file: { filename: 'invoice #42.pdf', file_data: `data:application/pdf;base64,${b64(pdf)}` } },
          { type: 'text', text: `Attached document ${'c'.repeat(12)} (text/csv):\norder,amount\n1001,45.00\n` },
        ],
      },
    ]);
    // A user message without attachments keeps the plain string content.
    expect(toChatCompletionsBody('m', { ...request, messages: [{ role: 'user', content: 'hi' }] }, 'max_tokens').messages).toEqual([
      { role: 'system', content: 'You look at things.' },
      { role: 'user', content: 'hi' },
    ]);
  });

  it('puts the parts on the wire, and refuses a docx rather than dropping it', async () => {
    server = await startFixtureServer([loadFixture('openai/text-answer.json')]);
    const client = new OpenAiCompatibleClient({
      baseUrl: server.url,
      model: 'gpt-4.1-mini',
      apiKey: 'sk-logbook-test',
      clock: new InstantClock(),
      random: () => 0.5,
    });
    await client.complete(request, { signal: new AbortController().signal });
    const sent = JSON.parse(server.requests[0]!.body) as { messages: { content: unknown }[] };
    expect((sent.messages[1]!.content as { type: string }[]).map((p) => p.type)).toEqual(['text', 'image_url', 'file', 'text']);
    const docx: ModelAttachment = {
      kind: 'document',
      mediaType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      sha256: 'd'.repeat(64),
      data: 'UEsDBA==',
    };
    expect(() => toChatCompletionsBody('m', { ...request, messages: [{ role: 'user', content: 'x', attachments: [docx] }] }, 'max_tokens')).toThrow(ModelError);
  });
});

describe('AI SDK', () => {
  it('maps every attachment to a file part with its media type and name', () => {
    const options = toAiSdkCallOptions(request, undefined, 'openai.chat');
    expect(options.prompt[1]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: '{"task":"Is it broken?"}' },
        { type: 'file', data: b64(png), mediaType: 'image/png', filename: 'mug.png' },
        { type: 'file', data: b64(pdf), mediaType: 'application/pdf', filename: 'invoice #42.pdf' },
        { type: 'file', data: b64(csv), mediaType: 'text/csv' },
      ],
    });
  });
});
