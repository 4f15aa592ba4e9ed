import type { ContentBlock, ConverseCommandOutput, ConverseStreamOutput, TokenUsage } from '@aws-sdk/client-bedrock-runtime';
import type { ModelResponse } from '../core/messages.js';
import { fromConverseOutput } from './bedrock-mapping.js';
import { brokenStream, untilAborted, type TextSink } from './model-stream.js';
import { parseArguments } from './openai-wire.js';
import { plural } from '../core/plural.js';

type Block = { kind: 'text'; text: string } | { kind: 'toolUse'; toolUseId: string; name: string; input: string } | { kind: 'other' };

/** The exception members of ConverseStreamOutput: the SDK throws them, but a member is read the same way. */
const STREAM_EXCEPTIONS = [
  'internalServerException',
  'modelStreamErrorException',
  'validationException',
  'throttlingException',
  'serviceUnavailableException',
] as const;

/**
 * Reads a ConverseStream answer: text deltas go to the sink as they arrive; the blocks are put
 * back together (text, and each toolUse's input JSON from its fragments), with messageStop's stop
 * reason and metadata's usage, into the output Converse would have returned, which
 * `fromConverseOutput` reads: both paths give the same ModelResponse. A stream that ends before
 * messageStop and metadata broke (retried); an exception event is thrown as the SDK error it is.
 */
export async function readConverseStream(stream: AsyncIterable<ConverseStreamOutput>, sink: TextSink, signal: AbortSignal): Promise<ModelResponse> {
  const blocks = new Map<number, Block>();
  let stopReason: string | undefined;
  let usage: TokenUsage | undefined;
  let stopped = false;
  let events = 0;
  let textBlocks = 0;

  for await (const event of untilAborted(stream, signal)) {
    events++;
    for (const key of STREAM_EXCEPTIONS) {
      const exception = (event as unknown as Record<string, unknown>)[key];
      if (exception) throw exception;
    }
    if (event.contentBlockStart) {
      const { contentBlockIndex: index = 0, start } = event.contentBlockStart;
      if (start?.toolUse) blocks.set(index, { kind: 'toolUse', toolUseId: start.toolUse.toolUseId ?? '', name: start.toolUse.name ?? '', input: '' });
      else if (!blocks.has(index)) blocks.set(index, { kind: 'other' });
    } else if (event.contentBlockDelta) {
      const { contentBlockIndex: index = 0, delta } = event.contentBlockDelta;
      if (delta?.text !== undefined) {
        let block = blocks.get(index);
        if (!block) {
          block = { kind: 'text', text: '' };
          blocks.set(index, block);
          // Converse joins the text blocks of an answer with a newline: the preview does too.
          if (textBlocks++ > 0) sink.emit('\n');
        }
        if (block.kind === 'text') {
          block.text += delta.text;
          sink.emit(delta.text);
        }
      } else if (delta?.toolUse) {
        const block = blocks.get(index);
        if (block?.kind === 'toolUse') block.input += delta.toolUse.input ?? '';
      } else if (!blocks.has(index)) {
        // reasoningContent, citations: not part of the neutral format, as in fromConverseOutput.
        blocks.set(index, { kind: 'other' });
      }
    } else if (event.messageStop) {
      stopReason = event.messageStop.stopReason;
      stopped = true;
    } else if (event.metadata) {
      usage = event.metadata.usage;
    }
  }
  if (!stopped || usage === undefined) throw brokenStream('bedrock', `after ${plural(events, 'event')}: no ${stopped ? 'metadata' : 'messageStop'}`);

  const content: ContentBlock[] = [];
  const argsErrors: (string | undefined)[] = [];
  for (const [, block] of [...blocks].sort(([a], [b]) => a - b)) {
    if (block.kind === 'text') content.push({ text: block.text });
    else if (block.kind === 'toolUse') {
      // Converse returns the input as a JSON document; the stream sends its text in pieces.
      const { args, argsError } = parseArguments(block.input);
      content.push({ toolUse: { toolUseId: block.toolUseId, name: block.name, input: args as never } });
      argsErrors.push(argsError);
    }
  }
  const output = { output: { message: { role: 'assistant', content } }, stopReason, usage } as ConverseCommandOutput;
  const response = fromConverseOutput(output);
  return { ...response, calls: response.calls.map((c, i) => (argsErrors[i] === undefined ? c : { ...c, argsError: argsErrors[i] })) };
}
