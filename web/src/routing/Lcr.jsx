import { useCallback, useEffect, useRef, useState } from 'react';
import { Link, Route, Routes, useNavigate, useParams } from 'react-router';
import { useAuth } from '../auth.jsx';
import { OutageBanner } from '../components/Banner.jsx';
import { Field } from '../components/Field.jsx';
import { useDraft, useResource } from '../hooks.js';
import { humanMessage } from '../messages.js';
import { Check } from './Check.jsx';
import { Explain } from './Explain.jsx';
import { defined, optionalInt, useSubmit } from './form.js';
import { LoadFailed, SaveForm } from './Shell.jsx';
import { moveItem, nextPriority, priorityChanges } from './reorder.js';

const LIST_LIMIT = 200;

/** /lcr and /lcr/:id (mounted under /lcr/*). */
export function LcrRoutes() {
  return (
    <Routes>
      <Route index element={<Plans />} />
      <Route path=":id" element={<Plan />} />
    </Routes>
  );
}

const PLAN_FIELDS = ['name', 'priority', 'is_active'];
const NEW_PLAN = { name: '', priority: '', is_active: true };

function planBody(values) {
  return defined({ name: values.name.trim(), priority: optionalInt(values.priority), is_active: values.is_active });
}

/** LCR plans, adding one, and "Explain this number". */
function Plans() {
  const { call } = useAuth();
  const navigate = useNavigate();
  const list = useResource(() => call('/api/lcr', { query: { limit: LIST_LIMIT } }), [call]);
  const draft = useDraft('add-lcr-plan', NEW_PLAN);
  const save = useSubmit(useCallback(async () => {
    const created = await call('/api/lcr', { method: 'POST', body: planBody(draft.values) });
    draft.reset(NEW_PLAN);
    navigate(`/lcr/${created.id}`);
    return created;
  }, [call, draft, navigate]), PLAN_FIELDS);
  const items = list.data?.items || [];
  return (
    <>
      <h1>Least-cost routing</h1>
      <OutageBanner error={list.error?.isOutage ? list.error : null} onRetry={list.reload} />
      <Explain />
      <h2>Plans</h2>
      <p className="hint">Plans are tried lowest priority first; within a plan, the first route whose pattern matches the number decides.</p>
      <table>
        <caption className="visually-hidden">The account&apos;s LCR plans</caption>
        <thead><tr><th scope="col">Name</th><th scope="col">Priority</th><th scope="col">Active</th></tr></thead>
        <tbody>
          {items.map((plan) => (
            <tr key={plan.id}>
              <td><Link to={`/lcr/${plan.id}`}>{plan.name}</Link></td>
              <td>{plan.priority}</td>
              <td>{plan.is_active ? 'Active' : 'Inactive'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.loading && <p role="status">Loading…</p>}
      {!list.loading && !list.error && items.length === 0 && <p role="status">No plans yet.</p>}
      <section aria-labelledby="add-plan">
        <h2 id="add-plan">Add a plan</h2>
        <PlanFields values={draft.values} set={draft.set} save={save} label="Add plan" />
      </section>
    </>
  );
}

function PlanFields({ values, set, save, label }) {
  return (
    <SaveForm save={save} label={label} savedNote={label === 'Save plan'}>
      <Field label="Name" error={save.fields.name}>
        {(p) => <input {...p} name="name" value={values.name} onChange={(e) => set('name', e.target.value)} required />}
      </Field>
      <Field label="Priority" error={save.fields.priority} hint="Lower is tried first. Empty: 0.">
        {(p) => <input {...p} name="priority" type="number" min="0" value={values.priority} onChange={(e) => set('priority', e.target.value)} />}
      </Field>
      <Check name="is_active" label="Active" checked={values.is_active} onChange={(v) => set('is_active', v)} />
    </SaveForm>
  );
}

/** A plan: its settings, its routes in router order (drag or Move up/down), each route's carriers. */
function Plan() {
  const { id } = useParams();
  const { call } = useAuth();
  const loaded = useResource(async () => {
    const [plan, routes, carriers] = await Promise.all([
      call(`/api/lcr/${id}`), call(`/api/lcr/${id}/routes`), call('/api/carriers', { query: { limit: LIST_LIMIT } }),
    ]);
    return { plan, routes, carriers: carriers.items };
  }, [call, id]);
  if (loaded.error && !loaded.data) {
    return <LoadFailed title="LCR plan" error={loaded.error} onRetry={loaded.reload} back="/lcr" backLabel="Back to least-cost routing" />;
  }
  if (!loaded.data) return <p role="status">Loading…</p>;
  const { plan, carriers } = loaded.data;
  return (
    <>
      <p><Link to="/lcr">Least-cost routing</Link></p>
      <h1>LCR plan {plan.name}</h1>
      <EditPlan key={plan.id} plan={plan} onSaved={(next) => loaded.setData({ ...loaded.data, plan: next })} />
      <RouteList planId={plan.id} initial={loaded.data.routes} carriers={carriers} />
    </>
  );
}

function EditPlan({ plan, onSaved }) {
  const { call } = useAuth();
  const [values, setValues] = useState({ name: plan.name, priority: String(plan.priority), is_active: plan.is_active });
  const save = useSubmit(useCallback(async () => {
    const next = await call(`/api/lcr/${plan.id}`, { method: 'PATCH', body: planBody(values) });
    onSaved(next);
    return next;
  }, [call, plan.id, values, onSaved]), PLAN_FIELDS);
  const set = (name, value) => { save.clear(); setValues((v) => ({ ...v, [name]: value })); };
  return (
    <section aria-labelledby="plan-settings">
      <h2 id="plan-settings">Settings</h2>
      <PlanFields values={values} set={set} save={save} label="Save plan" />
    </section>
  );
}

/**
 * The routes in router order. Reordering (a drag, or Move up / Move down from the keyboard)
 * shows the new order at once and PATCHes the priorities that change (reorder.js); if a PATCH
 * fails, the order is read back from the server, which is what routing uses.
 */
function RouteList({ planId, initial, carriers }) {
  const { call } = useAuth();
  const [routes, setRoutes] = useState(initial);
  const [dragged, setDragged] = useState(null);
  const [announce, setAnnounce] = useState('');
  const [error, setError] = useState(null);
  // a moved <li> is re-inserted in the DOM, which drops the focus: the button pressed gets it back
  // (or the other Move button, once this one is disabled at the end of the list)
  const [refocus, setRefocus] = useState(null);
  const listRef = useRef(null);
  useEffect(() => {
    if (!refocus) return;
    const item = listRef.current?.querySelector(`li[data-route-id="${refocus.id}"]`);
    const buttons = item ? [...item.querySelectorAll('button[data-move]')] : [];
    (buttons.find((b) => b.dataset.move === refocus.move && !b.disabled) || buttons.find((b) => !b.disabled))?.focus();
  }, [refocus, routes]);

  const reload = useCallback(async () => {
    try {
      setRoutes(await call(`/api/lcr/${planId}/routes`));
      setError(null);
    } catch (err) {
      setError(err);
    }
  }, [call, planId]);

  async function move(from, to, button = null) {
    const ordered = moveItem(routes, from, to);
    if (ordered === routes) return;
    setRefocus(button && { id: routes[from].id, move: button });
    setRoutes(ordered);
    setError(null);
    const moved = routes[from];
    try {
      for (const change of priorityChanges(ordered)) {
        await call(`/api/lcr/routes/${change.id}`, { method: 'PATCH', body: { priority: change.priority } });
      }
      setAnnounce(`Route ${moved.regex} moved to position ${to + 1} of ${ordered.length}.`);
    } catch (err) {
      setError(err);
      setAnnounce('');
    }
    await reload();
  }

  async function remove(route) {
    setError(null);
    setRefocus(null);
    try {
      await call(`/api/lcr/routes/${route.id}`, { method: 'DELETE' });
      setAnnounce(`Route ${route.regex} deleted.`);
    } catch (err) {
      setError(err);
    }
    await reload();
  }

  return (
    <section aria-labelledby="routes">
      <h2 id="routes">Routes</h2>
      <p className="hint" id="routes-hint">Tried from the top: the first pattern that matches the number decides.
        Drag a route by its handle, or use Move up and Move down.</p>
      <OutageBanner error={error?.isOutage ? error : null} onRetry={reload} />
      {error && !error.isOutage && <p className="form-error" role="alert">{humanMessage(error)}</p>}
      <p className="visually-hidden" role="status" aria-live="polite">{announce}</p>
      <ol className="routes" aria-describedby="routes-hint" ref={listRef}>
        {routes.map((route, index) => (
          <li key={route.id} className={dragged === index ? 'route dragging' : 'route'} data-route-id={route.id}
            draggable onDragStart={(e) => { setDragged(index); e.dataTransfer.effectAllowed = 'move'; e.dataTransfer.setData('text/plain', route.id); }}
            onDragOver={(e) => { e.preventDefault(); e.dataTransfer.dropEffect = 'move'; }}
            onDrop={(e) => { e.preventDefault(); if (dragged !== null) move(dragged, index); setDragged(null); }}
            onDragEnd={() => setDragged(null)}>
            <div className="route-head">
              <span className="handle" aria-hidden="true">⠿</span>
              <code>{route.regex}</code>
              <span className="hint">priority {route.priority}{route.description ? ` · ${route.description}` : ''}</span>
              <span className="actions">
                <button type="button" className="secondary" disabled={index === 0} data-move="up" onClick={() => move(index, index - 1, 'up')}
                  aria-label={`Move up: route ${route.regex}`}>Move up</button>
                <button type="button" className="secondary" disabled={index === routes.length - 1} data-move="down" onClick={() => move(index, index + 1, 'down')}
                  aria-label={`Move down: route ${route.regex}`}>Move down</button>
                <button type="button" className="secondary" onClick={() => remove(route)}
                  aria-label={`Delete route ${route.regex}`}>Delete</button>
              </span>
            </div>
            <CarrierSet route={route} carriers={carriers} />
          </li>
        ))}
      </ol>
      {routes.length === 0 && <p role="status">No routes yet: numbers fall through to the next plan.</p>}
      <AddRoute planId={planId} routes={routes} onAdded={reload} />
    </section>
  );
}

const ROUTE_FIELDS = ['regex', 'priority', 'description'];
const NEW_ROUTE = { regex: '', priority: '', description: '' };

function AddRoute({ planId, routes, onAdded }) {
  const { call } = useAuth();
  const draft = useDraft(`add-lcr-route:${planId}`, NEW_ROUTE);
  const { values } = draft;
  const save = useSubmit(useCallback(async () => {
    const created = await call(`/api/lcr/${planId}/routes`, { method: 'POST', body: {
      regex: values.regex, description: values.description.trim() || null,
      priority: optionalInt(values.priority) ?? nextPriority(routes) } });
    draft.reset(NEW_ROUTE);
    await onAdded();
    return created;
  }, [call, planId, values, routes, draft, onAdded]), ROUTE_FIELDS);
  return (
    <section aria-labelledby="add-route" className="panel">
      <h3 id="add-route">Add a route</h3>
      <SaveForm save={save} label="Add route">
        <Field label="Pattern" error={save.fields.regex} hint="A regular expression (RE2) matched at the start of the dialled digits, e.g. ^44 or ^1(212|646).">
          {(p) => <input {...p} name="regex" value={values.regex} onChange={(e) => draft.set('regex', e.target.value)} required />}
        </Field>
        <Field label="Description" error={save.fields.description}>
          {(p) => <input {...p} name="description" value={values.description} onChange={(e) => draft.set('description', e.target.value)} />}
        </Field>
        <Field label="Route priority" error={save.fields.priority} hint="Empty: after the last route.">
          {(p) => <input {...p} name="priority" type="number" min="0" value={values.priority} onChange={(e) => draft.set('priority', e.target.value)} />}
        </Field>
      </SaveForm>
    </section>
  );
}

const ENTRY_FIELDS = ['carrier_id', 'priority', 'workload'];

/** A route's carrier set, in failover order (priority ascending, then workload descending). */
function CarrierSet({ route, carriers }) {
  const { call } = useAuth();
  const entries = useResource(() => call(`/api/lcr/routes/${route.id}/carriers`), [call, route.id]);
  const [values, setValues] = useState({ carrier_id: '', priority: '', workload: '' });
  const [removeError, setRemoveError] = useState(null);
  const { reload } = entries;
  const save = useSubmit(useCallback(async () => {
    const created = await call(`/api/lcr/routes/${route.id}/carriers`, { method: 'POST', body: defined({
      carrier_id: values.carrier_id || undefined, priority: optionalInt(values.priority), workload: optionalInt(values.workload) }) });
    setValues({ carrier_id: '', priority: '', workload: '' });
    reload();
    return created;
  }, [call, route.id, values, reload]), ENTRY_FIELDS);
  const names = Object.fromEntries(carriers.map((c) => [c.id, c.name]));
  const set = (name, value) => setValues((v) => ({ ...v, [name]: value }));

  async function remove(entry) {
    setRemoveError(null);
    try {
      await call(`/api/lcr/routes/${route.id}/carriers/${entry.id}`, { method: 'DELETE' });
    } catch (err) {
      setRemoveError(err);
    }
    reload();
  }

  const list = entries.data || [];
  return (
    <div className="carrier-set">
      <OutageBanner error={entries.error?.isOutage ? entries.error : removeError?.isOutage ? removeError : null} onRetry={reload} />
      {removeError && !removeError.isOutage && <p className="form-error" role="alert">{humanMessage(removeError)}</p>}
      {list.length > 0 ? (
        <table>
          <caption className="visually-hidden">Carriers of route {route.regex}, in failover order</caption>
          <thead><tr><th scope="col">Carrier</th><th scope="col">Priority</th><th scope="col">Workload</th>
            <th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            {list.map((entry) => (
              <tr key={entry.id}>
                <td>{names[entry.carrier_id] || entry.carrier_id}</td>
                <td>{entry.priority}</td>
                <td>{entry.workload}</td>
                <td><button type="button" className="secondary" onClick={() => remove(entry)}
                  aria-label={`Remove ${names[entry.carrier_id] || 'carrier'} from route ${route.regex}`}>Remove</button></td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : !entries.loading && <p className="hint">No carriers: a number matching this route cannot be dialled.</p>}
      <SaveForm save={save} label="Add carrier" className="inline" ariaLabel={`Add a carrier to route ${route.regex}`}>
        <Field label="Carrier" error={save.fields.carrier_id}>
          {(p) => (
            <select {...p} name="carrier_id" value={values.carrier_id} onChange={(e) => set('carrier_id', e.target.value)}>
              <option value="">Choose a carrier</option>
              {carriers.map((c) => <option key={c.id} value={c.id}>{c.name}{c.platform ? ' (platform)' : ''}</option>)}
            </select>
          )}
        </Field>
        <Field label="Carrier priority" error={save.fields.priority} hint="Lower first. Empty: 0.">
          {(p) => <input {...p} name="priority" type="number" min="0" value={values.priority} onChange={(e) => set('priority', e.target.value)} />}
        </Field>
        <Field label="Workload" error={save.fields.workload} hint="Higher first among equals. Empty: 100.">
          {(p) => <input {...p} name="workload" type="number" min="0" value={values.workload} onChange={(e) => set('workload', e.target.value)} />}
        </Field>
      </SaveForm>
    </div>
  );
}
