"""The shared wait helper: returns the first truthy value, names what it waited for."""
import itertools

import pytest

from tests.plugins.eventually import NotYet, eventually


def test_eventually_returns_the_first_truthy_value_of_the_condition() -> None:
    counter = itertools.count()
    assert eventually(lambda: next(counter) >= 3 and "ready", timeout=5, interval=0.001) == "ready"


def test_eventually_names_what_it_waited_for_and_the_last_value_when_the_deadline_passes() -> None:
    with pytest.raises(NotYet, match=r"the queue to drain: not true within 0.05 s \(last: 0\)"):
        eventually(lambda: 0, timeout=0.05, what="the queue to drain", interval=0.01)


def test_an_assertion_inside_the_condition_means_not_yet_and_is_the_cause_at_the_deadline() -> None:
    def condition() -> bool:
        assert 1 == 2, "still one"
        return True

    with pytest.raises(NotYet) as caught:
        eventually(condition, timeout=0.05, interval=0.01)
    assert "still one" in str(caught.value.__cause__)
