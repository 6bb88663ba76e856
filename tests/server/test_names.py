"""Display names (server/names.py): one rule for races and the daily challenge, refusals that say what is wrong."""

from __future__ import annotations

import pytest

from server.names import name_key, name_problem, valid_name

ANN_CODING = "ann \U0001f469\u200d\U0001f4bb"
"""ann + WOMAN, ZERO WIDTH JOINER, PERSONAL COMPUTER: the emoji sequence "woman technologist", one picture."""


@pytest.mark.parametrize("name", ["alice", "Anna Lena", "x" * 24, "Łukasz-2", "Иван", "Ωμέγα", "山田 たろう", "ｙｏｕ",
                                  ANN_CODING, "\U0001f3f3\ufe0f\u200d\U0001f308 flag",  # rainbow flag (VS16 first)
                                  "\U0001f468\U0001f3fd\u200d\U0001f4bb bob",  # man, skin tone, joiner, computer
                                  "\U0001f468\u200d\U0001f469\u200d\U0001f467",  # a family of three
                                  "...", "a.b", "a/../b", ".ann"])  # not a whole "." or ".." path segment
def test_names_accepted(name: str) -> None:
    assert name_problem(name) is None and valid_name(name)


@pytest.mark.parametrize("name, words", [
    ("", ["1..24"]), ("x" * 25, ["1..24", "25"]),
    (" alice", ["start or end with a space"]), ("alice ", ["start or end with a space"]),
    ("a\tb", ["U+0009", "control character"]), ("a\nb", ["U+000A", "control character"]),
    ("carol\x85", ["U+0085", "control character"]),
    ("a\u200bb", ["U+200B", "ZERO WIDTH SPACE", "invisible"]),
    ("al\u200dice", ["U+200D", "ZERO WIDTH JOINER", "invisible", "emoji"]),  # a joiner between letters
    ("\u200d\U0001f4bb", ["U+200D"]), ("\U0001f469\u200d", ["U+200D"]),  # a joiner with no emoji on one side
    ("a\u00a0b", ["U+00A0", "NO-BREAK SPACE", "plain space"]),
    ("a\u2028b", ["U+2028"]),
    ("a\ue000b", ["U+E000", "private-use"]),
    ("a\U000e0067b", ["U+E0067", "invisible"]),
    ("\u0410nn", ["CYRILLIC", "LATIN", "script"]), ("\u0391nn Lee", ["GREEK", "LATIN"]),
    ("Аnn \U0001f469\u200d\U0001f4bb", ["CYRILLIC", "LATIN"]),
    (".", ["'.'", "replay"]), ("..", ["'..'", "replay"]),  # a dot segment: dropped from the replay's path
])
def test_names_refused_say_what_is_wrong(name: str, words: list[str]) -> None:
    problem = name_problem(name)
    assert problem is not None and not valid_name(name), name
    assert "name" in problem
    for word in words:
        assert word in problem, (name, problem)
    assert "control" not in problem or "control character" in problem and "U+00" in problem, problem


def test_a_joiner_or_variation_selector_makes_no_new_name() -> None:
    """Where an emoji sequence is not drawn as one picture it shows as its parts: the same key, so one player."""
    assert name_key(ANN_CODING) == name_key("ann \U0001f469\U0001f4bb") == name_key("ANN \U0001f469\U0001f4bb")
    assert name_key("\U0001f3f3\ufe0f\u200d\U0001f308") == name_key("\U0001f3f3\U0001f308")
    assert name_key("Ann") == name_key("ANN") == name_key("Ａｎｎ") == "ann"


@pytest.mark.parametrize("name, looks_like", [
    ("Ann\u2800Lee", "Ann Lee"),  # BRAILLE PATTERN BLANK: a symbol, not a space, but it draws as one
    ("Ann\u2800", "Ann"),  # ... and at the end it is an outer space nobody sees
    ("\uae40\u3164\ubbfc", "\uae40 \ubbfc"),  # HANGUL FILLER between two syllables: 김ㅤ민 looks like 김 민
    ("\ud55c\uffa0\uae00", "\ud55c \uae00"),  # HALFWIDTH HANGUL FILLER: 한ﾠ글 looks like 한 글
])
def test_a_character_that_draws_as_a_blank_is_refused(name: str, looks_like: str) -> None:
    """These draw as a blank but are no space (So, Lo): the name looked like another player's (the plain space, or
    nothing) with another key, so both joined one match."""
    assert name_key(name) != name_key(looks_like)  # two players, one look, were it accepted
    problem = name_problem(name)
    assert problem is not None and "U+" in problem and "blank" in problem, (name, problem)


@pytest.mark.parametrize("name", ["\ufe0f", "\u034f", "\u180b", "\U000e0100\U000e0101", "\u17b4"])
def test_a_name_of_invisible_characters_only_is_refused(name: str) -> None:
    """Variation selectors, the combining grapheme joiner, ...: each may stand in a valid name (they draw as nothing
    and leave its key), but a name of nothing else showed as an empty line in the standings."""
    assert name_key(name) == ""
    problem = name_problem(name)
    assert problem is not None and "nothing" in problem, (name, problem)


