'use client';
// A useChat page metered the way docs/frameworks.md recommends to Next.js users. The page is still prerendered
// on the server: importing llm-ux-meter touches no browser global, and the meter is created in an effect.
import { useEffect, useRef, useState } from 'react';
import { useChat } from '@ai-sdk/react';
import { createMeter } from 'llm-ux-meter';

// For the test (tests/js/next.test.mjs): every report, in the page.
const onReport = (report) => (window.llmUxReports ??= []).push(report);

export default function Chat() {
  const { messages, sendMessage } = useChat(); // posts to /api/chat
  const [input, setInput] = useState('');
  const messagesRef = useRef(null);

  useEffect(() => {
    window.llmUxEffects = (window.llmUxEffects ?? 0) + 1; // for the test
    const ready = createMeter({ container: messagesRef.current, dimensions: { scenario: 'next' }, onReport });
    let live = true;
    ready.then((meter) => {
      if (!live) return; // cleaned up before it loaded (StrictMode runs effects twice in dev)
      meter.installFetch();
      Object.assign(window, { llmUxMeter: meter, llmUxMeterReady: true }); // for the test
    });
    return () => {
      live = false;
      ready.then((meter) => meter.destroy()); // whenever it loads: no hook is left behind
    };
  }, []);

  const send = (event) => {
    event.preventDefault();
    sendMessage({ text: input });
    setInput('');
  };

  return (
    <main>
      <h1>llm-ux-meter in Next.js</h1>
      <div id="messages" ref={messagesRef}>
        {messages.map((message) => (
          <p key={message.id} data-role={message.role}>
            {message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('')}
          </p>
        ))}
      </div>
      <form onSubmit={send}>
        <input value={input} onChange={(event) => setInput(event.target.value)} aria-label="Message" />
        <button type="submit">Send</button>
      </form>
    </main>
  );
}
