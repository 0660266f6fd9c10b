/**
 * A call record's `journey` ("ivr > queue:sales > agent:alice", written by the call session in
 * the order the steps ran) as steps: the kind before the first colon, the rest as its detail.
 */
export function journeySteps(journey) {
  if (!journey) return [];
  return journey.split(' > ').map((part) => part.trim()).filter(Boolean).map((part) => {
    const colon = part.indexOf(':');
    return colon < 0 ? { kind: part, detail: '' } : { kind: part.slice(0, colon), detail: part.slice(colon + 1) };
  });
}
