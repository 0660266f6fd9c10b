import { describe, expect, test } from 'vitest';
import { moveItem, nextPriority, priorityChanges } from '../src/routing/reorder.js';

const routes = [{ id: 'a', priority: 10 }, { id: 'b', priority: 20 }, { id: 'c', priority: 30 }];

describe('LCR route order as priorities', () => {
  test('moving the last route to the top renumbers the three in the order shown', () => {
    const ordered = moveItem(routes, 2, 0);
    expect(ordered.map((r) => r.id)).toEqual(['c', 'a', 'b']);
    expect(priorityChanges(ordered)).toEqual([{ id: 'c', priority: 10 }, { id: 'a', priority: 20 }, { id: 'b', priority: 30 }]);
  });

  test('swapping the last two PATCHes only those two', () => {
    expect(priorityChanges(moveItem(routes, 1, 2))).toEqual([{ id: 'c', priority: 20 }, { id: 'b', priority: 30 }]);
  });

  test('routes that shared a priority get a definite order; an out-of-range move changes nothing', () => {
    const tied = [{ id: 'x', priority: 0 }, { id: 'y', priority: 0 }];
    expect(priorityChanges(tied)).toEqual([{ id: 'x', priority: 10 }, { id: 'y', priority: 20 }]);
    expect(moveItem(routes, 0, 3)).toBe(routes);
    expect(moveItem(routes, 1, 1)).toBe(routes);
  });

  test('a new route with no priority typed goes after the last', () => {
    expect(nextPriority(routes)).toBe(40);
    expect(nextPriority([])).toBe(10);
  });
});
