/**
 * The visual editor's model: the flow definition the engine runs (app/flows/definition.py,
 * `{start, nodes: {id: {verb, next?, branches?, default?}}}`) changed by pure functions, so
 * every edit (by mouse or by the form) is the same operation, undo is a stack of definitions and
 * export is the definition itself. Node positions are the editor's own (the engine refuses
 * unknown keys), laid out from the graph and kept per flow in the browser.
 */

/** Verbs the engine knows (app/verbs/registry.py), each with a starting set of fields. */
export const VERB_TEMPLATES = {
  say: { text: 'Hello' },
  play: { url: 'https://' },
  gather: { input: ['dtmf'], numDigits: 1, timeout: 5, say: { text: 'Press 1 for sales, 2 for support.' } },
  dial: { target: [{ type: 'phone', name: '' }] },
  queue: { name: '' },
  conference: { name: '' },
  record: {},
  listen: { url: 'wss://' },
  pause: { length: 1 },
  hangup: {},
  redirect: { actionHook: 'https://' },
  tag: { data: {} },
};

/** Verbs after which nothing runs in a flow (no `next`): they hand the call over or end it. */
export const ENDS_CALL = new Set(['dial', 'queue', 'conference', 'record', 'listen', 'hangup', 'redirect']);

/** The branch a gather takes when nothing matched: no input before the timeout, or no match. */
export const DEFAULT_BRANCH = 'default';

export const EMPTY_FLOW = { start: 'start', nodes: { start: { verb: { verb: 'say', text: 'Hello' } } } };

function clone(value) {
  return JSON.parse(JSON.stringify(value));
}

export function isGather(node) {
  return node?.verb?.verb === 'gather';
}

/** A fresh node id for `verb`: `say`, `say_2`, … (the engine's id rule: letters, digits, _ and -). */
export function freshId(definition, verb) {
  const base = String(verb).replace(/[^A-Za-z0-9_-]/g, '') || 'node';
  if (!definition.nodes[base]) return base;
  for (let n = 2; ; n += 1) if (!definition.nodes[`${base}_${n}`]) return `${base}_${n}`;
}

export const NODE_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Add a node with `verb`'s template (or the given verb object); the first node becomes start. */
export function addNode(definition, verbName, id = freshId(definition, verbName)) {
  const next = clone(definition);
  next.nodes[id] = { verb: { verb: verbName, ...clone(VERB_TEMPLATES[verbName] || {}) } };
  if (!next.start || !next.nodes[next.start]) next.start = id;
  return next;
}

/** Remove a node and every link to it (a gather branch to it is removed with it). */
export function deleteNode(definition, id) {
  const next = clone(definition);
  delete next.nodes[id];
  for (const node of Object.values(next.nodes)) {
    if (node.next === id) delete node.next;
    if (node.default === id) delete node.default;
    if (node.branches) {
      for (const [key, target] of Object.entries(node.branches)) if (target === id) delete node.branches[key];
      if (!Object.keys(node.branches).length) delete node.branches;
    }
  }
  if (next.start === id) next.start = Object.keys(next.nodes)[0] || '';
  return next;
}

/**
 * Link `source`'s output `handle` to `target` (null: unlink). Handles: `next` on a verb after
 * which the call goes on; on a gather `default` (timeout or no match) and `branch:<input>`,
 * the digits or the words that take that branch.
 */
export function connect(definition, source, handle, target) {
  const next = clone(definition);
  const node = next.nodes[source];
  if (!node) return definition;
  if (handle.startsWith('branch:')) {
    const key = handle.slice('branch:'.length);
    node.branches = node.branches || {};
    if (target) node.branches[key] = target;
    else delete node.branches[key];
    if (!Object.keys(node.branches).length) delete node.branches;
  } else if (handle === DEFAULT_BRANCH || handle === 'next') {
    if (target) node[handle] = target;
    else delete node[handle];
  }
  return next;
}

/** Replace a node's verb; a node that stops being a gather loses its branches, one that becomes
 * a gather (or a verb that ends the call) loses `next`. */
