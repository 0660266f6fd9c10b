import { expect, test } from 'vitest';
import { gatewayBody } from '../src/routing/Carriers.jsx';

const form = { ipv4: ' 198.51.100.0 ', host: '', netmask: '24', port: '5080', transport: 'tcp', inbound: true,
  outbound: false, is_active: true, register: false, register_username: '', register_password: '', register_realm: '' };

test('a gateway form becomes one address, numbers as numbers, and no password unless typed', () => {
  expect(gatewayBody(form)).toEqual({ ipv4: '198.51.100.0', netmask: 24, port: 5080, transport: 'tcp', inbound: true,
    outbound: false, is_active: true, register: false, register_username: null, register_realm: null });
  expect(gatewayBody({ ...form, ipv4: '', host: 'sip.carrier.example', netmask: '', register_password: 's3cret' }))
    .toMatchObject({ host: 'sip.carrier.example', register_password: 's3cret' });
  expect(gatewayBody({ ...form, ipv4: '', host: 'sip.carrier.example', netmask: '' })).not.toHaveProperty('ipv4');
});
