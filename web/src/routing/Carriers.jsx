import { useCallback, useEffect, useState } from 'react';
import { Link, Route, Routes, useNavigate, useParams } from 'react-router';
import { useAuth } from '../auth.jsx';
import { OutageBanner } from '../components/Banner.jsx';
import { Field } from '../components/Field.jsx';
import { useDraft, useResource } from '../hooks.js';
import { Check } from './Check.jsx';
import { applyGatewayEvent, useGatewayPush } from './gatewayLive.js';
import { defined, optionalInt, useSubmit } from './form.js';
import { LoadFailed, SaveForm } from './Shell.jsx';

/** How often a carrier's page re-reads its gateways' live health when the push stream is not
 * available (sofia pings every 30 s). */
export const HEALTH_REFRESH_MS = 15000;
const LIST_LIMIT = 200;

/** /carriers and /carriers/:id (mounted under /carriers/*). */
export function CarriersRoutes() {
  return (
    <Routes>
      <Route index element={<Carriers />} />
      <Route path=":id" element={<CarrierDetail />} />
    </Routes>
  );
}

const CARRIER_FIELDS = ['name', 'description', 'tech_prefix', 'e164_leading_plus', 'is_active'];
const NEW_CARRIER = { name: '', description: '', tech_prefix: '', e164_leading_plus: false, is_active: true };

function carrierBody(values) {
  return { name: values.name.trim(), description: values.description.trim() || null,
    tech_prefix: values.tech_prefix.trim(), e164_leading_plus: values.e164_leading_plus, is_active: values.is_active };
}

