import { useCallback, useState } from 'react';
import { useAuth } from '../auth.jsx';
import { OutageBanner } from '../components/Banner.jsx';
import { Field } from '../components/Field.jsx';
import { useSubmit } from './form.js';

/** "Explain this number": GET /api/lcr/explain, the decision `sbc lcr explain` shows. */
export function Explain() {
  const { call } = useAuth();
  const [number, setNumber] = useState('');
  const [result, setResult] = useState(null);
  const save = useSubmit(useCallback(async () => {
    const body = await call('/api/lcr/explain', { query: { number: number.trim() } });
    setResult(body);
    return body;
  }, [call, number]), ['number']);
  return (
    <section aria-labelledby="explain">
      <h2 id="explain">Explain this number</h2>
      <form className="search" onSubmit={save.submit} noValidate>
        <Field label="Number to explain" error={save.fields.number} hint="The dialled number, e.g. +4915112345678.">
          {(p) => <input {...p} name="number" inputMode="tel" value={number} onChange={(e) => setNumber(e.target.value)} />}
        </Field>
        <button type="submit" disabled={save.busy}>Explain</button>
      </form>
      <OutageBanner error={save.outage} onRetry={save.submit} />
      {save.form && <p className="form-error" role="alert">{save.form}</p>}
      {result && <Decision result={result} />}
    </section>
  );
}

function Decision({ result }) {
  return (
    <div className="explain" aria-live="polite">
      <dl className="facts">
        <dt>Number</dt><dd>{result.number}{result.normalized && result.normalized !== result.number ? ` (dialled as ${result.normalized})` : ''}</dd>
        <dt>Plan</dt><dd>{result.plan ? `${result.plan.name} (${result.plan.level === 'platform' ? 'platform plan' : 'your plan'})` : 'None'}</dd>
        <dt>Route</dt><dd>{result.route ? <code>{result.route.regex}</code> : 'None'}</dd>
        {result.reason && <><dt>Result</dt><dd className="form-error">{result.reason}</dd></>}
        {result.bridge && <><dt>Dial string</dt><dd><code>{result.bridge}</code></dd></>}
      </dl>
      {!result.gatewayHealthKnown && (
        <p className="form-error">Live gateway health was not available: gateways that are down were not left out.</p>
      )}
      {result.attempts.length > 0 && (
        <table>
          <caption>Tried in this order</caption>
          <thead><tr><th scope="col">#</th><th scope="col">Carrier</th><th scope="col">Gateway</th><th scope="col">Endpoint</th></tr></thead>
          <tbody>
            {result.attempts.map((a, i) => (
              <tr key={`${a.carrierId}-${a.gatewayId ?? i}`}>
                <td>{i + 1}</td>
                <td>{a.carrier}{a.platform ? ' (platform)' : ''}</td>
                <td>{a.platform ? 'Platform gateways (not shown)' : a.host}</td>
                <td>{a.endpoint ? <code>{a.endpoint}</code> : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {result.skipped.length > 0 && (
        <table>
          <caption>Skipped</caption>
          <thead><tr><th scope="col">What</th><th scope="col">Name</th><th scope="col">Why</th></tr></thead>
          <tbody>
            {result.skipped.map((s, i) => (
              <tr key={`${s.kind}-${s.id ?? i}`}>
                <td>{s.kind === 'gateway' ? 'Gateway' : 'Carrier'}</td>
                <td>{s.name || (s.kind === 'gateway' ? 'a platform gateway' : '—')}</td>
                <td>{s.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {result.platformDetailsHidden && <p className="hint">Platform carriers&apos; gateways are the platform&apos;s and are not shown.</p>}
    </div>
  );
}
