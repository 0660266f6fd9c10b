import { describe, expect, test } from 'vitest';
import { ApiError } from '../src/api.js';
import { appBody, appErrors, appValues, verbPointer } from '../src/apps/appForm.js';

const saved = { id: 'a1', name: 'Main', call_flow_sid: null, call_hook_url: 'https://h.example/v', call_hook_method: 'GET',
  call_status_hook_url: null, app_json: [{ verb: 'hangup' }], language: 'en-US', voice: 'kal', basic_auth_username: 'u' };

describe('the Applications form', () => {
  test('an application round-trips as the API body; empty optional fields clear, an empty password is kept', () => {
    const { body } = appBody(appValues(saved));
    expect(body).toEqual({ name: 'Main', call_flow_sid: null, call_hook_url: 'https://h.example/v', call_hook_method: 'GET',
      call_status_hook_url: null, app_json: [{ verb: 'hangup' }], language: 'en-US', voice: 'kal', basic_auth_username: 'u' });
    expect(appBody({ ...appValues(saved), basic_auth_password: 'pw' }).body.basic_auth_password).toBe('pw');
    expect(appBody({ ...appValues(saved), app_json: '  ' }).body.app_json).toBeNull();
  });

  test('a verb list that is not JSON is said beside its field and nothing is sent', () => {
    const result = appBody({ ...appValues(saved), app_json: '[{"verb": "say",' });
    expect(result.body).toBeUndefined();
    expect(result.fields.app_json).toMatch(/^Not JSON/);
  });

  test('a refused verb list lists each problem with its JSON Pointer', () => {
    const error = new ApiError(422, 'verb_list_rejected', 'instructions rejected',
      [{ index: 1, verb: 'dial', field: 'target.0.name', message: 'Missing data.' }, { index: null, verb: null, field: null, message: 'Empty.' }]);
    const shown = appErrors(error);
    expect(shown.fields.app_json).toMatch(/refused the verb list/);
    expect(shown.verbProblems).toEqual([{ path: '/1/target/0/name', message: 'Missing data.' }, { path: '/', message: 'Empty.' }]);
  });

  test('an unsafe URL is said beside the field the server names; a validation detail beside its field', () => {
    const unsafe = new ApiError(422, 'unsafe_url', 'private', { reason: 'private', field: 'call_status_hook_url' });
    expect(Object.keys(appErrors(unsafe).fields)).toEqual(['call_status_hook_url']);
    const invalid = new ApiError(422, 'validation_failed', 'bad', { json: { language: ['Use a tag like en-US.'] } });
    expect(appErrors(invalid).fields).toEqual({ language: 'Use a tag like en-US.' });
    const inUse = new ApiError(409, 'application_in_use', 'x', { phone_numbers: 2 });
    expect(appErrors(inUse).form).toMatch(/Phone numbers are answered/);
  });

  test('a pointer from the validate endpoint is used as given', () => {
    expect(verbPointer({ path: '/0/url' })).toBe('/0/url');
  });
});
