// A real OpenID provider for the single sign-on tests (tests/sso): oidc-provider (OpenID
// Certified), one issuer per port on 127.0.0.1, started by tests/sso/provider.py.
//
//   node provider.mjs <config.json>
//   config: { "ports": [p1, p2, ...], "jwk": <private RSA JWK>, "accounts": { "<login>": { claims } } }
//
// Every issuer signs with the same key (the test's): a token of issuer A then verifies against
// issuer B's key set, so B refusing it proves the issuer check, not a signature accident.
// Clients are registered by each test (OpenID Connect Dynamic Client Registration, open
// registration: loopback only) with its own tenant's redirect URI. The login page is the
// library's development interaction: any login name signs in as that account, then "Continue".
import { readFileSync } from 'node:fs';
import Provider from 'oidc-provider';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));

function providerFor(port) {
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    jwks: { keys: [config.jwk] },
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
    },
    // the tenant's role claim is read from the ID token of the code flow
    conformIdTokenClaims: false,
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['preferred_username', 'groups'] },
    async findAccount(ctx, id) {
      return {
        accountId: id,
        async claims() {
          return { sub: id, preferred_username: id, email: `${id}@example.org`, email_verified: true,
            ...(config.accounts[id] || {}) };
        },
      };
    },
    cookies: { keys: ['tests-only-cookie-key'] },
  });
  provider.listen(port, '127.0.0.1', () => {
    process.stdout.write(`${JSON.stringify({ listening: issuer })}\n`);
  });
}

for (const port of config.ports) providerFor(port);