export function setVerb(definition, id, verb) {
  const next = clone(definition);
  const node = next.nodes[id];
  node.verb = verb;
  if (verb?.verb === 'gather') delete node.next;
  else { delete node.branches; delete node.default; }
  if (ENDS_CALL.has(verb?.verb)) delete node.next;
  return next;
}

export function setStart(definition, id) {
  return { ...clone(definition), start: id };
}

/** Rename a node, following every link to it. */
export function renameNode(definition, id, newId) {
  if (id === newId || definition.nodes[newId]) return definition;
  const next = clone(definition);
  const entries = Object.entries(next.nodes).map(([key, node]) => [key === id ? newId : key, node]);
  next.nodes = Object.fromEntries(entries);
  for (const node of Object.values(next.nodes)) {
    for (const name of ['next', 'default']) if (node[name] === id) node[name] = newId;
    for (const [key, target] of Object.entries(node.branches || {})) if (target === id) node.branches[key] = newId;
  }
  if (next.start === id) next.start = newId;
  return next;
}

/** The links out of a node, as the editor draws them: {handle, label, target}. */
export function outputs(node) {
  const out = [];
  if (isGather(node)) {
    for (const [key, target] of Object.entries(node.branches || {})) out.push({ handle: `branch:${key}`, label: key, target });
    out.push({ handle: DEFAULT_BRANCH, label: 'Timeout or no match', target: node.default || null });
  } else if (!ENDS_CALL.has(node?.verb?.verb)) {
    out.push({ handle: 'next', label: 'Next', target: node.next || null });
  }
  return out;
}

/** Layers from `start` (breadth first), unreachable nodes after: a readable first layout. */
export function layout(definition, { dx = 260, dy = 170 } = {}) {
  const ids = Object.keys(definition.nodes);
  const depth = {};
  const queue = definition.nodes[definition.start] ? [definition.start] : [];
  if (queue.length) depth[definition.start] = 0;
  while (queue.length) {
    const id = queue.shift();
    for (const { target } of outputs(definition.nodes[id])) {
      if (target && definition.nodes[target] && depth[target] === undefined) {
        depth[target] = depth[id] + 1;
        queue.push(target);
      }
    }
  }
  const maxDepth = Math.max(0, ...Object.values(depth));
  const rows = {};
  const positions = {};
  for (const id of ids) {
    const row = depth[id] ?? maxDepth + 1;
    rows[row] = (rows[row] || 0) + 1;
    positions[id] = { x: (rows[row] - 1) * dx, y: row * dy };
  }
  return positions;
}

/** An imported text as a definition, or an error message (the server still validates it). */
export function parseImport(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { error: `Not JSON: ${err.message}` };
  }
  if (value && typeof value === 'object' && value.definition && !value.nodes) value = value.definition;
  if (!value || typeof value !== 'object' || Array.isArray(value) || typeof value.nodes !== 'object' || !value.nodes) {
    return { error: 'A flow is an object with "start" and "nodes".' };
  }
  return { definition: value };
}

/** Server problems ({node, field, message}, from validate or a refused save) by node id; the
 * rest (the flow as a whole) under ''. A refused URL (unsafe_url, details.path
 * `/nodes/<id>/…`) is placed on its node too. */
export function problemsByNode(problems) {
  const byNode = {};
  for (const p of problems || []) {
    const key = p.node || '';
    byNode[key] = byNode[key] || [];
    byNode[key].push(p.field ? `${p.field}: ${p.message}` : p.message);
  }
  return byNode;
}

/** A 422 from a save as problems: flow_invalid's details, or unsafe_url's pointer. */
export function problemsFromError(error) {
  if (!error) return [];
  if (error.code === 'flow_invalid' && Array.isArray(error.details)) return error.details;
  if (error.code === 'unsafe_url' && error.details?.path) {
    const parts = error.details.path.split('/').slice(1);
    const node = parts[0] === 'nodes' ? parts[1] : null;
    return [{ node, field: parts.slice(2).join('.') || null, message: error.message }];
  }
  return [];
}

/** Undo history: a bounded stack of past states. */
export const HISTORY_LIMIT = 100;

export function pushHistory(history, state) {
  const past = [...history, state];
  return past.length > HISTORY_LIMIT ? past.slice(past.length - HISTORY_LIMIT) : past;
}
