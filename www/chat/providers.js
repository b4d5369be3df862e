// The chat app's side of each provider API: the request it sends and the answer text it reads back out
// of the stream. This is the app's own code, as any chat app has it; the meter reads the same stream on
// its own, without help from here.

/** Per format: a label, the request (path and JSON body) for a prompt, the framing, and the text of one event. */
export const PROVIDERS = {
  openai: {
    label: 'OpenAI Chat Completions',
    request: (model, prompt) => ['/v1/chat/completions', { model, messages: [{ role: 'user', content: prompt }], stream: true, stream_options: { include_usage: true } }],
    framing: 'sse',
    text: (event) => event.choices?.[0]?.delta?.content,
  },
  anthropic: {
    label: 'Anthropic Messages',
    request: (model, prompt) => ['/v1/messages', { model, max_tokens: 1024, messages: [{ role: 'user', content: prompt }], stream: true }],
    framing: 'sse',
    text: (event) => (event.type === 'content_block_delta' ? event.delta?.text : undefined),
  },
  gemini: {
    label: 'Gemini streamGenerateContent',
    // Gemini names the model in the path, not in the body.
    request: (model, prompt) => [`/v1beta/models/${encodeURIComponent(model)}:streamGenerateContent?alt=sse`, { contents: [{ role: 'user', parts: [{ text: prompt }] }] }],
    framing: 'sse',
    text: (event) => event.candidates?.[0]?.content?.parts?.map((part) => part.text ?? '').join(''),
  },
  ollama: {
    label: 'Ollama /api/chat',
    request: (model, prompt) => ['/api/chat', { model, messages: [{ role: 'user', content: prompt }], stream: true }],
    framing: 'ndjson',
    text: (event) => event.message?.content,
  },
  'ai-sdk-ui': {
    label: 'AI SDK UI message stream',
    request: (model, prompt) => ['/api/ui-chat', { id: 'demo-chat', model, trigger: 'submit-message', messages: [{ id: crypto.randomUUID(), role: 'user', parts: [{ type: 'text', text: prompt }] }] }],
    framing: 'sse',
    text: (event) => (event.type === 'text-delta' ? event.delta : undefined),
  },
};

/**
 * Reads a streamed answer and calls `onText(text)` for each piece of answer text, as soon as its event
 * is complete. SSE events end at a blank line and carry JSON in `data:` lines; NDJSON is a JSON value a line.
 */
export async function readAnswer(response, provider, onText) {
  const decoder = new TextDecoder();
  const separator = provider.framing === 'sse' ? /\r?\n\r?\n/ : /\r?\n/;
  const reader = response.body.getReader();
  let pending = '';
  const emit = (block) => {
    const data = provider.framing === 'sse'
      ? block.split(/\r?\n/).filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trimStart()).join('\n')
      : block;
    if (!data.trim() || data === '[DONE]') return;
    const text = provider.text(JSON.parse(data));
    if (text) onText(text);
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      pending += decoder.decode(value, { stream: !done });
      const blocks = pending.split(separator);
      pending = done ? '' : blocks.pop();
      blocks.forEach(emit);
      if (done) return;
    }
  } catch (error) {
    // Stop the download too: a body left unread would hold the connection (and its stream) open.
    reader.cancel().catch(() => {});
    throw error;
  }
}