@pytest.mark.parametrize("name, looks_like", [
    ("B\u0966b", "Bob"),  # DEVANAGARI DIGIT ZERO: a small circle, an "o" among Latin letters
    ("J\u1040hn", "John"),  # MYANMAR DIGIT ZERO
    ("B\u0ce6b", "Bob"),  # KANNADA DIGIT ZERO
    ("Ann\u0661", "Ann1"),  # ARABIC-INDIC DIGIT ONE
])
def test_a_digit_of_another_script_is_refused_among_latin_letters(name: str, looks_like: str) -> None:
    """Only the letters' scripts were compared, so a native digit shaped like a Latin letter (most native zeros are
    a small circle) made a name that looked like another player's with another key. The name is refused; and were
    it accepted, its UTS #39 skeleton key is now the look-alike's own, so it could not join beside it."""
    assert name_key(name) == name_key(looks_like)
    problem = name_problem(name)
    assert problem is not None and "LATIN" in problem and "script" in problem, (name, problem)


@pytest.mark.parametrize("name", ["\u0623\u062d\u0645\u062f\u0661\u0662",  # Arabic letters, Arabic-Indic digits
                                  "\u0639\u0644\u06cc\u06f1\u06f2",  # Persian letters, extended Arabic-Indic digits
                                  "\u0930\u093e\u092e\u0967",  # Devanagari letters and digit
                                  "\u0e2a\u0e21\u0e0a\u0e32\u0e22\u0e51",  # Thai letters and digit
                                  "bob 42", "\u0412\u0430\u043d\u044f 7", "\u674e\u96f7 2000", "\uff11\uff12 ann"])
def test_digits_of_the_names_own_script_or_ascii_digits_are_fine(name: str) -> None:
    assert name_problem(name) is None, name_problem(name)


@pytest.mark.parametrize("name, looks_like", [
    ("BiII", "Bill"),  # capital I for l: same script, same case-folded letters differ ("biii", "bill")
    ("B0b", "BOB"),  # a zero for an O
    ("Sarn", "Sam"),  # "rn" for "m" (confusables.txt)
    ("C1aire", "Claire"),  # a one for an l
    ("Kai", "Kal"),  # "KAI", the same name in capitals, looks like "Kal"
    ("\u0391\u039d\u039d", "ANN"),  # GREEK ALPHA and NU: a whole name of another script that looks Latin
])
def test_look_alikes_by_the_unicode_standard_share_one_key(name: str, looks_like: str) -> None:
    """Both names are valid alone (one script each) and look alike; the hand-written key (NFKC_Casefold) told them
    apart, so two players with one look could join one match. The UTS #39 skeleton (ICU's spoof checker over
    Unicode's confusables.txt) gives them one key; the refusal a second one gets is the clear "name taken"."""
    from server.names import legacy_name_key, skeleton

    assert name_problem(name) is None and name_problem(looks_like) is None
    assert legacy_name_key(name) != legacy_name_key(looks_like)  # what the key was: two names
    assert name_key(name) == name_key(looks_like)
    assert skeleton("\u0430") == "a" and skeleton("l") == skeleton("I") == skeleton("1")  # the standard's data


@pytest.mark.parametrize("name, other", [
    ("ALICE", "alice"),  # the skeleton of "ALICE" is "ALlCE" (a capital I is an l), of "alice" "alice"
    ("IVY", "ivy"), ("Iris", "IRIS"), ("LILI", "lili"),
    ("\u0421\u0410\u0428\u0410", "\u0421\u0430\u0448\u0430"),  # Cyrillic "САША" and "Саша"
])
def test_names_that_differ_only_by_case_share_one_key(name: str, other: str) -> None:
    """Skeletons are case-sensitive, so a key taken as a skeleton then folded gave "ALICE" and "alice" two keys:
    both could join one match."""
    assert name.casefold() == other.casefold() and name != other
    assert name_key(name) == name_key(other)


def test_names_that_only_look_different_keep_their_own_keys() -> None:
    assert len({name_key(n) for n in ("Ann", "Anna", "Bob", "Bill", "Sam", "Claire", "Ivan", "Иван")}) == 8


@pytest.mark.parametrize("name, other", [
    ("vv", "w"), ("cl", "d"),  # they can look alike in some fonts, but confusables.txt has no such entry
    ("José", "Jose"),  # the skeleton keeps accents
    ("5am", "Sam"),  # a five is no S in confusables.txt
    ("Ivan", "\u0418\u0432\u0430\u043d"),  # Latin and Cyrillic spellings of one name do not look alike
])
def test_what_the_unicode_standard_does_not_merge_stays_two_names(name: str, other: str) -> None:
    """The key is the UTS #39 skeleton and nothing more: where confusables.txt maps no character of one name to
    the other's, they are two names (the module docstring lists these)."""
    assert name_problem(name) is None and name_problem(other) is None
    assert name_key(name) != name_key(other)
