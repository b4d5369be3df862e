// Render time from the DOM: a MutationObserver on the chat container attributes text changes to the
// one stream painting there; the paint time is taken in the next frame. With several such streams at
// once there is no telling whose text changed, so attribution is left to explicit `rendered()` calls.

/**
 * Watches `container` (an element or a selector) while `streams()` has DOM-rendered streams; returns the
 * function to call when one opens or closes (null without a container).
 */
export function createDomRender(container, streams) {
  if (container == null || typeof MutationObserver !== 'function') return null;
  const inContainer = (node) => {
    const element = node.nodeType === 1 ? node : node.parentElement;
    return typeof container === 'string' ? element?.closest(container) != null : container.contains(node);
  };
  const observer = new MutationObserver((mutations) => {
    const painting = streams();
    if (painting.length === 1 && mutations.some((m) => inContainer(m.target))) painting[0].domChanged();
  });
  let watching = false;
  return () => {
    const wanted = streams().length > 0;
    if (wanted === watching) return;
    if (wanted) observer.observe(document.documentElement, { childList: true, subtree: true, characterData: true });
    else observer.disconnect();
    watching = wanted;
  };
}
