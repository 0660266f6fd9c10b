import { describe, expect, test } from 'vitest';
import {
  EMPTY_FLOW, addNode, connect, deleteNode, layout, outputs, parseImport, problemsByNode, problemsFromError,
  pushHistory, renameNode, setVerb, HISTORY_LIMIT,
} from '../src/flows/model.js';

const menu = {
  start: 'welcome',
  nodes: {
    welcome: { verb: { verb: 'say', text: 'Hi' }, next: 'menu' },
    menu: { verb: { verb: 'gather', numDigits: 1 }, branches: { 1: 'sales', sales: 'sales' }, default: 'menu' },
    sales: { verb: { verb: 'queue', name: 'sales' } },
  },
};

describe('the flow editor model (the definition the flow engine runs)', () => {
  test('a gather has one output per branch (digits or words) and one for timeout or no match', () => {
    expect(outputs(menu.nodes.menu).map((o) => [o.handle, o.target])).toEqual(
      [['branch:1', 'sales'], ['branch:sales', 'sales'], ['default', 'menu']]);
    expect(outputs(menu.nodes.welcome)).toEqual([{ handle: 'next', label: 'Next', target: 'menu' }]);
    expect(outputs(menu.nodes.sales)).toEqual([]); // queue hands the call over: nothing after it
  });

  test('connecting sets next, a branch or the default; unlinking a branch removes it', () => {
    let d = addNode(menu, 'hangup', 'bye');
    d = connect(d, 'menu', 'branch:2', 'bye');
    d = connect(d, 'menu', 'default', 'bye');
    expect(d.nodes.menu.branches['2']).toBe('bye');
    expect(d.nodes.menu.default).toBe('bye');
    d = connect(d, 'menu', 'branch:2', null);
    expect(d.nodes.menu.branches).toEqual({ 1: 'sales', sales: 'sales' });
    expect(menu.nodes.menu.default).toBe('menu'); // the original is never changed (undo keeps it)
  });

  test('deleting a node removes every link to it and moves start', () => {
    const d = deleteNode(deleteNode(menu, 'sales'), 'welcome');
    expect(d.start).toBe('menu');
    expect(d.nodes.menu.branches).toBeUndefined();
    expect(Object.keys(d.nodes)).toEqual(['menu']);
  });

  test('renaming follows every link; a verb that stops being a gather loses its branches', () => {
    const renamed = renameNode(menu, 'sales', 'sales_queue');
    expect(renamed.nodes.menu.branches).toEqual({ 1: 'sales_queue', sales: 'sales_queue' });
    const said = setVerb(menu, 'menu', { verb: 'say', text: 'x' });
    expect(said.nodes.menu.branches).toBeUndefined();
    expect(said.nodes.menu.default).toBeUndefined();
  });

  test('the first layout puts nodes in layers from start', () => {
    const at = layout(menu);
    expect(at.welcome.y).toBeLessThan(at.menu.y);
    expect(at.menu.y).toBeLessThan(at.sales.y);
  });

  test('import takes a definition or a saved flow, and says why other text is not one', () => {
    expect(parseImport(JSON.stringify(menu)).definition).toEqual(menu);
    expect(parseImport(JSON.stringify({ name: 'x', definition: EMPTY_FLOW })).definition).toEqual(EMPTY_FLOW);
    expect(parseImport('{').error).toMatch(/^Not JSON/);
    expect(parseImport('[1]').error).toMatch(/start.*nodes/);
  });

  test('the server\'s problems land on their node; an unsafe URL by its pointer', () => {
    expect(problemsByNode([{ node: 'menu', field: 'verb.numDigits', message: 'bad' }, { node: null, field: 'start', message: 'x' }]))
      .toEqual({ menu: ['verb.numDigits: bad'], '': ['start: x'] });
    expect(problemsFromError({ code: 'unsafe_url', message: 'private', details: { field: 'definition', path: '/nodes/a/verb/url' } }))
      .toEqual([{ node: 'a', field: 'verb.url', message: 'private' }]);
  });

  test('undo history is bounded', () => {
    let h = [];
    for (let i = 0; i < HISTORY_LIMIT + 5; i += 1) h = pushHistory(h, i);
    expect(h).toHaveLength(HISTORY_LIMIT);
    expect(h[0]).toBe(5);
  });
});
