"""The command schema (tables/commands.py): what the WebSocket parses, the REST seating
endpoints validate and the bots send is one description per command."""

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tables.api.seating import SitSerializer, TopUpSerializer
from tables.commands import (
    CHAT_LINE,
    COMMANDS,
    KEY,
    MAX_INT,
    SCREEN_NAME,
    WORD,
    CommandError,
    Sit,
    TopUp,
    command_parse,
    field_type,
    text_rule,
)

VALUES = {
    int: st.integers(min_value=-MAX_INT, max_value=MAX_INT),
    bool: st.booleans(),
}
# What each text rule takes (tests/tables/test_hostile_commands.py sends what it refuses).
TEXTS = {
    WORD: st.from_regex(r"[a-z_]{1,32}", fullmatch=True),
    KEY: st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=100),
    SCREEN_NAME: st.from_regex(r"[\w.@+-]{1,150}", fullmatch=True),
    CHAT_LINE: st.text(
        st.characters(exclude_categories=("C", "Zl", "Zp", "M")), min_size=1, max_size=200
    ).filter(str.strip),
}


def values_of(cls, f):
    kind = field_type(cls, f)
    return TEXTS[text_rule(f)] if kind is str else VALUES[kind]


VALUES_EXAMPLE = {int: 1, str: "x", bool: True}
WRONG = {int: [True, "1", 1.5], str: [1, True, ["a"]], bool: [1, "true", 0]}


@st.composite
def commands(draw):
    cls = draw(st.sampled_from(sorted(COMMANDS.values(), key=lambda c: c.name)))
    values = {}
    for f in dataclasses.fields(cls):
        required = f.default is dataclasses.MISSING
        if required or draw(st.booleans()):
            values[f.name] = draw(values_of(cls, f))
    return cls(**values)


@given(commands())
def test_a_command_sent_is_the_command_parsed(command):
    assert command_parse({**command.to_wire(), "seq": 1}) == command


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_field_of_the_wrong_type_is_malformed(name):
    cls = COMMANDS[name]
    for f in dataclasses.fields(cls):
        for wrong in WRONG[field_type(cls, f)]:
            base = {g.name: VALUES_EXAMPLE[field_type(cls, g)] for g in dataclasses.fields(cls)}
            with pytest.raises(CommandError) as refused:
                command_parse({"cmd": name, **base, f.name: wrong})
            assert refused.value.code == "malformed"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_required_field_left_out_or_null_is_malformed(name):
    cls = COMMANDS[name]
    required = [f.name for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING]
    for missing in required:
        base = {g.name: VALUES_EXAMPLE[field_type(cls, g)] for g in dataclasses.fields(cls)}
        for body in ({k: v for k, v in base.items() if k != missing}, {**base, missing: None}):
            with pytest.raises(CommandError, match=missing):
                command_parse({"cmd": name, **body})


def test_too_long_a_string_and_too_large_a_number_are_malformed():
    with pytest.raises(CommandError, match="at most"):
        command_parse({"cmd": "act", "action": "x" * (WORD.longest + 1)})
    with pytest.raises(CommandError, match="out of range"):
        command_parse({"cmd": "act", "action": "call", "turn": MAX_INT + 1})


def test_an_unknown_command_is_refused_by_name():
    with pytest.raises(CommandError) as refused:
        command_parse({"cmd": "rebuy"})
    assert refused.value.code == "unknown_command"


@pytest.mark.parametrize(
    ("serializer", "command"), [(SitSerializer, Sit), (TopUpSerializer, TopUp)]
)
def test_the_rest_serializers_take_the_command_fields_but_the_key(serializer, command):
    fields = {f.name for f in dataclasses.fields(command)} - {"key"}
    assert set(serializer().fields) == fields


def test_the_service_gets_the_fields_under_its_own_argument_names():
    sit = Sit(seat=3, buy_in=10_000, key="k")
    assert sit.arguments() == {"seat_number": 3, "buy_in": 10_000, "post_big_blind": False}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_string_field_has_a_text_rule(name):
    """A string field is checked by its rule before any service runs (issue #46): a new
    one without a rule would let anything through to the database."""
    cls = COMMANDS[name]
    for f in dataclasses.fields(cls):
        if field_type(cls, f) is str:
            assert text_rule(f) in TEXTS, f.name
