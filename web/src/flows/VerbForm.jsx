import { useEffect, useState } from 'react';
import { Field } from '../components/Field.jsx';
import { fieldText, localProblem, serverProblemsByField, verbFields, withField } from './verbForm.js';

/**
 * The selected node's verb as a form (verbForm.js: generated from the server's verb schema).
 * Each change rewrites the verb (onChange), which the node form applies with "Apply verb"; the
 * schema's own checks show at once, the server's (validate, or a refused save) beside their field.
 */
export function VerbForm({ verb, onChange, problems, legend, prefix = 'verb-' }) {
  const fields = verbFields(verb?.verb);
  const server = serverProblemsByField(problems);
  const [texts, setTexts] = useState({});
  const [errors, setErrors] = useState({});
  useEffect(() => { setTexts({}); setErrors({}); }, [verb?.verb]);
  if (!fields.length) return null;

  function change(field, raw) {
    const result = withField(verb, field, raw);
    // the typed text is kept only while it cannot be read (a half-typed JSON box)
    setTexts((t) => ({ ...t, [field.name]: result.error ? raw : undefined }));
    setErrors((e) => ({ ...e, [field.name]: result.error || null }));
    if (!result.error) onChange(result.verb);
  }

  return (
    <fieldset className="verb-form">
      <legend>{legend || `${verb.verb}: fields`}</legend>
      {fields.map((field) => {
        const text = texts[field.name] ?? fieldText(field, verb[field.name]);
        const error = errors[field.name] || localProblem(field, verb[field.name]) || server[field.name] || null;
        const label = field.required ? `${field.label} (required)` : field.label;
        const hint = hintOf(field);
        if (field.kind === 'boolean') {
          return (
            <Field key={field.name} label={label} error={error} hint={hint}>
              {(p) => (
                <select {...p} name={`${prefix}${field.name}`} value={text === undefined ? '' : String(text)}
                  onChange={(e) => change(field, e.target.value === '' ? '' : e.target.value === 'true')}>
                  <option value="">(default{field.schema.default !== undefined ? `: ${field.schema.default ? 'yes' : 'no'}` : ''})</option>
                  <option value="true">yes</option>
                  <option value="false">no</option>
                </select>
              )}
            </Field>
          );
        }
        if (field.kind === 'choice') {
          return (
            <Field key={field.name} label={label} error={error} hint={hint}>
              {(p) => (
                <select {...p} name={`${prefix}${field.name}`} value={text} onChange={(e) => change(field, e.target.value)}>
                  <option value="">{field.required ? '(choose)' : `(default${field.schema.default ? `: ${field.schema.default}` : ''})`}</option>
                  {field.schema.enum.map((v) => <option key={v} value={v}>{v}</option>)}
                </select>
              )}
            </Field>
          );
        }
        return (
          <Field key={field.name} label={label} error={error} hint={hint}>
            {(p) => (field.kind === 'json'
              ? <textarea {...p} name={`${prefix}${field.name}`} rows={2} spellCheck={false} value={text} onChange={(e) => change(field, e.target.value)} />
              : <input {...p} name={`${prefix}${field.name}`} type={field.kind === 'number' ? 'number' : 'text'} value={text}
                min={field.schema.minimum} max={field.schema.maximum} step={field.schema.type === 'integer' ? 1 : 'any'}
                onChange={(e) => change(field, e.target.value)} />)}
          </Field>
        );
      })}
    </fieldset>
  );
}

function hintOf(field) {
  const s = field.schema;
  const bits = [`“${field.name}” in the verb list.`];
  if (field.kind === 'json') bits.push(s.type === 'array' ? 'A JSON list.' : 'A JSON object.');
  if (s.default !== undefined && field.kind !== 'boolean' && field.kind !== 'choice') bits.push(`Default ${JSON.stringify(s.default)}.`);
  if (field.kind === 'number' && s.exclusiveMinimum !== undefined) {
    bits.push(`More than ${s.exclusiveMinimum}${s.maximum !== undefined ? `, at most ${s.maximum}` : ''}.`);
  } else if (field.kind === 'number' && (s.minimum !== undefined || s.maximum !== undefined)) {
    bits.push(`${s.minimum ?? '…'} to ${s.maximum ?? '…'}.`);
  }
  return bits.join(' ');
}
