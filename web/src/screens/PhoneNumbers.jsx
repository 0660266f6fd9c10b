import { useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { useAuth } from '../auth.jsx';
import { OutageBanner } from '../components/Banner.jsx';
import { Field } from '../components/Field.jsx';
import { useCursorPages, useDraft, useSubmit } from '../hooks.js';
import { errorsByField } from '../messages.js';
import { MODE_LABELS } from './answering.js';

const PAGE_SIZE = 50;

/** Phone numbers: search (GET /api/phone-numbers?number=), cursor pages, and adding a number. */
export function PhoneNumbers() {
  const { call } = useAuth();
  const [params, setParams] = useSearchParams();
  const search = params.get('number') || '';
  const [searchText, setSearchText] = useState(search);
  const list = useCursorPages(call, '/api/phone-numbers', { number: search, limit: PAGE_SIZE }, [call, search]);
  const { items, nextCursor, loadMore } = list;

  function submitSearch(event) {
    event.preventDefault();
    setParams(searchText.trim() ? { number: searchText.trim() } : {});
  }

  const searchError = list.error && !list.error.isOutage ? errorsByField(list.error, ['number']).fields.number : null;
  return (
    <>
      <h1>Phone numbers</h1>
      <OutageBanner error={list.error?.isOutage ? list.error : null} onRetry={list.reload} />
      <OutageBanner error={list.moreError?.isOutage ? list.moreError : null} onRetry={loadMore} />
      <form className="search" role="search" onSubmit={submitSearch}>
        <Field label="Search numbers" error={searchError} hint="Digits of the number, e.g. 555.">
          {(p) => <input {...p} type="search" name="number" value={searchText}
            onChange={(e) => setSearchText(e.target.value)} />}
        </Field>
        <button type="submit">Search</button>
      </form>
      <table>
        <caption className="visually-hidden">Phone numbers of the account</caption>
        <thead>
          <tr><th scope="col">Number</th><th scope="col">Answering mode</th><th scope="col">Added</th></tr>
        </thead>
        <tbody>
          {items.map((n) => (
            <tr key={n.id}>
              <td><Link to={`/numbers/${n.id}`}>+{n.number}</Link></td>
              <td>{MODE_LABELS[n.answering_mode] || describeUnset(n.answered_by)}</td>
              <td>{n.created_at ? new Date(n.created_at).toLocaleString() : ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.loading && <p role="status">Loading…</p>}
      {!list.loading && !list.error && items.length === 0 && (
        <p role="status">{search ? `No number contains ${search}.` : 'No phone numbers yet.'}</p>
      )}
      {nextCursor && <button type="button" onClick={loadMore}>Load more</button>}
      <AddNumber />
    </>
  );
}

function describeUnset(answeredBy) {
  return answeredBy === 'app_json' ? 'Static verb list' : 'Not set';
}

/** POST /api/phone-numbers; the answering settings follow on the saved number's page. */
function AddNumber() {
  const { call } = useAuth();
  const navigate = useNavigate();
  const draft = useDraft('add-number', { number: '' });
  const { submit, error, busy } = useSubmit(async () => {
    const created = await call('/api/phone-numbers', { method: 'POST', body: { number: draft.values.number.trim() } });
    draft.reset({ number: '' });
    navigate(`/numbers/${created.id}`);
  });

  const { fields, form } = errorsByField(error && !error.isOutage ? error : null, ['number']);
  return (
    <section aria-labelledby="add-number">
      <h2 id="add-number">Add a number</h2>
      <OutageBanner error={error?.isOutage ? error : null} onRetry={() => submit()} />
      <form onSubmit={submit} noValidate>
        {form && <p className="form-error" role="alert">{form}</p>}
        <Field label="Number" error={fields.number} hint="Digits, with or without a leading +.">
          {(p) => <input {...p} name="number" inputMode="tel" value={draft.values.number}
            onChange={(e) => draft.set('number', e.target.value)} required />}
        </Field>
        <button type="submit" disabled={busy}>Add number</button>
      </form>
    </section>
  );
}
