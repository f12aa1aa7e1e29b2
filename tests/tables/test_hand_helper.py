"""The hand helper (tables/hand_helper.py): each player's best hand named as the board
changes, privately, and the five cards of every hand shown down, for everyone."""

import pytest

from tables.engine.cards import parse_card
from tables.hand_helper import best_hand, shown_hands
from tests.engine.test_run_it_twice import agree_all, heads_up_all_in
from tests.streams import Recording


def cards(text: str) -> list[int]:
    return [parse_card(code) for code in text.split()]


def test_nothing_is_named_before_the_flop():
    assert best_hand("holdem", cards("As Ad"), []) is None


def test_holdem_uses_the_best_five_of_seven():
    best = best_hand("holdem", cards("Ks 7d"), cards("Kh 7c 2s 9d Qh"))
    assert best["high"] == "two pair, Kings and Sevens"
    assert sorted(best["high_cards"]) == sorted(["Ks", "Kh", "7d", "7c", "Qh"])
    assert best["low"] is None


def test_omaha_takes_exactly_two_hole_cards():
    # Four spades on the board and one in the hand is no flush in Omaha.
    best = best_hand("omaha", cards("As Kd Qc Jh"), cards("2s 5s 8s 9s Th"))
    assert best["high"] == "a straight, Queen high"
    assert len(set(best["high_cards"]) & {"As", "Kd", "Qc", "Jh"}) == 2


def test_hilo_names_the_low_that_qualifies():
    best = best_hand("omaha8", cards("Ah 2d Kc Ks"), cards("3s 5h 8c Kd Qh"))
    assert best["low"] == "8,5,3,2,A"
    assert sorted(best["low_cards"]) == sorted(["Ah", "2d", "3s", "5h", "8c"])
    assert best["high"] == "three of a kind, Kings"
    assert best_hand("omaha8", cards("Ah 2d Kc Ks"), cards("9s Th Jc"))["low"] is None


@pytest.mark.django_db  # the recording needs the test database
def test_each_player_still_in_learns_their_hand_with_each_board_and_nobody_else_does(
    stream_recording: Recording,
):
    steps = stream_recording.steps
    boards = [
        (viewer, m)
        for step in steps
        for viewer, (_, messages, after) in step.views.items()
        for m in messages
        if m["type"] == "dealt_board"
    ]
    assert boards
    for viewer, message in boards:
        if viewer == "spectator":
            assert "best_hand" not in message
    assert any("best_hand" in m for viewer, m in boards if viewer != "spectator")
    shown = [
        m for step in steps for m in step.views["spectator"][1] if m["type"] == "showdown_hands"
    ]
    assert shown, "a hand went to showdown in the scenarios"
    for message in shown:
        hand_shown = stream_recording.shown.get(message["hand"], set())
        assert {h["seat"] for h in message["hands"]} == hand_shown
        assert all(len(h["high_cards"]) == 5 for h in message["hands"])


def test_a_hand_run_twice_names_the_shown_hands_on_each_board():
    state, _ = heads_up_all_in("2s5c9c3h8d" + "KsKc7d4s6h")
    assert shown_hands(state, second=True) == []  # (not run twice yet)
    state, _ = agree_all(state, 1, 2)
    first = {h["seat"]: h["high"] for h in shown_hands(state)}
    second = {h["seat"]: h for h in shown_hands(state, second=True)}
    assert first == {1: "a pair of Aces", 2: "a pair of Kings"}
    assert second[2]["high"] == "four of a kind, Kings"
    assert sorted(second[2]["high_cards"]) == sorted(["Ks", "Kc", "Kh", "Kd", "7d"])
