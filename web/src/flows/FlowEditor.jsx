import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { Background, Controls, Handle, Position, ReactFlow } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import './flows.css';
import { useAuth } from '../auth.jsx';
import { Field } from '../components/Field.jsx';
import { VerbForm } from './VerbForm.jsx';
import {
  DEFAULT_BRANCH, ENDS_CALL, NODE_ID_PATTERN, VERB_TEMPLATES, addNode, connect, deleteNode, freshId, isGather,
  layout, outputs, parseImport, problemsByNode, problemsFromError, pushHistory, renameNode, setStart, setVerb,
} from './model.js';

const CHECK_DELAY_MS = 400; // live validation once typing pauses, not on every key

/** One line saying what a verb does, on its node. */
export function summary(verb) {
  if (!verb) return '';
  if (verb.text) return `“${verb.text}”`;
  if (verb.say?.text) return `“${verb.say.text}”`;
  if (verb.name) return verb.name;
  if (verb.url) return verb.url;
  if (verb.target) return verb.target.map((t) => `${t.type}:${t.name || ''}`).join(', ');
  if (verb.length) return `${verb.length} s`;
  return '';
}

function VerbNode({ data }) {
  const { id, node, start, problems } = data;
  return (
    <div className={`flow-node${problems.length ? ' has-problems' : ''}${start ? ' is-start' : ''}`}>
      <Handle type="target" position={Position.Top} />
      <div className="flow-node-head">
        <strong>{id}</strong> <span className="verb-name">{node.verb?.verb || '?'}</span>
        {start && <span className="start-badge">Start</span>}
      </div>
      <p className="flow-node-summary">{summary(node.verb)}</p>
      {problems.map((text) => <p key={text} className="node-problem">{text}</p>)}
      <div className="flow-node-outs">
        {outputs(node).map((out) => (
          <div key={out.handle} className="flow-out">
            <span>{out.label}</span>
            <Handle type="source" id={out.handle} position={Position.Right} />
          </div>
        ))}
      </div>
    </div>
  );
}

const NODE_TYPES = { verb: VerbNode };

function layoutKey(flowId) {
  return `console:flow-layout:${flowId}`;
}

/**
 * The visual editor of one flow. `initial`: {name, definition}; `onSave({name, definition})`
 * saves it (rejecting with the ApiError); `flowId` keys the layout kept in this browser.
 * Everything edited stays in the editor (and in sessionStorage under `draftKey`) until a save
 * succeeds, so nothing is lost when the server refuses it.
 */
