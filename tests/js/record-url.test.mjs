// The URL a record carries off the page (js/lib/beacons/record-url.js): parsed, never pattern-matched,
// so no spelling of a URL can carry its query, fragment or credentials to the collector.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_URL_LENGTH, recordUrl } from '../../js/lib/beacons/record-url.js';

test('query, fragment and credentials are cut, however the URL is spelled', () => {
  const cases = [
    ['https://api.example.com/v1/chat?key=secret#frag', 'https://api.example.com/v1/chat'],
    // A raw newline before the query: the old pattern (/[?#].*$/ without the s flag) kept the query.
    ['https://api.example.com/v1/chat?x=1\nsecret=2', 'https://api.example.com/v1/chat'],
    ['https://api.example.com/v1/ch\nat?secret=1', 'https://api.example.com/v1/chat'],
    ['https://api.example.com/v1/chat\t?secret=1', 'https://api.example.com/v1/chat'],
    ['https://user:password@api.example.com/v1/chat', 'https://api.example.com/v1/chat'],
    ['HTTPS://API.EXAMPLE.COM:443/v1/../v1/chat#?x', 'https://api.example.com/v1/chat'],
    ['https://api.example.com/v1\\chat?secret', 'https://api.example.com/v1/chat'],
  ];
  for (const [url, want] of cases) assert.equal(recordUrl(url, false), want, JSON.stringify(url));
});

test('the query and fragment stay when the app keeps them; credentials never do', () => {
  assert.equal(recordUrl('https://u:p@api.example.com/chat?model=a#b', true), 'https://api.example.com/chat?model=a#b');
});

test('a URL that may hold content (data:, blob:) leaves only its scheme; one that does not parse, nothing', () => {
  assert.equal(recordUrl('data:text/event-stream,the whole answer', false), 'data:');
  assert.equal(recordUrl('blob:https://chat.example.com/5d6c', false), 'blob:');
  assert.equal(recordUrl('/relative/without/a/page', false), null); // Node: no location to resolve against
  assert.equal(recordUrl('http://[::1', false), null);
});

test(`a record's URL is at most ${MAX_URL_LENGTH} characters`, () => {
  const url = recordUrl(`https://api.example.com/${'a'.repeat(5000)}?q`, false);
  assert.equal(url.length, MAX_URL_LENGTH);
  assert.ok(url.startsWith('https://api.example.com/aaa'));
});
