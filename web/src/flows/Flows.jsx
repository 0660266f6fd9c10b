import { useState } from 'react';
import { Link, Route, Routes, useNavigate, useParams } from 'react-router';
import { useAuth } from '../auth.jsx';
import { OutageBanner } from '../components/Banner.jsx';
import { Field } from '../components/Field.jsx';
import { useDraft, useResource, useSubmit } from '../hooks.js';
import { errorsByField, humanMessage } from '../messages.js';
import { LoadFailed } from '../routing/Shell.jsx';
import { FlowEditor } from './FlowEditor.jsx';
import { EMPTY_FLOW } from './model.js';

/** /flows (the list, adding one) and /flows/:id (the visual editor); one lazily loaded chunk. */
export function FlowsRoutes() {
  return (
    <Routes>
      <Route index element={<FlowList />} />
      <Route path=":id" element={<FlowPage />} />
    </Routes>
  );
}

function FlowList() {
  const { call } = useAuth();
  const list = useResource(() => call('/api/call-flows', { query: { limit: 200 } }), [call]);
  const items = list.data?.items || [];
  return (
    <>
      <h1>Call flows</h1>
      <p className="hint">A call flow answers a call with verbs linked as a graph; an application whose Call flow is set runs it.</p>
      <OutageBanner error={list.error?.isOutage ? list.error : null} onRetry={list.reload} />
      {list.error && !list.error.isOutage && <p className="form-error" role="alert">{humanMessage(list.error)}</p>}
      <table>
        <caption className="visually-hidden">Call flows of the account</caption>
        <thead><tr><th scope="col">Call flow</th><th scope="col">Nodes</th><th scope="col">Starts with</th></tr></thead>
        <tbody>
          {items.map((f) => (
            <tr key={f.id}>
              <td><Link to={`/flows/${f.id}`}>{f.name}</Link></td>
              <td>{Object.keys(f.definition?.nodes || {}).length}</td>
              <td>{f.definition?.nodes?.[f.definition.start]?.verb?.verb || ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.loading && <p role="status">Loading…</p>}
      {!list.loading && !list.error && items.length === 0 && <p role="status">No call flows yet.</p>}
      <AddFlow />
    </>
  );
}

function AddFlow() {
  const { call } = useAuth();
  const navigate = useNavigate();
  const draft = useDraft('add-flow', { name: '' });
  const { submit, error, busy } = useSubmit(async () => {
    const created = await call('/api/call-flows', { method: 'POST', body: { name: draft.values.name.trim(), definition: EMPTY_FLOW } });
    draft.reset({ name: '' });
    navigate(`/flows/${created.id}`);
  });
  const { fields, form } = errorsByField(error?.isOutage ? null : error, ['name']);
  return (
    <section aria-labelledby="add-flow">
      <h2 id="add-flow">Add a call flow</h2>
      <OutageBanner error={error?.isOutage ? error : null} onRetry={() => submit()} />
      {form && <p className="form-error" role="alert">{form}</p>}
      <form onSubmit={submit} noValidate className="inline">
        <Field label="Flow name" error={fields.name}>
          {(p) => <input {...p} name="name" value={draft.values.name} onChange={(e) => draft.set('name', e.target.value)} />}
        </Field>
        <button type="submit" disabled={busy}>Add call flow</button>
      </form>
    </section>
  );
}

function FlowPage() {
  const { id } = useParams();
  const { call } = useAuth();
  const navigate = useNavigate();
  const flow = useResource(() => call(`/api/call-flows/${id}`), [call, id]);
  const [deleteError, setDeleteError] = useState(null);
  if (flow.error && !flow.data) {
    return <LoadFailed title="Call flow" error={flow.error} onRetry={flow.reload} back="/flows" backLabel="All call flows" />;
  }
  async function remove() {
    if (!window.confirm(`Delete the call flow ${flow.data.name}?`)) return;
    try {
      await call(`/api/call-flows/${id}`, { method: 'DELETE' });
      sessionStorage.removeItem(`console:draft:flow:${id}`);
      navigate('/flows');
    } catch (error) {
      setDeleteError(error);
    }
  }
  return (
    <>
      <p><Link to="/flows">All call flows</Link></p>
      <h1>Call flow {flow.data?.name || ''}</h1>
      {flow.loading && !flow.data && <p role="status">Loading…</p>}
      {flow.data && (
        <FlowEditor key={flow.data.id} flowId={flow.data.id} draftKey={`console:draft:flow:${flow.data.id}`}
          initial={{ name: flow.data.name, definition: flow.data.definition }}
          onSave={async (body) => flow.setData(await call(`/api/call-flows/${id}`, { method: 'PATCH', body }))} />
      )}
      {flow.data && (
        <section aria-labelledby="delete-flow">
          <h2 id="delete-flow">Delete</h2>
          {deleteError && <p className="form-error" role="alert">{deleteError.code === 'call_flow_in_use'
            ? 'This flow is in use by an application (or kept by a number in webhook mode): choose another flow there first.'
            : humanMessage(deleteError)}</p>}
          <button type="button" className="danger" onClick={remove}>Delete call flow</button>
        </section>
      )}
    </>
  );
}
