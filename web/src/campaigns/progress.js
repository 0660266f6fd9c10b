/**
 * A campaign's progress: its contacts by status, {counts, figures}, from the API's live
 * figures (GET /api/campaigns/:id/figures, docs/campaigns.md). That endpoint answers whoever
 * may open the Campaigns screen (an administrator), so a refusal or a failure is shown as
 * such, not replaced by a count of the contacts list.
 */
export async function loadProgressCounts(call, id) {
  const figures = await call(`/api/campaigns/${id}/figures`);
  return { counts: figures.contacts, figures };
}
