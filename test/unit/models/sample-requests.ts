import type { ModelRequest, ModelToolSpec } from '../../../lib/core/messages.js';

export const invoiceTool: ModelToolSpec = {
  name: 'get_invoice',
  description: 'Fetch one invoice by id.',
  inputSchema: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { invoiceId: { type: 'string' }, includeLines: { type: 'boolean' } },
    required: ['invoiceId'],
    additionalProperties: false,
  },
};

export const firstTurn: ModelRequest = {
  modelId: 'ignored-by-adapters',
  system: 'You are a careful accounts-receivable assistant.',
  messages: [{ role: 'user', content: 'Summarise the overdue invoices.' }],
  tools: [invoiceTool],
  maxOutputTokens: 1024,
};

/**
 * A conversation as an OpenAI-compatible local server produces it: two turns whose calls both came
 * back as `call_0` (as vLLM and Ollama do), one of them failing, then a follow-up user message.
 */
export const reusedIdsTurn: ModelRequest = {
  ...firstTurn,
  messages: [
    { role: 'user', content: 'Summarise the overdue invoices.' },
    {
      role: 'assistant',
      text: 'Looking up the first invoice.',
      calls: [{ callId: '3-0', providerId: 'call_0', name: 'get_invoice', args: { invoiceId: 'INV-1042' } }],
    },
    { role: 'tool', callId: '3-0', providerId: 'call_0', name: 'get_invoice', isError: false, content: '{"total":100}' },
    {
      role: 'assistant',
      text: '',
      calls: [
        { callId: '6-0', providerId: 'call_0', name: 'get_invoice', args: { invoiceId: 'INV-1043' } },
        { callId: '6-1', providerId: 'call_1', name: 'get_invoice', args: { invoiceId: 'INV-1044' } },
      ],
    },
    { role: 'tool', callId: '6-0', providerId: 'call_0', name: 'get_invoice', isError: true, content: 'invoice INV-1043 not found' },
    { role: 'tool', callId: '6-1', providerId: 'call_1', name: 'get_invoice', isError: false, content: '{"total":250}' },
    { role: 'user', content: 'Also mention which lookups failed.' },
  ],
};