/** Carriers: the account's and the platform's (read-only), and adding one. */
function Carriers() {
  const { call } = useAuth();
  const navigate = useNavigate();
  const list = useResource(() => call('/api/carriers', { query: { limit: LIST_LIMIT } }), [call]);
  const draft = useDraft('add-carrier', NEW_CARRIER);
  const save = useSubmit(useCallback(async () => {
    const created = await call('/api/carriers', { method: 'POST', body: carrierBody(draft.values) });
    draft.reset(NEW_CARRIER);
    navigate(`/carriers/${created.id}`);
    return created;
  }, [call, draft, navigate]), CARRIER_FIELDS);
  const items = list.data?.items || [];
  return (
    <>
      <h1>Carriers</h1>
      <OutageBanner error={list.error?.isOutage ? list.error : null} onRetry={list.reload} />
      <table>
        <caption className="visually-hidden">Carriers the account can route calls through</caption>
        <thead>
          <tr><th scope="col">Name</th><th scope="col">Tech prefix</th><th scope="col">Leading +</th>
            <th scope="col">Active</th><th scope="col">Owner</th></tr>
        </thead>
        <tbody>
          {items.map((c) => (
            <tr key={c.id}>
              <td><Link to={`/carriers/${c.id}`}>{c.name}</Link></td>
              <td>{c.tech_prefix || '—'}</td>
              <td>{c.e164_leading_plus ? 'Yes' : 'No'}</td>
              <td>{c.is_active ? 'Active' : 'Inactive'}</td>
              <td>{c.platform ? 'Platform (read-only)' : 'Yours'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.loading && <p role="status">Loading…</p>}
      {!list.loading && !list.error && items.length === 0 && <p role="status">No carriers yet.</p>}
      {list.data?.next_cursor && <p className="hint">The first {LIST_LIMIT} carriers are shown.</p>}
      <section aria-labelledby="add-carrier">
        <h2 id="add-carrier">Add a carrier</h2>
        <CarrierFields values={draft.values} set={draft.set} save={save} label="Add carrier" />
      </section>
    </>
  );
}

function CarrierFields({ values, set, save, label }) {
  return (
    <SaveForm save={save} label={label} savedNote={label === 'Save carrier'}>
      <Field label="Name" error={save.fields.name}>
        {(p) => <input {...p} name="name" value={values.name} onChange={(e) => set('name', e.target.value)} required />}
      </Field>
      <Field label="Description" error={save.fields.description}>
        {(p) => <input {...p} name="description" value={values.description} onChange={(e) => set('description', e.target.value)} />}
      </Field>
      <Field label="Tech prefix" error={save.fields.tech_prefix} hint="Dialled before the number: digits, # and * (up to 32). Empty: none.">
        {(p) => <input {...p} name="tech_prefix" value={values.tech_prefix} onChange={(e) => set('tech_prefix', e.target.value)} />}
      </Field>
      <Check name="e164_leading_plus" label="Dial the number with a leading +" checked={values.e164_leading_plus}
        onChange={(v) => set('e164_leading_plus', v)} />
      <Check name="is_active" label="Active" checked={values.is_active} onChange={(v) => set('is_active', v)} />
    </SaveForm>
  );
}

function carrierForm(c) {
  return { name: c.name, description: c.description || '', tech_prefix: c.tech_prefix || '',
    e164_leading_plus: c.e164_leading_plus, is_active: c.is_active };
}

/** A carrier: its settings and its gateways with their live health. */
function CarrierDetail() {
  const { id } = useParams();
  const { call } = useAuth();
  const carrier = useResource(() => call(`/api/carriers/${id}`), [call, id]);
  if (carrier.error && !carrier.data) {
    return <LoadFailed title="Carrier" error={carrier.error} onRetry={carrier.reload} back="/carriers" backLabel="Back to carriers" />;
  }
  if (!carrier.data) return <p role="status">Loading…</p>;
  const c = carrier.data;
  return (
    <>
      <p><Link to="/carriers">Carriers</Link></p>
      <h1>Carrier {c.name}</h1>
      {c.platform ? (
        <p>A platform carrier: you can use it in least-cost routing and campaigns. The platform runs its
          gateways; they are not shown and it cannot be changed here.</p>
      ) : (
        <>
          <EditCarrier key={c.id} carrier={c} onSaved={carrier.setData} />
          <Gateways carrierId={c.id} />
        </>
      )}
    </>
  );
}

function EditCarrier({ carrier, onSaved }) {
  const { call } = useAuth();
  const [values, setValues] = useState(() => carrierForm(carrier));
  const save = useSubmit(useCallback(async () => {
    const next = await call(`/api/carriers/${carrier.id}`, { method: 'PATCH', body: carrierBody(values) });
    onSaved(next);
    return next;
  }, [call, carrier.id, values, onSaved]), CARRIER_FIELDS);
  const set = (name, value) => { save.clear(); setValues((v) => ({ ...v, [name]: value })); };
  return (
    <section aria-labelledby="carrier-settings">
      <h2 id="carrier-settings">Settings</h2>
      <CarrierFields values={values} set={set} save={save} label="Save carrier" />
    </section>
  );
}

const HEALTH_LABELS = {
  up: 'Up',
  down: 'Down: routing skips it',
  not_probed: 'Not probed',
  unknown: 'Unknown (health store unreachable)',
};

function address(g) {
  return g.host ? g.host : g.network;
}

function direction(g) {
  if (g.inbound && g.outbound) return 'In and out';
  return g.inbound ? 'Inbound' : 'Outbound';
}

/** The carrier's gateways, their health and registration pushed as they change (gatewayLive.js),
 * or re-read every HEALTH_REFRESH_MS when the push stream is not available. */
function Gateways({ carrierId }) {
  const { call } = useAuth();
  const list = useResource(() => call(`/api/carriers/${carrierId}/gateways`), [call, carrierId]);
  const [editing, setEditing] = useState(null);
  const { reload, setData } = list;
  const push = useGatewayPush(call, (data) => setData((items) => applyGatewayEvent(items, data)), reload);
  useEffect(() => {
    if (push === 'live') return undefined;
    const timer = setInterval(reload, HEALTH_REFRESH_MS);
    return () => clearInterval(timer);
  }, [reload, push]);
  const items = list.data || [];
  return (
    <section aria-labelledby="gateways">
      <h2 id="gateways">Gateways</h2>
      <OutageBanner error={list.error?.isOutage ? list.error : null} onRetry={reload} />
      <p className="hint" role="status" data-push={push}>{push === 'live'
        ? 'Health (the gateways’ SIP OPTIONS pings) and registration are live: changes are pushed as the switch reports them.'
        : `Health is live from the gateways’ SIP OPTIONS pings, re-read every ${HEALTH_REFRESH_MS / 1000} s.`}
        {' '}Registration is the state the switch last reported for a gateway that registers with the carrier.</p>
      <table>
        <caption className="visually-hidden">Gateways of this carrier</caption>
        <thead>
          <tr><th scope="col">Address</th><th scope="col">Port</th><th scope="col">Transport</th>
            <th scope="col">Direction</th><th scope="col">Active</th><th scope="col">Health</th>
            <th scope="col">Registration</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr>
        </thead>
        <tbody>
          {items.map((g) => (
            <tr key={g.id}>
              <td>{address(g)}</td>
              <td>{g.port}</td>
              <td>{g.transport.toUpperCase()}</td>
              <td>{direction(g)}</td>
              <td>{g.is_active ? 'Active' : 'Inactive'}</td>
              <td><span className={`health health-${g.health}`}>{HEALTH_LABELS[g.health] || g.health}</span></td>
              <td>{registration(g)}</td>
              <td><button type="button" onClick={() => setEditing(g.id)} aria-label={`Edit gateway ${address(g)}`}>Edit</button></td>
            </tr>
          ))}
        </tbody>
      </table>
      {!list.loading && !list.error && items.length === 0 && <p role="status">No gateways yet.</p>}
      {editing && items.some((g) => g.id === editing) && (
        <GatewayForm key={editing} carrierId={carrierId} gateway={items.find((g) => g.id === editing)}
          onSaved={() => { setEditing(null); reload(); }} onCancel={() => setEditing(null)} />
      )}
      <GatewayForm key={`new-${items.length}`} carrierId={carrierId} onSaved={reload} />
    </section>
  );
}

const GATEWAY_FIELDS = ['ipv4', 'host', 'netmask', 'port', 'transport', 'inbound', 'outbound', 'is_active',
  'register', 'register_username', 'register_password', 'register_realm'];
const NEW_GATEWAY = { ipv4: '', host: '', netmask: '32', port: '5060', transport: 'udp', inbound: true, outbound: true,
  is_active: true, register: false, register_username: '', register_password: '', register_realm: '' };

function gatewayForm(g) {
  return { ipv4: g.ipv4 || '', host: g.host || '', netmask: String(g.netmask), port: String(g.port),
    transport: g.transport, inbound: g.inbound, outbound: g.outbound, is_active: g.is_active,
    register: g.register, register_username: g.register_username || '', register_password: '',
    register_realm: g.register_realm || '' };
}

/** A gateway's registration cell: its last reported state when it registers. */
function registration(g) {
  if (g.register) return `${g.register_username}: ${g.registration?.state || 'no state reported yet'}`;
  return g.register_username ? `${g.register_username} (not registering)` : '—';
}

/** The gateway body: one address (ipv4 or host); an empty password keeps the saved one. */
export function gatewayBody(values) {
  return defined({
    ipv4: values.ipv4.trim() || undefined,
    host: values.host.trim() || undefined,
    netmask: optionalInt(values.netmask),
    port: optionalInt(values.port),
    transport: values.transport,
    inbound: values.inbound,
    outbound: values.outbound,
    is_active: values.is_active,
    register: values.register,
    register_username: values.register_username.trim() || null,
    register_password: values.register_password || undefined,
    register_realm: values.register_realm.trim() || null,
  });
}

function GatewayForm({ carrierId, gateway, onSaved, onCancel }) {
  const { call } = useAuth();
  const [values, setValues] = useState(() => (gateway ? gatewayForm(gateway) : NEW_GATEWAY));
  const save = useSubmit(useCallback(async () => {
    const saved = gateway
      ? await call(`/api/gateways/${gateway.id}`, { method: 'PATCH', body: gatewayBody(values) })
      : await call(`/api/carriers/${carrierId}/gateways`, { method: 'POST', body: gatewayBody(values) });
    onSaved(saved);
    return saved;
  }, [call, carrierId, gateway, values, onSaved]), GATEWAY_FIELDS);
  const set = (name, value) => setValues((v) => ({ ...v, [name]: value }));
  const headingId = gateway ? `edit-gateway-${gateway.id}` : 'add-gateway';
  const text = (name, label, hint, extra = {}) => (
    <Field label={label} error={save.fields[name]} hint={hint}>
      {(p) => <input {...p} {...extra} name={name} value={values[name]} onChange={(e) => set(name, e.target.value)} />}
    </Field>
  );
  return (
    <section aria-labelledby={headingId} className="panel">
      <h3 id={headingId}>{gateway ? `Edit gateway ${address(gateway)}` : 'Add a gateway'}</h3>
      <SaveForm save={save} label={gateway ? 'Save gateway' : 'Add gateway'}>
        {text('ipv4', 'IPv4 address', 'The address, or for an inbound gateway the network address (10.0.0.0 with prefix 24).')}
        {text('netmask', 'Prefix length', '32: exactly this address. Less: a CIDR network (inbound only, 8 or more).', { type: 'number', min: 8, max: 32 })}
        {text('host', 'Host name', 'Instead of the IPv4 address, for an outbound-only gateway: the carrier\'s DNS name.')}
        {text('port', 'Port', null, { type: 'number', min: 1, max: 65535 })}
        <Field label="Transport" error={save.fields.transport}>
          {(p) => (
            <select {...p} name="transport" value={values.transport} onChange={(e) => set('transport', e.target.value)}>
              <option value="udp">UDP</option>
              <option value="tcp">TCP</option>
            </select>
          )}
        </Field>
        <fieldset>
          <legend>Direction and state</legend>
          <Check name="inbound" label="Inbound (calls from this address are admitted)" checked={values.inbound} onChange={(v) => set('inbound', v)} />
          <Check name="outbound" label="Outbound (calls are sent to it)" checked={values.outbound} onChange={(v) => set('outbound', v)} />
          <Check name="is_active" label="Active" checked={values.is_active} onChange={(v) => set('is_active', v)} />
          {['inbound', 'outbound', 'is_active'].map((name) => save.fields[name]
            && <p key={name} className="field-error">{save.fields[name]}</p>)}
        </fieldset>
        <Check name="register" label="Register with the carrier" checked={values.register} onChange={(v) => set('register', v)} />
        {save.fields.register && <p className="field-error">{save.fields.register}</p>}
        {text('register_username', 'Registration username', 'Sent in REGISTER while “Register with the carrier” is on.')}
        {text('register_password', 'Registration password', gateway?.has_register_password
          ? 'A password is saved. Leave empty to keep it.' : 'Write-only: never shown again.', { type: 'password', autoComplete: 'new-password' })}
        {text('register_realm', 'Registration realm')}
      </SaveForm>
      {onCancel && <button type="button" className="secondary" onClick={onCancel}>Cancel</button>}
    </section>
  );
}
