import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, test } from 'vitest';
import axe from 'axe-core';
import { useState } from 'react';
import { VerbForm } from '../src/flows/VerbForm.jsx';
import { FORM_VERBS, localProblem, serverProblemsByField, verbFields, withField } from '../src/flows/verbForm.js';

afterEach(cleanup);

describe('per-verb forms from the verb schema', () => {
  test('the common verbs have forms; a field per property, verb left out', () => {
    expect(FORM_VERBS.sort()).toEqual(['dial', 'gather', 'hangup', 'play', 'record', 'redirect', 'say']);
    expect(verbFields('say').map((f) => [f.name, f.kind, f.required])).toEqual([
      ['language', 'text', false], ['loop', 'number', false], ['text', 'text', true], ['voice', 'text', false]]);
    expect(verbFields('record').find((f) => f.name === 'format').kind).toBe('choice');
    expect(verbFields('record').find((f) => f.name === 'stereo').kind).toBe('boolean');
    expect(verbFields('dial').find((f) => f.name === 'target').kind).toBe('json');
    expect(verbFields('queue')).toEqual([]); // no form: the JSON box only
  });

  test('every field is labelled in plain English words, never the verb language\'s property name', () => {
    for (const verb of FORM_VERBS) {
      for (const field of verbFields(verb)) {
        expect(field.label, `${verb}.${field.name}`).not.toBe(field.name);
        expect(field.label, `${verb}.${field.name}`).toMatch(/^[A-Z][a-z]/); // a sentence, not an identifier
        expect(field.label, `${verb}.${field.name}`).not.toMatch(/[a-z][A-Z]/); // no camelCase left
      }
    }
    expect(verbFields('gather').find((f) => f.name === 'actionHook').label).toBe('When done, send what the caller entered to (URL)');
  });

  test('a change rewrites the verb; empty leaves the property out; bad JSON keeps the verb', () => {
    const loop = verbFields('say').find((f) => f.name === 'loop');
    expect(withField({ verb: 'say', text: 'hi' }, loop, '3').verb).toEqual({ verb: 'say', text: 'hi', loop: 3 });
    expect(withField({ verb: 'say', text: 'hi', loop: 3 }, loop, '').verb).toEqual({ verb: 'say', text: 'hi' });
    const target = verbFields('dial').find((f) => f.name === 'target');
    const bad = withField({ verb: 'dial' }, target, '[{');
    expect(bad.error).toMatch(/^Not JSON/u);
    expect(bad.verb).toEqual({ verb: 'dial' });
  });

  test('the schema\'s own checks: required, range, https', () => {
    const [text, loop] = ['text', 'loop'].map((n) => verbFields('say').find((f) => f.name === n));
    expect(localProblem(text, undefined)).toBe('Required.');
    expect(localProblem(loop, 101)).toBe('At most 100.');
    expect(localProblem(loop, 1.5)).toBe('A whole number.');
    expect(localProblem(verbFields('play').find((f) => f.name === 'url'), 'http://x.example/a.wav')).toBe('An https:// address.');
  });

  test('the server\'s problems go beside their field, a nested path with its rest', () => {
    expect(serverProblemsByField([{ node: 'a', field: 'verb.text', message: 'Missing data.' },
      { node: 'a', field: 'verb.target.0.name', message: 'Not a number.' }, { node: 'a', field: null, message: 'Unreachable.' }]))
      .toEqual({ text: 'Missing data.', target: '0.name: Not a number.' });
  });

  test('the form edits the verb, shows the server\'s error beside its field, and has no axe violation', async () => {
    function Harness() {
      const [verb, setVerb] = useState({ verb: 'dial', target: [{ type: 'phone', name: 'x' }] });
      return (
        <main>
          <VerbForm verb={verb} onChange={setVerb} problems={[{ node: 'n', field: 'verb.target.0.name', message: 'Not a valid phone number.' }]} />
          <output data-testid="verb">{JSON.stringify(verb)}</output>
        </main>
      );
    }
    const { container } = render(<Harness />);
    const target = screen.getByLabelText('Who to call (required)');
    expect(target.getAttribute('aria-invalid')).toBe('true');
    expect(screen.getByText('0.name: Not a valid phone number.')).toBeTruthy();
    fireEvent.change(target, { target: { value: '[{"type":"phone","name":"+15551234567"}]' } });
    fireEvent.change(screen.getByLabelText('Ring for at most (seconds)'), { target: { value: '20' } });
    expect(JSON.parse(screen.getByTestId('verb').textContent))
      .toEqual({ verb: 'dial', target: [{ type: 'phone', name: '+15551234567' }], timeout: 20 });
    const results = await axe.run(container, { rules: { region: { enabled: false } } });
    expect(results.violations).toEqual([]);
  });
});
