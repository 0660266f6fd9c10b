/**
 * Per-verb forms, generated from the server's verb JSON Schema (app/verbs/jsonschema.py, read
 * from the same marshmallow fields that validate webhook replies). `verb-schemas.json` is a copy
 * of its `$defs` for the verbs that get a form; tests/console/test_verb_schemas_copy.py fails
 * when it differs from what the server generates, so a form never offers a field the server
 * refuses, nor misses one it takes.
 *
 * A field per top-level property: text, number, a checkbox, a choice for an enum; a property
 * whose value is an object or a list (dial's `target`, gather's `say`) is its own small JSON box.
 * An empty field leaves the property out (the server's default applies).
 */
import SCHEMAS from './verb-schemas.json';

export const FORM_VERBS = Object.keys(SCHEMAS);

/**
 * Each form field's label in plain English, for someone who does not read the verb language;
 * the property's own name (SPEC's: `numDigits`, `actionHook` …) is in the field's hint. A
 * vitest fails when a verb of the schema copy has a property without a label here.
 */
export const FIELD_LABELS = {
  dial: {
    callerId: 'Caller number to show',
    record: 'Record the call',
    target: 'Who to call',
    timeout: 'Ring for at most (seconds)',
  },
  gather: {
    actionHook: 'When done, send what the caller entered to (URL)',
    finishOnKey: 'Key that ends the input',
    input: 'Listen for (keys, speech)',
    numDigits: 'Number of digits to collect',
    play: 'Audio to play while listening',
    say: 'Words to say while listening',
    timeout: 'Wait for the caller (seconds)',
  },
  hangup: { reason: 'Reason for hanging up' },
  play: { loop: 'Times to play it', url: 'Audio file address (URL)' },
  record: {
    format: 'File format',
    statusHook: 'When the recording is ready, notify (URL)',
    stereo: 'Caller and other party on separate channels (stereo)',
  },
  redirect: { url: 'Get the next instructions from (URL)' },
  say: { language: 'Language', loop: 'Times to say it', text: 'Words to say', voice: 'Voice' },
};

export function verbSchema(verb) {
  return SCHEMAS[verb] || null;
}

/** The form's fields of a verb: [{name, label, kind, required, schema}] in the schema's order, `verb` left out. */
export function verbFields(verb) {
  const schema = verbSchema(verb);
  if (!schema) return [];
  const required = new Set(schema.required || []);
  return Object.entries(schema.properties || {})
    .filter(([name]) => name !== 'verb')
    .map(([name, prop]) => ({ name, label: FIELD_LABELS[verb]?.[name] ?? name, required: required.has(name),
      schema: prop, kind: kindOf(prop) }));
}

function kindOf(prop) {
  if (prop.type === 'boolean') return 'boolean';
  if (prop.type === 'integer' || prop.type === 'number') return 'number';
  if (prop.type === 'string' && Array.isArray(prop.enum)) return 'choice';
  if (prop.type === 'string') return 'text';
  return 'json';
}

/** What a field shows for the verb's current value. */
export function fieldText(field, value) {
  if (value === undefined || value === null) return field.kind === 'boolean' ? undefined : '';
  if (field.kind === 'json') return JSON.stringify(value);
  if (field.kind === 'boolean') return Boolean(value);
  return String(value);
}

/**
 * The verb after a field changed: {verb} or {error} (the field's own text is kept by the
 * caller, so a half-typed JSON box is not lost). Empty removes the property.
 */
export function withField(verb, field, raw) {
  const next = { ...verb };
  if (raw === '' || raw === undefined) {
    delete next[field.name];
    return { verb: next };
  }
  if (field.kind === 'boolean') next[field.name] = Boolean(raw);
  else if (field.kind === 'number') {
    const n = Number(raw);
    if (!Number.isFinite(n)) return { verb, error: 'A number.' };
    next[field.name] = n;
  } else if (field.kind === 'json') {
    try { next[field.name] = JSON.parse(raw); } catch (err) { return { verb, error: `Not JSON: ${err.message}` }; }
  } else next[field.name] = raw;
  return { verb: next };
}

/** The schema's own checks on one value, before the server's (required, range, length, pattern). */
export function localProblem(field, value) {
  const s = field.schema;
  if (value === undefined || value === null || value === '') return field.required ? 'Required.' : null;
  if (field.kind === 'number') {
    if (s.type === 'integer' && !Number.isInteger(value)) return 'A whole number.';
    if (s.minimum !== undefined && value < s.minimum) return `At least ${s.minimum}.`;
    if (s.exclusiveMinimum !== undefined && value <= s.exclusiveMinimum) return `More than ${s.exclusiveMinimum}.`;
    if (s.maximum !== undefined && value > s.maximum) return `At most ${s.maximum}.`;
  }
  if (field.kind === 'text') {
    if (s.minLength !== undefined && value.length < s.minLength) return 'Required.';
    if (s.maxLength !== undefined && value.length > s.maxLength) return `At most ${s.maxLength} characters.`;
    if (s.pattern && !new RegExp(s.pattern, 'u').test(value)) {
      return s.pattern.startsWith('^https://') ? 'An https:// address.' : 'Not in the expected form.';
    }
  }
  return null;
}

/** The server's problems of one node ({field: "verb.text" | "verb.target.0.name" …}) by form field. */
export function serverProblemsByField(problems) {
  const out = {};
  for (const p of problems || []) {
    const parts = (p.field || '').split('.');
    if (parts[0] !== 'verb' || parts.length < 2) continue;
    const name = parts[1];
    const text = parts.length > 2 ? `${parts.slice(2).join('.')}: ${p.message}` : p.message;
    out[name] = out[name] ? `${out[name]} ${text}` : text;
  }
  return out;
}

/** A verb list's problems (JSON Pointers `/1/target/0/name`, from /api/applications/validate or
 * a refused save) of the verb at `index`, in the form's shape (`verb.target.0.name`). */
export function problemsOfVerb(problems, index) {
  const out = [];
  for (const p of problems || []) {
    const parts = String(p.path ?? '').split('/').slice(1);
    if (parts[0] !== String(index) || parts.length < 2) continue;
    out.push({ field: ['verb', ...parts.slice(1)].join('.'), message: p.message });
  }
  return out;
}
