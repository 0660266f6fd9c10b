/**
 * A campaign's progress: contacts by status, {counts, capped}.
 *
 * The hook for live figures: GET /api/campaigns/:id/figures (being added to the API by the
 * campaign figures work) is read first, and its `contacts` object (by status) used when it
 * answers. Until the API has it (the route answers 404 `not_found`, not `campaign_not_found`),
 * the contacts list is counted per status, at most COUNT_PAGES pages of PAGE each; a status
 * with more is shown with a "+" (`capped`).
 */
const PAGE = 200;
const COUNT_PAGES = 10;
const STATUSES = ['pending', 'in_progress', 'completed', 'failed', 'do_not_call'];

async function countStatus(call, id, status) {
  let count = 0;
  let cursor;
  for (let page = 0; page < COUNT_PAGES; page += 1) {
    const body = await call(`/api/campaigns/${id}/contacts`, { query: { status, limit: PAGE, cursor } });
    count += body.items.length;
    cursor = body.next_cursor;
    if (!cursor) return { count, capped: false };
  }
  return { count, capped: true };
}

export async function loadProgressCounts(call, id) {
  try {
    const figures = await call(`/api/campaigns/${id}/figures`);
    if (figures?.contacts && typeof figures.contacts === 'object') return { counts: figures.contacts, capped: {}, figures };
  } catch (err) {
    if (err.code !== 'not_found') throw err;
  }
  const each = await Promise.all(STATUSES.map((s) => countStatus(call, id, s)));
  const counts = Object.fromEntries(STATUSES.map((s, n) => [s, each[n].count]));
  const capped = Object.fromEntries(STATUSES.map((s, n) => [s, each[n].capped]));
  return { counts, capped, figures: null };
}
