// The response headers that mark AI SDK streams (their content type alone does not tell).

export const UI_STREAM_HEADER = 'x-vercel-ai-ui-message-stream';
export const DATA_STREAM_HEADER = 'x-vercel-ai-data-stream';
