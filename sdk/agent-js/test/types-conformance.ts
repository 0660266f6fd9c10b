// Compiled (never run) by `npm run typecheck` (tsconfig.json, with src/ under checkJs): the
// JavaScript in src/, as TypeScript reads it from its code and JSDoc, must satisfy the contract
// a page is given in types/index.d.ts. A method renamed or removed in src, a constructor that
// takes other arguments, a property or resolved value of another type, an export missing on
// either side: each is a compile error here, so `npm test` fails.
import * as src from '../src/index.js';
import type * as api from '../types/index.js';

// Offer, PreviewOffer and Call are made by the agent only (private constructors in the
// contract): their instances are compared, not their constructors.
type Made<C> = { readonly prototype: C };
type Contract = Omit<typeof api, 'Offer' | 'PreviewOffer' | 'Call'> & {
  Offer: Made<api.Offer>; PreviewOffer: Made<api.PreviewOffer>; Call: Made<api.Call>;
};

// Every value the contract declares exists in src with a type assignable to the declared one
// (for classes: the constructor and the instances).
export const declared: Contract = src;

// ...and src exports nothing the contract does not declare.
type Undeclared = Exclude<keyof typeof src, keyof typeof api>;
export const nothingUndeclared: [Undeclared] extends [never] ? true : Undeclared = true;

// What a page holds is what src builds.
export const agent: api.Agent = src.createAgent({ host: 'acme.example.com', media: false });
export const ready: Promise<api.Grant> = agent.login('alice', 'secret');

// The check is not vacuous: were src untyped (any), these expected errors would not occur and
// each `@ts-expect-error` would be an error itself.
// @ts-expect-error: src's Agent has no method the contract lacks
export const bogus: { bogus(): void } = src.createAgent({ host: 'acme.example.com' });
// @ts-expect-error: src's Call.hold resolves with an ack, not a number
export const wrong: (call: InstanceType<typeof src.Call>) => Promise<number> = (call) => call.hold();
