import { describe, expect, test } from 'vitest';
import { ApiError } from '../src/api.js';
import { errorsByField, humanMessage } from '../src/messages.js';

describe('API errors as messages beside their field', () => {
  test('validation details go beside each field the form shows', () => {
    const error = new ApiError(422, 'validation_failed', 'The request did not pass validation.',
      { json: { signing_secret: ['Length must be between 16 and 255.'], url: ['Required.'] } });
    expect(errorsByField(error, ['url', 'signing_secret'])).toEqual({
      fields: { signing_secret: 'Length must be between 16 and 255.', url: 'Required.' }, form: null });
  });

  test('a field the form does not show is said above the form, by name', () => {
    const error = new ApiError(422, 'validation_failed', 'x', { json: { basic_auth_username: ['Too long.'] } });
    expect(errorsByField(error, ['url'])).toEqual({ fields: {}, form: 'basic_auth_username: Too long.' });
  });

  test('the refused webhook URL goes beside Webhook URL with the server\'s reason', () => {
    const error = new ApiError(422, 'unsafe_url', 'URL must start with https://', { reason: 'scheme' });
    expect(errorsByField(error, ['url'])).toEqual({ fields: { url: 'URL must start with https://' }, form: null });
  });

  test('a taken number goes beside Number; a missing license above the form', () => {
    expect(errorsByField(new ApiError(409, 'number_taken', 'x'), ['number']).fields.number).toBe('This number is already in use.');
    expect(errorsByField(new ApiError(403, 'license_required', 'x'), ['url']).form).toBe('Your account has no license for this.');
  });

  test('throttled sign-in says how long to wait; outages are outages', () => {
    expect(humanMessage(new ApiError(429, 'too_many_login_attempts', 'x', null, 8))).toBe('Too many failed attempts. Try again in 8 s.');
    expect(new ApiError(0, 'network_error', 'x').isOutage).toBe(true);
    expect(new ApiError(503, 'database_unavailable', 'x').isOutage).toBe(true);
    expect(new ApiError(422, 'validation_failed', 'x').isOutage).toBe(false);
  });

  test('carriers and LCR: a refused gateway beside its field, a refused pattern beside Pattern', () => {
    const gateway = new ApiError(422, 'invalid_gateway', 'The gateway address is not usable.',
      { netmask: ['An outbound gateway is one host: netmask must be 32.'] });
    expect(errorsByField(gateway, ['ipv4', 'netmask'])).toEqual({
      fields: { netmask: 'An outbound gateway is one host: netmask must be 32.' }, form: null });
    const regex = new ApiError(422, 'invalid_route_regex', 'route regex is not supported: invalid perl operator: (?=');
    expect(errorsByField(regex, ['regex']).fields.regex).toBe('route regex is not supported: invalid perl operator: (?=');
    expect(errorsByField(new ApiError(409, 'duplicate_carrier', 'x'), ['carrier_id']).fields.carrier_id)
      .toBe('This carrier is already in the route\'s carrier set.');
    expect(errorsByField(new ApiError(403, 'platform_read_only', 'x'), ['name']).form).toMatch(/platform carrier/);
  });
});
