// The only way this page builds elements. Text always goes in as text nodes: model, scenario, variant,
// app version and connection names come from beacons, which anyone can send, so none of them may ever
// be parsed as HTML.

/**
 * `el('td', { class: 'num', title: 'p90' }, 'text', child)`: attributes are set with setAttribute,
 * children are nodes or strings (strings become text nodes); null and false children are skipped.
 */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== null && value !== undefined && value !== false) node.setAttribute(name, value === true ? '' : String(value));
  }
  node.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false).map(asNode));
  return node;
}

/** Replaces an element's children (strings become text nodes). */
export function replaceChildren(parent, ...children) {
  parent.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false).map(asNode));
}

function asNode(child) {
  return child instanceof Node ? child : document.createTextNode(String(child));
}

export const byId = (id) => document.getElementById(id);
