"""The stream contract, in the browser: for every table service and every viewer, the
page's model (`static/js/table/store.js`) built from the snapshot before and the messages
that viewer received shows what a fresh snapshot after shows.

The streams are recorded by tests/streams.py (the suite's `stream_recording`, on the
test database, rolled back after; each step's streams are also written as JSON fixtures
under the test's temporary directory, named in the failure), then replayed in Chromium
through the real module the table page runs.
"""

import json

import pytest

from tests.streams import Recording

# The recording needs the test database; the page needs none of it (no transactional
# flush after: the recording was rolled back).
pytestmark = [pytest.mark.browser, pytest.mark.django_db]

# What the page shows of its model: the table's status, the seats, the viewer's own seat
# and the hand in play (the finished hand kept on screen is the log's business).
REPLAY = """
async (stepsJson) => {
  const steps = JSON.parse(stepsJson);
  const { applyEvent, fromSnapshot } = await import("/static/js/table/store.js");
  const pick = (o, keys) => (o ? Object.fromEntries(keys.map((k) => [k, o[k] ?? null])) : null);
  const project = (m) => ({
    status: m.table.status,
    seats: m.seats,
    you: m.you && {
      ...pick(m.you, ["seat", "status", "stack", "leaving", "sitting_out_next", "blind_options"]),
      advance: pick(m.you.advance, ["kind", "amount"]),
    },
    hand: m.hand && {
      ...pick(m.hand, ["id", "number", "street", "board", "pots", "actor", "isOver", "button",
                       "turn", "deadline", "legal", "bestHand", "toMatch", "potTotal",
                       "presets", "advanceOptions", "runTwice"]),
      players: m.hand.players.map((p) => pick(p, ["seat", "player", "stack", "committed",
                                                  "in_pot", "status", "cards", "shown"])),
    },
  });
  const failures = [];
  for (const step of steps) {
    for (const [viewer, view] of Object.entries(step.views)) {
      const model = fromSnapshot(view.before);
      model.userId = viewer.startsWith("user ") ? Number(viewer.slice(5)) : null;
      if (step.command?.cmd === "advance" && step.by === viewer && model.you) {
        // As actions.js does on sending it (the ack confirms it; no message carries it).
        model.you.advance = { kind: step.command.action, amount: step.command.amount ?? null };
      }
      for (const message of view.messages) applyEvent(model, message);
      const fresh = fromSnapshot(view.after);
      fresh.userId = model.userId;
      const got = JSON.stringify(project(model));
      const want = JSON.stringify(project(fresh));
      if (got !== want) {
        failures.push({ step: `${step.scenario} / ${step.name}`, viewer, got: project(model),
                        want: project(fresh) });
      }
    }
  }
  return failures;
}
"""


def test_snapshot_before_plus_the_stream_shows_the_snapshot_after(
    browser, room, stream_recording: Recording, tmp_path
):
    steps = [step.to_dict() for step in stream_recording.steps]
    fixtures = tmp_path / "streams.json"
    fixtures.write_text(json.dumps(steps, indent=1))
    context = browser.new_context(base_url=room)
    try:
        page = context.new_page()
        page.goto("/")
        # One string, parsed in the page: Playwright's own serialisation of so many
        # nested objects took longer than recording them.
        failures = page.evaluate(REPLAY, json.dumps(steps))
    finally:
        context.close()
    assert not failures, f"{len(failures)} views differ (streams in {fixtures}):\n" + "\n".join(
        f"{f['step']} / {f['viewer']}: {difference(f['got'], f['want'])}" for f in failures
    )


def difference(got: object, want: object, path: str = "") -> str:
    """Where two projections first differ, and how."""
    if isinstance(got, dict) and isinstance(want, dict):
        for key in sorted(set(got) | set(want)):
            if got.get(key) != want.get(key):
                return difference(got.get(key), want.get(key), f"{path}.{key}")
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            if g != w:
                return difference(g, w, f"{path}[{i}]")
    return f"{path}: page {json.dumps(got)} != snapshot {json.dumps(want)}"
