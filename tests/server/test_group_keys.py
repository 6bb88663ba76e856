"""A group's keys: built from its id alone, which the builders check (a client's text with braces or of another
form never becomes a key name), and parsed back."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from redis.crc import key_slot

from server.store import keys
from server.store.keys import BadKey

ids = st.text(alphabet=keys.GROUP_ID_ALPHABET, min_size=keys.GROUP_ID_LENGTH, max_size=keys.GROUP_ID_LENGTH)


def test_the_key_names() -> None:
    assert keys.group_key("k7qm4t2x9p", "group") == "{g:k7qm4t2x9p}:group"
    assert keys.group_key("k7qm4t2x9p", "members") == "{g:k7qm4t2x9p}:members"
    assert keys.profile_key("0" * 24, "groups") == "{n:000000000000000000000000}:groups"
    assert keys.PROFILE_PARTS[-1] == "groups" and "groups" not in keys.HISTORY_PARTS


@given(ids)
def test_a_groups_keys_parse_back_and_share_one_slot(group: str) -> None:
    built = [keys.group_key(group, "group"), keys.group_key(group, "members")]
    assert [keys.parse_group_key(key) for key in built] == [(group, "group"), (group, "members")]
    assert keys.parse_group_key(built[0].encode()) == (group, "group")
    assert len({key_slot(key.encode()) for key in built}) == 1


def test_new_ids_are_ids_and_differ() -> None:
    made = {keys.new_group_id() for _ in range(200)}
    assert len(made) == 200 and all(keys.is_group_id(group) for group in made)
    assert set("".join(made)) <= set(keys.GROUP_ID_ALPHABET)


@pytest.mark.parametrize("text", ["", "k7qm4t2x9", "k7qm4t2x9pp", "K7QM4T2X9P", "k7qm4t2x9}", "{g:x}:grou",
                                  "k7qm4t2x0p", "k7qm4t2xlp", "k7qm4t2x/p", "k7qm4t2x9\u00e9"])
def test_text_that_is_no_group_id_makes_no_key(text: str) -> None:
    assert not keys.is_group_id(text)
    with pytest.raises(BadKey):
        keys.group_key(text, "group")


@pytest.mark.parametrize("text", ["{g:k7qm4t2x9p}:bogus", "{g:k7qm4t2x9p}", "{g:K7QM4T2X9P}:group", "g:k7qm4t2x9p:group",
                                  "{n:k7qm4t2x9p}:group"])
def test_text_that_is_no_group_key_is_refused(text: str) -> None:
    with pytest.raises(BadKey):
        keys.parse_group_key(text)
