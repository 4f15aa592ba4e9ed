/**
 * `logbook/chat`: the AI SDK's chat UI (`useChat` of @ai-sdk/react, /vue, /svelte) on a durable
 * Logbook run. Runs in browsers and in Node; imports nothing of `ai` (its types are matched).
 */
export { LogbookChatTransport } from './transport.js';
export type { ApprovalAnswer, ChatLike, HeadersOption, LogbookChatTransportOptions, SendMessagesOptions, UIMessageLike } from './transport.js';
export { approvalsAnswered, logbookChat, type ChatClass, type LogbookChatInit } from './logbook-chat.js';
export type { ChatPlace, ChatPlaceStorage } from './chat-state.js';
export type { ReconnectPolicy } from './chat-connection.js';
export { chatMessageId, turnOfMessageId, UI_MESSAGE_STREAM_HEADERS } from './ui-chunks.js';
export type { ApprovalData, AttentionData, FinishReason, LogbookDataTypes, LogbookUIChunk, ReplayData, WaitData } from './ui-chunks.js';