export function FlowEditor({ flowId, initial, draftKey, onSave, saveLabel = 'Save flow' }) {
  const { call } = useAuth();
  const [state, setState] = useState(() => {
    try {
      const kept = JSON.parse(sessionStorage.getItem(draftKey) || 'null');
      if (kept) return kept;
    } catch { /* an unreadable draft: start from the saved flow */ }
    return { name: initial.name, definition: initial.definition };
  });
  const [positions, setPositions] = useState(() => {
    let kept = {};
    try { kept = JSON.parse(localStorage.getItem(layoutKey(flowId)) || '{}'); } catch { kept = {}; }
    return { ...layout(state.definition), ...kept };
  });
  const [history, setHistory] = useState([]);
  const [selected, setSelected] = useState(state.definition.start || null);
  const [checked, setChecked] = useState({ problems: [], checking: false, failed: null });
  const [save, setSave] = useState({ busy: false, error: null, saved: false, problems: [] });
  const [announce, setAnnounce] = useState('');
  const { definition, name } = state;

  useEffect(() => { sessionStorage.setItem(draftKey, JSON.stringify(state)); }, [draftKey, state]);
  useEffect(() => { localStorage.setItem(layoutKey(flowId), JSON.stringify(positions)); }, [flowId, positions]);

  // the server's verdict on what is on screen (POST /api/call-flows/validate), once typing pauses
  useEffect(() => {
    let cancelled = false;
    setChecked((c) => ({ ...c, checking: true }));
    const timer = setTimeout(async () => {
      try {
        const verdict = await call('/api/call-flows/validate', { method: 'POST', body: { definition } });
        if (!cancelled) setChecked({ problems: verdict.errors, checking: false, failed: null });
      } catch (error) {
        if (!cancelled) setChecked((c) => ({ ...c, checking: false, failed: error }));
      }
    }, CHECK_DELAY_MS);
    return () => { cancelled = true; clearTimeout(timer); };
  }, [call, definition]);

  // the latest values, for changes made several times in one event (and never inside an updater)
  const latest = useRef({ state, positions, history });
  latest.current = { ...latest.current, positions, history };

  /** Every change goes through here: the state before it is what Undo returns to. */
  const change = useCallback((fn, message) => {
    const current = latest.current.state;
    const updated = fn(current);
    if (JSON.stringify(updated) === JSON.stringify(current)) return;
    const past = pushHistory(latest.current.history, { state: current, positions: latest.current.positions });
    latest.current = { ...latest.current, state: updated, history: past };
    setHistory(past);
    setState(updated);
    setSave((s) => ({ ...s, saved: false }));
    if (message) setAnnounce(message);
  }, []);

  const editDefinition = useCallback((fn, message) => change((s) => ({ ...s, definition: fn(s.definition) }), message), [change]);

  const undo = useCallback(() => {
    const past = latest.current.history;
    if (!past.length) return;
    const last = past[past.length - 1];
    latest.current = { ...latest.current, state: last.state, history: past.slice(0, -1) };
    setHistory(past.slice(0, -1));
    setState(last.state);
    setPositions(last.positions);
    setAnnounce('Undone.');
  }, []);

  useEffect(() => {
    function onKey(event) {
      const typing = ['INPUT', 'TEXTAREA', 'SELECT'].includes(event.target?.tagName);
      if ((event.ctrlKey || event.metaKey) && event.key === 'z' && !typing) {
        event.preventDefault();
        undo();
      }
    }
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [undo]);

  const problems = useMemo(() => problemsByNode([...checked.problems, ...save.problems]), [checked.problems, save.problems]);

  const nodes = useMemo(() => Object.entries(definition.nodes).map(([id, node]) => ({
    id, type: 'verb', position: positions[id] || { x: 0, y: 0 }, selected: id === selected,
    ariaLabel: `Node ${id}: ${node.verb?.verb || 'unknown verb'}${id === definition.start ? ', start' : ''}`,
    data: { id, node, start: id === definition.start, problems: problems[id] || [] },
  })), [definition, positions, selected, problems]);

  const edges = useMemo(() => Object.entries(definition.nodes).flatMap(([id, node]) => outputs(node)
    .filter((out) => out.target && definition.nodes[out.target])
    .map((out) => ({ id: `${id}|${out.handle}`, source: id, sourceHandle: out.handle, target: out.target,
      label: out.handle === 'next' ? undefined : out.label, ariaLabel: `${id} ${out.label} to ${out.target}` }))), [definition]);

  const dragStart = useRef(null);
  function onNodesChange(changes) {
    for (const c of changes) {
      if (c.type === 'position' && c.position) {
        setPositions((p) => ({ ...p, [c.id]: c.position }));
      } else if (c.type === 'select' && c.selected) {
        setSelected(c.id);
      } else if (c.type === 'remove') {
        editDefinition((d) => deleteNode(d, c.id), `Node ${c.id} deleted.`);
      }
    }
  }
  function onEdgesChange(changes) {
    for (const c of changes) {
      if (c.type === 'remove') {
        const [source, handle] = c.id.split('|');
        editDefinition((d) => connect(d, source, handle, null), `Link from ${source} removed.`);
      }
    }
  }

  async function submit(event) {
    event?.preventDefault();
    setSave({ busy: true, error: null, saved: false, problems: [] });
    try {
      await onSave({ name, definition });
      sessionStorage.removeItem(draftKey);
      setSave({ busy: false, error: null, saved: true, problems: [] });
    } catch (error) {
      setSave({ busy: false, error, saved: false, problems: problemsFromError(error) });
    }
  }

  const flowProblems = problems[''] || [];
  return (
    <div className="flow-editor">
      <p className="visually-hidden" role="status" aria-live="polite">{announce}</p>
      <form className="flow-toolbar" onSubmit={submit} noValidate aria-label="Flow">
        <Field label="Flow name" error={save.error?.details?.json?.name?.join(' ')}>
          {(p) => <input {...p} name="name" value={name} onChange={(e) => change((s) => ({ ...s, name: e.target.value }))} />}
        </Field>
        <button type="button" className="secondary" onClick={undo} disabled={!history.length}>Undo</button>
        <button type="submit" disabled={save.busy}>{saveLabel}</button>
        <span className="flow-check" role="status">
          {checked.checking ? 'Checking…'
            : checked.failed ? 'The server could not check the flow.'
              : checked.problems.length ? `${checked.problems.length} problem(s) the server would refuse.` : 'The server accepts this flow.'}
        </span>
      </form>
      {save.error && <SaveError error={save.error} />}
      {save.saved && <p className="saved" role="status">Saved.</p>}
      {flowProblems.length > 0 && (
        <ul className="form-error" aria-label="Problems of the whole flow">{flowProblems.map((t) => <li key={t}>{t}</li>)}</ul>
      )}
      <div className="flow-body">
        <div className="flow-canvas" aria-label="Flow diagram (drag nodes; drag from an output to a node to link them)" role="region">
          <ReactFlow nodes={nodes} edges={edges} nodeTypes={NODE_TYPES} onNodesChange={onNodesChange}
            onEdgesChange={onEdgesChange}
            onNodeDragStart={() => { dragStart.current = { state, positions }; }}
            onNodeDragStop={() => {
              if (dragStart.current) {
                const past = pushHistory(latest.current.history, dragStart.current);
                latest.current = { ...latest.current, history: past };
                setHistory(past);
              }
              dragStart.current = null;
            }}
            onConnect={(c) => editDefinition((d) => connect(d, c.source, c.sourceHandle || 'next', c.target), `Linked ${c.source} to ${c.target}.`)}
            fitView proOptions={{ hideAttribution: true }} deleteKeyCode={['Delete']} >
            <Background />
            <Controls showInteractive={false} />
          </ReactFlow>
        </div>
        <NodePanel definition={definition} selected={selected} setSelected={setSelected} problems={problems}
          rawProblems={[...checked.problems, ...save.problems]}
          editDefinition={editDefinition} setPositions={setPositions} positions={positions} />
      </div>
      <ImportExport definition={definition} onImport={(d) => {
        change((s) => ({ ...s, definition: d }), 'Flow imported.');
        setPositions((p) => ({ ...layout(d), ...Object.fromEntries(Object.entries(p).filter(([id]) => d.nodes[id])) }));
        setSelected(d.start || null);
      }} />
    </div>
  );
}

function SaveError({ error }) {
  const words = {
    flow_invalid: 'The server refused the flow: each problem is shown on its node.',
    unsafe_url: 'The server refused a URL in the flow (shown on its node): it must be https:// and public.',
    network_error: 'The server could not be reached. Your changes are kept here; save again.',
  };
  return <p className="form-error" role="alert">{words[error.code] || error.message}</p>;
}

/** The keyboard's way to everything the canvas does: add, select, link, edit, delete. */
function NodePanel({ definition, selected, setSelected, problems, rawProblems, editDefinition, setPositions, positions }) {
  const ids = Object.keys(definition.nodes);
  const [verb, setVerbName] = useState('say');
  const [newId, setNewId] = useState('');
  const [addError, setAddError] = useState(null);

  function add(event) {
    event.preventDefault();
    const id = newId.trim() || freshId(definition, verb);
    if (!NODE_ID_PATTERN.test(id)) { setAddError('Use 1 to 64 letters, digits, _ or -.'); return; }
    if (definition.nodes[id]) { setAddError('A node has this id already.'); return; }
    setAddError(null);
    const ys = Object.values(positions).map((p) => p.y);
    setPositions((p) => ({ ...p, [id]: { x: 0, y: (ys.length ? Math.max(...ys) : -170) + 170 } }));
    editDefinition((d) => addNode(d, verb, id), `Node ${id} added.`);
    setSelected(id);
    setNewId('');
  }

  const node = selected ? definition.nodes[selected] : null;
  return (
    <aside className="flow-panel" aria-label="Nodes">
      <form onSubmit={add} noValidate aria-labelledby="add-node">
        <h2 id="add-node">Add a node</h2>
        <Field label="Verb">
          {(p) => (
            <select {...p} name="verb" value={verb} onChange={(e) => setVerbName(e.target.value)}>
              {Object.keys(VERB_TEMPLATES).map((v) => <option key={v} value={v}>{v}</option>)}
            </select>
          )}
        </Field>
        <Field label="Node id" hint={`Empty: ${freshId(definition, verb)}`} error={addError}>
          {(p) => <input {...p} name="node_id" value={newId} onChange={(e) => setNewId(e.target.value)} />}
        </Field>
        <button type="submit">Add node</button>
      </form>
      <Field label="Selected node">
        {(p) => (
          <select {...p} name="selected" value={selected || ''} onChange={(e) => setSelected(e.target.value || null)}>
            <option value="">(none)</option>
            {ids.map((id) => <option key={id} value={id}>{id} ({definition.nodes[id].verb?.verb}){problems[id] ? ' — problems' : ''}</option>)}
          </select>
        )}
      </Field>
      {node && <NodeForm key={selected} id={selected} node={node} definition={definition} problems={problems[selected] || []}
        nodeProblems={(rawProblems || []).filter((p) => p.node === selected)}
        editDefinition={editDefinition} setSelected={setSelected} setPositions={setPositions} />}
    </aside>
  );
}

/** The verb the JSON box holds, or null while it is not a JSON object (the form then hides). */
function parsedVerb(text) {
  try {
    const verb = JSON.parse(text);
    return verb && typeof verb === 'object' && !Array.isArray(verb) ? verb : null;
  } catch {
    return null;
  }
}

function NodeForm({ id, node, definition, problems, nodeProblems, editDefinition, setSelected, setPositions }) {
  const ids = Object.keys(definition.nodes);
  const [verbText, setVerbText] = useState(() => JSON.stringify(node.verb, null, 2));
  const [verbError, setVerbError] = useState(null);
  const [rename, setRename] = useState(id);
  const [renameError, setRenameError] = useState(null);
  const [branch, setBranch] = useState('');
  const [branchError, setBranchError] = useState(null);
  const outs = outputs(node);

  useEffect(() => { setVerbText(JSON.stringify(node.verb, null, 2)); }, [node.verb]);

  function applyVerb() {
    let verb;
    try {
      verb = JSON.parse(verbText);
    } catch (err) {
      setVerbError(`Not JSON: ${err.message}`);
      return;
    }
    if (!verb || typeof verb !== 'object' || Array.isArray(verb)) { setVerbError('A verb is an object with "verb".'); return; }
    setVerbError(null);
    editDefinition((d) => setVerb(d, id, verb), `Verb of ${id} changed.`);
  }
  function doRename() {
    const target = rename.trim();
    if (!NODE_ID_PATTERN.test(target)) { setRenameError('Use 1 to 64 letters, digits, _ or -.'); return; }
    if (target !== id && definition.nodes[target]) { setRenameError('A node has this id already.'); return; }
    setRenameError(null);
    setPositions((p) => { const { [id]: at, ...rest } = p; return { ...rest, [target]: at }; });
    editDefinition((d) => renameNode(d, id, target), `Node ${id} renamed ${target}.`);
    setSelected(target);
  }
  function addBranch() {
    const key = branch.trim();
    if (!key) { setBranchError('Type the digits (1, 2, 42…) or the words the caller says.'); return; }
    if (node.branches?.[key] !== undefined) { setBranchError('This branch exists already.'); return; }
    setBranchError(null);
    const target = ids.find((other) => other !== id) || id;
    editDefinition((d) => connect(d, id, `branch:${key}`, target), `Branch ${key} added to ${id}.`);
    setBranch('');
  }

  return (
    <section className="node-form" aria-labelledby="node-form-title">
      <h2 id="node-form-title">Node {id}</h2>
      {problems.length > 0 && (
        <ul className="form-error" aria-label={`Problems of node ${id}`}>{problems.map((t) => <li key={t}>{t}</li>)}</ul>
      )}
      <div className="actions">
        <button type="button" className="secondary" onClick={() => editDefinition((d) => setStart(d, id), `${id} is the start.`)}
          disabled={definition.start === id}>{definition.start === id ? 'Start node' : 'Make start node'}</button>
        <button type="button" className="danger" onClick={() => { editDefinition((d) => deleteNode(d, id), `Node ${id} deleted.`); setSelected(null); }}>
          Delete node {id}
        </button>
      </div>
      <Field label="Rename to" error={renameError}>
        {(p) => <input {...p} name="rename" value={rename} onChange={(e) => setRename(e.target.value)} />}
      </Field>
      <button type="button" className="secondary" onClick={doRename} disabled={rename.trim() === id}>Rename</button>
      <VerbForm verb={parsedVerb(verbText)} problems={nodeProblems}
        onChange={(verb) => { setVerbError(null); setVerbText(JSON.stringify(verb, null, 2)); }} />
      <Field label="Verb (JSON)" error={verbError} hint="The verb's fields as in a webhook reply (docs/webhooks.md). The form above edits the same text.">
        {(p) => <textarea {...p} name="verb_json" rows={8} spellCheck={false} value={verbText} onChange={(e) => setVerbText(e.target.value)} />}
      </Field>
      <button type="button" onClick={applyVerb}>Apply verb</button>
      <fieldset>
        <legend>Links</legend>
        {outs.length === 0 && <p className="hint">Nothing runs after {node.verb?.verb}: {ENDS_CALL.has(node.verb?.verb) ? 'it hands the call over or ends it.' : ''}</p>}
        {outs.map((out) => (
          <div key={out.handle} className="link-row">
            <Field label={out.handle.startsWith('branch:') ? `Branch “${out.label}” goes to` : `${out.label} goes to`}>
              {(p) => (
                <select {...p} value={out.target || ''} onChange={(e) => editDefinition((d) => connect(d, id, out.handle, e.target.value || null),
                  e.target.value ? `Linked ${id} to ${e.target.value}.` : `Link from ${id} removed.`)}>
                  <option value="">{out.handle === DEFAULT_BRANCH || out.handle === 'next' ? '(end of the call)' : '(remove the branch)'}</option>
                  {ids.map((other) => <option key={other} value={other}>{other}</option>)}
                </select>
              )}
            </Field>
          </div>
        ))}
        {isGather(node) && (
          <>
            <Field label="New branch: digits or words" error={branchError} hint="Digits match exactly; words match what the caller says, in any case.">
              {(p) => <input {...p} name="branch" value={branch} onChange={(e) => setBranch(e.target.value)} />}
            </Field>
            <button type="button" className="secondary" onClick={addBranch}>Add branch</button>
          </>
        )}
      </fieldset>
    </section>
  );
}

function ImportExport({ definition, onImport }) {
  const [text, setText] = useState('');
  const [error, setError] = useState(null);
  function doImport() {
    const parsed = parseImport(text);
    if (parsed.error) { setError(parsed.error); return; }
    setError(null);
    onImport(parsed.definition);
  }
  async function fromFile(event) {
    const file = event.target.files?.[0];
    if (file) setText(await file.text());
  }
  return (
    <section className="flow-json" aria-labelledby="flow-json">
      <h2 id="flow-json">Import and export JSON</h2>
      <p className="hint">The flow exactly as the flow engine runs it (docs/api.md, Call flows).</p>
      <Field label="Flow JSON" error={error}>
        {(p) => <textarea {...p} name="flow_json" rows={8} spellCheck={false} value={text} onChange={(e) => setText(e.target.value)} />}
      </Field>
      <div className="actions">
        <button type="button" className="secondary" onClick={() => { setText(JSON.stringify(definition, null, 2)); setError(null); }}>Export</button>
        <button type="button" className="secondary" onClick={doImport}>Import</button>
        <label className="file-button">Open a file <input type="file" accept="application/json,.json" onChange={fromFile} /></label>
      </div>
    </section>
  );
}
