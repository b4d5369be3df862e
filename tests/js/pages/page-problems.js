// Records what goes wrong in a test page, the same way in every engine: uncaught errors, unhandled
// rejections and console warnings and errors, as { kind, text } in globalThis.pageProblems. Every test
// page calls it before its own code runs; the tests read the list with pageProblems() of
// tests/js/browsers/index.mjs. (A call, not an import for its effect: the package declares itself free of
// side effects, and a bundler would drop such an import.)
export function recordPageProblems() {
  const problems = [];
  globalThis.pageProblems = problems;
  addEventListener('error', (e) => problems.push({ kind: 'error', text: String(e.error ?? e.message) }));
  addEventListener('unhandledrejection', (e) => problems.push({ kind: 'unhandledrejection', text: String(e.reason) }));
  for (const level of ['warn', 'error']) {
    const original = console[level];
    console[level] = (...args) => {
      problems.push({ kind: `console.${level}`, text: args.map(String).join(' ') });
      original.apply(console, args);
    };
  }
}
