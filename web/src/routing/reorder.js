/**
 * Route order in an LCR plan is its routes' `priority` (lowest first; the API has no "order"
 * call). A drag or a Move up/down becomes PATCHes of the priorities that change: the routes are
 * renumbered 10, 20, 30… in the order shown, so a later insert fits between two without
 * renumbering the others, and routes that shared a priority get a definite order.
 */
export const PRIORITY_STEP = 10;

/** `list` with the item at `from` moved to index `to` (a new array). */
export function moveItem(list, from, to) {
  if (from === to || from < 0 || to < 0 || from >= list.length || to >= list.length) return list;
  const next = [...list];
  const [item] = next.splice(from, 1);
  next.splice(to, 0, item);
  return next;
}

/** [{id, priority}] for each route whose priority must change for `ordered` to be the order. */
export function priorityChanges(ordered) {
  return ordered
    .map((route, index) => ({ id: route.id, priority: (index + 1) * PRIORITY_STEP, was: route.priority }))
    .filter((change) => change.priority !== change.was)
    .map(({ id, priority }) => ({ id, priority }));
}

/** The priority a new route gets when none is typed: after the last one. */
export function nextPriority(routes) {
  return routes.reduce((max, route) => Math.max(max, route.priority), 0) + PRIORITY_STEP;
}
