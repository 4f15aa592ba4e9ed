/**
 * The page of the chat browser test (bundled by esbuild): React, @ai-sdk/react's useChat and
 * logbook/chat, as an application's chat UI uses them (the guide's component, docs/guides/chat-ui.md).
 * `?chat=<id>` names the chat, which is the run id.
 */
import { Chat, useChat } from '@ai-sdk/react';
import type { UIMessage } from 'ai';
import { useState } from 'react';
import { createRoot } from 'react-dom/client';
import { logbookChat, type LogbookDataTypes } from 'logbook/chat';

type Message = UIMessage<unknown, LogbookDataTypes>;
const chatId = new URLSearchParams(location.search).get('chat') ?? 'page-chat';

function App() {
  const [chat] = useState(() => logbookChat(Chat<Message>, { id: chatId, transport: { api: location.origin, agent: 'refunds' } }));
  const { messages, sendMessage, addToolApprovalResponse, status } = useChat({ chat, resume: true });
  const [text, setText] = useState('');
  return (
    <main data-status={status}>
      {messages.map((m) => (
        <section key={m.id} className={m.role} data-id={m.id}>
          {m.parts.map((p, i) => {
            if (p.type === 'text')
              return (
                <p key={i} className="text">
                  {p.text}
                </p>
              );
            if (p.type === 'data-approval' && p.data.status === 'requested') {
              const { callId, tool, input } = p.data;
              return (
                <button key={i} className="approve" onClick={() => void addToolApprovalResponse({ id: callId, approved: true })}>
                  Approve {tool} {JSON.stringify(input)}
                </button>
              );
            }
            if (p.type.startsWith('tool-'))
              return (
                <div key={i} className="tool" data-state={(p as { state: string }).state}>
                  {p.type.slice(5)}
                </div>
              );
            return null;
          })}
        </section>
      ))}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void sendMessage({ text });
          setText('');
        }}
      >
        <input id="say" value={text} onChange={(e) => setText(e.target.value)} />
        <button id="send" type="submit">
          Send
        </button>
      </form>
    </main>
  );
}

createRoot(document.getElementById('root')!).render(<App />);
