import { LogbookChatTransport, type ChatLike, type LogbookChatTransportOptions, type UIMessageLike } from './transport.js';

type ToolPartLike = { type: string; state?: string; preliminary?: boolean };

/**
 * `sendAutomaticallyWhen` for approvals: the last message is an answer whose last step has an
 * approval answered (`addToolApprovalResponse`) and none left open, so the chat goes on by itself.
 * The same rule as the `ai` package's lastAssistantMessageIsCompleteWithApprovalResponses.
 */
export function approvalsAnswered({ messages }: { messages: readonly UIMessageLike[] }): boolean {
  const message = messages.at(-1);
  if (!message || message.role !== 'assistant') return false;
  const parts = message.parts as readonly ToolPartLike[];
  const lastStep = parts.map((p) => p.type).lastIndexOf('step-start');
  const tools = parts.slice(lastStep + 1).filter((p) => p.type.startsWith('tool-') || p.type === 'dynamic-tool');
  return (
    tools.some((p) => p.state === 'approval-responded') &&
    tools.every(
      (p) =>
        (p.state === 'output-available' && p.preliminary !== true) ||
        p.state === 'output-error' ||
        p.state === 'output-denied' ||
        p.state === 'approval-responded',
    )
  );
}

/** The constructor of one of the AI SDK's Chat classes (`Chat` of @ai-sdk/react, /vue, /svelte). */
export type ChatClass = new (init: never) => ChatLike;

/** The options a Chat class takes, its transport given as the transport or the transport's options. */
export type LogbookChatInit<Ctor extends ChatClass> = Omit<ConstructorParameters<Ctor>[0], 'transport'> & {
  transport: LogbookChatTransport | LogbookChatTransportOptions;
};

/**
 * A Chat of your UI framework's AI SDK package on a Logbook run, with the transport attached so a
 * message whose streamed text was not the run's is replayed from the log, and approvals answered
 * with `addToolApprovalResponse` sent on by themselves. `init` takes the Chat's own options
 * (`id`, `messages`, `onFinish`, ...) and the transport's; pass the Chat to `useChat({ chat })`.
 */
export function logbookChat<Ctor extends ChatClass>(Chat: Ctor, init: LogbookChatInit<Ctor>): InstanceType<Ctor> {
  const transport = init.transport instanceof LogbookChatTransport ? init.transport : new LogbookChatTransport(init.transport);
  const chat = new Chat({ sendAutomaticallyWhen: approvalsAnswered, ...init, transport } as never) as InstanceType<Ctor>;
  transport.attach(chat);
  return chat;
}
