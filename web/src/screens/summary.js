/**
 * The interaction summary's Talk as the record page shows it.
 *
 * The API's `summary.talk_ms` is the conversation with an agent or a dialled party, minus hold,
 * and 0 when nobody was bridged (docs/api.md "Two talk_ms"): the CSV's Talk and part of AHT, so
 * an IVR or webhook call that nobody joined does not count as agent talk. Shown bare, that read
 * as "talk 0" on an answered call the caller spent talking to the application. So for an
 * answered call with no agent, no queue and nobody bridged, the page shows the caller's talk
 * with the application: the record's `talk_ms` (answer until hang-up, the billed time), said as
 * such. A queue call nobody answered (abandoned, or timed out) keeps 0: its time was waiting.
 */
export function summaryTalk(record, summary) {
  const talk = summary?.talk_ms ?? 0;
  const agentless = !record.agent_id && !record.queue_id && !(record.segments?.length)
    && !summary?.queue_wait_ms && !summary?.abandoned;
  if (talk === 0 && agentless && record.answered_at && record.talk_ms > 0) {
    return { ms: record.talk_ms, withApplication: true };
  }
  return { ms: talk, withApplication: false };
}
