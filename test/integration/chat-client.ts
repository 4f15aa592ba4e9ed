// logbook/chat as an application imports it, and the ai package's ChatTransport type it must fit.
import type { ChatTransport, UIMessage } from 'ai';
export { LogbookChatTransport, logbookChat } from 'logbook/chat';
export type ChatTransportCheck = ChatTransport<UIMessage>;
